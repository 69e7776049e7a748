"""A run directory's `latest` pointer, readable without torch (the attention-from-model generator
reads checkpoints with numpy only; examprep.train.checkpoint re-exports this)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional


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
