"""One grade per student, never a classmate's (issue 35, item 2; item 11's hard links): different
submissions for one id are a conflict graded from none of them; identical ones are one; --newest
takes the newest file; a roster is the only source of ids; an LMS download's file name (or
--id-from-filename) says whose a file is, and a student_id that disagrees is a conflict."""
import csv
import io
import json
import os

import pytest
from typer.testing import CliRunner

from examprep import generators
from examprep.answers.files import collect
from examprep.cli import app
from examprep.keys import Key, write_key

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    d = tmp_path_factory.mktemp("key")
    problem = generators.build("softmax-cross-entropy", 3, 1)
    write_key(d / "key.json", Key("conflicts", [problem]))
    return d / "key.json", problem


def answers(key, sid=None, right=True):
    problem = key[1]
    data = {f"q1.{p.id}": (json.dumps(p.expected) if right else "0") for p in problem.parts if p.kind != "expression"}
    return {"student_id": sid, **data} if sid else data


def put(folder, name, data, mtime=None):
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(data))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def graded(path):
    return {s["student_id"]: s for s in json.loads(path.read_text())["submissions"]}


ROSTER = ("id,name,email,lms_id\n"
          "s0001,Ada Lovelace,ada@uni.example,12345\n"
          "s0002,Bob Babbage,bob@uni.example,12346\n"
          "s0003,Cyd Charisse,cyd@uni.example,\n")


# ----------------------------------------------------------------------------- one id, two submissions

def test_different_submissions_for_one_id_are_a_conflict_graded_from_neither(key, tmp_path):
    c = tmp_path / "class"
    put(c, "ada.json", answers(key, "s1"), mtime=1_700_000_000)
    put(c, "ada-again.json", answers(key, "s1", right=False), mtime=1_700_000_600)
    put(c, "bob.json", answers(key, "s2"))
    res = run("grade", key[0], c, "--json", tmp_path / "g.json", "--gradebook", "canvas", tmp_path / "book.csv",
              "--csv", tmp_path / "g.csv")
    assert res.exit_code == 1, res.output
    assert sorted(graded(tmp_path / "g.json")) == ["s2"]
    data = json.loads((tmp_path / "g.json").read_text())
    assert data["conflicts"] == [{"student_id": "s1", "status": "conflict",
                                  "reason": "2 submissions with different answers",
                                  "sources": [str(c / "ada-again.json"), str(c / "ada.json")]}]
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("conflict:")]
    assert len(lines) == 1 and "ada.json" in lines[0] and "ada-again.json" in lines[0], res.stderr
    assert "remove all but one, or rerun with --newest" in lines[0]
    listed = list(csv.reader((tmp_path / "g-conflicts.csv").open()))
    assert listed[0] == ["student_id", "status", "reason", "sources"] and listed[1][:2] == ["s1", "conflict"]
    rows = {r["student_id"]: r for r in csv.DictReader((tmp_path / "g.csv").open())}
    assert (rows["s1"]["total"], rows["s1"]["percent"]) == ("conflict", "") and float(rows["s2"]["total"]) > 0
    book = {r[2]: r for r in csv.reader(io.StringIO((tmp_path / "book.csv").read_text(), newline=""))}
    assert book["s1"][5] == "" and float(book["s2"][5]) > 0          # an empty cell, as for a missing student


def test_rows_of_class_files_conflict_too_and_name_their_rows(key, tmp_path):
    c = tmp_path / "class"
    parts = [a for a in answers(key)]
    rows = ["student_id," + ",".join(parts), "s1," + ",".join("1" for _ in parts), "s1," + ",".join("2" for _ in parts)]
    c.mkdir()
    (c / "class.csv").write_text("\n".join(rows) + "\n")
    res = run("grade", key[0], c, "--json", "-")
    assert res.exit_code == 1
    assert json.loads(res.stdout)["submissions"] == []
    assert f"{c / 'class.csv'}, row 2 (line 2); {c / 'class.csv'}, row 3 (line 3)" in res.stderr
    line = next(ln for ln in res.stderr.splitlines() if ln.startswith("conflict:"))
    assert "(--newest cannot choose: several are rows of one file)" in line, line
    assert line.endswith("; not graded (remove all but one)"), line           # --newest is not offered


def test_newest_never_settles_a_claim_on_an_id_by_another_uploader(key, tmp_path):
    c = tmp_path / "class"
    put(c, "Bob Babbage_12346_assignsubmission_file_a.json", answers(key, "s0001"), mtime=1_700_000_000)
    put(c, "Ada Lovelace_12345_assignsubmission_file_a.json", answers(key, "s0001", right=False), mtime=1_700_000_000)
    put(c, "mine.json", answers(key, "s0002"), mtime=1_700_000_000)
    put(c, "Cyd Charisse_777_assignsubmission_file_a.json", answers(key, "s0002", right=False), mtime=1_700_000_600)
    for extra in ([], ["--newest"]):                     # no roster: the uploaders are unchecked, and differ
        res = run("grade", key[0], c, "--json", "-", *extra)
        assert res.exit_code == 1 and json.loads(res.stdout)["submissions"] == [], res.output
        lines = [ln for ln in res.stderr.splitlines() if ln.startswith("conflict:")]
        assert len(lines) == 2 and "--newest took" not in res.stderr, res.stderr
        assert all("(--newest cannot choose: their files' names say different uploaders)" in ln
                   and ln.endswith("; not graded (remove all but one)") for ln in lines), lines


def test_identical_answers_for_one_id_are_one_submission_noted(key, tmp_path):
    c = tmp_path / "class"
    put(c, "a.json", answers(key, "s1"))
    (c / "b.toml").write_text('student_id = "s1"\n# downloaded twice\n' + "".join(
        f"{k!r} = {json.dumps(v)}\n".replace("'", '"') for k, v in answers(key).items()))
    # the same answers as JSON values in nested tables, and as a class CSV's row with a blank column
    put(c, "c.json", {"student_id": "s1", "q1": {k[3:]: json.loads(v) for k, v in answers(key).items()}})
    (c / "d.csv").write_text("student_id," + ",".join(answers(key)) + ",q1.unanswered\ns1,"
                             + ",".join(json.dumps(v) for v in answers(key).values()) + ",\n")
    res = run("grade", key[0], c, "--json", "-")
    assert res.exit_code == 0, res.output
    subs = json.loads(res.stdout)["submissions"]
    assert [s["student_id"] for s in subs] == ["s1"] and subs[0]["percent"] > 50
    assert (f"note: student 's1': 4 identical submissions ({c / 'a.json'}; {c / 'b.toml'}; {c / 'c.json'}; "
            f"{c / 'd.csv'}, row 2 (line 2)): graded once") in res.stderr


def test_newest_takes_the_newest_file_and_says_why(key, tmp_path):
    c = tmp_path / "class"
    put(c, "first.json", answers(key, "s1", right=False), mtime=1_700_000_000)
    put(c, "second.json", answers(key, "s1"), mtime=1_700_000_600)
    res = run("grade", key[0], c, "--json", "-", "--newest")
    assert res.exit_code == 0, res.output
    subs = json.loads(res.stdout)["submissions"]
    assert [s["source"] for s in subs] == [str(c / "second.json")] and subs[0]["percent"] > 50
    assert (f"--newest took {c / 'second.json'}, the newest file (modified 2023-11-14 22:23:20 UTC), over "
            f"{c / 'first.json'} (modified 2023-11-14 22:13:20 UTC)") in res.stderr


def test_newest_cannot_choose_between_equal_times(key, tmp_path):
    c = tmp_path / "class"
    put(c, "first.json", answers(key, "s1", right=False), mtime=1_700_000_000)
    put(c, "second.json", answers(key, "s1"), mtime=1_700_000_000)
    res = run("grade", key[0], c, "--json", "-", "--newest")
    assert res.exit_code == 1 and json.loads(res.stdout)["submissions"] == []
    assert "--newest cannot choose" in res.stderr and "same modification time" in res.stderr
    assert res.stderr.rstrip().splitlines()[-2].endswith("; not graded (remove all but one)")


# ----------------------------------------------------------------------------- the roster

def test_an_id_not_on_the_roster_is_named_and_not_graded(key, tmp_path):
    c = tmp_path / "class"
    put(c, "ada.json", answers(key, "s0001"))
    put(c, "who.json", answers(key, "s9999"))
    (tmp_path / "roster.csv").write_text(ROSTER)
    res = run("grade", key[0], c, "--roster", tmp_path / "roster.csv", "--json", tmp_path / "g.json")
    assert res.exit_code == 1, res.output
    assert sorted(graded(tmp_path / "g.json")) == ["s0001"]
    lines = [ln for ln in res.stderr.splitlines() if "s9999" in ln]
    assert lines == [f"unknown id: student id 's9999' is not on the roster {tmp_path / 'roster.csv'}: "
                     f"{c / 'who.json'}; not graded"]
    unknown = json.loads((tmp_path / "g.json").read_text())["unknown_ids"]
    assert [(u["student_id"], u["status"], u["sources"]) for u in unknown] == [("s9999", "unknown id", [str(c / "who.json")])]
    listed = list(csv.DictReader((tmp_path / "g-conflicts.csv").open()))
    assert [(r["student_id"], r["status"]) for r in listed] == [("s9999", "unknown id")]


# ----------------------------------------------------------------------------- LMS download names

def test_a_moodle_file_claiming_a_classmates_id_is_a_conflict(key, tmp_path):
    c = tmp_path / "class"
    put(c, "Ada Lovelace_12345_assignsubmission_file_answers.json", answers(key, "s0002"))     # Bob's id
    put(c, "Bob Babbage_12346_assignsubmission_file_answers.json", answers(key, "s0002", right=False))
    put(c, "Cyd Charisse_12347_assignsubmission_file_answers.json", answers(key))      # no id: its owner's, by name
    (tmp_path / "roster.csv").write_text(ROSTER)
    res = run("grade", key[0], c, "--roster", tmp_path / "roster.csv", "--json", tmp_path / "g.json")
    assert res.exit_code == 1, res.output
    got = graded(tmp_path / "g.json")
    assert sorted(got) == ["s0002", "s0003"] and got["s0002"]["percent"] == 0 and got["s0003"]["percent"] > 50
    line = next(ln for ln in res.stderr.splitlines() if ln.startswith("conflict:"))
    assert (f"file {c / 'Ada Lovelace_12345_assignsubmission_file_answers.json'} is Ada Lovelace's upload "
            "(Moodle participant 12345) but claims student_id s0002") in line
    assert line.startswith("conflict: student 's0001'") and "fix or remove the file" in line


def test_a_late_canvas_file_is_matched_by_name_when_the_roster_has_no_lms_id(key, tmp_path):
    c = tmp_path / "class"
    put(c, "charissecyd_late_777_888_answers.json", answers(key, "s0001"))
    put(c, "babbagebob_12346_999_answers.json", answers(key, "s0002"))
    (tmp_path / "roster.csv").write_text(ROSTER)
    res = run("grade", key[0], c, "--roster", tmp_path / "roster.csv", "--json", tmp_path / "g.json")
    assert res.exit_code == 1, res.output
    assert sorted(graded(tmp_path / "g.json")) == ["s0002"]
    assert "is Cyd Charisse's upload (Canvas user 777) but claims student_id s0001" in res.stderr


def test_id_from_filename_gives_the_owner_without_a_roster(key, tmp_path):
    c = tmp_path / "class"
    put(c, "s1_exam.json", answers(key, "s1"))
    put(c, "s2_exam.json", answers(key, "s1", right=False))             # s2 claims s1's id
    put(c, "s3_exam.json", answers(key))                                 # no id: s3's, from the name
    res = run("grade", key[0], c, "--id-from-filename", r"^(?P<id>s\d+)_", "--json", "-")
    assert res.exit_code == 1, res.output
    subs = {s["student_id"]: s for s in json.loads(res.stdout)["submissions"]}
    assert sorted(subs) == ["s1", "s3"] and subs["s1"]["percent"] > 50
    assert f"file {c / 's2_exam.json'} is s2's file (by --id-from-filename) but claims student_id s1" in res.stderr


@pytest.mark.parametrize("pattern, message", [
    ("(unclosed", "--id-from-filename '(unclosed': not a regular expression (missing ), unterminated subpattern"),
    (r"s\d+", "no group named id"),
])
def test_a_bad_id_pattern_is_one_line_exit_2(key, tmp_path, pattern, message):
    put(tmp_path / "c", "a.json", answers(key, "s1"))
    res = run("grade", key[0], tmp_path / "c", "--id-from-filename", pattern)
    assert res.exit_code == 2 and message in res.stderr and "Traceback" not in res.output, res.output


# ----------------------------------------------------------------------------- hard links (item 11)

def test_a_hard_link_to_a_file_outside_the_folder_is_graded_with_a_warning(key, tmp_path):
    c = tmp_path / "class"
    outside = put(tmp_path, "elsewhere.json", answers(key, "s1"))
    c.mkdir()
    os.link(outside, c / "s1.json")
    res = run("grade", key[0], c, "--json", "-")
    assert res.exit_code == 0, res.output
    sub = json.loads(res.stdout)["submissions"][0]
    assert sub["student_id"] == "s1" and sub["percent"] > 50
    assert any("a hard link with 2 links, 1 of them outside the folder" in w for w in sub["warnings"]), sub["warnings"]


def test_two_names_of_one_file_in_the_folder_are_read_once_without_a_warning(key, tmp_path):
    c = tmp_path / "class"
    put(c, "a.json", answers(key, "s1"))
    os.link(c / "a.json", c / "b.json")
    linked = {}
    files, notes = collect([c], linked=linked)
    assert [f.name for f in files] == ["a.json"] and linked == {}
    assert notes == [f"{c / 'b.json'}: skipped (the same file as {c / 'a.json'}, given twice)"]


def test_an_lms_upload_whose_owner_the_roster_lacks_is_named_and_without_a_roster_unchecked(key, tmp_path):
    c = tmp_path / "class"
    put(c, "Zed Zero_55555_assignsubmission_file_a.json", answers(key, "s0001"))
    (tmp_path / "roster.csv").write_text(ROSTER)
    res = run("grade", key[0], c, "--roster", tmp_path / "roster.csv", "--json", "-")
    assert res.exit_code == 1 and json.loads(res.stdout)["submissions"] == []
    assert ("unknown id: " + str(c / "Zed Zero_55555_assignsubmission_file_a.json") + ": Zed Zero's upload (Moodle "
            "participant 55555) is not on the roster (by its lms_id column or name); not graded") in res.stderr
    res = run("grade", key[0], c, "--json", "-")                 # no roster: the participant number is not an id
    assert res.exit_code == 0 and json.loads(res.stdout)["submissions"][0]["student_id"] == "s0001"
    assert "give --roster (with an lms_id column, or the students' names)" in res.stderr


def test_id_from_filename_with_a_roster_names_an_owner_not_on_it(key, tmp_path):
    c = tmp_path / "class"
    put(c, "s0001_exam.json", answers(key))
    put(c, "12346_exam.json", answers(key))                              # Bob's lms_id
    put(c, "s0777_exam.json", answers(key))
    (tmp_path / "roster.csv").write_text(ROSTER)
    res = run("grade", key[0], c, "--roster", tmp_path / "roster.csv", "--id-from-filename", r"^(?P<id>\w+?)_exam",
              "--json", "-")
    assert res.exit_code == 1
    assert sorted(s["student_id"] for s in json.loads(res.stdout)["submissions"]) == ["s0001", "s0002"]
    assert (f"unknown id: {c / 's0777_exam.json'}: the id --id-from-filename gives its name, 's0777', is not on the "
            f"roster {tmp_path / 'roster.csv'}; not graded") in res.stderr


def test_an_id_pattern_taking_the_whole_name_names_the_id_it_gave_not_a_conflict(key, tmp_path):
    c = tmp_path / "c"
    put(c, "s0001.json", answers(key, "s0001"))
    (tmp_path / "roster.csv").write_text(ROSTER)
    res = run("grade", key[0], c, "--roster", tmp_path / "roster.csv", "--id-from-filename", "(?P<id>.*)", "--json", "-")
    assert res.exit_code == 1 and json.loads(res.stdout)["submissions"] == []
    assert "conflict" not in res.stderr, res.stderr
    assert (f"unknown id: {c / 's0001.json'}: the id --id-from-filename gives its name, 's0001.json', is not on the "
            f"roster {tmp_path / 'roster.csv'}; not graded") in res.stderr


@pytest.mark.parametrize("pattern", [r"(?P<id>s000[12])", r"^(?P<id>x)?"])
def test_a_file_the_id_pattern_gives_no_owner_is_named_not_graded_by_its_own_id(key, tmp_path, pattern):
    c = tmp_path / "c2"
    put(c, "s0001.json", answers(key, "s0001"))
    put(c, "s0105.json", answers(key, "s0002"))                  # its name gives no owner: never graded as s0002
    (tmp_path / "roster.csv").write_text(ROSTER)
    res = run("grade", key[0], c, "--roster", tmp_path / "roster.csv", "--id-from-filename", pattern, "--json", "-")
    assert res.exit_code == 1, res.output
    got = [s["student_id"] for s in json.loads(res.stdout)["submissions"]]
    if pattern.startswith("^"):                                   # matches no file: one line
        assert got == [] and res.stderr.count("unreadable:") == 1
        assert (f"unreadable: --id-from-filename '{pattern}' matches no file's name with a non-empty id group "
                "(2 files, e.g. s0001.json); none graded") in res.stderr
    else:
        assert got == ["s0001"]
        assert (f"unreadable: {c / 's0105.json'}: its name does not match --id-from-filename '{pattern}' "
                "(no id from it); not graded") in res.stderr


def test_unknown_ids_are_ten_lines_then_one_all_of_them_in_the_conflicts_list(key, tmp_path):
    c = tmp_path / "class"
    c.mkdir()
    row = answers(key)
    with (c / "class.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, ["student_id", *row])
        w.writeheader()
        w.writerows({"student_id": f"x{i:02}", **row} for i in range(13))
    (tmp_path / "roster.csv").write_text(ROSTER)
    res = run("grade", key[0], c, "--roster", tmp_path / "roster.csv", "--json", tmp_path / "g.json")
    assert res.exit_code == 1, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("unknown id:")]
    assert len(lines) == 11 and "'x09'" in lines[9]
    assert lines[10] == f"unknown id: … and 3 more ids not on the roster (all listed in {tmp_path / 'g-conflicts.csv'})"
    assert len(json.loads((tmp_path / "g.json").read_text())["unknown_ids"]) == 13
    listed = list(csv.DictReader((tmp_path / "g-conflicts.csv").open()))
    assert [r["student_id"] for r in listed] == [f"x{i:02}" for i in range(13)]
    assert listed[12]["sources"] == f"{c / 'class.csv'}, row 14 (line 14)"


def test_a_roster_giving_two_students_one_lms_id_is_refused_in_one_line(key, tmp_path):
    put(tmp_path / "c", "Ada Lovelace_12345_assignsubmission_file_a.json", answers(key))
    (tmp_path / "roster.csv").write_text(ROSTER + "s0004,Ada Byron,adab@uni.example,12345\n")
    res = run("grade", key[0], tmp_path / "c", "--roster", tmp_path / "roster.csv", "--json", "-")
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert res.stderr.strip().splitlines() == [f"error: --roster {tmp_path / 'roster.csv'}:5: duplicate lms_id '12345' "
                                               "(also on line 2): an LMS user id is one student's"]


def test_two_roster_students_of_one_name_leave_a_moodle_upload_unowned_said_plainly(key, tmp_path):
    c = tmp_path / "c"
    put(c, "Cyd Charisse_777_assignsubmission_file_a.json", answers(key))
    (tmp_path / "roster.csv").write_text(ROSTER + "s0004,Cyd Charisse,cyd2@uni.example,\n")
    res = run("grade", key[0], c, "--roster", tmp_path / "roster.csv", "--json", "-")
    assert res.exit_code == 1 and json.loads(res.stdout)["submissions"] == []
    assert (f"unknown id: {c / 'Cyd Charisse_777_assignsubmission_file_a.json'}: Cyd Charisse's upload (Moodle participant "
            "777) is not one student: 2 on the roster are called 'Cyd Charisse' (give each an lms_id on the roster); "
            "not graded") in res.stderr


def test_an_id_not_on_the_roster_but_in_another_case_is_hinted_not_graded(key, tmp_path):
    c = tmp_path / "class"
    put(c, "ada.json", answers(key, "S0001"))
    (tmp_path / "roster.csv").write_text(ROSTER)
    res = run("grade", key[0], c, "--roster", tmp_path / "roster.csv", "--json", "-")
    assert res.exit_code == 1 and json.loads(res.stdout)["submissions"] == []
    assert (f"unknown id: student id 'S0001' is not on the roster {tmp_path / 'roster.csv'} (did you mean 's0001'?): "
            f"{c / 'ada.json'}; not graded") in res.stderr


def test_a_conflicted_student_is_a_row_of_the_class_table_and_has_a_report_without_scores(key, tmp_path):
    c = tmp_path / "class"
    put(c, "ada.json", answers(key, "s1"), mtime=1_700_000_000)
    put(c, "ada-again.json", answers(key, "s1", right=False), mtime=1_700_000_600)
    put(c, "bob.json", answers(key, "s2"))
    res = run("grade", key[0], c, "--report", tmp_path / "fb")
    assert res.exit_code == 1, res.output
    row = next(ln for ln in res.stdout.splitlines() if ln.split()[:1] == ["s1"])
    assert "conflict" in row and "2 submissions, not graded" in row, res.stdout
    text = (tmp_path / "fb" / "s1.md").read_text()
    assert "**Not graded: this submission is in conflict.**" in text and "Score" not in text
    assert f"- {c / 'ada-again.json'}\n- {c / 'ada.json'}\n" in text
    assert "To resolve: remove all but one, or rerun with --newest to take the newest file; then grade again." in text
    assert (tmp_path / "fb" / "s2.md").read_text().count("**Score:") == 1
    assert f"wrote 1 feedback file in {tmp_path / 'fb'} (and 1 saying a submission is in conflict)" in res.stderr
