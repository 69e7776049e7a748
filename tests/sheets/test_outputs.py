"""`examprep sheet` end to end: each format written and read back (PDF text and pages with
pypdf, keys and templates), byte-identical reruns, no answers in the problems PDF, and every kind
of bad input refused with one line and nothing half-written."""
import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib

import pytest
from typer.testing import CliRunner

from examprep import keys, sheets
from examprep.cli import app
from tests.sheets.helpers import pdf_text

runner = CliRunner()


def _flat(v):
    return [x for y in v for x in _flat(y)] if isinstance(v, list) else [v]


def _shown(x: float) -> str:
    """A value as the solutions print it (4 significant figures)."""
    return f"{x:.4g}".replace("-", "−")


@pytest.fixture(scope="module")
def practice(tmp_path_factory):
    """One common sheet (the bundled midterm, fixed seed) in every format, via the CLI."""
    out = tmp_path_factory.mktemp("sheet") / "midterm"
    res = runner.invoke(app, ["sheet", "--recipe", "midterm", "--seed", "11", "--format", "pdf,md,moodle",
                              "--out", str(out), "--course", "Deep Learning #101 <b>"])
    assert res.exit_code == 0, res.output
    return out, res.output


def test_every_output_is_written_and_listed(practice):
    out, output = practice
    names = sorted(p.name for p in out.iterdir() if p.name != ".examprep-files.json")
    assert names == ["answers.toml", "key.json", "moodle.xml", "problems.md", "problems.pdf", "solutions.md",
                     "solutions.pdf"]
    for name in names:
        assert str(out / name) in output
    # the manifest lists what the run wrote, with each file's SHA-256 (a later --force removes what it
    # does not write again, where the file is still the one written)
    listed = json.loads((out / ".examprep-files.json").read_text())["files"]
    assert listed == {n: hashlib.sha256((out / n).read_bytes()).hexdigest() for n in names}
    assert ".examprep-files" not in output
    assert "Midterm practice exam: 20 problems" in output and "seed 11" in output


def test_problems_pdf_reads_like_an_exam(practice):
    out, _ = practice
    text, pages = pdf_text((out / "problems.pdf").read_bytes())
    squashed = re.sub(r"\s+", " ", text)
    assert pages >= 3 and pages % 2 == 0              # even, for double-sided printing: a blank last page if need be
    numbered = pages if f"page {pages} of {pages}" in squashed else pages - 1   # the blank page has no footer
    for needed in ("Midterm practice exam", "DEEP LEARNING #101 <B>", "Name", "Student ID", "Instructions",
                   "Time allowed: 180 minutes", "significant figures", "Problem 15", "Total", "page 1 of",
                   f"page {numbered} of {numbered}", "end of the sheet"):
        assert needed in squashed, needed
    key = keys.read_key(out / "key.json")
    assert f"{sum(p.points for p in key.problems):g}" in squashed         # total points in the score table


def test_problems_pdf_holds_no_answers(practice):
    out, _ = practice
    key = keys.read_key(out / "key.json")
    problems_text, _ = pdf_text((out / "problems.pdf").read_bytes())
    solutions_text, _ = pdf_text((out / "solutions.pdf").read_bytes())
    for word in ("Worked solution", "Answers", "Typical mistakes"):
        assert word not in problems_text and word in solutions_text
    checked = 0
    for p in key.problems:
        shown_in_statement = json.dumps(p.params)
        for part in p.parts:
            for v in _flat(part.expected):
                if (isinstance(v, float) and abs(v) > 1e-9 and v != round(v, 1)
                        and str(round(v, 1)) not in shown_in_statement):
                    token = _shown(v)
                    assert token in solutions_text, (part.id, token)      # the probe would see a leak
                    assert token not in problems_text, (p.title, part.id, token)
                    checked += 1
            for m in part.misconceptions:
                assert m.explanation[:40] not in problems_text
    assert checked >= 10


def test_solutions_pdf_shows_answers_and_figures(practice):
    out, _ = practice
    text, pages = pdf_text((out / "solutions.pdf").read_bytes())
    assert pages > 3 and "solutions" in text
    assert "The shaded inputs are the receptive field" in text          # the receptive-field figure
    key = keys.read_key(out / "key.json")
    rf = next(p for p in key.problems if p.generator == "receptive-field")
    assert f"receptive field of the middle output: {rf.part('receptive_field').expected} positions" in text


def test_key_and_template_are_the_graders_input(practice):
    out, _ = practice
    key = keys.read_key(out / "key.json")
    assert key.title == "Midterm practice exam" and len(key.problems) == 20 and key.meta["seed"] == 11
    assert key.meta["sheet_id"] == "midterm-11"
    template = tomllib.loads((out / "answers.toml").read_text())
    assert list(template) == ["student_id", "name"] + [f"q{k}" for k in range(1, 21)]
    assert set(template["q1"]) == {part.id for part in key.problems[0].parts}


def test_markdown_has_the_same_sheet(practice):
    out, _ = practice
    problems = (out / "problems.md").read_text()
    solutions = (out / "solutions.md").read_text()
    assert problems.startswith("# Midterm practice exam\n") and "## Instructions" in problems
    assert problems.count("## Problem ") == 20 and "### Worked solution" not in problems
    assert solutions.count("### Worked solution") == 20 and "### Typical mistakes" in solutions
    assert "`q1.size_1`" in problems


def test_two_runs_give_identical_bytes(tmp_path):
    recipe = sheets.load_recipe("rnn")
    a = sheets.render_outputs(sheets.build_sheet(recipe, 3), ("pdf", "md", "moodle"))
    b = sheets.render_outputs(sheets.build_sheet(recipe, 3), ("pdf", "md", "moodle"))
    assert list(a) == list(b)
    for name in a:
        assert a[name] == b[name], f"{name} differs between two runs"
    assert b"CreationDate" not in a["problems.pdf"] and b"ModDate" not in a["problems.pdf"]


def test_same_bytes_in_a_fresh_process(tmp_path):
    code = ("import sys; from examprep import sheets; "
            "out = sheets.render_outputs(sheets.build_sheet(sheets.load_recipe('cnn'), 11), ('pdf',)); "
            "sys.stdout.buffer.write(out['solutions.pdf'])")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300,
                         env=dict(os.environ, PYTHONHASHSEED="99"))
    assert res.returncode == 0, res.stderr.decode()
    here = sheets.render_outputs(sheets.build_sheet(sheets.load_recipe("cnn"), 11), ("pdf",))["solutions.pdf"]
    assert res.stdout == here


ROSTER = "student_id,name\ns101,Ada Lovelace\ns102,Alan Turing\ns103,Grace Hopper\n"
SECRET = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"


def test_variants_end_to_end(tmp_path):
    (tmp_path / "roster.csv").write_text(ROSTER)
    (tmp_path / "secret.txt").write_text(SECRET)
    out = tmp_path / "exam"
    res = runner.invoke(app, ["sheet", "-r", "cnn", "-s", "4", "--roster", str(tmp_path / "roster.csv"),
                              "--secret-file", str(tmp_path / "secret.txt"), "--out", str(out), "-f", "pdf,moodle"])
    assert res.exit_code == 0, res.output
    assert "3 variants" in res.output and "3 answer templates" in res.output
    key = keys.read_key(out / "key.json")
    text, pages = pdf_text((out / "problems.pdf").read_bytes())
    squashed = re.sub(r"\s+", " ", text)
    for sid, name in (("s101", "Ada Lovelace"), ("s102", "Alan Turing"), ("s103", "Grace Hopper")):
        assert name in squashed and sid in squashed and key.variant_codes[sid] in squashed
        template = tomllib.loads((out / "answers" / f"{sid}.toml").read_text())
        assert template["student_id"] == sid and template["name"] == name
        for p in key.variants[sid]:
            assert f"seed {p.seed}" not in squashed and str(p.seed) not in squashed     # codes, never seeds
    # each copy starts on an odd page: page counts per copy, then blank pages to the next odd one
    assert pages % 2 == 0 and squashed.count("page 1 of") == 3
    secret = sheets.read_secret(tmp_path / "secret.txt")
    rebuilt = sheets.build_sheet(sheets.load_recipe("cnn"), 4, roster=sheets.read_roster(tmp_path / "roster.csv"),
                                 secret=secret)
    assert {c.student.id: [p.to_dict() for p in c.problems] for c in rebuilt.copies} == {
        sid: [p.to_dict() for p in ps] for sid, ps in key.variants.items()}


def test_long_runs_are_joined_from_chunks(tmp_path, monkeypatch):
    from examprep.sheets import write

    monkeypatch.setattr(write, "PDF_CHUNK", 2)          # where render_outputs reads it
    roster = [sheets.Student(f"s{i}", f"Student {i}") for i in range(5)]
    sheet = sheets.build_sheet(sheets.load_recipe("transformer"), 1, roster=roster, secret=SECRET.strip().encode())
    out = sheets.render_outputs(sheet, ("pdf",))
    text, pages = pdf_text(out["problems.pdf"])
    assert pages % 2 == 0 and all(f"Student {i}" in text for i in range(5))
    squashed = re.sub(r"\s+", " ", text)
    assert squashed.index("Student 0") < squashed.index("Student 2") < squashed.index("Student 4")


# ----------------------------------------------------------------------------------- bad input

def _run(args, cwd=None):
    return runner.invoke(app, ["sheet", *args])


@pytest.mark.parametrize("args, message", [
    (["--recipe", "midtrem"], "error: unknown recipe 'midtrem'; did you mean midterm?"),
    (["--topics", "atention"], "error: unknown topic 'atention'; did you mean attention"),
    (["--recipe", "cnn", "--topics", "attention"], "error: give either --recipe or --topics"),
    (["--recipe", "cnn", "--count", "2"], "error: --count applies to --topics"),
    (["--recipe", "cnn", "--seed", "x"], "error: --seed: expected an integer"),
    (["--recipe", "cnn", "--difficulty", "9"], "error: --difficulty: expected 1, 2 or 3"),
    (["--recipe", "cnn", "--format", "docx"], "error: --format: unknown format 'docx'"),
    (["--recipe", "cnn", "--roster", "nope.csv", "--secret-file", "nope.txt"], "error: --roster nope.csv: no such file"),
])
def test_bad_options_get_one_line_and_exit_2(tmp_path, args, message):
    res = _run(args + ["--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and res.output.startswith(message), res.output
    assert res.output.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_roster_errors_write_nothing(tmp_path):
    (tmp_path / "roster.csv").write_text("name\nAda\n")
    (tmp_path / "secret.txt").write_text(SECRET)
    res = _run(["-r", "cnn", "--roster", str(tmp_path / "roster.csv"), "--secret-file", str(tmp_path / "secret.txt"),
                "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "no id column" in res.output and not (tmp_path / "o").exists()
    (tmp_path / "roster.csv").write_text(ROSTER)
    (tmp_path / "secret.txt").write_text("")
    res = _run(["-r", "cnn", "--roster", str(tmp_path / "roster.csv"), "--secret-file", str(tmp_path / "secret.txt"),
                "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "the file is empty" in res.output and not (tmp_path / "o").exists()
    (tmp_path / "secret.txt").write_text(SECRET)
    (tmp_path / "roster.csv").write_text("student_id,name\ns101,Ada Lovelace\ns102,Turing, Alan\n")
    res = _run(["-r", "cnn", "--roster", str(tmp_path / "roster.csv"), "--secret-file", str(tmp_path / "secret.txt"),
                "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and res.output == (
        f"error: --roster {tmp_path / 'roster.csv'}:3: 3 fields, but the header row has 2 (an unquoted comma inside a "
        "name? put the cell in double quotes); extra: ' Alan'\n")
    assert not (tmp_path / "o").exists()


def test_existing_outputs_need_force(tmp_path):
    out = tmp_path / "o"
    assert _run(["-r", "cnn", "-s", "1", "-f", "md", "--out", str(out)]).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    res = _run(["-r", "cnn", "-s", "2", "-f", "md", "--out", str(out)])
    assert res.exit_code == 2 and "already exist" in res.output and "--force" in res.output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    res = _run(["-r", "cnn", "-s", "2", "-f", "md", "--out", str(out), "--force"])
    assert res.exit_code == 0 and {p.name: p.read_bytes() for p in out.iterdir()} != before
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == [".examprep-files.json"]   # no temporaries


def test_unwritable_output_directory(tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a directory")
    res = _run(["-r", "cnn", "-f", "md", "--out", str(blocker / "sub")])
    assert res.exit_code == 2 and res.output.startswith("error: --out") and "file.txt is not a directory" in res.output
    res = _run(["-r", "cnn", "-f", "md", "--out", str(blocker)])
    assert res.exit_code == 2 and "is a file, not a folder" in res.output


def test_a_typst_error_is_reported_and_leaves_no_pdf(tmp_path, monkeypatch):
    from examprep.sheets import write

    real = write.sheet_source             # where the writer looks it up
    monkeypatch.setattr(write, "sheet_source", lambda *a, **k: real(*a, **k) + "\n#let broken = (\n")
    out = tmp_path / "o"
    res = _run(["-r", "cnn", "--out", str(out)])
    assert res.exit_code == 1, res.output
    assert res.output.startswith("error: typst could not typeset the document: ") and res.output.count("\n") == 1
    assert not out.exists() or not any(out.iterdir())


def test_help_lists_the_options():
    res = runner.invoke(app, ["sheet", "--help"])
    assert res.exit_code == 0
    for opt in ("--recipe", "--topics", "--count", "--difficulty", "--seed", "--roster", "--secret-file", "--format",
                "--out", "--force"):
        assert opt in res.output


def test_list_shows_the_bundled_recipes():
    res = runner.invoke(app, ["sheet", "--list"])
    assert res.exit_code == 0
    for name in ("midterm", "cnn", "rnn", "transformer"):
        assert re.search(rf"^{name}\s", res.output, re.M)


def test_list_fits_an_80_column_terminal_and_names_every_topic():
    res = runner.invoke(app, ["sheet", "--list"], env={"COLUMNS": "80"})
    assert res.exit_code == 0
    assert all(len(line) <= 80 for line in res.output.splitlines()), res.output
    flat = " ".join(res.output.split())
    assert "positional-encoding (L1)" in flat and "softmax-cross-entropy (L2)" in flat


def test_a_one_problem_sheet_says_one_problem(tmp_path):
    from examprep.render.typst import sheet as typst_sheet

    from .helpers import pdf_text

    res = runner.invoke(app, ["sheet", "--topics", "softmax-cross-entropy", "-s", "1", "-f", "pdf,md",
                              "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert ": 1 problem, " in res.output and "1 problems" not in res.output
    md = (tmp_path / "o" / "problems.md").read_text()
    assert "1 problem worth" in md and "· 1 problem ·" in md and "1 problems" not in md
    text, _ = pdf_text((tmp_path / "o" / "problems.pdf").read_bytes())
    assert "1 problems" not in " ".join(text.split()) and "1 problem" in " ".join(text.split())
    assert typst_sheet._pts(1) == "1 pt" and typst_sheet._pts(2) == "2 pts"


def test_points_and_counts_agree_in_number():
    from examprep.render import plural

    assert plural(1, "problem") == "1 problem" and plural(2, "problem") == "2 problems"
    assert plural(1.0, "point") == "1 point" and plural(0.5, "point") == "0.5 points" and plural(0, "point") == "0 points"


# ------------------------------------------------------------------------ rebuilding with --force

def _files(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def _class_run(tmp_path, roster: str, *extra: str):
    (tmp_path / "roster.csv").write_text(roster)
    (tmp_path / "secret.txt").write_text(SECRET)
    return _run(["-r", "cnn", "-s", "3", "--roster", str(tmp_path / "roster.csv"), "--secret-file",
                 str(tmp_path / "secret.txt"), "--out", str(tmp_path / "o"), *extra])


def test_force_over_a_roster_run_leaves_exactly_the_new_runs_files(tmp_path):
    out = tmp_path / "o"
    assert _class_run(tmp_path, ROSTER, "-f", "pdf,md,blackboard-txt", "--split", "--solutions").exit_code == 0
    (out / "notes.txt").write_text("mine")                       # the user's own files stay
    (out / "answers" / "README.txt").write_text("mine too")
    (out / "answers" / "s103.toml").write_text("# marked by hand\n")       # edited since: no longer ours
    res = _class_run(tmp_path, "student_id,name\ns101,Ada Lovelace\ns104,Edsger Dijkstra\n", "-f", "pdf", "--solutions",
                     "--force")
    assert res.exit_code == 0, res.output
    fresh = tmp_path / "fresh"
    assert _run(["-r", "cnn", "-s", "3", "--roster", str(tmp_path / "roster.csv"), "--secret-file",
                 str(tmp_path / "secret.txt"), "-f", "pdf", "--solutions", "--out", str(fresh)]).exit_code == 0
    assert _files(out) == sorted(_files(fresh) + ["notes.txt", "answers/README.txt", "answers/s103.toml"])
    assert not (out / "blackboard").exists() and not (out / "problems").exists()     # emptied folders go too
    assert "removed 12 files of the run this one replaced: answers/s102.toml, blackboard/s101.txt, blackboard/s102.txt, …" \
        in res.output
    assert f"warning: kept 1 file in {out} that an earlier run wrote and that was changed since: answers/s103.toml" \
        in res.stderr


def _rebuild(out, earlier_run, run, *, edit=None):
    """sheets.write as `sheet --force` uses it, on small made-up outputs (no sheet built): the
    earlier run's files written, ``edit`` done to the folder, then ``run`` written over them."""
    from examprep.sheets.write import earlier_files, stale_files, write_outputs

    write_outputs(out, earlier_run, False)
    if edit:
        edit()
    stale = stale_files(out, earlier_files(out), run)
    write_outputs(out, run, True, stale=stale)
    return stale


CLASS = {"key.json": b"{}", "answers/s1.toml": b"1", "answers/s2.toml": b"2", "answers/s3.toml": b"3"}


def test_force_over_a_run_from_before_the_hashes_keeps_its_files_and_says_so(tmp_path):
    """A manifest without hashes (or none, as an older examprep left) cannot prove a file is still
    ours: nothing it names is removed, and one warning line names what was kept."""
    from examprep.sheets.write import MANIFEST

    out = tmp_path / "o"

    def before_hashes():
        listed = sorted(json.loads((out / MANIFEST).read_text())["files"])
        (out / MANIFEST).write_text(json.dumps({"written_by": "examprep sheet", "files": listed}))

    stale = _rebuild(out, CLASS, {"key.json": b"{}", "answers/s1.toml": b"1"}, edit=before_hashes)
    assert sorted(p.name for p in (out / "answers").iterdir()) == ["s1.toml", "s2.toml", "s3.toml"]
    assert stale.warnings(out) == [f"kept 2 earlier files in {out} that an older examprep listed without a hash, so "
                                   "they cannot be proven its own: answers/s2.toml, answers/s3.toml; remove them by "
                                   "hand if unwanted"] and stale.remove == {}
    (out / MANIFEST).unlink()                                      # no manifest at all: the key's students
    (out / "key.json").write_text(json.dumps({"meta": {"names": {"s1": "", "s2": ""}}}))
    from examprep.sheets.write import earlier_files, stale_files

    assert earlier_files(out) == {"answers/s1.toml": None, "answers/s2.toml": None, "blackboard/s1.txt": None,
                                  "blackboard/s2.txt": None}
    stale = stale_files(out, earlier_files(out), {"answers/s1.toml": b"1"})
    assert stale.unproven == ["answers/s2.toml"] and stale.remove == {}


def test_force_keeps_and_names_an_earlier_file_the_instructor_edited(tmp_path):
    out = tmp_path / "o"
    stale = _rebuild(out, CLASS, {"key.json": b"{}", "answers/s1.toml": b"1"},
                     edit=lambda: (out / "answers" / "s2.toml").write_text("2, checked by hand"))
    assert sorted(p.name for p in (out / "answers").iterdir()) == ["s1.toml", "s2.toml"]      # s3 was ours
    assert (out / "answers" / "s2.toml").read_text() == "2, checked by hand"
    assert stale.warnings(out) == [f"kept 1 file in {out} that an earlier run wrote and that was changed since: "
                                   "answers/s2.toml"] and list(stale.remove) == ["answers/s3.toml"]


@pytest.mark.parametrize("in_place", [False, True])
def test_a_planted_manifest_deletes_nothing_outside_or_through_a_link(tmp_path, monkeypatch, in_place):
    """`.examprep-files.json` is a file anyone who can write the folder can plant: it listed
    ../precious.txt and linked/precious.txt (a link to a folder outside), with the right hashes.
    ``in_place``: the folder is the current one, written file by file instead of swapped."""
    from examprep.sheets.write import MANIFEST

    out = tmp_path / "o"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep")
    (tmp_path / "precious.txt").write_text("keep")
    digest = hashlib.sha256(b"keep").hexdigest()
    planted = {"../precious.txt": digest, str(tmp_path / "precious.txt"): digest, "linked/precious.txt": digest,
               "mine.txt": digest, "linked/../../precious.txt": digest}

    def plant():
        (out / "linked").symlink_to(outside)
        (out / "mine.txt").symlink_to(outside / "precious.txt")
        (out / MANIFEST).write_text(json.dumps({"written_by": "examprep sheet", "version": 2, "files": planted}))
        if in_place:
            monkeypatch.chdir(out)

    stale = _rebuild(out, CLASS, CLASS, edit=plant)
    assert (tmp_path / "precious.txt").read_text() == "keep" and (outside / "precious.txt").read_text() == "keep"
    assert (out / "linked").is_symlink() and (out / "mine.txt").is_symlink() and stale.remove == {}


def test_a_run_without_force_beside_another_keeps_both_in_the_manifest(tmp_path):
    from examprep.sheets.write import MANIFEST

    out = tmp_path / "o"
    assert _run(["-r", "cnn", "-s", "1", "-f", "md", "--out", str(out)]).exit_code == 0
    assert _run(["-r", "cnn", "-s", "1", "-f", "moodle", "--out", str(out), "--force"]).exit_code == 0
    listed = json.loads((out / MANIFEST).read_text())["files"]
    assert sorted(listed) == ["answers.toml", "key.json", "moodle.xml"] and sorted(p.name for p in out.iterdir()) == [
        MANIFEST, "answers.toml", "key.json", "moodle.xml"]


def test_a_second_run_without_force_into_the_folder_adds_to_the_manifest(tmp_path):
    """Its own manifest is the one file a run without --force replaces in a folder of earlier outputs."""
    from examprep.sheets.write import MANIFEST, write_outputs

    out = tmp_path / "o"
    write_outputs(out, {"moodle.xml": b"<quiz/>"}, False)
    write_outputs(out, {"canvas.zip": b"PK"}, False)
    assert json.loads((out / MANIFEST).read_text())["files"] == {
        "canvas.zip": hashlib.sha256(b"PK").hexdigest(), "moodle.xml": hashlib.sha256(b"<quiz/>").hexdigest()}


def test_a_title_or_course_with_a_line_break_is_refused_before_anything_is_written(tmp_path):
    """A newline in --title made the answer template's first comment line spill into invalid TOML:
    every student's submission was then unreadable."""
    from typer.testing import CliRunner

    from examprep.cli import app

    runner = CliRunner()
    for option in ("--title", "--course"):
        out = tmp_path / option.strip("-")
        res = runner.invoke(app, ["sheet", "--recipe", "cnn", "--seed", "3", "--format", "md", "--out", str(out),
                                  option, "Midterm\nPart B"])
        assert res.exit_code == 2, res.output
        assert res.stderr.startswith(f"error: {option}: a line break or control character ('\\n')"), res.stderr
        assert res.stderr.count("\n") == 1 and not out.exists()
    recipe = tmp_path / "r.toml"
    recipe.write_text('[sheet]\ntitle = "Midterm\\nPart B"\n\n[[problem]]\ngenerator = "max-pool"\n')
    res = runner.invoke(app, ["sheet", "--recipe", str(recipe), "--format", "md", "--out", str(tmp_path / "r")])
    assert res.exit_code == 2 and f"{recipe}:2: [sheet] title: a line break" in res.stderr, res.output


@pytest.mark.parametrize("name", ["answers.toml", "key.json", "problems.md"])
def test_a_recipe_or_roster_inside_out_is_never_written_over_even_with_force(tmp_path, name):
    # `sheet --recipe rr/answers.toml --out rr --force` replaced the recipe with the answer template
    out = tmp_path / "rr"
    out.mkdir()
    recipe = out / name
    recipe.write_text('[sheet]\ntitle = "Q"\n\n[[problem]]\ntopic = "attention"\n')
    res = _run(["--recipe", str(recipe), "--out", str(out), "-f", "md", "--force"])
    assert res.exit_code == 2 and res.stderr == (f"error: --out {out}: would write {recipe}, an input being read "
                                                 f"({recipe}); choose another --out, --force or not\n"), res.output
    assert recipe.read_text().startswith("[sheet]") and sorted(p.name for p in out.iterdir()) == [name]
    (tmp_path / "secret.txt").write_text(SECRET)
    roster = out / "answers"
    roster.mkdir()
    (roster / "s1.toml").write_text("id,name\ns1,Ada\n")          # a roster where s1's template would go
    res = _run(["-r", "cnn", "--roster", str(roster / "s1.toml"), "--secret-file", str(tmp_path / "secret.txt"),
                "--out", str(out), "-f", "md", "--force"])
    assert res.exit_code == 2 and "an input being read" in res.stderr, res.output
    assert (roster / "s1.toml").read_text() == "id,name\ns1,Ada\n"


def test_out_must_be_named_and_only_its_last_folder_is_made(tmp_path):
    res = _run(["-r", "cnn", "--out", "", "-f", "md"])
    assert res.exit_code == 2 and res.stderr == "error: --out: an empty folder name; give a folder (without --out: " \
                                                "the recipe's name)\n"
    deep = tmp_path / "typo" / "sheet"
    res = _run(["-r", "cnn", "--out", str(deep), "-f", "md"])
    assert res.exit_code == 2 and res.stderr == (f"error: --out {deep}: the folder {deep.parent} does not exist (a "
                                                 "typo?); create it first — only the last folder of the path is made\n")
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    res = _run(["-r", "cnn", "--out", str(tmp_path / "link"), "-f", "md"])
    assert res.exit_code == 2 and "a symbolic link to" in res.stderr and "which does not exist" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link"]
    res = _run(["-r", "cnn", "--out", str(tmp_path / "one"), "-f", "md"])        # the last folder is made
    assert res.exit_code == 0 and (tmp_path / "one" / "key.json").is_file()


@pytest.mark.parametrize("name", ["key.json", ".examprep-files.json"])
def test_a_pipe_in_the_output_folder_is_refused_never_read_or_replaced(tmp_path, name):
    """A named pipe called key.json (or the manifest) in --out hung `sheet --force` reading it, and
    would then have been replaced by a regular file."""
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / name)
    res = runner.invoke(app, ["sheet", "--topics", "attention", "--count", "1", "--seed", "1", "--format", "md",
                              "--out", str(out), "--force"])
    assert res.exit_code == 2, res.output
    assert res.output.strip().splitlines() == [f"error: {out / name}: is not a regular file (a device, pipe or socket); "
                                               "give a file's path"]
    assert os.listdir(out) == [name] and os.path.exists(out / name) and not os.path.isfile(out / name)
