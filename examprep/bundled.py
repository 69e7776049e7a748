"""The sheet recipes bundled with examprep (examprep/bank/NAME.toml, the files with a [sheet]
table): the one list of them, which `sheet --recipe`, `sheet --list` and the help screens read.
Standard library only: `examprep --help` lists the recipes from here."""
from __future__ import annotations

import re
from pathlib import Path

# examprep/bank beside this file (importlib.resources would add 7 ms to every start-up, `examprep
# --help` included; recipes.py reads the bank's question files from the file system too)
BANK = Path(__file__).with_name("bank")


def recipe_texts() -> dict[str, str]:
    """Bundled recipe names → TOML text, by name."""
    out = {}
    for entry in sorted(BANK.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            text = entry.read_text(encoding="utf-8")
            if re.search(r"^\s*\[sheet\]", text, re.M):
                out[entry.name[:-5]] = text
    return out


def recipe_names() -> list[str]:
    """The bundled recipes' names, sorted."""
    return list(recipe_texts())
