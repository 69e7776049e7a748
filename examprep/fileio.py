"""Files the user gives and files we write.

Reading: ``read_user_bytes`` and ``read_user_text`` are the one way a file named by the user is
read. Every way the read can fail (missing, a dangling link, a directory, a pipe or device, no
permission, too large, not UTF-8) becomes one line naming the file, raised as the caller's own
error type; a pipe or a device is refused at once instead of blocking.

Writing: ``write_files`` writes every file to a temporary file beside its target (an output
folder: into a new folder beside it, holding the files already there), fsyncs it, and only when
all are written renames them into place (Ctrl-C held off, the renames journalled so that the next
run completes a set a kill interrupted); a failure or Ctrl-C before that removes the temporaries
and the directories it created. A crash mid-write never leaves a half-written output or a mix of
old and new outputs behind, and readers never see a partial file. ``tidy_folder`` removes what a
killed run left.
``atomic_write_bytes`` is the one-file case.

Names: ``safe_name`` is the one file name a student id gets, wherever a file is named after one.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import signal
import stat
import tempfile
import threading
from pathlib import Path
from typing import Any

from examprep.errors import ExamprepError
from examprep.publish import IN_USE, NotSwappable, carry_into, carry_late, remove_tree, same_folder, stamp, swappable
from examprep.publish import recover as recover            # fileio is where writers find them
from examprep.publish import tidy_folder as tidy_folder


class OutputError(ExamprepError):
    """An output file could not be written (permissions, missing directory, full disk)."""


class InputError(ExamprepError):
    """A file the user named could not be read."""


# ------------------------------------------------------------------------------------------ reading

def size_text(n: int) -> str:
    if n < 1000:                                 # a limit of a few bytes is shown as it is, never "0 kB"
        return f"{n} byte{'' if n == 1 else 's'}"
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.0f} kB"


def not_regular(mode: int) -> str:
    """What a file that is not a regular one is: "a named pipe, not a regular file"."""
    kind = ("a directory" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode) else
            "a socket" if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "")
    return f"{kind}, not a regular file" if kind else "not a regular file"


def read_user_bytes(path: str | os.PathLike, where: str | None = None, *, error: type[ExamprepError] = InputError,
                    kind: str = "file", missing_hint: str = "", limit: int | None = None,
                    limit_what: str = "") -> bytes:
    """The bytes of a regular file the user named, or ``error`` with one line: ``where`` (default:
    the path), then "no such {kind}" (with ``missing_hint``), "a dangling symbolic link…", "a
    directory, not a {kind}", "a named pipe, not a regular file", "permission denied", "cannot read
    (…)", or over ``limit`` bytes ("… is over the 1.0 MB limit for {limit_what}"), checked before
    reading and again while reading (a file that grows). The file is opened without blocking and
    checked once open, so a pipe or a device is refused at once (reading one would wait forever or
    never end)."""
    with open_user_file(path, where, error=error, kind=kind, missing_hint=missing_hint, limit=limit,
                        limit_what=limit_what) as fh:
        return fh.read()


def open_user_file(path: str | os.PathLike, where: str | None = None, *, error: type[ExamprepError] = InputError,
                   kind: str = "file", missing_hint: str = "", limit: int | None = None,
                   limit_what: str = "") -> io.BufferedReader:
    """A regular file the user named, open for reading in binary, for a reader that streams it:
    the same checks and messages as ``read_user_bytes`` (which reads through it). Past ``limit``
    bytes a read raises ``error`` ("… grew past the 16.0 MB limit for {limit_what} while it was
    read"), so a file that grows while it is read never takes more than the limit."""
    p = Path(path)
    where = str(p) if where is None else where

    def fail(err: OSError) -> ExamprepError:
        if isinstance(err, FileNotFoundError):
            if p.is_symlink():
                return error(f"{where}: a dangling symbolic link: its target does not exist")
            return error(f"{where}: no such {kind}" + (f"; {missing_hint}" if missing_hint else ""))
        if isinstance(err, PermissionError):
            return error(f"{where}: permission denied")
        if isinstance(err, IsADirectoryError):
            return error(f"{where}: a directory, not a {kind}")
        return error(f"{where}: cannot read ({err.strerror or err})")

    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as err:
        raise fail(err) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{where}: a directory, not a {kind}")
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{where}: {not_regular(info.st_mode)}")
        if limit is not None and info.st_size > limit:
            raise error(f"{where}: {size_text(info.st_size)} is over the {size_text(limit)} limit"
                        + (f" for {limit_what}" if limit_what else ""))
    except OSError as err:
        os.close(fd)
        raise fail(err) from None
    except BaseException:
        os.close(fd)
        raise
    grew = error(f"{where}: grew past the {size_text(limit)} limit" + (f" for {limit_what}" if limit_what else "")
                 + " while it was read") if limit is not None else None
    return io.BufferedReader(_Capped(fd, limit, grew, fail), 1 << 16)


class _Capped(io.RawIOBase):
    """A file descriptor read up to ``limit`` bytes: one more raises ``grew``; an OSError while
    reading becomes ``fail(err)``."""

    def __init__(self, fd: int, limit: int | None, grew: Exception | None, fail: Any) -> None:
        self._file = io.FileIO(fd, "rb", closefd=True)
        self._left = limit
        self._grew = grew
        self._fail = fail

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer)
        if self._left is not None:
            view = view[:self._left + 1]          # one byte past the limit is enough to know
        try:
            n = self._file.readinto(view)
        except OSError as err:
            raise self._fail(err) from None
        if n and self._left is not None:
            self._left -= n
            if self._left < 0:
                raise self._grew
        return n or 0

    def close(self) -> None:
        self._file.close()
        super().close()


def read_user_text(path: str | os.PathLike, where: str | None = None, *, error: type[ExamprepError] = InputError,
                   kind: str = "file", missing_hint: str = "", decode_hint: str = "") -> str:
    """The text of a UTF-8 file the user named (a byte-order mark is dropped), or ``error`` with one
    line: read_user_bytes's, or "not UTF-8 text (line N)" with ``decode_hint``."""
    data = read_user_bytes(path, where, error=error, kind=kind, missing_hint=missing_hint)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        where = str(path) if where is None else where
        raise error(f"{where}: not UTF-8 text (line {line})" + (f"; {decode_hint}" if decode_hint else "")) from None


def stdin_lines(stdin: Any, error: type[ExamprepError] = InputError) -> list[str]:
    """The lines of stdin without their line ends; a line that is not UTF-8 is ``error`` naming it."""
    raw = getattr(stdin, "buffer", None)
    if raw is None:                          # a text-only stream: undo Python's surrogate escapes
        raw = (line.encode("utf-8", "surrogateescape") for line in stdin)
    lines = []
    for number, line in enumerate(raw, 1):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as err:
            raise error(f"stdin line {number} is not UTF-8 (byte 0x{line[err.start]:02x} at byte "
                        f"{err.start + 1}); convert the input to UTF-8, e.g. with iconv") from None
        lines.append(text.rstrip("\r\n"))
    return lines


# ------------------------------------------------------------------------------------------ names

_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}


def safe_name(student_id: str) -> str:
    """The file name of a student id, wherever a file is named after one (answer templates,
    feedback files, Gradescope folders): [A-Za-z0-9._-] only, no leading dot or dash (a name such
    as "-rf" reads as an option to the next command), at most 64 characters, no name Windows
    reserves; an id that had to change gets "-" and 8 hex digits of its SHA-1, so distinct ids
    stay distinct."""
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", student_id).strip("._-")[:64]
    if clean == student_id and clean.lower().split(".")[0] not in _RESERVED and clean:
        return clean
    digest = hashlib.sha1(student_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{clean or 'student'}-{digest}"


# ------------------------------------------------------------------------------------------ writing

def _cannot_write(target: Path, err: OSError) -> OutputError:
    for parent in target.parents:                       # "File exists" / "Not a directory" from mkdir
        if parent.exists() and not parent.is_dir():
            return OutputError(f"{target}: cannot write ({parent} is a file, not a directory)")
    return OutputError(f"{target}: cannot write ({err.strerror or err})")


def check_writable(path: str | os.PathLike) -> Path:
    """Fail early, before any work, when ``path`` could not be written: creates the missing
    parent directories (as the writers do) and a throw-away file beside the target.
    Raises OutputError naming the path and the reason; an existing target is left untouched."""
    target = Path(path)
    try:
        if target.is_dir():
            raise OutputError(f"{target}: cannot write (it is a directory)")
    except OSError as err:                       # e.g. a name too long for the file system
        raise _cannot_write(target, err) from None
    try:
        real = _through_link(target)             # where write_files will put the temporary file
        real.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.examprep-{stamp()}-", suffix=".tmp", dir=real.parent)
        os.close(fd)
        os.unlink(tmp)
    except OSError as err:
        raise _cannot_write(target, err) from None
    return target


def refuse_special(target: Path, where: str | None = None) -> None:
    """Refuse, with OutputError naming ``where`` (default the path), to write over an existing file
    that is not a regular one (a device such as /dev/null, a named pipe, a socket), --force or not:
    an atomic write renames a new regular file over it, replacing the device itself. A symbolic
    link is judged by what it points to."""
    where = where or os.fspath(target)
    try:
        info = os.stat(target)
    except OSError:                              # absent (or unreadable: the write says why)
        return
    if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
        raise OutputError(f"{where}: is not a regular file (a device, pipe or socket); give a file's path")


def check_output_file(path: str | os.PathLike, option: str, *, force: bool = False) -> Path:
    """Before any work: ``path`` (given as ``option``) names a file that can be written.

    Refuses, with OutputError naming the option: a directory, a parent directory that does not
    exist (never created silently: a typo would otherwise scatter files), a parent that is a file,
    and an existing file unless ``force``. Returns the path.
    """
    raw = os.fspath(path)
    target = Path(path)
    where = f"{option} {raw}" if option else raw
    if not raw.strip():
        raise OutputError(f"{option or 'output'}: an empty file name; give a file name")
    if raw == "-":
        raise OutputError(f"{where}: '-' (standard output) is not written here; give a file's path (./- for a file named -)")
    target = _file_path(raw, where)
    refuse_special(target, where)
    try:
        if target.is_dir():
            example = target / ("key.json" if option == "--key" else "answers.toml" if option == "--template" else "FILE")
            raise OutputError(f"{where}: is a directory; give a file name such as {example}")
        parent = target.parent
        if not parent.exists():
            raise OutputError(f"{where}: the directory {parent} does not exist; create it first (mkdir -p {parent})")
        if not parent.is_dir():
            raise OutputError(f"{where}: {parent} is a file, not a directory")
        if target.exists() and not force:
            raise OutputError(f"{where}: already exists; use --force to replace it")
    except OSError as err:                       # e.g. a name too long for the file system
        raise _cannot_write(target, err) from None
    return target


def check_output_folder(path: str, option: str) -> Path:
    """Before any work: ``path`` (given as ``option``) names a folder outputs can be written into.
    Refuses, with OutputError naming the option: an empty name, '-', a link loop or a dangling link,
    a file, and a folder whose parent does not exist (only the last folder of a path is made: a typo
    would scatter outputs). Returns the path."""
    if not path.strip():
        raise OutputError(f"{option}: an empty folder name; give a folder")
    if path == "-":
        raise OutputError(f"{option}: '-' (stdout) is not offered for a folder of outputs; give a folder")
    folder = Path(path)
    where = f"{option} {path}"
    if folder.is_symlink() and not folder.exists():
        try:
            os.stat(folder)
        except FileNotFoundError:
            raise OutputError(f"{where}: a symbolic link to {real_path(folder)}, which does not exist; create it "
                              f"first (mkdir -p {real_path(folder)})") from None
        except OSError as err:                   # a loop
            raise OutputError(f"{where}: cannot write ({err.strerror or err})") from None
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{where}: is a file, not a folder")
    if not folder.exists() and not folder.parent.is_dir():
        if folder.parent.exists():
            raise OutputError(f"{where}: cannot create it, {folder.parent} is not a directory")
        raise OutputError(f"{where}: the folder {folder.parent} does not exist (a typo?); create it first — "
                          "only the last folder of the path is made")
    return folder


class interrupts_held:
    """Ctrl-C ignored for the duration (main thread only): the renames that publish outputs take
    milliseconds and must not stop half-way."""

    def __enter__(self) -> None:
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, signal.SIG_IGN)

    def __exit__(self, *exc: Any) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


def write_files(files: dict[Path, bytes], *, overwrite: bool = True, private: bool = False,
                folders: tuple[Path, ...] | list[Path] = (), drop: set[Path] | frozenset = frozenset(),
                private_files: set[Path] | frozenset = frozenset()) -> list[Path]:
    """Write every file, all or nothing as far as the file system allows: each goes to a temporary
    file first (missing directories are created); only when all are written are they renamed into
    place, with Ctrl-C held off for those few renames. A failure or Ctrl-C before that removes the
    temporaries and the directories this call created; a failure raises OutputError naming the
    file. ``overwrite=False``: a target that appeared meanwhile (absent when this call began) is an
    error.

    ``folders``: output folders replaced whole. Each is built as a hidden sibling
    (.NAME.examprep-new-…) holding its files from ``files`` and every other file already in it
    (hard links: the instructor's own files stay), except the paths in ``drop`` (an earlier run's
    outputs this run removes); the old folder is renamed aside and the new one into its place. A
    folder that cannot be swapped (a link, the current directory, a pipe inside…) gets its files
    written one by one beside their targets instead.

    More than one rename is recorded first in a journal (.examprep-pending-….json, in every folder
    the renames touch): a run killed between them is completed by the next write in one of those
    folders (tidy_folder), which also removes a killed run's temporaries.

    Temporaries are 0600 while they are written (a killed run never leaves a readable copy of a key);
    a new file then gets the mode a plain open() would give (0666 & ~umask), a replaced one keeps
    its own, and ``private`` (or a path in ``private_files``) makes 0600 either way.
    A target that is a symbolic link is written through: the file it points to gets the new
    content and the link stays (as an editor saves a linked file). Returns the targets, in order."""
    temps: list[tuple[str, Path]] = []
    created: list[Path] = []
    swaps: list[tuple[Path, Path, Path | None]] = []      # (new folder, folder, aside)
    modes: list[tuple[str, int]] = []                     # set when all is written, before the renames
    journals: list[Path] = []
    umask = os.umask(0)
    os.umask(umask)
    target = None
    renaming = False
    pid = stamp()
    plain = {Path(t): d for t, d in files.items()}
    for t in plain:                               # never rename a file over a device, pipe or socket
        refuse_special(t)
    existed = {t for t in plain if os.path.lexists(t)}
    swap_of: dict[Path, Path] = {}
    reals = {Path(f): real_path(f) for f in folders}
    seen: set[Path] = set()
    for folder in dict.fromkeys(map(Path, folders)):
        if reals[folder] in seen or any(r in reals[folder].parents for r in reals.values()):
            continue                          # one folder named twice, or inside another folder of this run
        seen.add(reals[folder])
        inside = [t for t in plain if folder in t.parents]
        if swappable(folder, [t.relative_to(folder).as_posix() for t in inside]):
            for t in inside:
                swap_of[t] = folder
    try:
        for d in {t.parent for t in plain} | {Path(f).parent for f in folders} | set(map(Path, folders)):
            tidy_folder(d)
        for folder in dict.fromkeys(swap_of.values()):
            new = Path(tempfile.mkdtemp(prefix=f".{folder.name}.examprep-new-{pid}-", dir=folder.parent))
            IN_USE.add(str(new))
            aside = None
            if folder.exists():
                aside = folder.parent / f".{folder.name}.examprep-old-{pid}-{os.urandom(4).hex()}"
                skip = {t.relative_to(folder).as_posix() for t, f in swap_of.items() if f == folder}
                skip |= {Path(p).relative_to(folder).as_posix() for p in drop if folder in Path(p).parents}
                try:
                    carry_into(folder, new, skip)
                    same_folder(folder, new)
                    modes.append((str(new), stat.S_IMODE(os.stat(folder).st_mode)))
                    os.chmod(new, 0o700)              # closed to others until it is whole
                except NotSwappable:
                    remove_tree(new)
                    for t in [t for t, f in swap_of.items() if f == folder]:
                        del swap_of[t]
                    continue
            else:
                modes.append((str(new), 0o777 & ~umask))         # mkdtemp made it 0700 meanwhile
            swaps.append((new, folder, aside))
        new_of = {folder: new for new, folder, _ in swaps}
        for target, data in plain.items():
            mode = 0o600 if private or target in private_files else None
            if target in swap_of:
                folder = swap_of[target]
                dest = new_of[folder] / target.relative_to(folder)
                dest.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                tmp = str(dest)
                mode = mode or _kept_mode(target, 0o666 & ~umask)
            else:
                target = _through_link(target)
                missing = [d for d in (target.parent, *target.parent.parents) if not d.exists()]
                target.parent.mkdir(parents=True, exist_ok=True)
                created += reversed(missing)
                fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.examprep-{pid}-", suffix=".tmp", dir=target.parent)
                IN_USE.add(tmp)
                temps.append((tmp, target))
                mode = mode or _kept_mode(target, 0o666 & ~umask)
            with os.fdopen(fd, "wb") as fh:                # 0600 until every output is whole
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            modes.append((tmp, mode))
        if not overwrite:
            clash = [t for t in plain if t not in existed and os.path.lexists(t)]
            if clash:
                raise OutputError(f"{clash[0]} appeared while the outputs were being written; use --force to overwrite")
        appeared = next((f for _, f, a in swaps if a is None and os.path.lexists(f)), None)
        if appeared is not None:          # made by someone else meanwhile: its files are not in ours
            raise OutputError(f"{appeared}: the folder appeared while the outputs were being written; run again")
        for path, mode in modes:
            os.chmod(path, mode)
        ours = {f: sorted({t.relative_to(f).as_posix() for t, g in swap_of.items() if g == f}
                          | {Path(p).relative_to(f).as_posix() for p in drop if f in Path(p).parents})
                for _, f, _ in swaps}
        full = os.path.abspath             # a journal is read by a run started elsewhere
        steps = [["file", full(tmp), full(t), None, None] for tmp, t in temps] + \
                [["folder", full(new), full(f), full(a) if a else None, ours[f]] for new, f, a in swaps]
        if len(steps) > 1 or swaps:
            where = list(dict.fromkeys(Path(s[2]).parent for s in steps))
            journals = [d / f".examprep-pending-{pid}-{os.urandom(4).hex()}.json" for d in where]
            IN_USE.update(map(str, journals))
            text = json.dumps({"steps": steps, "journals": [str(j) for j in journals]}).encode("utf-8")
            for j in journals:
                with open(j, "wb") as fh:
                    fh.write(text)
                    fh.flush()
                    os.fsync(fh.fileno())
        with interrupts_held():
            renaming = True
            for tmp, target in temps:
                os.replace(tmp, target)
            for new, folder, aside in swaps:
                target = folder
                if aside is not None:
                    os.rename(folder, aside)
                os.rename(new, folder)
        for _, folder, aside in swaps:
            if aside is not None:
                carry_late(aside, folder, set(ours[folder]))
        for j in journals:
            os.unlink(j)
        for _, _, aside in swaps:
            if aside is not None:
                remove_tree(aside)
    except BaseException as err:        # OSError, OutputError, KeyboardInterrupt: leave nothing behind
        if renaming and journals:       # some renames may be done: the journal lets the next run complete them
            for t in (*(tmp for tmp, _ in temps), *(str(n) for n, _, _ in swaps), *map(str, journals)):
                IN_USE.discard(t)
            done = target if target is not None else "the outputs"
            raise OutputError(f"{done}: publishing the outputs stopped half-way ({getattr(err, 'strerror', None) or err}); "
                              "the next examprep run writing there completes it") from None
        for tmp, _ in temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        for new, _, _ in swaps:
            remove_tree(new)
        for j in journals:
            try:
                os.unlink(j)
            except OSError:
                pass
        for d in reversed(created):
            try:
                d.rmdir()
            except OSError:
                pass
        if isinstance(err, OSError):
            raise _cannot_write(target if target is not None else Path(err.filename or "."), err) from None
        raise
    finally:
        for t in (*(tmp for tmp, _ in temps), *(str(n) for n, _, _ in swaps), *map(str, journals)):
            IN_USE.discard(t)
    return [Path(t) for t in files]


def _kept_mode(target: Path, default: int) -> int:
    """The permission bits a replaced file keeps (a grades file made private stays private), else
    ``default``: what a plain open() would give a new file."""
    try:
        st = os.stat(target)
    except OSError:
        return default
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else default


def _file_path(raw: str, where: str) -> Path:
    """The file an output named ``raw`` writes: refuses a name ending in '/' (Path() drops it: g.csv/
    would be written as g.csv) unless it names an existing folder (then the caller's own folder
    message), and follows a link (_through_link: a loop, a link into a missing folder refused)."""
    if raw.endswith(("/", os.sep)) and not Path(raw).is_dir():
        raise OutputError(f"{where}: ends with '/' (a folder's name); an output needs a file's path")
    return _through_link(Path(raw), where)


def real_path(path: str | os.PathLike) -> Path:
    """``path`` with every symbolic link followed, for comparing paths (an output that is an input,
    two outputs on one file). Never raises: a link loop stays as it is (Path.resolve raises
    RuntimeError on one); reading or writing it then fails with its own one-line error."""
    return Path(os.path.realpath(path))


def _through_link(target: Path, where: str | None = None) -> Path:
    """The file a write to ``target`` should replace: ``target`` itself, or where it points when it
    is a symbolic link (followed to the end; a dangling link's target is created, in a folder that
    must exist: a link never makes folders). Raises OutputError for a link loop or a link into a
    missing folder, naming ``where`` (default the path)."""
    if not target.is_symlink():
        return target
    where = where or str(target)
    real = real_path(target)
    try:
        os.stat(target)
    except FileNotFoundError:                    # dangling: the file it names is created
        pass
    except OSError as err:                       # a loop (ELOOP), a link through a file (ENOTDIR)
        under = next((a for a in real.parents if a.exists() and not a.is_dir()), None)
        reason = f"{under} is a file, not a directory" if under else err.strerror or str(err)
        raise OutputError(f"{where}: cannot write ({reason})") from None
    if not real.parent.is_dir():
        raise OutputError(f"{where}: a symbolic link to {real}, whose folder does not exist; "
                          f"create it first (mkdir -p {real.parent})")
    return real


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, private: bool = False) -> Path:
    """Write one file atomically (write_files with one file)."""
    return write_files({Path(path): data}, private=private)[0]


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def check_target(path: str | os.PathLike, inputs: set[Path], where: str | None = None) -> None:
    """One output's path, before anything is written: not one of ``inputs`` (resolved paths), not a
    folder, not a device, pipe or socket (an atomic write would rename over it), not under a file.
    OutputError names ``where`` (the option and path; default the path)."""
    where = where or os.fspath(path)
    _file_path(os.fspath(path), where)
    path = Path(path)
    if real_path(path) in inputs:
        raise OutputError(f"{where}: an output would overwrite an input file; choose another path")
    if path.is_dir():
        raise OutputError(f"{where}: is a folder; an output needs a file's path")
    try:
        refuse_special(path, where)
    except OutputError as err:
        raise OutputError(f"{err} (or - where the option writes to stdout)") from None
    above = next((a for a in path.parents if a.exists()), None)
    if above is not None and not above.is_dir():
        raise OutputError(f"{where}: {above} is a file, not a folder")


def write_outputs(planned: list[tuple[Path, str | bytes]], inputs: set[Path], folders: list[Path] = ()) -> None:
    """Write the planned files (text or bytes), after checking them all: none would overwrite an
    input, no two share a path, none is a folder or lies under a file — so a run that fails its
    checks writes nothing. Then all of them are written at once (write_files: every file first,
    then the renames, journalled), the ``folders`` (output folders such as --report's) each
    replaced whole: a full disk or a kill leaves the old outputs or the new ones, never a mix."""
    seen: dict[Path, Path] = {}
    for path, _ in planned:
        check_target(path, inputs)
        real = real_path(path)
        if real in seen:
            raise OutputError(f"{path}: two outputs would be written to this one file ({seen[real]} too); "
                             "give each its own path")
        seen[real] = path
    files = {Path(path): data if isinstance(data, bytes) else data.encode("utf-8") for path, data in planned}
    write_files(files, folders=list(folders))
