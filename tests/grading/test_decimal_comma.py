"""Decimal commas: a sheet made with --decimal-comma (or decimal_comma = true in its recipe) asks for
"0,245" and ";" between list entries in its answer file, records that in its key, and grade reads
and shows answers that way without a flag — the same verdicts Moodle's numerical questions give."""
import json
import re

import pytest
from typer.testing import CliRunner

from examprep.answers.evaluate import evaluate_all
from examprep.answers.parse import decimal_comma, parse_text
from examprep.answers.tokens import AnswerParseError
from examprep.cli import app

runner = CliRunner()


@pytest.mark.parametrize("text, value", [
    ("0,245", 0.245), ("-0,5", -0.5), ("23,4", 23.4), ("0.5", 0.5), ("[0,1; 0,9]", [0.1, 0.9]),
    ("[[1; 2,5]; [3; 4]]", [[1.0, 2.5], [3.0, 4.0]]), ("1/3", 1 / 3), ("2e-3", 0.002),
])
def test_decimal_commas_and_semicolon_lists_are_read(text, value):
    with decimal_comma():
        got = evaluate_all(parse_text(text))
    flat = lambda v: [x for y in v for x in flat(y)] if isinstance(v, list) else [v]    # noqa: E731
    assert flat(got) == pytest.approx(flat(value)) and str(got).count("[") == str(value).count("[")


@pytest.mark.parametrize("text, column", [("[1, 2]", 3), (",5", 1), ("1,", 2)])
def test_a_comma_that_is_not_decimal_is_named(text, column):
    with decimal_comma(), pytest.raises(AnswerParseError, match=rf"^',' at column {column}: this sheet uses decimal commas"):
        parse_text(text)


def test_without_the_setting_a_decimal_comma_is_refused_as_before():
    with pytest.raises(AnswerParseError, match="use a decimal point"):
        parse_text("23,4", scalar=True)
    with decimal_comma():
        pass
    with pytest.raises(AnswerParseError):      # the setting does not leak out of its block
        parse_text("23,4", scalar=True)


def _comma(v):
    if isinstance(v, list):
        return "[" + "; ".join(_comma(x) for x in v) + "]"
    return str(int(v)) if float(v).is_integer() else repr(float(v)).replace(".", ",")


def _answers(key: dict, fmt) -> str:
    out = 'student_id = "ada"\n'
    for n, p in enumerate(key["problems"], 1):
        out += f"[q{n}]\n" + "".join(f'{part["id"]} = {json.dumps(fmt(part["expected"]))}\n' for part in p["parts"])
    return out


@pytest.fixture(scope="module")
def comma_sheet(tmp_path_factory):
    d = tmp_path_factory.mktemp("dc")
    res = runner.invoke(app, ["sheet", "--recipe", "cnn", "--seed", "3", "--format", "md", "--decimal-comma",
                              "--out", str(d / "s")])
    assert res.exit_code == 0, res.output
    return d / "s"


def test_the_answer_file_and_key_say_which_applies(comma_sheet, tmp_path):
    header = (comma_sheet / "answers.toml").read_text().split("\n")[:4]
    assert "DECIMAL COMMAS" in header[1] and "[0,1; 0,2; 0,7]" in header[3]
    assert json.loads((comma_sheet / "key.json").read_text())["meta"]["decimal_comma"] is True
    res = runner.invoke(app, ["sheet", "--recipe", "cnn", "--seed", "3", "--format", "md", "--out", str(tmp_path / "p")])
    assert res.exit_code == 0
    assert "Use a decimal point, not a comma." in (tmp_path / "p" / "answers.toml").read_text()
    assert "decimal_comma" not in json.loads((tmp_path / "p" / "key.json").read_text())["meta"]


def test_grade_applies_the_keys_setting_without_a_flag(comma_sheet, tmp_path):
    key = json.loads((comma_sheet / "key.json").read_text())
    (tmp_path / "ada.toml").write_text(_answers(key, _comma))
    res = runner.invoke(app, ["grade", str(comma_sheet / "key.json"), str(tmp_path / "ada.toml")])
    assert res.exit_code == 0, res.output
    assert re.search(r"ada\s+47/47 \(100%\)", res.output), res.output
    # the same file against the same sheet made without the setting: its commas are refused
    plain = json.loads((comma_sheet / "key.json").read_text())
    del plain["meta"]["decimal_comma"]
    (tmp_path / "plain.json").write_text(json.dumps(plain))
    res = runner.invoke(app, ["grade", str(tmp_path / "plain.json"), str(tmp_path / "ada.toml")], env={"COLUMNS": "200"})
    assert not re.search(r"ada\s+47/47", res.output) and "unreadable" in res.output   # two verdicts without the key's setting


def test_grade_shows_values_with_decimal_commas(comma_sheet, tmp_path):
    key = json.loads((comma_sheet / "key.json").read_text())
    text = _answers(key, _comma)
    n = next(k for k, p in enumerate(key["problems"], 1) if p["generator"] == "batch-norm")
    text = re.sub(rf"(\[q{n}\]\nmean = )\"[^\"]*\"", r'\1"[1, 2]"', text)
    text = re.sub(rf"(\[q{n}\]\nmean = \"[^\"]*\"\nvar = )\"[^\"]*\"", r'\1"[1/2; 0,25]"', text)
    (tmp_path / "bo.toml").write_text(text)
    res = runner.invoke(app, ["grade", str(comma_sheet / "key.json"), str(tmp_path / "bo.toml")], env={"COLUMNS": "200"})
    assert "',' at column 3: this sheet uses decimal commas (0,5); separate entries with ';'" in res.output
    assert "[1/2; 0,25] (read as [0,5; 0,25])" in res.output


def test_a_recipe_sets_it_and_a_bad_value_is_one_line(tmp_path):
    (tmp_path / "r.toml").write_text('[sheet]\ntitle = "T"\ndecimal_comma = true\n\n[[problem]]\ntopic = "activation"\n')
    res = runner.invoke(app, ["sheet", "--recipe", str(tmp_path / "r.toml"), "--seed", "1", "--format", "md",
                              "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "o" / "key.json").read_text())["meta"]["decimal_comma"] is True
    (tmp_path / "bad.toml").write_text('[sheet]\ntitle = "T"\ndecimal_comma = "yes"\n\n[[problem]]\ntopic = "activation"\n')
    res = runner.invoke(app, ["sheet", "--recipe", str(tmp_path / "bad.toml"), "--out", str(tmp_path / "b")])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "decimal_comma: expected true or false" in res.output
