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


@pytest.mark.parametrize("text, column", [("[1, 2]", 3), ("1,", 2), ("[1 , 2]", 4)])
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


@pytest.mark.parametrize("text, message", [
    ("2.000", "'2.000' at column 1 is ambiguous on this decimal-comma sheet: a point groups thousands there (2000) "
              "or marks decimals (2,000); write 2000 or 2,000"),
    ("-1.234", "'1.234' at column 2 is ambiguous"),
    ("[0,5; 1.000]", "'1.000' at column 7 is ambiguous"),
    ("1.234.567", "'1.234.567' at column 1: write numbers without a thousands separator on this decimal-comma "
                  "sheet: 1234567"),
    ("1.500,5", "write numbers without a thousands separator on this decimal-comma sheet: 1500,5"),
])
def test_a_point_that_may_group_thousands_is_refused_as_ambiguous(text, message):
    # in a comma locale "2.000" is two thousand; read as a decimal point it silently became 2
    with decimal_comma(), pytest.raises(AnswerParseError) as err:
        parse_text(text)
    assert message in str(err.value)


@pytest.mark.parametrize("text, value", [("0.125", 0.125), ("2.5", 2.5), ("1234.567", 1234.567), ("2.000e3", 2000.0),
                                         ("12.34", 12.34)])
def test_a_point_that_cannot_group_thousands_is_still_a_decimal_point(text, value):
    with decimal_comma():
        assert evaluate_all(parse_text(text)) == pytest.approx(value)
    assert evaluate_all(parse_text("2.000")) == 2.0                 # and on a decimal-point sheet, as before


def test_grade_names_the_part_whose_point_is_ambiguous_and_grades_the_rest(comma_sheet, tmp_path):
    key = json.loads((comma_sheet / "key.json").read_text())
    n, part = next((k, p["parts"][0]) for k, p in enumerate(key["problems"], 1)
                   if isinstance(p["parts"][0]["expected"], (int, float)))
    text = re.sub(rf"(\[q{n}\]\n{part['id']} = )\"[^\"]*\"", r'\1"2.000"', _answers(key, _comma))
    (tmp_path / "ada.toml").write_text(text)
    res = runner.invoke(app, ["grade", str(comma_sheet / "key.json"), str(tmp_path / "ada.toml"), "--json", "-"],
                        env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    parts = {f"{pr['question']}.{p['part']}": p for pr in data["submissions"][0]["problems"] for p in pr["parts"]}
    odd = parts.pop(f"q{n}.{part['id']}")
    assert odd["status"] == "unparseable" and "'2.000' at column 1 is ambiguous" in odd["feedback"]
    assert all(p["status"] == "correct" for p in parts.values())


@pytest.mark.parametrize("comma", [True, False])
@pytest.mark.parametrize("text, value", [("4 832", 4832), ("4\u202f832", 4832), ("1 234 567", 1234567), ("4’832", 4832),
                                         ("-4'832", -4832), ("4\u00a0832", 4832), ("4 832e3", 4832e3)])
def test_thousands_grouped_with_spaces_or_apostrophes_are_read_where_one_value_is_asked(comma, text, value):
    # issue 36: "17 010" was refused ("write numbers without a thousands separator"), although a
    # decimal-comma sheet prints its own thousands so (65 536) and a teacher reads it as one number;
    # "4 832e3" is 4832e3, never 4832 (a thousand times smaller)
    with decimal_comma(comma):
        assert evaluate_all(parse_text(text, scalar=True)) == value


@pytest.mark.parametrize("comma", [True, False])
@pytest.mark.parametrize("text, message", [
    ("4 83", "expected one number, got 2 values"),       # not groups of three: two values, named as such
    ("4 832 1", "'4 832' at column 1: write numbers without a thousands separator: 4832"),
    ("4'83", "\"'\" at column 2: expected a number, such as"),
])
def test_thousands_grouped_wrongly_are_not_read_as_one_number(comma, text, message):
    from examprep.answers import parse_answer
    from examprep.problem import Part

    with decimal_comma(comma), pytest.raises(AnswerParseError) as err:
        parse_answer(Part("a", "p", "number", 4832.0), text)
    assert message in str(err.value), str(err.value)


def test_the_decimal_part_after_spaced_thousands_uses_the_sheets_decimal_mark():
    with decimal_comma():
        assert evaluate_all(parse_text("4 832,5", scalar=True)) == 4832.5
    with pytest.raises(AnswerParseError, match=r"separator: 4832\.5$"):
        parse_text("4 832,5", scalar=True)           # a decimal comma on a decimal-point sheet, as before
    assert evaluate_all(parse_text("4 832.5", scalar=True)) == 4832.5


def test_spaces_still_separate_the_entries_of_a_vector_and_an_apostrophe_is_named_there_too():
    assert evaluate_all(parse_text("4 832")) == [4.0, 832.0]
    with decimal_comma():
        assert evaluate_all(parse_text("[4; 832]")) == [4.0, 832.0]
    with pytest.raises(AnswerParseError, match="thousands separator: 4832"):
        parse_text("[4'832, 1]")


@pytest.mark.parametrize("comma, text, message", [
    (True, ",75", "',75': write the zero before the decimal comma: 0,75"),
    (True, "−,5", "'−,5': write the zero before the decimal comma: -0,5"),
    (False, ",75", "',75': write the zero before the decimal point: 0.75"),
])
def test_a_decimal_part_without_its_zero_is_named(comma, text, message):
    with decimal_comma(comma), pytest.raises(AnswerParseError) as err:
        parse_text(text, scalar=True)
    assert str(err.value) == message


@pytest.mark.parametrize("text, message", [
    (",5", "',5' at column 1: write the zero before the decimal comma: 0,5"),
    ("[,75; 1]", "',75' at column 2: write the zero before the decimal comma: 0,75"),
    ("[1; -,5]", "',5' at column 6: write the zero before the decimal comma: 0,5"),
])
def test_a_decimal_comma_without_its_zero_is_named_in_a_list_too(text, message):
    with decimal_comma(), pytest.raises(AnswerParseError) as err:
        parse_text(text)
    assert str(err.value) == message


@pytest.mark.parametrize("comma", [True, False])
def test_no_group_is_read_out_of_an_exponent(comma):
    with decimal_comma(comma):                        # two values, which the part's reader refuses as such
        assert len(parse_text("1e3 000", scalar=True)) == 2
