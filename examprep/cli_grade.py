"""CLI commands of the grade feature; heavy imports happen inside the commands."""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this feature's commands to the main app."""
