"""What a key's part must hold to be graded: an expected expression the answer rules read (the
exponent rule included: examprep.answers.evaluate.check_exponents), a number that is not NaN."""
from __future__ import annotations

from typing import Any

from examprep.answers.parse import parse_text
from examprep.answers.tokens import AnswerParseError


def key_part_error(part: Any) -> str | None:
    """Why a key's part cannot be graded (one line), or None: an expected expression that the
    answer rules refuse (a key is read by the same parser as a student's answer), or an expected
    number that is NaN (no answer could equal it; ±∞ is fine: it is graded in the extended reals)."""
    if part.kind in ("number", "integer", "vector", "matrix"):
        return "the key's expected value is NaN, which no answer can equal" if _has_nan(part.expected) else None
    if part.kind != "expression":
        return None
    text = part.exact or str(part.expected)
    try:
        node = parse_text(text, variables=tuple(part.variables), scalar=True)
    except AnswerParseError as err:
        return f"the key's expression {text!r} cannot be read: {err}"
    if isinstance(node, list):
        return f"the key's expression {text!r} is a list, not one expression"
    return None


def _has_nan(value: Any) -> bool:
    if isinstance(value, list):
        return any(_has_nan(v) for v in value)
    return isinstance(value, float) and value != value
