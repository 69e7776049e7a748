"""examprep.fileio: the one reader of the files a user names, the one all-or-nothing writer, and the
one file name a student id gets."""
import os
import stat

import pytest

from examprep.errors import ExamprepError
from examprep.fileio import (InputError, OutputError, atomic_write_bytes, check_output_file, check_target,
                             read_user_bytes, read_user_text, safe_name, write_files)


class MyError(ExamprepError):
    pass


def _message(path, **kw):
    with pytest.raises(MyError) as info:
        read_user_text(path, error=MyError, **kw)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_each_way_a_read_fails_is_one_line_in_the_callers_error_type(tmp_path):
    assert _message(tmp_path / "nope.txt") == f"{tmp_path / 'nope.txt'}: no such file"
    assert _message(tmp_path / "nope.txt", missing_hint="make one") == f"{tmp_path / 'nope.txt'}: no such file; make one"
    assert _message(tmp_path, kind="key file") == f"{tmp_path}: a directory, not a key file"
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    assert _message(tmp_path / "link").endswith("link: a dangling symbolic link: its target does not exist")
    os.mkfifo(tmp_path / "pipe")
    assert _message(tmp_path / "pipe").endswith("pipe: a named pipe, not a regular file")     # at once, no hang
    (tmp_path / "latin.txt").write_bytes("ok\nCaf\xe9\n".encode("latin-1"))
    assert _message(tmp_path / "latin.txt", decode_hint="save it as UTF-8") == \
        f"{tmp_path / 'latin.txt'}: not UTF-8 text (line 2); save it as UTF-8"
    assert _message(tmp_path / "nope.txt", where="--roster x") == "--roster x: no such file"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_says_permission_denied(tmp_path):
    f = tmp_path / "secret.txt"
    f.write_text("x")
    f.chmod(0)
    assert _message(f) == f"{f}: permission denied"


def test_the_size_limit_is_checked_before_reading(tmp_path):
    f = tmp_path / "big.toml"
    f.write_bytes(b"x" * 2000)
    with pytest.raises(InputError, match=r"big.toml: 2 kB is over the 1 kB limit for one submission$"):
        read_user_bytes(f, limit=1000, limit_what="one submission")
    assert read_user_bytes(f) == b"x" * 2000


def test_text_drops_a_byte_order_mark(tmp_path):
    f = tmp_path / "bom.csv"
    f.write_bytes(b"\xef\xbb\xbfid\n")
    assert read_user_text(f) == "id\n"


def test_write_files_is_all_or_nothing(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a directory is needed")
    files = {tmp_path / "out" / "a.txt": b"a", blocker / "b.txt": b"b"}
    with pytest.raises(OutputError, match="blocker is a file, not a directory"):
        write_files(files)
    assert not (tmp_path / "out").exists()                       # the directory it made is gone too
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker"]
    written = write_files({tmp_path / "out" / "a.txt": b"a", tmp_path / "b.txt": b"b"})
    assert [p.read_bytes() for p in written] == [b"a", b"b"]


def test_files_get_open_modes_and_a_secret_stays_private(tmp_path):
    umask = os.umask(0o022)
    try:
        plain = atomic_write_bytes(tmp_path / "plain", b"x")
        private = atomic_write_bytes(tmp_path / "private", b"x", private=True)
    finally:
        os.umask(umask)
    assert stat.S_IMODE(plain.stat().st_mode) == 0o644 and stat.S_IMODE(private.stat().st_mode) == 0o600


def test_a_linked_output_is_written_through_and_the_link_kept(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "grades.json").write_text("old")
    link = tmp_path / "grades.json"
    link.symlink_to(shared / "grades.json")
    dangling = tmp_path / "new.json"
    dangling.symlink_to(shared / "new.json")
    relative = tmp_path / "rel.json"
    relative.symlink_to(os.path.join("shared", "rel.json"))
    written = write_files({link: b"new", dangling: b"made", relative: b"rel"})
    assert written == [link, dangling, relative]
    assert all(p.is_symlink() for p in written)                  # no link replaced by a plain file
    assert (shared / "grades.json").read_text() == "new"
    assert (shared / "new.json").read_text() == "made" and (shared / "rel.json").read_text() == "rel"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grades.json", "new.json", "rel.json", "shared"]
    assert sorted(p.name for p in shared.iterdir()) == ["grades.json", "new.json", "rel.json"]   # no temporaries left


def test_a_write_through_a_link_into_a_file_path_fails_in_one_line_and_leaves_nothing(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    link = tmp_path / "out.json"
    link.symlink_to(blocker / "out.json")                        # points under a file
    with pytest.raises(OutputError, match="blocker is a file, not a directory"):
        atomic_write_bytes(link, b"y")
    assert link.is_symlink() and blocker.read_text() == "x"


def test_a_replaced_file_keeps_its_permissions(tmp_path):
    # grades made private (chmod 600) stayed private only until the next --force
    umask = os.umask(0o022)
    try:
        kept = tmp_path / "grades.json"
        kept.write_text("old")
        os.chmod(kept, 0o600)
        atomic_write_bytes(kept, b"new")
        shared = tmp_path / "shared.json"
        shared.write_text("old")
        os.chmod(shared, 0o640)
        link = tmp_path / "link.json"
        link.symlink_to(shared)
        atomic_write_bytes(link, b"new")
        fresh = atomic_write_bytes(tmp_path / "fresh.json", b"x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and kept.read_text() == "new"
    assert stat.S_IMODE(shared.stat().st_mode) == 0o640 and shared.read_text() == "new"
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644


def test_link_loops_and_links_into_missing_folders_are_one_line_and_make_nothing(tmp_path):
    loop1, loop2 = tmp_path / "loop1", tmp_path / "loop2"
    loop1.symlink_to(loop2)
    loop2.symlink_to(loop1)
    into = tmp_path / "into.json"
    into.symlink_to(tmp_path / "missing" / "x.json")
    for check in (lambda p: check_target(p, set(), f"--json {p.name}"),
                  lambda p: check_output_file(p, "--json"),
                  lambda p: atomic_write_bytes(p, b"x")):
        with pytest.raises(OutputError, match="loop1: cannot write [(]Too many levels of symbolic links[)]"):
            check(loop1)
        with pytest.raises(OutputError, match=f"into.json: a symbolic link to {tmp_path / 'missing' / 'x.json'}, "
                                              "whose folder does not exist; create it first"):
            check(into)
    assert not (tmp_path / "missing").exists() and loop1.is_symlink() and into.is_symlink()


def test_an_output_named_as_a_folder_or_empty_is_refused(tmp_path):
    with pytest.raises(OutputError, match="^--csv g.csv/: ends with '/'"):
        check_target(str(tmp_path / "g.csv") + "/", set(), "--csv g.csv/")
    with pytest.raises(OutputError, match="ends with '/'"):
        check_output_file(str(tmp_path / "k.json") + "/", "--key")
    with pytest.raises(OutputError, match="^--key: an empty file name; give a file name$"):
        check_output_file("", "--key")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sid", ["s123", "Müller/1", "-rf", "..", "CON", "a b", "x" * 100, ""])
def test_a_student_gets_the_same_file_name_on_a_sheet_and_in_the_grades(sid):
    """The answer template a sheet writes and the feedback file grading writes are named alike."""
    from examprep.grading.report_text import unique_names
    from examprep.sheets.variants import Student
    from examprep.sheets.write import planned_paths

    class Result:
        student_id = sid

    template = next(p for p in planned_paths(True, ("md",), [Student(sid)]) if p.startswith("answers/"))
    assert template == f"answers/{safe_name(sid)}.toml" == f"answers/{unique_names([Result()])[0]}.toml"
    assert not safe_name(sid).startswith(("-", ".")) and len(safe_name(sid)) <= 64 + 9


def test_no_write_ever_replaces_a_pipe_force_or_not(tmp_path):
    """A named pipe (as /dev/null, a device) is never renamed over: --force replaces files only."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    for path in (fifo, link):
        for force in (False, True):
            with pytest.raises(OutputError, match=r"^--key .*: is not a regular file \(a device, pipe or socket\)"):
                check_output_file(path, "--key", force=force)
        with pytest.raises(OutputError, match="is not a regular file"):
            write_files({path: b"x"})
        with pytest.raises(OutputError, match="is not a regular file"):
            check_target(path, set())
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "pipe"]      # no temporaries left


def test_dash_is_no_file_name_for_an_output_that_never_writes_to_stdout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OutputError, match="^-: '-' \\(standard output\\) is not written here"):
        check_output_file("-", "")
    assert list(tmp_path.iterdir()) == []
