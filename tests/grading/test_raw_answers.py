"""What the student typed is kept and shown next to the value it was read as (issue 14, item 10):
in the terminal feedback, the Markdown report, Gradescope's output, grades.csv and grades.json."""
import csv
import json
import math

import pytest
from typer.testing import CliRunner

from examprep import generators
from examprep.answers import check_part
from examprep.answers.raw import raw_text
from examprep.cli import app
from examprep.keys import Key, write_key
from examprep.problem import Part, Tolerance

runner = CliRunner()


@pytest.mark.parametrize("raw,text", [
    ("e/(2e + 1)", "e/(2e + 1)"), ("  1/3 ", "  1/3 "), (0.18234567, "0.18234567"), (7, "7"), (True, "true"),
    ([[1, 0.5], [2, 3]], "[[1, 0.5], [2, 3]]"), (math.nan, "nan"), (-math.inf, "-inf"), (None, None), ("", ""),
    (10**5000, "a number of 5001 digits"), ("x" * 5000, "x" * 500 + "…"),
], ids=lambda v: ascii(v)[:20] if not isinstance(v, int) or abs(v) < 10**100 else "huge")
def test_raw_text_is_what_was_written(raw, text):
    assert raw_text(raw) == text


def test_the_part_result_keeps_the_raw_text_next_to_the_value():
    part = Part("c", "c", "number", math.e / (2 * math.e + 1), tolerance=Tolerance("sigfigs", 3))
    d = check_part(part, "e/(2*e + 1)").to_dict()
    assert d["raw"] == "e/(2*e + 1)" and d["value"] == pytest.approx(math.e / (2 * math.e + 1))
    assert check_part(part, "0,5").to_dict()["raw"] == "0,5"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("raw")
    problem = generators.build("softmax-cross-entropy", 7, 1)
    write_key(tmp / "key.json", Key("raw", [problem]))
    (tmp / "ada.toml").write_text('student_id = "ada"\n[q1]\nloss = "1/3"\nderivation = "-(y_i - p_i)"\n'
                                  "grad_logits = [0.123456789, 2, 3]\n", encoding="utf-8")
    res = runner.invoke(app, ["grade", str(tmp / "key.json"), str(tmp / "ada.toml"), "--json", str(tmp / "g.json"),
                              "--csv", str(tmp / "g.csv"), "--report", str(tmp / "rep"), "--gradescope", str(tmp / "gs"),
                              "--no-color"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    return tmp, res


def test_json_has_raw_and_value(graded):
    tmp, _ = graded
    parts = {p["part"]: p for p in json.loads((tmp / "g.json").read_text())["submissions"][0]["problems"][0]["parts"]}
    assert (parts["loss"]["raw"], parts["loss"]["value"]) == ("1/3", pytest.approx(1 / 3))
    assert parts["grad_logits"]["raw"] == "[0.123456789, 2, 3]"
    assert parts["derivation"]["raw"] == "-(y_i - p_i)"
    assert parts["probs"]["raw"] is None


def test_csv_has_each_parts_raw_answer(graded):
    tmp, _ = graded
    row = next(csv.DictReader((tmp / "g.csv").open(encoding="utf-8")))
    assert row["q1.loss answer"] == "1/3" and row["q1.derivation answer"] == "'-(y_i - p_i)"   # a formula guard
    assert row["q1.grad_logits answer"] == "[0.123456789, 2, 3]" and row["q1.probs answer"] == ""
    assert row["q1.loss"] == "0"                          # the score columns are unchanged


def test_feedback_report_and_gradescope_show_the_raw_text(graded):
    tmp, res = graded
    assert "your answer 1/3 (read as 0.3333)" in res.stdout
    line = next(ln for ln in res.stdout.splitlines() if "your answer [0.123456789, 2, 3]" in ln)
    assert "read as" not in line                  # the value is what was written: no rounded copy
    line = next(ln for ln in res.stdout.splitlines() if "your answer -(y_i" in ln)
    assert "read as" not in line                  # nothing to add where the value reads the same
    report = (tmp / "rep" / "ada.md").read_text()
    assert "| `1/3` (read as 0.3333) |" in report        # as written, in code; parentheses make no Markdown
    tests = json.loads((tmp / "gs" / "results.json").read_text())["tests"]
    loss = next(t for t in tests if " loss " in t["name"])
    assert "your answer: 1/3 (read as 0.3333)" in loss["output"]
