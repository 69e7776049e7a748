"""One helper per idea: no function body of any size is written twice in the package.

Two functions whose bodies are the same code (docstrings, comments, local imports and layout
aside) are one idea written twice, and the copies drift apart (a fix lands in one of them). Small
bodies (return a field, call one function) are allowed to coincide. The bodies are read as text,
not parsed: parsing the package takes seconds."""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "examprep"
MIN_CHARS = 60          # a shorter body (a getter, one call) may coincide
DEF = re.compile(r"^([ \t]*)(?:async\s+)?def\s+(\w+)\s*\(")
DOCSTRING = re.compile(r'^(?:[rbu]?"""(?:.|\n)*?"""|[rbu]?\'\'\'(?:.|\n)*?\'\'\')\s*')
LOCAL_IMPORT = re.compile(r"^(?:from\s+[\w.]+\s+import\s+(?:\([^)]*\)|[^\n]*)|import\s+[^\n]*)\n", re.M)
COMMENT = re.compile(r"[ \t]+#[^\n\"']*$|^[ \t]*#[^\n]*$", re.M)


def _bodies(text: str):
    """(name, line, body) of every function in ``text``: the lines after its signature that are
    indented deeper than its def."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        found = DEF.match(line)
        if not found:
            continue
        indent, depth, j = len(found.group(1).expandtabs()), 0, i
        while j < len(lines):                         # the signature, over as many lines as it takes
            depth += lines[j].count("(") + lines[j].count("[") - lines[j].count(")") - lines[j].count("]")
            if depth <= 0 and lines[j].rstrip().endswith(":"):
                break
            j += 1
        if j == len(lines):                           # "def f(" inside a string: no function
            continue
        body = []
        for later in lines[j + 1:]:
            if later.strip() and len(later) - len(later.lstrip()) <= indent:
                break
            body.append(later)
        yield found.group(2), i + 1, "\n".join(body)


def _normal(body: str) -> str:
    text = "\n".join(line.strip() for line in COMMENT.sub("", body).splitlines() if line.strip()) + "\n"
    text = LOCAL_IMPORT.sub("", DOCSTRING.sub("", text))
    return " ".join(text.split())


def test_no_function_body_is_written_twice():
    where = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for name, line, body in _bodies(path.read_text(encoding="utf-8")):
            code = _normal(body)
            if len(code) >= MIN_CHARS:
                where[code].append(f"{path.relative_to(PACKAGE.parent)}:{line} {name}")
    twice = [places for places in where.values() if len(places) > 1]
    assert not twice, "one idea written twice (keep one, import it): " + "; ".join(", ".join(p) for p in twice)
