"""What a killed examprep run leaves, and how the next one finishes it (used by fileio.write_files).

Our temporaries are named with the writing process's id, so a later run tells a killed run's
leftovers from another run's work in progress. An output folder is replaced whole: built beside
itself (the files already in it hard-linked in), then swapped in with two renames; several renames
that publish one set of outputs are recorded first in a journal. ``tidy_folder`` completes an
interrupted set from its journal and removes a killed run's temporaries; ``recover`` runs it where
a command is about to write.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import stat
import time
from pathlib import Path


def _real(path: str | os.PathLike) -> Path:
    return Path(os.path.realpath(path))


# Our own temporary names. Each carries the writing process's id, so a later run can tell a
# temporary left by a killed run (its process is gone) from one another run is writing now:
#   .NAME.examprep-PID.HOST-XXXX.tmp       a file being written beside NAME
#   .NAME.examprep-new-PID.HOST-XXXX/      a folder NAME being built beside it
#   .NAME.examprep-old-PID.HOST-XXXX/      the folder NAME it replaces, set aside until it is removed
#   .examprep-pending-PID.HOST-XXXX.json   the renames that publish a set of outputs (a journal)
# (HOST: 6 hex digits of the machine's name's SHA-1)
_TEMP = re.compile(r"^\..+\.examprep-(?:(?:new|old)-)?(\d+)\.([0-9a-f]{6})-[A-Za-z0-9_]+(?:\.tmp)?$")
_PENDING = re.compile(r"^\.examprep-pending-(\d+)\.([0-9a-f]{6})-[A-Za-z0-9_]+\.json$")
_LEGACY_TEMP = re.compile(r"^\..+\.[A-Za-z0-9_]{8}\.tmp$")     # before the process id was in the name
LEGACY_TEMP_AGE = 3600.0      # seconds: an old-style temporary this old is no run's any more
IN_USE: set[str] = set()     # this process's temporaries and journals being written now


def _host() -> str:
    return hashlib.sha1(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:6]


HOST = _host()     # in every name: a process id means nothing on another machine sharing the folder


def stamp() -> str:
    """This process in our temporaries' names: "PID.HOST"."""
    return f"{os.getpid()}.{HOST}"


def _gone(pid: int, host: str, path: str) -> bool:
    """Whether the process that named ``path`` has ended (this process's own leftovers, from a
    write that failed, count as ended once no write of ours uses them). Another machine's (a shared
    folder) are never taken for ended."""
    if host != HOST:
        return False
    if pid == os.getpid():
        return path not in IN_USE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:                  # another user's process: alive
        return False
    return False


def remove_tree(path: str | Path) -> None:
    if os.path.islink(path) or not os.path.isdir(path):
        try:
            os.unlink(path)
        except OSError:
            pass
    else:
        shutil.rmtree(path, ignore_errors=True)


def tidy_folder(folder: str | os.PathLike, *, now: float | None = None) -> list[str]:
    """Finish what a killed run left in ``folder``, before writing there: a set of outputs whose
    renames were interrupted (a journal ``.examprep-pending-*.json``) is completed — its new files
    were all written before the first rename, so the set becomes the new one, never a mix — and
    our own temporaries whose process has ended are removed (old-style ``.NAME.XXXXXXXX.tmp`` ones
    when over LEGACY_TEMP_AGE old). Returns one line per completed set. Never raises."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    notes = []
    for entry in entries:
        m = _PENDING.match(entry.name)
        if m and _gone(int(m.group(1)), m.group(2), entry.path):
            try:
                journal = json.loads(Path(entry.path).read_text(encoding="utf-8"))
                steps, journals = journal["steps"], journal["journals"]
                trusted = _trusted(Path(os.path.abspath(entry.path)), f"{m.group(1)}.{m.group(2)}", steps, journals)
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                trusted = False
            if not trusted:          # not a journal we wrote: done nothing, left for its owner
                continue
            done = _finish(steps)
            for j in journals:
                try:
                    os.unlink(j)
                except OSError:
                    pass
            notes.append(f"completed the outputs an interrupted run had written ({done} renamed): "
                         + ", ".join(str(s[2]) for s in steps))
    now = time.time() if now is None else now
    for entry in entries:
        m = _TEMP.match(entry.name)
        stale = bool(m) and _gone(int(m.group(1)), m.group(2), entry.path)
        if not m and _LEGACY_TEMP.match(entry.name):
            try:
                age = now - entry.stat(follow_symlinks=False).st_mtime
                stale = entry.is_file(follow_symlinks=False) and age > LEGACY_TEMP_AGE
            except OSError:
                stale = False
        if stale and os.path.lexists(entry.path):
            remove_tree(entry.path)
    return notes


def recover(paths: list[str | os.PathLike | None]) -> list[str]:
    """Before a run's checks: tidy_folder where each output (a file or a folder; None and "-"
    skipped) is written and inside each output folder, so that a killed run's set is completed
    before this run looks at what exists. Returns tidy_folder's lines."""
    notes: list[str] = []
    seen: set[Path] = set()
    for p in paths:
        if p is None or os.fspath(p) in ("", "-"):
            continue
        for folder in (Path(p).parent, Path(p)):
            if folder not in seen and folder.is_dir():
                seen.add(folder)
                notes += tidy_folder(folder)
    return notes


def carry_late(aside: Path, folder: Path, ours: set[str]) -> None:
    """_carry_late, or where it fails the old folder kept in sight (NAME.examprep-kept-XXXX): a
    file of the user's may be only there."""
    try:
        _carry_late(aside, folder, ours)
    except OSError:
        try:
            os.rename(aside, folder.parent / f"{folder.name}.examprep-kept-{os.urandom(4).hex()}")
        except OSError:
            pass


def _mine(path: str | Path, *, folder: bool) -> bool:
    """A file (or folder) of this user's, not a link."""
    st = os.lstat(path)
    kind = stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode)
    return kind and (not hasattr(os, "geteuid") or st.st_uid == os.geteuid())


def _trusted(journal: Path, stamp: str, steps: list, journals: list) -> bool:
    """Whether a journal is one write_files wrote, so that _finish may do its renames: it is this
    user's, lies beside one of its targets, names only journals of its own stamp beside its
    targets, and every step renames one of this user's temporaries (named after its target, with
    the journal's stamp, in the target's folder) onto the target — a folder step setting aside a
    folder of this user's under our name for it. A journal planted to rename or remove other
    files is not trusted (as a planted sheet manifest deletes nothing)."""
    if not _mine(journal, folder=False) or not isinstance(steps, list) or not isinstance(journals, list):
        return False
    parents = set()
    for step in steps:
        kind, src, target, aside, ours = step
        src, target = Path(src), Path(target)
        if not (src.is_absolute() and target.is_absolute() and (aside is None or Path(aside).is_absolute())):
            return False
        parents.add(target.parent)
        mark = f".{target.name}.examprep-{'new-' if kind == 'folder' else ''}{stamp}-"
        if kind not in ("file", "folder") or src.parent != target.parent or not src.name.startswith(mark):
            return False
        if os.path.lexists(src) and not _mine(src, folder=kind == "folder"):
            return False
        if kind == "file" and aside is not None:
            return False
        if kind == "folder":
            if ours is not None and not all(isinstance(o, str) for o in ours):
                return False
            if aside is not None:
                aside = Path(aside)
                if aside.parent != target.parent or not aside.name.startswith(f".{target.name}.examprep-old-{stamp}-"):
                    return False
                if os.path.lexists(target) and os.path.lexists(src) and not _mine(target, folder=True):
                    return False
    names = [Path(j) for j in journals]
    return journal.parent in parents and journal in names and all(
        j.parent in parents and j.name.startswith(f".examprep-pending-{stamp}-") for j in names)


def _finish(steps: list) -> int:
    """Do the renames of a journal that have not been done: ["file", tmp, target, None, None] and
    ["folder", new, target, aside, our paths]; then remove the asides, after moving into the new
    folder what the user changed in the old one meanwhile. Returns how many were done now."""
    done = 0
    for kind, src, target, aside, _ in steps:
        if not os.path.lexists(src):
            continue                                  # done before the interruption
        try:
            if kind == "folder" and aside and os.path.lexists(target) and not os.path.lexists(aside):
                os.rename(target, aside)
            os.replace(src, target) if kind == "file" else os.rename(src, target)
            done += 1
        except OSError:
            continue
    for _, _, target, aside, ours in steps:
        if aside and os.path.isdir(aside) and os.path.isdir(target):
            carry_late(Path(aside), Path(target), set(ours or ()))
        if aside:
            remove_tree(aside)
    return done


class NotSwappable(Exception):
    """A folder that is not replaced whole (its files are written one by one instead)."""


def swappable(folder: Path, rels: list[str]) -> bool:
    """A folder we may build beside itself and rename into place: a plain directory we can write
    (or none yet), not a link, not the current directory or one above it, in a folder we can write, with no output
    written through a link inside it (that link's target is written, as elsewhere)."""
    try:
        if not folder.name or folder.name in (".", "..") or folder.is_symlink():
            return False
        here = _real(os.getcwd())
        real = _real(folder)
        if real == here or real in here.parents:
            return False
        if folder.exists() and (not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK)):
            return False                  # a read-only folder stays one: written in place, it fails as before
        parent = folder.parent
        if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            return False
        for rel in rels:
            p = folder
            for part in Path(rel).parts:
                p = p / part
                if p.is_symlink():
                    return False
        return True
    except OSError:
        return False


def same_folder(old: str | os.PathLike, new: Path) -> None:
    """Give ``new`` what ``old``, a folder, has besides its entries: mode, times, extended
    attributes (ACLs) and group. NotSwappable where ``old`` belongs to another user or its group
    cannot be given (the folder is then written in place, its owner untouched)."""
    st = os.stat(old, follow_symlinks=False)
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        raise NotSwappable(os.fspath(old))
    try:
        if hasattr(os, "chown") and os.stat(new).st_gid != st.st_gid:
            os.chown(new, -1, st.st_gid)
        shutil.copystat(old, new, follow_symlinks=False)
    except OSError:
        raise NotSwappable(os.fspath(old)) from None


def carry_into(old: Path, new: Path, skip: set[str], rel: str = "") -> bool:
    """Put into ``new`` every entry of ``old`` except the relative paths in ``skip``: files as hard
    links (the same file: owner, mode and content kept), links recreated, folders made as
    same_folder says; a folder left empty only by what was skipped is not made. A file that cannot
    be hard-linked (another user's, under protected_hardlinks; another file system) or a named pipe,
    socket or device makes the folder NotSwappable. Returns whether anything was skipped."""
    skipped = False
    for entry in os.scandir(old):
        r = f"{rel}{entry.name}"
        dest = new / entry.name
        if r in skip:
            skipped = True
            continue
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), dest)
        elif entry.is_dir(follow_symlinks=False):
            dest.mkdir(exist_ok=True)
            same_folder(entry.path, dest)
            if carry_into(Path(entry.path), dest, skip, r + "/"):
                skipped = True
                if not any(dest.iterdir()):
                    dest.rmdir()
        elif entry.is_file(follow_symlinks=False):
            try:
                os.link(entry.path, dest, follow_symlinks=False)
            except OSError:
                raise NotSwappable(r) from None
        else:
            raise NotSwappable(r)
    return skipped


def _carry_late(old: Path, new: Path, skip: set[str], rel: str = "") -> None:
    """After the swap: move into ``new`` whatever changed in ``old`` since carry_into linked it (a file
    the instructor saved, or made, there while the outputs were written), so that removing the old
    folder loses nothing of theirs. Our own outputs (``skip``) win over an edit made meanwhile."""
    for entry in os.scandir(old):
        r = f"{rel}{entry.name}"
        dest = new / entry.name
        if r in skip:
            continue
        if entry.is_dir(follow_symlinks=False):
            made = not os.path.lexists(dest)
            if made:
                dest.mkdir()
            if dest.is_dir() and not dest.is_symlink():
                _carry_late(Path(entry.path), dest, skip, r + "/")
                if made and not any(dest.iterdir()):
                    dest.rmdir()
            continue
        try:
            there = os.lstat(dest)
        except FileNotFoundError:
            there = None
        here = entry.stat(follow_symlinks=False)
        if there is not None and (there.st_ino, there.st_dev) == (here.st_ino, here.st_dev):
            continue
        if there is not None and entry.is_symlink() and dest.is_symlink() and os.readlink(dest) == os.readlink(entry.path):
            continue
        os.replace(entry.path, dest)
