"""Raw answers as files hold them (typed text, or a TOML/JSON number, list, table, date…): the
text they were written as, what they are in words, and the size limits a list answer must meet
before anything walks it."""
from __future__ import annotations

import math
import re
from typing import Any

from examprep.answers.tokens import MAX_DEPTH, MAX_ENTRIES, AnswerParseError

RAW_SHOWN = 500         # characters of a raw answer kept in reports (the parser reads at most MAX_CHARS)


def raw_text(raw: Any, limit: int | None = RAW_SHOWN) -> str | None:
    """What the student wrote, as text: typed text as it is, a TOML/JSON number or list as the
    format writes it ("0.18234567", "[[1, 0.5], [2, 3]]", "true", "nan"); cut at ``limit``
    characters with "…" (None: whole, as a written answer in its student's report); a lone
    surrogate as its escape "\\udfff". None when the file has no answer at all."""
    if raw is None:
        return None
    text = raw if isinstance(raw, str) else _written(raw, 0)
    text = text if limit is None or len(text) <= limit else text[:limit] + "…"
    # a lone surrogate (a JSON "\udfff") cannot be encoded: keep it visible as that escape
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _written(raw: Any, depth: int) -> str:
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if big_int(raw):
        return f"a number of {int(math.log10(abs(raw))) + 1} digits"
    if isinstance(raw, (int, float)):
        return repr(raw)
    if isinstance(raw, (list, tuple, dict)) and depth >= MAX_DEPTH:
        return "…"
    if isinstance(raw, (list, tuple)):
        return "[" + ", ".join(_written(x, depth + 1) for x in raw[:RAW_SHOWN]) + ("…]" if len(raw) > RAW_SHOWN else "]")
    if isinstance(raw, dict):
        return "{" + ", ".join(f"{k}: {_written(v, depth + 1)}" for k, v in list(raw.items())[:RAW_SHOWN]) + "}"
    return raw if isinstance(raw, str) else str(raw)


_TYPE_WORDS = {"NoneType": "an empty value", "dict": "a table", "list": "a list", "tuple": "a list",
               "date": "a date", "datetime": "a date and time", "time": "a time of day", "bool": "true/false"}


def type_word(raw: Any) -> str:
    """What a raw TOML/JSON value is, in words ("a date", "a table")."""
    name = type(raw).__name__
    return _TYPE_WORDS.get(name, name)


def check_list(raw: list) -> None:
    """Refuse a list answer nested deeper than MAX_DEPTH or holding more than MAX_ENTRIES values,
    walking it without recursion (a file can hold lists a thousand levels deep)."""
    stack: list[tuple[Any, int]] = [(raw, 1)]
    leaves = 0
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise AnswerParseError(f"answer nested too deeply (more than {MAX_DEPTH} levels)")
        for x in value:
            if isinstance(x, (list, tuple)):
                stack.append((x, depth + 1))
            else:
                leaves += 1
                if leaves > MAX_ENTRIES:
                    raise AnswerParseError(f"too many entries (more than {MAX_ENTRIES})")


def big_int(raw: Any) -> bool:
    """An integer beyond any float (and beyond what str() may print past 4,300 digits)."""
    return isinstance(raw, int) and not isinstance(raw, bool) and abs(raw) > 10**300
