"""CLI commands of the reference Transformer trainer (`examprep train`, `examprep translate`).

torch is imported inside the commands only, so `examprep --help` stays fast.
"""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the trainer's commands to the main app."""
