"""A grading's outputs (--csv, --json, --report, --gradescope, --analysis) are one set: a full disk
writes none of them (it left 53 of 200 reports), a run stopped between their renames is completed
by the next one, and a --report folder is replaced whole, the instructor's own files kept."""
import errno
import json

from tests.grading.test_outputs_beside_submissions import class_folder, run
from tests.test_fileio_interrupted import _fail_on_call


def _outputs(tmp_path):
    return ["--csv", tmp_path / "g.csv", "--json", tmp_path / "g.json", "--report", tmp_path / "rep",
            "--gradescope", tmp_path / "gs", "--analysis", tmp_path / "an"]


def test_a_full_disk_writes_no_output_and_says_so_in_one_line(tmp_path, monkeypatch):
    subs = class_folder(tmp_path)
    _fail_on_call(monkeypatch, "fsync", 4, OSError(errno.ENOSPC, "No space left on device"))
    res = run("grade", tmp_path / "key.json", subs, "-q", *_outputs(tmp_path))
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert res.stderr.startswith("error: ") and res.stderr.endswith("cannot write (No space left on device)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key.json", "subs"]       # not one report, no temporaries


def test_a_grading_stopped_between_its_renames_is_completed_by_the_next_run(tmp_path, monkeypatch):
    subs = class_folder(tmp_path)
    assert run("grade", tmp_path / "key.json", subs, "-q", *_outputs(tmp_path)).exit_code == 0
    (tmp_path / "rep" / "README.txt").write_text("the instructor's")
    (subs / "s3.toml").write_text((subs / "s3.toml").read_text().replace('student_id = "s3"', 'student_id = "s4"'))
    _fail_on_call(monkeypatch, "replace", 2, OSError(errno.EIO, "Input/output error"))    # as a kill would stop it
    res = run("grade", tmp_path / "key.json", subs, "-q", "--force", *_outputs(tmp_path))
    monkeypatch.undo()
    assert res.exit_code == 2 and "the next examprep run writing there completes it" in res.stderr, res.output
    ids = lambda: sorted(s["student_id"] for s in json.loads((tmp_path / "g.json").read_text())["submissions"])  # noqa: E731
    assert "s4" in (tmp_path / "g.csv").read_text() and ids() == ["s1", "s2", "s3"]                # a mix, for now
    res = run("grade", tmp_path / "key.json", subs, "-q", "--json", tmp_path / "g.json", "--force")
    assert res.exit_code == 0, res.output
    assert ids() == ["s1", "s2", "s4"] and sorted(p.name for p in (tmp_path / "rep").iterdir()) == [
        "README.txt", "s1.md", "s2.md", "s3.md", "s4.md"]          # s3.md: the first run's, kept as ever
    assert (tmp_path / "gs" / "s4" / "results.json").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]                  # no journal, no temporaries
