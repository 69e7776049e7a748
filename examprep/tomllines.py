"""Where a key is set in a TOML file: tomllib reports no positions, so recipes and question
files find a key's line here to name it in their errors; and tomllib's own failures as a message
and a line."""
from __future__ import annotations

import re
import tomllib
from typing import Any

from examprep.escape import printable


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


def explain(text: str, err: tomllib.TOMLDecodeError) -> str:
    """A TOML answer file's syntax error as a teacher would point at it: "line 5: size_1 = 46\" —
    an unmatched quote ...", naming the line, quoting it (short, escaped) and saying the likely
    mistake (an unmatched or missing quote, an answer not in quotes, a comma decimal, '=' missing,
    a key or a [table] written twice, a [header] not closed, a backslash), then tomllib's own words.
    Where tomllib names no line ("at end of document"), the first line with such a mistake is named."""
    message = str(err)
    m = re.search(r"\(at line (\d+), column (\d+)\)", message)
    what = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", message)
    lines = text.splitlines()
    n = int(m.group(1)) if m else None
    cause = None
    if what.startswith(("Cannot overwrite a value", "Cannot declare")):
        n, cause = _written_twice(lines, n)
    elif n is None or n > len(lines):           # "at end of document": the first line TOML cannot read alone
        n = next((i for i, line in enumerate(lines, 1) if not _reads(line)), None)
    if cause is None and n is not None:
        cause = _line_mistake(lines[n - 1]) or ("a backslash in double quotes starts an escape: write the answer in "
                                                 "single quotes ('\\frac{1}{2}') or double each backslash"
                                                 if what.startswith("Unescaped '\\'") else None)
    column = f", column {m.group(2)}" if m and n == int(m.group(1)) else ""
    said = f"TOML: {what[:1].lower()}{what[1:]}{column}"
    if n is None:
        return f"invalid TOML: {cause + ' (' + said + ')' if cause else what}"
    line = lines[n - 1].strip()
    quoted = printable(line[:60]) + ("…" if len(line) > 60 else "")
    return f"invalid TOML at line {n}: {quoted}" + (f" — {cause} ({said})" if cause else f" ({said})")


_KEY = r'(?:[A-Za-z0-9_-]+|"[^"\n]*"|\'[^\'\n]*\')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"\n]*"|\'[^\'\n]*\'))*'
_HEADER = re.compile(rf"^\s*\[\[?\s*({_KEY})\s*\]\]?\s*(#.*)?$")
_PAIR = re.compile(rf"^\s*({_KEY})\s*=\s*(.*?)\s*$")
_CURLY = "“”„‟‘’‚‛«»‹›＂"             # quotes a word processor types: TOML reads only " and '


def _line_mistake(line: str) -> str | None:
    """The likely mistake on one line of an answer file that TOML cannot read, or None."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    if stripped.startswith("["):
        if _HEADER.match(line):
            return None
        name = stripped.strip("[] \t").split("#")[0].strip() or "q1"
        if not re.search("[\"']", name):
            name = "".join(name.split())            # [q 3]: a table's name has no spaces
            if "]" in stripped:
                return f"a table name has no spaces: write [{_short(name)}]"
        return f"a table header opens with '[' and closes with ']': write [{_short(name)}]"
    pair = _PAIR.match(line)
    if pair is None:
        key, _, rest = stripped.partition(" ")
        if re.fullmatch(r"[A-Za-z0-9_.-]+", key) and rest.strip():
            answer = _short(rest.strip(' "'))
            return f"'=' missing between the name and the answer: write {_short(key)} = \"{answer}\""
        return "not a line of an answer file: each line is name = \"answer\", a [q1] header or a # comment"
    key, value = _short(pair.group(1)), pair.group(2)
    bare = value.strip('"')
    quoted = value.split("#")[0].strip()
    if quoted and (quoted[0] in _CURLY or quoted[-1] in _CURLY):        # “21”, as a word processor writes it
        return (f"curly quotes are not TOML's: write the answer in straight quotes, "
                f"{key} = \"{_short(quoted.strip(_CURLY + chr(34) + chr(39)))}\"")
    if value == "":
        return f"no answer after '=': write {key} = \"\" to leave it blank"
    if value.startswith("="):
        answer = _short(value.strip('= "'))
        return f"'=' written twice: write {key} = \"{answer}\""
    if value.startswith("'"):
        return None if value.count("'") == 2 else "quotes inside single quotes: write the answer in double quotes"
    if value.startswith("\""):
        if value.count("\"") == 1 or not re.match(r'^"([^"\\]|\\.)*"', value):
            return f"a quote opened and not closed: write {key} = \"{_short(bare)}\""
        if value.count("\"") > 2 and not value.startswith('"""'):
            return (f"a quote inside the answer ends it: write it in single quotes, {key} = '{_short(value[1:-1])}', "
                    "or leave the inner quotes out")
        return None
    value = value.split("#")[0].strip()         # not in quotes: a comment after it is no part of it
    bare = value.strip('"')
    if value.count("\"") % 2:
        return f"an unmatched quote (\"): write the answer between two quotes, {key} = \"{_short(bare)}\""
    if value.startswith(("[", "{")):
        return None
    if re.fullmatch(r"[-+]?\d+,\d+", value):
        return f"a number with a decimal comma is text: write it in quotes, {key} = \"{_short(value)}\""
    return f"the answer is not in quotes: write {key} = \"{_short(value)}\""


def _short(text: str) -> str:
    """A piece of a student's line in a suggested fix: at most 30 characters, printable."""
    return printable(text[:30]) + ("…" if len(text) > 30 else "")


def _reads(line: str) -> bool:
    try:
        tomllib.loads(line)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return False
    return True


def _written_twice(lines: list[str], at: int | None) -> tuple[int | None, str | None]:
    """(line, cause) of the key or [table] written a second time on line ``at`` (tomllib's), or of the
    first one when tomllib names no line: the answers of one part or question given twice."""
    tables: dict[str, int] = {}
    keys: dict[tuple[str, str], int] = {}
    table = ""
    for i, line in enumerate(lines, 1):
        header = _HEADER.match(line)
        if header:
            table = re.sub(r"\s+", "", header.group(1))
            if table in tables and not line.strip().startswith("[[") and at in (None, i):
                return i, f"[{table}] appears twice (first on line {tables[table]}): put its answers under one header"
            tables.setdefault(table, i)
            continue
        pair = _PAIR.match(line)
        if pair:
            key = (table, re.sub(r"\s+", "", pair.group(1)))
            if key in keys and at in (None, i):
                return i, f"{key[1]} is written twice (first on line {keys[key]}): keep one answer"
            keys[key] = i
    return at, None
