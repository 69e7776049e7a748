"""No dead names: every function, class and constant a module of the package defines at top level is
used somewhere (the package, its tests or its benchmarks), not only imported or listed in ``__all__``."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# a top-level def or class (not decorated: a command or a generator is found by its decorator's
# registry), or a top-level NAME = / NAME: assignment
DEFINED = re.compile(r"^(?<!@)(?:(?:async\s+)?def|class)\s+(\w+)|^([A-Za-z_]\w*)\s*(?::\s*[\w\[\]., |]+)?=(?!=)", re.M)
DECORATED = re.compile(r"^@.*\n(?:@.*\n)*(?:async\s+)?def\s+(\w+)", re.M)
NOT_USES = re.compile(r"__all__\s*=\s*\[.*?\]|^[ \t]*from\s+[\w.]+\s+import\s+(?:\([^)]*\)|[^\n]*)|^[ \t]*import\s+[^\n]*",
                      re.M | re.S)                   # a re-export or an import alone is not a use
IMPORTED_AS = re.compile(r"\b(\w+)\s+as\s+(?!\1\b)\w+")    # `row_cell as cell`: used under the other name


def test_every_top_level_name_is_used():
    package = sorted((ROOT / "examprep").rglob("*.py"))
    texts = {p: p.read_text(encoding="utf-8") for p in (*package, *(ROOT / "tests").rglob("*.py"),
                                                          *(ROOT / "bench").rglob("*.py"))}
    words: Counter = Counter()
    for text in texts.values():
        words.update(re.findall(r"\w+", NOT_USES.sub(" ", text)))
        words.update(m.group(1) for m in IMPORTED_AS.finditer(text))
    dead = []
    for p in package:
        decorated = set(DECORATED.findall(texts[p]))
        names = [a or b for a, b in DEFINED.findall(texts[p])]
        dead += [f"{p.relative_to(ROOT)} {n}" for n in names
                 if n not in decorated and not n.startswith("__") and words[n] <= names.count(n)]
    assert not dead, "defined and never used (remove them): " + ", ".join(dead)
