"""Rules on a parsed answer that hold wherever it appears (a student's answer in any part kind, a
key's expected expression): the exponent rule, and what a key must hold to be graded."""
from __future__ import annotations

from typing import Any

from examprep.answers.parse import MAX_EXPONENT, AnswerParseError, evaluate, has_names


def check_exponents(node: Any) -> None:
    """The exponent rule, wherever the exponent appears: a^b with |b| > MAX_EXPONENT is refused
    unless a is the constant 0 or ±1 — also when a has variables, whatever their values at one
    point ((x − a)^6000 is refused although it is 0 where x = a). Innermost powers first."""
    if isinstance(node, list):
        for x in node:
            check_exponents(x)
        return
    kind = node[0]
    if kind in ("num", "const", "var"):
        return
    for child in (node[2] if kind == "call" else node[1:]):
        check_exponents(child)
    if kind != "pow" or has_names(node[2]):
        return
    try:
        b = evaluate(node[2])
    except AnswerParseError:
        return                       # the evaluation says what is wrong with the exponent itself
    if abs(b) <= MAX_EXPONENT:
        return
    if not has_names(node[1]):
        try:
            if evaluate(node[1]) in (0.0, 1.0, -1.0):
                return
        except AnswerParseError:
            return
    shown = f"{int(b)}" if b == int(b) and abs(b) < 1e15 else f"{b:.3g}"
    raise AnswerParseError(f"exponent too large ({shown}; at most {MAX_EXPONENT:g})")


def key_part_error(part: Any) -> str | None:
    """Why a key's part cannot be graded (one line), or None: an expected expression that the
    answer rules refuse (a key is read by the same parser as a student's answer), or an expected
    number that is NaN (no answer could equal it; ±∞ is fine: it is graded in the extended reals)."""
    if part.kind in ("number", "integer", "vector", "matrix"):
        return "the key's expected value is NaN, which no answer can equal" if _has_nan(part.expected) else None
    if part.kind != "expression":
        return None
    from examprep.answers.parse import parse_text

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
