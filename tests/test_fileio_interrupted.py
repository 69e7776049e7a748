"""examprep.fileio when a run is killed or the disk fills: a killed run's temporaries are removed by
the next one, temporaries are private until whole, a set of outputs interrupted between its renames
is completed by the next run, an output folder is swapped whole with the instructor's files kept,
and a full disk leaves nothing half-written."""
import errno
import os
import stat
import time
from pathlib import Path

import pytest

from examprep.fileio import OutputError, tidy_folder, write_files
from examprep.publish import HOST

DEAD = 4_194_304 + 7          # above Linux's largest pid: no process has it
OTHER_HOST = "000000" if HOST != "000000" else "ffffff"


def _tree(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def _fail_on_call(monkeypatch, name, n, err):
    """os.NAME raises ``err`` on its n-th call (as a kill or a full disk would stop it there)."""
    real = getattr(os, name)
    calls = []

    def fake(*args, **kw):
        calls.append(args)
        if len(calls) == n:
            raise err
        return real(*args, **kw)

    monkeypatch.setattr(os, name, fake)
    return calls


def test_a_killed_runs_temporaries_are_removed_by_the_next_write_there(tmp_path):
    stale = [f".key.json.examprep-{DEAD}.{HOST}-a1b2c3.tmp", f".answers.examprep-new-{DEAD}.{HOST}-zz9"]
    (tmp_path / stale[0]).write_bytes(b"every variant's answers")
    (tmp_path / stale[1]).mkdir()
    (tmp_path / stale[1] / "s1.toml").write_text("x")
    old_style = tmp_path / ".key.json.k3y_abcd.tmp"                  # before the process id was in the name
    old_style.write_text("x")
    os.utime(old_style, (time.time() - 7200, time.time() - 7200))
    kept = [".solutions.md.abcd_123.tmp",                            # old-style, but recent: perhaps a run now
            f".key.json.examprep-{os.getppid()}.{HOST}-q1.tmp",      # a live process's
            f".key.json.examprep-{DEAD}.{OTHER_HOST}-q2.tmp",        # another machine's (a shared folder)
            ".notes.tmp", "draft.examprep-1-x"]                      # not ours by their names
    for name in kept:
        (tmp_path / name).write_text("mine")
    write_files({tmp_path / "key.json": b"{}"})
    assert _tree(tmp_path) == sorted(kept + ["key.json"])


def test_temporaries_are_private_until_they_are_whole_and_outputs_get_their_mode(tmp_path, monkeypatch):
    """A killed build left a 3.5 MB copy of every variant's answers readable by all (0644)."""
    modes, folders = [], []
    real = os.fsync

    def fsync(fd):
        path = os.readlink(f"/proc/self/fd/{fd}") if os.path.exists(f"/proc/self/fd/{fd}") else ""   # Linux
        if ".examprep-pending-" not in path:                        # not the journal
            modes.append(stat.S_IMODE(os.fstat(fd).st_mode))
        if ".examprep-new-" in path:                                # in the folder being built
            folders.append(stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode))
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    old = os.umask(0o022)
    try:
        write_files({tmp_path / "key.json": b"{}", tmp_path / "r" / "a.md": b"x"}, folders=[tmp_path / "r"])
        (tmp_path / "r").chmod(0o750)
        write_files({tmp_path / "r" / "a.md": b"y"}, folders=[tmp_path / "r"])
        write_files({tmp_path / "s" / "b.md": b"z"}, folders=[tmp_path / "s"])
    finally:
        os.umask(old)
    assert modes[:3] == [0o600, 0o600, 0o600]
    assert folders in ([], [0o700] * 3)                              # the folder being built: closed to others
    assert stat.S_IMODE((tmp_path / "r").stat().st_mode) == 0o750                 # a replaced folder keeps its mode
    assert stat.S_IMODE((tmp_path / "key.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "r" / "a.md").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "s").stat().st_mode) == 0o755                 # a new one: as mkdir makes it


def test_a_set_stopped_between_its_renames_is_completed_by_the_next_run(tmp_path, monkeypatch):
    a, b = tmp_path / "grades.csv", tmp_path / "grades.json"
    write_files({a: b"old csv", b: b"old json"})
    _fail_on_call(monkeypatch, "replace", 2, OSError(errno.EIO, "Input/output error"))
    with pytest.raises(OutputError) as info:
        write_files({a: b"new csv", b: b"new json"})
    assert str(info.value).endswith("publishing the outputs stopped half-way (Input/output error); the next "
                                    "examprep run writing there completes it")
    monkeypatch.undo()
    assert a.read_bytes() == b"new csv" and b.read_bytes() == b"old json"        # the mix a kill leaves
    assert any(p.name.startswith(".examprep-pending-") for p in tmp_path.iterdir())
    write_files({tmp_path / "other.txt": b"x"})                                  # any next write there
    assert a.read_bytes() == b"new csv" and b.read_bytes() == b"new json"
    assert _tree(tmp_path) == ["grades.csv", "grades.json", "other.txt"]


def test_an_output_folder_is_replaced_whole_and_keeps_the_instructors_files(tmp_path):
    rep = tmp_path / "reports"
    write_files({rep / "s1.md": b"old 1", rep / "s2.md": b"old 2"}, folders=[rep])
    (rep / "notes.txt").write_text("mine")
    (rep / "sub").mkdir()
    (rep / "sub" / "x.txt").write_text("mine too")
    (rep / "link").symlink_to("notes.txt")
    inode = (rep / "notes.txt").stat().st_ino
    write_files({rep / "s1.md": b"new 1", rep / "s3.md": b"new 3"}, folders=[rep], drop={rep / "s2.md"})
    assert _tree(rep) == ["link", "notes.txt", "s1.md", "s3.md", "sub", "sub/x.txt"]
    assert (rep / "s1.md").read_bytes() == b"new 1" and (rep / "sub" / "x.txt").read_text() == "mine too"
    assert (rep / "notes.txt").stat().st_ino == inode and os.readlink(rep / "link") == "notes.txt"
    assert _tree(tmp_path) == ["reports"] + [f"reports/{p}" for p in _tree(rep)]   # no sibling left


def test_a_folder_swap_stopped_half_way_is_completed_by_the_next_run(tmp_path, monkeypatch):
    """Killed between the two renames (old folder aside, new one into place): no folder at its name
    for a moment; the next run puts the new one there and removes the old."""
    rep = tmp_path / "reports"
    write_files({rep / "s1.md": b"old"}, folders=[rep])
    (rep / "notes.txt").write_text("mine")
    _fail_on_call(monkeypatch, "rename", 2, OSError(errno.EIO, "Input/output error"))
    with pytest.raises(OutputError, match="stopped half-way"):
        write_files({rep / "s1.md": b"new"}, folders=[rep])
    monkeypatch.undo()
    assert not rep.exists()
    assert tidy_folder(tmp_path)[0].startswith("completed the outputs an interrupted run had written (1 renamed)")
    assert (rep / "s1.md").read_bytes() == b"new" and (rep / "notes.txt").read_text() == "mine"
    assert _tree(tmp_path) == ["reports", "reports/notes.txt", "reports/s1.md"]


def test_a_folder_that_cannot_be_swapped_is_written_file_by_file(tmp_path, monkeypatch):
    """The current folder (a shell stands in it) and a link to a folder are written in place."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "via").symlink_to(real)
    write_files({tmp_path / "via" / "a.md": b"x"}, folders=[tmp_path / "via"])
    assert (tmp_path / "via").is_symlink() and (real / "a.md").read_bytes() == b"x"
    monkeypatch.chdir(real)
    write_files({real / "b.md": b"y"}, folders=[real])
    assert _tree(real) == ["a.md", "b.md"] and sorted(p.name for p in tmp_path.iterdir()) == ["real", "via"]


@pytest.mark.parametrize("nth", [1, 2, 3])
def test_a_full_disk_leaves_nothing_written_and_says_so_in_one_line(tmp_path, monkeypatch, nth):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "s1.md").write_text("old")
    _fail_on_call(monkeypatch, "fsync", nth, OSError(errno.ENOSPC, "No space left on device"))
    files = {tmp_path / "g.csv": b"csv", tmp_path / "reports" / "s1.md": b"new", tmp_path / "reports" / "s2.md": b"2"}
    with pytest.raises(OutputError) as info:
        write_files(files, folders=[tmp_path / "reports"])
    assert str(info.value).endswith("cannot write (No space left on device)") and "\n" not in str(info.value)
    assert _tree(tmp_path) == ["reports", "reports/s1.md"] and (tmp_path / "reports" / "s1.md").read_text() == "old"


def test_a_file_the_instructor_saves_in_the_folder_while_it_is_written_is_kept(tmp_path, monkeypatch):
    """Between building the new folder and swapping it in, an editor saves notes.txt (a new file
    renamed over the old) and a new file appears: both end up in the folder, not in the one removed."""
    rep = tmp_path / "reports"
    write_files({rep / "s1.md": b"old"}, folders=[rep])
    (rep / "notes.txt").write_text("v1")
    real = os.rename

    def rename(src, dst, *a, **kw):
        if str(src) == str(rep):                       # the old folder is about to be set aside
            (rep / "draft.txt").write_text("v2")
            real(rep / "draft.txt", rep / "notes.txt")
            (rep / "late.txt").write_text("new")
            (rep / "s1.md").write_text("edited meanwhile")
        return real(src, dst, *a, **kw)

    monkeypatch.setattr(os, "rename", rename)
    write_files({rep / "s1.md": b"new"}, folders=[rep])
    assert (rep / "notes.txt").read_text() == "v2" and (rep / "late.txt").read_text() == "new"
    assert (rep / "s1.md").read_bytes() == b"new"                  # ours: this run's output wins
    assert _tree(tmp_path) == ["reports", "reports/late.txt", "reports/notes.txt", "reports/s1.md"]


def test_a_folder_with_a_file_that_cannot_be_hard_linked_is_written_in_place(tmp_path, monkeypatch):
    """Another user's file (Linux's protected_hardlinks refuses the link): the folder is not
    rebuilt, which would change that file's owner; its files are written one by one instead."""
    rep = tmp_path / "reports"
    rep.mkdir()
    (rep / "theirs.txt").write_text("a colleague's")
    folder_inode = rep.stat().st_ino

    def refuse(*a, **kw):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", refuse)
    write_files({rep / "s1.md": b"new"}, folders=[rep])
    assert rep.stat().st_ino == folder_inode and _tree(tmp_path) == ["reports", "reports/s1.md", "reports/theirs.txt"]


def test_a_folder_made_by_someone_else_while_its_files_are_written_is_not_replaced(tmp_path, monkeypatch):
    rep = tmp_path / "reports"
    real = os.fsync

    def fsync(fd):
        rep.mkdir(exist_ok=True)                    # another program makes the folder meanwhile
        (rep / "theirs.txt").write_text("x")
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OutputError, match="reports: the folder appeared while the outputs were being written; run again"):
        write_files({rep / "s1.md": b"new"}, folders=[rep])
    assert _tree(tmp_path) == ["reports", "reports/theirs.txt"]


def test_a_planted_journal_renames_and_removes_nothing(tmp_path):
    """A journal is a file anyone who can write the folder can plant, as a sheet's manifest is: one
    that would set a folder aside (and so remove it), rename a file from elsewhere over an output,
    or that lies away from its targets, is not ours and is left alone."""
    import json

    from examprep.publish import HOST

    here, precious = tmp_path / "here", tmp_path / "precious"
    here.mkdir()
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    (tmp_path / "evil.txt").write_text("evil")
    (here / "grades.csv").write_text("real")
    stamp = f"{DEAD}.{HOST}"
    (here / f".grades.csv.examprep-{stamp}-a.tmp").write_text("from a killed run")      # a real temporary name
    planted = [
        [["folder", str(here / f".precious.examprep-new-{stamp}-x"), str(precious), str(here / "gone"), []]],
        [["folder", str(tmp_path / f".precious.examprep-new-{stamp}-x"), str(precious),
          str(tmp_path / "elsewhere"), []]],
        [["file", str(tmp_path / "evil.txt"), str(here / "grades.csv"), None, None]],
        [["file", str(here / f".grades.csv.examprep-{stamp}-a.tmp"), str(here / "grades.csv"), None, None],
         ["file", str(tmp_path / "evil.txt"), str(here / "grades.csv"), None, None]],
    ]
    (tmp_path / f".precious.examprep-new-{stamp}-x").mkdir()
    for i, steps in enumerate(planted):
        journal = here / f".examprep-pending-{stamp}-{i}.json"
        journal.write_text(json.dumps({"steps": steps, "journals": [str(journal)]}))
    tidy_folder(here)
    tidy_folder(tmp_path)
    assert (precious / "thesis.tex").read_text() == "years of work"
    assert (tmp_path / "evil.txt").read_text() == "evil" and (here / "grades.csv").read_text() == "real"
    assert sorted(p.name for p in here.iterdir() if p.name.startswith(".examprep-pending-")) == [
        f".examprep-pending-{stamp}-{i}.json" for i in range(4)]                 # left, untrusted


def test_a_set_written_by_relative_paths_is_completed_from_another_folder(tmp_path, monkeypatch):
    """`grade … --csv grades.csv --json grades.json` run in the folder, killed between renames; the
    next run is started from elsewhere and names the folder by its full path."""
    monkeypatch.chdir(tmp_path)
    _fail_on_call(monkeypatch, "replace", 2, OSError(errno.EIO, "Input/output error"))
    with pytest.raises(OutputError, match="stopped half-way"):
        write_files({Path("grades.csv"): b"csv", Path("grades.json"): b"json"})
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path.parent)
    notes = tidy_folder(tmp_path)
    assert notes == [f"completed the outputs an interrupted run had written (1 renamed): {tmp_path / 'grades.csv'}, "
                     f"{tmp_path / 'grades.json'}"]
    assert _tree(tmp_path) == ["grades.csv", "grades.json"] and (tmp_path / "grades.json").read_bytes() == b"json"


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes any folder")
def test_a_read_only_output_folder_is_not_made_writable_by_a_swap(tmp_path):
    rep = tmp_path / "reports"
    rep.mkdir()
    (rep / "s1.md").write_text("kept")
    rep.chmod(0o555)
    try:
        with pytest.raises(OutputError, match="cannot write"):
            write_files({rep / "s1.md": b"new"}, folders=[rep])
        assert (rep / "s1.md").read_text() == "kept" and sorted(p.name for p in tmp_path.iterdir()) == ["reports"]
    finally:
        rep.chmod(0o755)
