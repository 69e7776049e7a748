"""A run directory read without torch: its `latest` pointer, the SHA-256 of each checkpoint file,
weights that hold NaN or infinity, and the leftovers of an interrupted write (the attention-from-
model generator reads checkpoints with numpy only; examprep.train.checkpoint uses the same)."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional


def read_latest(run_dir: Path | str) -> tuple[Optional[Path], Optional[str]]:
    """(the step directory a run's `latest` names, None), or (None, a one-line reason why it names
    none); (None, None) when the run has no `latest` at all."""
    pointer = Path(run_dir) / "latest"
    if not pointer.is_file():
        return None, None
    try:
        name = pointer.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as err:
        return None, f"{pointer} cannot be read: {getattr(err, 'strerror', None) or err}"
    if not name:
        return None, f"{pointer} is empty; it should name a step directory such as step-000800"
    step_dir = pointer.parent / name
    if not step_dir.is_dir():
        return None, f"{pointer} names {name}, which does not exist in {pointer.parent}"
    return step_dir, None


def file_sha256(path: Path | str) -> str:
    """The SHA-256 of a file's bytes (hex), read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def hash_problem(step_dir: Path | str, meta: dict, names: Optional[Iterable[str]] = None) -> Optional[str]:
    """Why the files of a step directory do not match the SHA-256 its config.json recorded
    (``meta["files"]``), or None. ``names``: only these files (each checked if recorded). A
    checkpoint from before the hashes were recorded has no "files" and passes."""
    step_dir = Path(step_dir)
    files = meta.get("files")
    if files is None:
        return None
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        return f"{step_dir / 'config.json'}: files must map file names to SHA-256 digests, got {files!r}"
    for name in names if names is not None else sorted(files):
        want = files.get(name)
        if want is None:
            continue
        path = step_dir / name
        try:
            got = file_sha256(path)
        except OSError as err:
            return f"{path} cannot be read: {err.strerror or err}"
        if got != want.lower():
            return (f"{path} changed after it was written: its SHA-256 is {got[:12]}…, config.json recorded "
                    f"{want[:12]}…; restore the file or train again")
    return None


def nonfinite_tensor(tensors: Mapping[str, Any]) -> Optional[str]:
    """The name of the first floating-point tensor holding NaN or ±infinity (numpy arrays or torch
    tensors), or None."""
    import numpy as np

    for name in sorted(tensors):
        value = tensors[name]
        if hasattr(value, "is_floating_point"):                    # torch
            if value.is_floating_point() and not bool(value.isfinite().all()):
                return name
        elif np.asarray(value).dtype.kind == "f" and not np.isfinite(value).all():
            return name
    return None


STALE = re.compile(r"^\.(?:step-\d+|latest)\.tmp-(\d+)$")


def remove_stale_temporaries(run_dir: Path | str) -> list[Path]:
    """Remove what an interrupted checkpoint write left in a run directory: `.step-N.tmp-PID`
    directories and `.latest.tmp-PID` files whose process is gone (or is this one). A live
    process's are kept: another writer may be at work. Returns what was removed."""
    removed = []
    try:
        entries = list(Path(run_dir).iterdir())
    except OSError:
        return removed
    for entry in entries:
        found = STALE.match(entry.name)
        if not found:
            continue
        pid = int(found.group(1))
        if pid != os.getpid() and _alive(pid):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            try:
                entry.unlink()
            except OSError:
                continue
        removed.append(entry)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):          # gone, or a number no process can have
        return False
    except OSError:
        return True          # exists but is not ours (EPERM)
    return True
