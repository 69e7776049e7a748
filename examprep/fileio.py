"""Atomic file output: write to a temporary file beside the target, fsync, then rename.

A crash or an error mid-write never leaves a half-written output behind, and readers never see
a partial file.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from examprep.errors import ExamprepError


class OutputError(ExamprepError):
    """An output file could not be written (permissions, missing directory, full disk)."""


def _cannot_write(target: Path, err: OSError) -> OutputError:
    for parent in target.parents:                       # "File exists" / "Not a directory" from mkdir
        if parent.exists() and not parent.is_dir():
            return OutputError(f"{target}: cannot write ({parent} is a file, not a directory)")
    return OutputError(f"{target}: cannot write ({err.strerror})")


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
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        os.unlink(tmp)
    except OSError as err:
        raise _cannot_write(target, err) from None
    return target


def check_output_file(path: str | os.PathLike, option: str, *, force: bool = False) -> Path:
    """Before any work: ``path`` (given as ``option``) names a file that can be written.

    Refuses, with OutputError naming the option: a directory, a parent directory that does not
    exist (never created silently: a typo would otherwise scatter files), a parent that is a file,
    and an existing file unless ``force``. Returns the path.
    """
    target = Path(path)
    where = f"{option} {target}" if option else str(target)
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


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as err:
        raise _cannot_write(target, err) from None
    try:
        # mkstemp creates 0600; give the file the permissions a plain open() would (0666 & ~umask)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise OutputError(f"{target}: cannot write ({err.strerror})") from None
    return target


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))
