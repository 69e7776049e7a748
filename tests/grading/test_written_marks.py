"""Written parts in grading: pending (0 points, never wrong) in every output until `--marks`
merges the marker's CSV; bad mark rows are errors naming the row; `--marks-template` lists every
written part of every student."""
import csv
import io
import json
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep.cli import app

runner = CliRunner()
SOFTMAX = Path(str(resources.files("examprep") / "bank" / "questions" / "softmax-by-hand.toml"))


def run(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "80", "NO_COLOR": "1"})


@pytest.fixture
def graded(tmp_path):
    key = tmp_path / "key.json"
    assert run("generate", SOFTMAX, "--seed", "3", "--key", key).exit_code == 0
    expected = json.loads(key.read_text())["problems"][0]["parts"]
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ann.toml").write_text(f'student_id = "ann"\n[q1]\nprobs = "{expected[0]["expected"]}"\n'
                                   'w1 = "The log cancels the exp: p - y."\n')
    (subs / "ben.toml").write_text('student_id = "ben"\n[q1]\nw1 = "no idea"\n')
    return tmp_path, key, subs


def test_written_parts_are_pending_everywhere_until_marked(graded):
    d, key, subs = graded
    res = run("grade", key, subs, "--json", d / "g.json", "--csv", d / "g.csv", "--report", d / "rep",
              "--gradescope", d / "gs")
    assert res.exit_code == 0, res.output
    g = json.loads((d / "g.json").read_text())
    ann = next(s for s in g["submissions"] if s["student_id"] == "ann")
    w1 = ann["problems"][0]["parts"][2]
    assert (w1["part"], w1["status"], w1["score"], w1["max_score"]) == ("w1", "pending", 0, 2.0)
    assert w1["feedback"] == "to be marked by hand" and w1["raw"] == "The log cancels the exp: p - y."
    rows = list(csv.DictReader(io.StringIO((d / "g.csv").read_text())))
    assert rows[0]["q1.w1"] == "pending" and rows[0]["total"] == "2"
    assert "to be marked by hand" in (d / "rep" / "ann.md").read_text()
    gs = json.loads((d / "gs" / "ann" / "results.json").read_text())
    test = next(t for t in gs["tests"] if " w1 " in t["name"])
    assert "status" not in test and test["output"].startswith("to be marked by hand")
    assert "1 to mark" in " ".join(res.stdout.split())


def test_marks_merge_into_totals_csv_json_reports_and_gradescope(graded):
    d, key, subs = graded
    assert run("grade", key, subs, "--marks-template", d / "marks.csv", "-q").exit_code == 0
    rows = list(csv.DictReader(io.StringIO((d / "marks.csv").read_text())))
    assert [(r["student_id"], r["part"], r["max_points"], r["points"]) for r in rows] == [
        ("ann", "q1.w1", "2", ""), ("ben", "q1.w1", "2", "")]
    assert rows[0]["answer"] == "The log cancels the exp: p - y." and "Why is this gradient" in rows[0]["prompt"]
    text = (d / "marks.csv").read_text().replace("ann,,q1.w1,2,,", "ann,,q1.w1,2,1.5,Names p − y; say why")
    (d / "marks.csv").write_text(text)
    res = run("grade", key, subs, "--marks", d / "marks.csv", "--json", d / "g.json", "--csv", d / "g.csv",
              "--report", d / "rep", "--gradescope", d / "gs")
    assert res.exit_code == 0, res.output
    assert "merged 1 hand mark from" in res.stderr and "1 written part still to be marked" in res.stderr
    g = json.loads((d / "g.json").read_text())
    ann = next(s for s in g["submissions"] if s["student_id"] == "ann")
    w1 = ann["problems"][0]["parts"][2]
    assert (w1["status"], w1["score"], w1["feedback"]) == ("marked", 1.5, "Names p − y; say why")
    assert ann["score"] == pytest.approx(3.5)
    rows = {r["student_id"]: r for r in csv.DictReader(io.StringIO((d / "g.csv").read_text()))}
    assert rows["ann"]["q1.w1"] == "1.5" and rows["ann"]["total"] == "3.5" and rows["ben"]["q1.w1"] == "pending"
    assert "marked by hand" in (d / "rep" / "ann.md").read_text()
    gs = json.loads((d / "gs" / "ann" / "results.json").read_text())
    assert gs["score"] == pytest.approx(3.5)


@pytest.mark.parametrize("row, message", [
    ("cam,q1.w1,1,", "row 2: unknown student 'cam'"),
    ("ann,q1.w2,1,", "row 2: ann has no part 'q1.w2'; did you mean q1.w1?"),
    ("ann,q1.probs,1,", "row 2: q1.probs is not a written part"),
    ("ann,q1.w1,3,", "row 2: 3 points for ann q1.w1, which is worth 2"),
    ("ann,q1.w1,-1,", "row 2: points must be a number from 0"),
    ("ann,q1.w1,two,", "row 2: points 'two' is not a number"),
    ("ann,q1.w1,1,\nann,q1.w1,2,", "row 3: ann q1.w1 is already marked in row 2"),
])
def test_a_bad_mark_row_is_one_error_naming_it_and_nothing_is_written(graded, row, message):
    d, key, subs = graded
    (d / "m.csv").write_text("student_id,part,points,comment\n" + row + "\n")
    res = run("grade", key, subs, "--marks", d / "m.csv", "--json", d / "g.json")
    assert res.exit_code == 2
    assert res.stderr.strip() == f"error: {d / 'm.csv'}: {message}" or message in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not (d / "g.json").exists()


@pytest.mark.parametrize("rows, message", [
    ("ann,,q1.w1,2,1,5,,,\n", "row 2: 9 cells where the header has 8 (a decimal comma?"),
    ("ann,,q1.w1,2,1\n", "row 2: 5 cells where the header has 8"),
    ('ann,,q1.w1,2,1,"good,,\n', "line 2: not valid CSV"),
    ("ann,,q1.w1,3,1,,,\n", "row 2: max_points 3 for ann q1.w1, which is worth 2"),
])
def test_a_malformed_template_row_is_an_error_not_a_wrong_mark(graded, rows, message):
    d, key, subs = graded
    (d / "m.csv").write_text("student_id,name,part,max_points,points,comment,answer,prompt\n" + rows)
    res = run("grade", key, subs, "--marks", d / "m.csv", "--json", d / "g.json")
    assert res.exit_code == 2, res.output
    assert res.stderr.strip().startswith(f"error: {d / 'm.csv'}: {message}"), res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not (d / "g.json").exists()


def test_a_marks_file_without_the_columns_says_which(graded):
    d, key, subs = graded
    (d / "m.csv").write_text("id,part,score\nann,q1.w1,1\n")
    res = run("grade", key, subs, "--marks", d / "m.csv")
    assert res.exit_code == 2 and "row 1: no 'student_id' column" in res.stderr


def test_an_existing_marks_template_is_never_overwritten_without_force(graded):
    d, key, subs = graded
    (d / "marks.csv").write_text("student_id,part,points,comment\nann,q1.w1,1.5,filled in\n")
    res = run("grade", key, subs, "--marks-template", d / "marks.csv", "--json", d / "g.json")
    assert res.exit_code == 2, res.output
    assert res.stderr.strip() == f"error: --marks-template {d / 'marks.csv'}: already exists; use --force to replace it"
    assert "filled in" in (d / "marks.csv").read_text() and not (d / "g.json").exists()
    res = run("grade", key, subs, "--marks-template", d / "marks.csv", "--force", "-q")
    assert res.exit_code == 0, res.output
    assert "filled in" not in (d / "marks.csv").read_text()


def test_the_marks_file_as_its_own_template_is_refused_before_merging(graded):
    d, key, subs = graded
    (d / "marks.csv").write_text("student_id,part,points,comment\nann,q1.w1,1.5,\n")
    res = run("grade", key, subs, "--marks", d / "marks.csv", "--marks-template", d / "marks.csv", "--force")
    assert res.exit_code == 2 and "hand mark" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "is the --marks file being merged" in res.stderr
    assert (d / "marks.csv").read_text().endswith("1.5,\n")


def test_the_template_keeps_line_breaks_and_only_the_markers_own_comments(graded):
    d, key, subs = graded
    (subs / "ben.toml").write_text('student_id = "ben"\n[q1]\nw1 = """Line one.\nLine two."""\n')
    assert run("grade", key, subs, "--marks-template", d / "marks.csv", "-q").exit_code == 0
    rows = list(csv.DictReader(io.StringIO((d / "marks.csv").read_text(), newline="")))
    assert rows[1]["answer"] == "Line one.\nLine two." and "\\n" not in (d / "marks.csv").read_text()
    (d / "m.csv").write_text("student_id,part,points,comment\nann,q1.w1,1.5,\nben,q1.w1,1,Say why.\n")
    res = run("grade", key, subs, "--marks", d / "m.csv", "--marks-template", d / "marks.csv", "--force", "-q")
    assert res.exit_code == 0, res.output
    rows = {r["student_id"]: r for r in csv.DictReader(io.StringIO((d / "marks.csv").read_text(), newline=""))}
    assert (rows["ann"]["points"], rows["ann"]["comment"]) == ("1.5", "")          # not "marked by hand: 1.5 of 2"
    assert (rows["ben"]["points"], rows["ben"]["comment"]) == ("1", "Say why.")
    res = run("grade", key, subs, "--marks", d / "marks.csv", "--json", d / "g.json")
    assert res.exit_code == 0 and "merged 2 hand marks" in res.stderr, res.output      # the template reads back


def test_a_score_with_parts_still_to_mark_says_how_many_points_wait(graded):
    d, key, subs = graded
    res = run("grade", key, subs / "ann.toml")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0].startswith("ann  2/7 (29%) · 2 pt to mark  ")
    (d / "m.csv").write_text("student_id,part,points,comment\nann,q1.w1,1.5,\n")
    res = run("grade", key, subs / "ann.toml", "--marks", d / "m.csv")
    assert res.stdout.splitlines()[0].startswith("ann  3.5/7 (50%)  ") and "to mark" not in res.stdout.splitlines()[0]


def test_a_blank_written_part_is_no_answer_everywhere_and_not_to_mark(graded):
    # issue 36 item 4: an untouched essay was "to mark" (pending), so every blank essay of a class
    # went into the marks template and the `todo` column
    d, key, subs = graded
    (subs / "ben.toml").write_text('student_id = "ben"\n[q1]\nw1 = "  \\n\\t "\n')       # spaces only
    (subs / "cy.toml").write_text('student_id = "cy"\n[q1]\nprobs = "[1, 0, 0]"\n')      # no w1 at all
    res = run("grade", key, subs, "--json", d / "g.json", "--csv", d / "g.csv", "--report", d / "rep",
              "--gradescope", d / "gs", "--marks-template", d / "marks.csv", "--gradebook", "canvas", d / "book.csv")
    assert res.exit_code == 0, res.output
    g = {s["student_id"]: s for s in json.loads((d / "g.json").read_text())["submissions"]}
    for sid in ("ben", "cy"):
        w1 = g[sid]["problems"][0]["parts"][2]
        assert (w1["part"], w1["status"], w1["score"], w1["feedback"]) == ("w1", "blank", 0, "no answer"), sid
        assert "to be marked" not in (d / "rep" / f"{sid}.md").read_text()
        test = next(t for t in json.loads((d / "gs" / sid / "results.json").read_text())["tests"] if " w1 " in t["name"])
        assert (test["status"], test["score"]) == ("failed", 0)
    assert g["ann"]["problems"][0]["parts"][2]["status"] == "pending"
    rows = {r["student_id"]: r for r in csv.DictReader(io.StringIO((d / "g.csv").read_text()))}
    assert (rows["ann"]["q1.w1"], rows["ben"]["q1.w1"], rows["cy"]["q1.w1"]) == ("pending", "0", "0")
    marks = list(csv.DictReader(io.StringIO((d / "marks.csv").read_text())))
    assert [(r["student_id"], r["part"]) for r in marks] == [("ann", "q1.w1")]
    table = {line.split()[0]: line for line in res.stdout.splitlines() if line.split()[:1] in (["ann"], ["ben"], ["cy"])}
    assert "to mark" in table["ann"] and "to mark" not in table["ben"] + table["cy"], res.stdout
    summary = res.stdout.split("class summary")[1].splitlines()
    head = next(line for line in summary if "question" in line)
    q1 = next(line for line in summary if line.strip().startswith("q1"))
    assert q1[head.index("todo"):].strip() == "1" and q1[head.index("blank"):head.index("unread")].strip() == "6"
    assert "1 student has written parts still to be marked" in res.stderr, res.stderr
    (subs / "ann.toml").write_text('student_id = "ann"\n[q1]\nprobs = "[1, 0, 0]"\nw1 = ""\n')  # no essay at all
    res = run("grade", key, subs, "--analysis", d / "an")
    assert res.exit_code == 0, res.output
    analysis = json.loads((d / "an" / "item-analysis.json").read_text())
    w1 = next(p for p in analysis["parts"] if p["part"] == "q1.w1")          # analysed, not left out
    assert (w1["blank"], w1["difficulty"]) == (3, 0) and "Left out until marked" not in res.stdout


def test_a_mark_for_a_blank_written_part_is_an_error_naming_the_row_and_0_is_read_past(graded):
    d, key, subs = graded
    (subs / "ben.toml").write_text('student_id = "ben"\n[q1]\nw1 = ""\n')
    (d / "m.csv").write_text("student_id,part,points,comment\nann,q1.w1,1.5,\nben,q1.w1,1,kind\n")
    res = run("grade", key, subs, "--marks", d / "m.csv", "--json", d / "g.json")
    assert res.exit_code == 2 and not (d / "g.json").exists()
    assert res.stderr.strip() == (f"error: {d / 'm.csv'}: row 3: ben q1.w1: no answer was written, so it earns "
                                  "no points (give 0 or leave the row out)"), res.stderr
    (d / "m.csv").write_text("student_id,part,points,comment\nann,q1.w1,1.5,\nben,q1.w1,0,\n")    # an older template's row
    res = run("grade", key, subs, "--marks", d / "m.csv", "--json", d / "g.json")
    assert res.exit_code == 0, res.output
    assert "merged 1 hand mark from" in res.stderr and "still to be marked" not in res.stderr
    ben = next(s for s in json.loads((d / "g.json").read_text())["submissions"] if s["student_id"] == "ben")
    assert (ben["problems"][0]["parts"][2]["status"], ben["score"]) == ("blank", 0)


def test_the_self_test_names_a_written_part_without_a_model_answer_once():
    from examprep.grading import self_test
    from examprep.keys import Key
    from examprep.problem import Part, Problem

    parts = [Part("w1", "Why?", "written", None, 2.0, model_answer="Because."),
             Part("w2", "How?", "written", None, 2.0, model_answer="  ")]
    checks, issues = self_test(Key("k", [Problem("authored", 1, 0, 1, "T", {}, [], parts, [])]))
    assert checks == 2 and issues == ["q1.w2 (authored): the written part has no model answer for the marker"]
