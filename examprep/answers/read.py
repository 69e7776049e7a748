"""Reading a raw answer (typed text, or a TOML/JSON number or list) for a part: a number, an integer,
nested lists shaped as the part expects, an expression (Expr) or a choice label; or an
AnswerParseError saying why it cannot be read."""
from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

from examprep.answers.evaluate import evaluate, evaluate_all, unparse
from examprep.answers.expected import what_to_write
from examprep.answers.parse import decimal_comma_on, fast_number, parse_text, read_integer_points, shape_of
from examprep.answers.raw import big_int, check_list, type_word
from examprep.answers.result import Expr
from examprep.answers.shapes import expected_ndims, read_shape, read_shapes
from examprep.answers.tokens import DECIMAL_COMMA, MAX_CHARS, MAX_ENTRIES, AnswerParseError
from examprep.answers.tolerances import prepared
from examprep.problem import Part

def is_blank(raw: Any) -> bool:
    """No answer: None, an empty or all-space string, or an empty list."""
    return raw is None or (isinstance(raw, str) and not raw.strip()) or (isinstance(raw, list) and not raw)


def _numbers(raw: Any, integer: bool) -> Any:
    """A raw answer (text, number, nested lists of either) to a float (or int) or nested lists."""
    if isinstance(raw, bool):
        raise AnswerParseError("true/false is not an answer here: give a number")
    if isinstance(raw, int):
        if big_int(raw):
            raise AnswerParseError("number too large")
        return raw if integer else float(raw)
    if isinstance(raw, float):
        return raw
    if isinstance(raw, str):
        quick = fast_number(raw)
        if quick is not None:
            return quick
        quick_list = _plain_list(raw)
        if quick_list is not None:
            return quick_list
        return evaluate_all(parse_text(raw, scalar=False))
    if isinstance(raw, (list, tuple)):
        if not raw:
            raise AnswerParseError("an empty list")
        return [_numbers(x, False) for x in raw]
    raise AnswerParseError(f"expected a number or text, got {type_word(raw)}")


_PLAIN_LIST = re.compile(r"\s*\[[\d\s.,eE+\-\[\]]*\]\s*")


def _plain_list(text: str) -> list | None:
    """Bracketed lists of plain decimal numbers ("[[0.5, 0], [-0.5, 0]]") read without the parser;
    None for anything else (the parser then reads it, with the same result)."""
    if len(text) > MAX_CHARS or not _PLAIN_LIST.fullmatch(text) or DECIMAL_COMMA.search(text) or decimal_comma_on():
        return None       # (with decimal commas, a "," in a list is an error the parser names)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    try:
        shape = shape_of(value)
    except AnswerParseError:
        return None
    if len(shape) > 2 or not shape or 0 in shape or int(np.prod(shape)) > MAX_ENTRIES:
        return None
    return [[float(x) for x in row] for row in value] if len(shape) == 2 else [float(x) for x in value]


def _finite_check(value: Any, allow_inf: bool) -> None:
    if isinstance(value, float):
        if value != value:
            raise AnswerParseError("NaN is not an answer: give a finite number")
        if not allow_inf and value in (math.inf, -math.inf):
            raise AnswerParseError("infinity is not an answer here: give a finite number")
        return
    arr = np.asarray(value, dtype=float)
    if np.any(np.isnan(arr)):
        raise AnswerParseError("NaN is not an answer: give a finite number")
    if not allow_inf and np.any(np.isinf(arr)):
        raise AnswerParseError("infinity is not an answer here: give a finite number")


def _count_text(n: int) -> str:
    return f"{n} value" + ("" if n == 1 else "s")


def parse_answer(part: Part, raw: Any) -> Any:
    """Read a raw answer (typed text, or a TOML/JSON number or list) for ``part``: the one reader
    of `examprep grade` and the quiz. A refusal that can only name a token ("unknown name 'a'")
    says what the part expects instead (examprep.answers.expected)."""
    try:
        return _read(part, raw)
    except AnswerParseError as err:
        raise what_to_write(part, err) from None


def _read(part: Part, raw: Any) -> Any:
    """Read a raw answer (typed text, or a TOML/JSON number or list) for ``part``.

    Returns a float (number), int or float (integer; a non-whole value is kept to be graded
    wrong), nested lists of floats (vector, matrix: shaped as typed, a scalar or a single row
    or column reshaped when the part's shape allows), an Expr (expression) or the choice label.
    Raises AnswerParseError (one line, with a hint) when the answer cannot be read.
    """
    if is_blank(raw):
        raise AnswerParseError("no answer")
    if isinstance(raw, bool):
        raise AnswerParseError("true/false is not an answer here")
    if isinstance(raw, (list, tuple)):
        check_list(raw)
    if part.kind == "choice":
        return _parse_choice(part, raw)
    if part.kind == "expression":
        return _parse_expression(part, raw)
    if part.kind == "shapes":
        return read_shapes(raw, len(part.expected), expected_ndims(part))
    if part.tensor_shape and part.kind == "vector":       # 10×26×26, (10, 26, 26), 10, 26, 26 …
        return read_shape(raw, part.shape[0] if part.shape else len(part.expected))
    integer = part.kind == "integer"
    if part.kind in ("number", "integer"):
        if isinstance(raw, str):
            if integer:
                raw = read_integer_points(raw)
            quick = fast_number(raw)
            if quick is not None:
                value: Any = quick
            else:
                node = parse_text(raw, scalar=True, integer=integer)
                if isinstance(node, list):
                    n = len(node)
                    if n == 1 and not isinstance(node[0], list):
                        node = node[0]
                    elif integer:
                        raise AnswerParseError(f"{raw.strip()!r} is not one whole number: write it as 17010, or group "
                                               "its digits in threes with commas or spaces (17,010 or 17 010)")
                    else:
                        raise AnswerParseError(f"expected one number, got {_count_text(n)} "
                                               "(write a product with *, e.g. 2*ln 2)")
                value = evaluate(node)
        else:
            value = _numbers(raw, integer)
            if isinstance(value, list):
                shape_of(value)                      # ragged rows are refused here
                flat = np.asarray(value, dtype=float).ravel()
                if flat.size != 1:
                    raise AnswerParseError(f"expected one number, got {_count_text(flat.size)}")
                value = float(flat[0])
        if isinstance(value, float):
            _finite_check(value, allow_inf=False)
            if integer and value == int(value):
                value = int(value)
        return value
    # vector or matrix
    value = _numbers(raw, False)
    if not isinstance(value, list):
        value = [value]
    shape_of(value)                      # ragged rows are refused here
    prep = prepared(part, part.tolerance)
    _finite_check(value, allow_inf=prep.has_inf)
    want = prep.shape
    got = np.asarray(value, dtype=float)
    if got.shape != want and got.size == int(np.prod(want)):
        # a single row or column typed flat, or a flat list for a 1×n / n×1 matrix
        if len(want) == 1 and got.ndim == 2 and 1 in got.shape:
            return got.ravel().tolist()
        if len(want) == 2 and 1 in want and got.ndim == 1:
            return got.reshape(want).tolist()
    return value


def _parse_expression(part: Part, raw: Any) -> Expr:
    if big_int(raw):
        raise AnswerParseError("number too large")
    typed = isinstance(raw, str)          # a TOML/JSON number is no text: its '1e-05' is not ambiguous
    if isinstance(raw, (int, float)):
        raw = repr(raw)
    if not isinstance(raw, str):
        raise AnswerParseError(f"expected an expression as text, got {type_word(raw)}")
    node = parse_text(raw, variables=part.variables, scalar=True, expression=typed)
    if isinstance(node, list):
        raise AnswerParseError("expected one expression, got a list (write products with *)")
    _probe(node, part.variables)
    return Expr(unparse(node), node)


def _probe(node: tuple, variables: tuple[str, ...]) -> None:
    """Evaluate once at a generic point so the size rules refuse towers before sympy sees them; an
    answer without variables that has no value (1/0, ln(-1)) is refused as it would be in a number part."""
    env = {v: 0.37 for v in variables}
    try:
        evaluate(node, env)
    except AnswerParseError as err:
        msg = str(err)
        if msg.startswith(("exponent too large", "number too large")) or not variables:
            raise
        # undefined at this one point (log of a negative, say) is no reason to refuse


def norm_choice(text: str) -> str:
    return " ".join(str(text).strip().strip("()[].:").split()).casefold()


def _parse_choice(part: Part, raw: Any) -> str:
    options = ", ".join(part.choices)
    if not isinstance(raw, (str, int, float)):
        raise AnswerParseError(f"expected one of {options}, got {type_word(raw)}")
    if isinstance(raw, float) and raw != raw:
        raise AnswerParseError(f"NaN is not a choice: answer with one of {options}")
    if isinstance(raw, float) and math.isinf(raw):
        raise AnswerParseError(f"infinity is not a choice: answer with one of {options}")
    if big_int(raw) or isinstance(raw, float) and abs(raw) >= 1e15:
        raise AnswerParseError(f"a number this large is not a choice: answer with one of {options}")
    text = raw if isinstance(raw, str) else str(int(raw)) if raw == int(raw) else repr(raw)
    if len(text) > 500:
        raise AnswerParseError("answer too long for a choice")
    key = norm_choice(text)
    for choice in part.choices:
        if norm_choice(choice) == key:
            return choice
    # "b) text…" or "(b) text": the leading label
    head = norm_choice(text.split(")")[0]) if ")" in text else None
    for choice in part.choices:
        if head and norm_choice(choice) == head:
            return choice
    raise AnswerParseError(f"{text.strip()[:40]!r} is not a choice: answer with one of {', '.join(part.choices)}")
