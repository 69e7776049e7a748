"""One table of export formats (examprep.render.exports.EXPORTS, issue 37): a format added there
alone is taken by --format, written, listed and warned about, named by the help screens and by the
unknown-format message; the help screens name every bundled recipe and every format."""
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep.bundled import recipe_names
from examprep.cli import app
from examprep.errors import ParamError
from examprep.render.exports import EXPORTS, Export
from examprep.sheets import parse_formats, planned_paths

runner = CliRunner()


def _fake_writer(sheet):
    return {"fake.txt": f"{sheet.recipe.title}\n".encode()}, ["fake: one part left out"]


FAKE = Export("fake", "a fake LMS file", ("fake.txt",), _fake_writer, aliases=("phony",), lms=True)


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setitem(EXPORTS, "fake", FAKE)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_help_screens_name_every_bundled_recipe_and_every_format():
    assert {"midterm", "optimization"} <= set(recipe_names())
    top = _flat(runner.invoke(app, ["--help"], env={"COLUMNS": "100"}).output)
    sheet = _flat(runner.invoke(app, ["sheet", "--help"], env={"COLUMNS": "100"}).output)
    for name in [*recipe_names(), *EXPORTS]:
        assert name in top.partition(" sheet ")[2].partition(" secret ")[0], name     # sheet's own line
        assert name in sheet.partition("Options:")[0], name                          # sheet's summary
    recipe_help = sheet.partition("--recipe TEXT")[2].partition(" -t, ")[0]
    format_help = sheet.partition("--format TEXT")[2].partition(" -o, ")[0]
    assert all(name in recipe_help for name in recipe_names()), recipe_help
    assert all(f"{e.name} ({e.title})" in format_help for e in EXPORTS.values()), format_help


def test_a_format_added_to_the_table_alone_is_named_by_the_help_screens(tmp_path):
    # a row added before the CLI loads, as an edit of the table would add it
    probe = ("import sys; from examprep.render import exports as e\n"
             "e.EXPORTS['fake'] = e.Export('fake', 'a fake LMS file', ('fake.txt',), None)\n"
             "sys.argv = ['examprep', *sys.argv[1:]]\nfrom examprep.cli import main\nmain()\n")
    for args in (["--help"], ["sheet", "--help"]):
        res = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=60,
                             env={"COLUMNS": "200", "PATH": "", "PYTHONPATH": str(Path(__file__).parents[2])})
        assert res.returncode == 0, res.stderr
        assert "blackboard-txt, fake." in _flat(res.stdout), res.stdout
    assert "fake (a fake LMS file) [default: pdf,md]" in _flat(res.stdout)


def test_a_format_added_to_the_table_alone_is_taken_written_listed_and_warned_about(fake, tmp_path):
    assert parse_formats("fake,md") == ("md", "fake")
    assert planned_paths(False, ("md", "fake")) == ["problems.md", "solutions.md", "key.json", "answers.toml",
                                                    "fake.txt"]
    out = tmp_path / "s"
    res = runner.invoke(app, ["sheet", "-t", "softmax-cross-entropy", "-f", "md,fake", "-o", str(out), "-s", "3"])
    assert res.exit_code == 0, res.output
    assert (out / "fake.txt").read_text() == "Practice sheet\n"
    assert str(out / "fake.txt") in res.output and "fake: one part left out" in res.output
    # written again only with --force, as every other output
    res = runner.invoke(app, ["sheet", "-t", "softmax-cross-entropy", "-f", "fake", "-o", str(out), "-s", "3"])
    assert res.exit_code == 2 and "already exist" in res.output


def test_an_unknown_format_is_refused_naming_every_format_and_the_one_it_may_mean(fake):
    with pytest.raises(ParamError) as err:
        parse_formats("pdf,nope")
    assert str(err.value) == ("--format: unknown format 'nope'; choose from "
                              "pdf, md, moodle, qti21, canvas, blackboard, blackboard-txt, fake")
    with pytest.raises(ParamError, match=r"unknown format 'phony'; did you mean fake\?"):
        parse_formats("phony")
    with pytest.raises(ParamError, match=r"unknown format 'markdown'; did you mean md\?"):
        parse_formats("markdown")
    with pytest.raises(ParamError, match="give one or more of pdf, md, moodle, qti21, canvas, blackboard, blackboard-txt, fake"):
        parse_formats(" , ")


def test_an_lms_format_from_the_table_refuses_a_list_of_shapes_and_a_document_format_does_not(fake):
    from types import SimpleNamespace

    from examprep.sheets import SheetError
    from examprep.sheets.write import _check_lms

    part = SimpleNamespace(kind="shapes", id="output_shapes")
    sheet = SimpleNamespace(copies=[SimpleNamespace(problems=[SimpleNamespace(parts=[part])])])
    with pytest.raises(SheetError, match=r"^--format fake: q1.output_shapes asks a list of shapes"):
        _check_lms(sheet, ("md", "fake"))
    _check_lms(sheet, ("pdf", "md"))


def test_a_format_with_a_file_per_student_plans_one_per_roster_student(monkeypatch):
    from examprep.fileio import safe_name
    from examprep.sheets import Student

    monkeypatch.setitem(EXPORTS, "fake", Export("fake", "a fake LMS file", ("fake.txt",), _fake_writer,
                                                student_files="fake/{id}.txt"))
    roster = [Student("s/1", "A"), Student("s2", "B")]
    assert set(planned_paths(True, ("fake",), roster)) == {"key.json", "answers/s2.toml", f"answers/{safe_name('s/1')}.toml",
                                                           "fake/s2.txt", f"fake/{safe_name('s/1')}.txt"}
    assert "fake.txt" in planned_paths(False, ("fake",))
