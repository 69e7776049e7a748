"""Where a key is set in a TOML file: tomllib reports no positions, so recipes and question
files find a key's line here to name it in their errors."""
from __future__ import annotations

import re


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
