"""The sheet recipes bundled with examprep (examprep/bank/NAME.toml, the files with a [sheet]
table): the one list of them, which `sheet --recipe`, `sheet --list` and the help screens read.
Standard library only: `examprep --help` lists the recipes from here."""
from __future__ import annotations

from pathlib import Path

# examprep/bank beside this file (importlib.resources would add 7 ms to every start-up, `examprep
# --help` included; recipes.py reads the bank's question files from the file system too)
BANK = Path(__file__).with_name("bank")


# the bank's one file that is not a recipe: the concept questions (examprep.sources.concepts)
CONCEPT_BANK = BANK / "concepts.toml"


def recipe_names() -> list[str]:
    """The bundled recipes' names, sorted: the bank's TOML files but the concept bank. Read from the
    folder's listing alone, as every start-up reads them for the help text."""
    return sorted(e.name[:-5] for e in BANK.iterdir() if e.name.endswith(".toml") and e.name != CONCEPT_BANK.name)


def recipe_texts() -> dict[str, str]:
    """Bundled recipe names → TOML text, by name."""
    return {name: (BANK / f"{name}.toml").read_text(encoding="utf-8") for name in recipe_names()}
