"""Where a key is set in a TOML file: tomllib reports no positions, so recipes and question
files find a key's line here to name it in their errors; and tomllib's own failures as a message
and a line."""
from __future__ import annotations

import re
import tomllib
from typing import Any


class TomlError(ValueError):
    """Text that is not valid TOML: ``what`` went wrong, at ``line`` (None when unknown)."""

    def __init__(self, what: str, line: int | None):
        super().__init__(what)
        self.what, self.line = what, line


def loads(text: str) -> dict[str, Any]:
    """tomllib.loads, with every failure (a syntax error, nesting too deep for the parser) as one
    TomlError whose message carries no position and whose line is tomllib's."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(err))
        raise TomlError(re.sub(r"\s*\(at line \d+, column \d+\)", "", str(err)), int(m.group(1)) if m else None) from None
    except RecursionError:
        raise TomlError("nested too deeply", None) from None
    except ValueError as err:           # an integer past Python's digit limit
        what = str(err)
        if "integer string conversion" in what:
            what = "an integer of more than 4,300 digits"
        raise TomlError((what.splitlines() or ["unreadable"])[0], None) from None


def line_of(text: str, key: str, table: str | None = None, index: int = 0) -> int | None:
    """The 1-based line where ``key`` is set: at the top level, or in the ``index``-th [table] or
    [[table]] (``key`` "" gives that table's header line). TOML parsers do not report where a key
    is, so we find it."""
    lines = text.splitlines()
    headers = [n for n, line in enumerate(lines) if re.match(r"\s*\[", line)]
    if table is None:
        lo, hi = 0, headers[0] if headers else len(lines)
    else:
        mine = [n for n in headers if re.match(rf"\s*\[\[?\s*\"?{re.escape(table)}\"?\s*\]\]?\s*(#.*)?$", lines[n])]
        if index >= len(mine):
            return None
        if key == "":
            return mine[index] + 1
        lo = mine[index] + 1
        hi = next((n for n in headers if n > mine[index]), len(lines))
    for n in range(lo, hi):
        if re.match(rf'\s*"?{re.escape(key)}"?\s*=', lines[n]):
            return n + 1
    return None
