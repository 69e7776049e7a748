"""`grade --gradebook LMS FILE [--roster R]` (issue 23): each LMS's import CSV — its column names,
the identifier columns it matches on, points possible — filled from the roster's columns (or the
submissions' ids, with one warning for what stays empty); a student with no submission gets an
empty cell, never 0, and is listed."""
import csv
import io
import json

import pytest
from typer.testing import CliRunner

from examprep.cli import app
from examprep.keys import read_key

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "80", "NO_COLOR": "1"})


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    d = tmp_path_factory.mktemp("gradebook")
    res = run("generate", "softmax-cross-entropy", "--seed", "7", "--key", d / "key.json")
    assert res.exit_code == 0, res.output
    key = read_key(d / "key.json")
    p = key.problems[0]
    subs = d / "subs"
    subs.mkdir()
    # ada: everything right; bob: nothing; zed: right, but not on the roster (with --roster: not graded, exit 1)
    for sid, right in (("ada", True), ("bob", False), ("zed", True)):
        answers = {f"q1.{part.id}": (json.dumps(part.expected) if right else "") for part in p.parts}
        (subs / f"{sid}.json").write_text(json.dumps({"student_id": sid, **answers}))
    (d / "roster.csv").write_text("id,name,email,username,sis_id\n"
                                  "ada,Ada Lovelace,ada@uni.example,alove,1001\n"
                                  "bob,Bob Babbage,bob@uni.example,bbab,1002\n"
                                  "cyd,Cyd Charisse,cyd@uni.example,ccha,1003\n")
    res = run("grade", d / "key.json", d / "subs", "-q", "--json", d / "grades.json")
    scores = {s["student_id"]: s["score"] for s in json.loads((d / "grades.json").read_text())["submissions"]}
    assert scores["ada"] > 0 and scores["bob"] == 0
    return d, p.points, scores


def book(course, lms, roster=True):
    d = course[0]
    out = d / f"{lms}{'-r' if roster else ''}.csv"
    res = run("grade", d / "key.json", d / "subs", "-q", "--gradebook", lms, out,
              *(("--roster", d / "roster.csv") if roster else ()))
    assert res.exit_code == (1 if roster else 0), res.output
    return list(csv.reader(io.StringIO(out.read_text(), newline=""))), res.stderr


def test_canvas(course):
    rows, err = book(course, "canvas")
    _, points, scores = course
    assert rows[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"] and len(rows[0]) == 6
    assert rows[1][0].strip() == "Points Possible" and float(rows[1][5]) == points
    body = {r[2]: r for r in rows[2:]}
    assert body["1001"][:4] == ["Ada Lovelace", "", "1001", "alove"] and float(body["1001"][5]) == scores["ada"]
    assert float(body["1002"][5]) == 0                     # bob submitted and scored 0
    assert body["1003"][5] == ""                           # cyd did not submit: empty, never 0
    assert "cyd" in err and "empty cell" in err
    # the roster is the only source of valid ids (issue 35): zed is named and gets no row
    assert "unknown id: student id 'zed' is not on the roster" in err and "zed" not in body


def test_moodle(course):
    rows, _ = book(course, "moodle")
    assert rows[0][:4] == ["ID number", "Username", "Email address", "Full name"]
    body = {r[0]: r for r in rows[1:]}
    assert body["1001"][1:4] == ["alove", "ada@uni.example", "Ada Lovelace"]
    assert body["1003"][4] == ""


def test_blackboard_quotes_every_field(course):
    d, points, _ = course
    rows, _ = book(course, "blackboard")
    assert rows[0][:4] == ["Last Name", "First Name", "Username", "Student ID"]
    assert rows[0][4].endswith(f"[Total Pts: {points:g} Score]")
    body = {r[2]: r for r in rows[1:]}
    assert body["alove"][:2] == ["Lovelace", "Ada"] and body["ccha"][4] == ""
    text = (d / "blackboard-r.csv").read_text()
    assert all(line.startswith('"') and line.endswith('"') for line in text.splitlines())


def test_brightspace(course):
    rows, _ = book(course, "brightspace")
    assert rows[0][0] == "OrgDefinedId" and rows[0][1] == "Username"
    assert rows[0][2].endswith(" Points Grade") and rows[0][3] == "End-of-Line Indicator"
    body = {r[0]: r for r in rows[1:]}
    assert body["1001"][1] == "#alove" and body["1001"][3] == "#" and body["1003"][2] == ""


def test_without_roster_ids_come_from_submissions_and_one_warning_names_the_empty_columns(course):
    rows, err = book(course, "canvas", roster=False)
    assert sorted(r[2] for r in rows[2:]) == ["ada", "bob", "zed"]
    assert err.count("left empty") == 1 and "SIS Login ID" in err


@pytest.mark.parametrize("args, message", [
    (("--gradebook", "d2l", "x.csv"), "unknown LMS 'd2l'"),
    (("--gradebook", "canvas", "x.csv", "--roster", "none.csv"), "none.csv"),
])
def test_bad_options_one_line_exit_2(course, args, message):
    d = course[0]
    args = [str(d / a) if a.endswith(".csv") and a != "x.csv" else a for a in args]
    res = run("grade", d / "key.json", d / "subs", *args)
    assert res.exit_code == 2 and message in res.stderr and "Traceback" not in res.output


def test_roster_without_id_column(course):
    d = course[0]
    (d / "bad-roster.csv").write_text("email\na@b\n")
    res = run("grade", d / "key.json", d / "subs", "--gradebook", "canvas", d / "x.csv", "--roster", d / "bad-roster.csv")
    assert res.exit_code == 2 and "no id column" in res.stderr and not (d / "x.csv").exists()


@pytest.mark.parametrize("lms", ["canvas", "moodle", "blackboard", "brightspace"])
def test_a_roster_name_that_looks_like_a_formula_is_written_as_text(course, tmp_path, lms):
    d = course[0]
    (tmp_path / "roster.csv").write_text('id,name,email,username,sis_id\n'
                                         'ada,"=HYPERLINK(""http://x"")",ada@uni.example,@alove,1001\n')
    out = tmp_path / "book.csv"
    res = run("grade", d / "key.json", d / "subs", "-q", "--gradebook", lms, out, "--roster", tmp_path / "roster.csv")
    assert res.exit_code == 1, res.output           # bob and zed are not on this roster: named, not graded
    assert "student id 'bob' is not on the roster" in res.stderr
    cells = [c for row in csv.reader(io.StringIO(out.read_text(), newline="")) for c in row]
    assert not any(c[:1] in ("=", "+", "-", "@") for c in cells), cells
    if lms in ("canvas", "moodle"):                 # the LMSs with a full-name column keep the name, as text
        assert "'=HYPERLINK(\"http://x\")" in cells, cells


def test_an_unreadable_submission_is_named_unreadable_with_its_reason_not_missing(course, tmp_path):
    """Issue 36: cyd's file was unreadable and the gradebook said "no submission from cyd"."""
    d = course[0]
    subs = tmp_path / "subs"
    subs.mkdir()
    for f in (d / "subs").iterdir():
        (subs / f.name).write_bytes(f.read_bytes())
    # an upload named by the LMS, not by its student: the id is the one written at its top
    broken = subs / "upload 3.toml"
    broken.write_text('student_id = "cyd"\n[q1]\nloss = 0.5"\n', encoding="utf-8")
    out = tmp_path / "canvas.csv"
    res = run("grade", d / "key.json", subs, "-q", "--gradebook", "canvas", out, "--roster", d / "roster.csv")
    assert res.exit_code == 1
    reason = (f"{broken}: invalid TOML at line 3: loss = 0.5\" — an unmatched quote (\"): write the answer between "
              "two quotes, loss = \"0.5\" (TOML: expected newline or end of document after a statement, column 11)")
    lines = [line for line in res.stderr.splitlines() if "cyd" in line or "upload 3" in line]
    assert lines == [f"unreadable submission from cyd, on the roster (an empty cell in the gradebook, not 0): {reason}"]
    assert "no submission" not in res.stderr
    rows = {r[2]: r for r in csv.reader(io.StringIO(out.read_text(), newline=""))}
    assert rows["1003"][5] == ""                    # an empty cell, never 0
