"""Every field of an answer key, checked for its type and range when the key is read.

A key is trusted by grading (its points make the totals, its ``meta.decimal_comma`` decides how
answers are read), so a field examprep would never write is refused before anything is graded,
named by its JSON path: ``variants.s001[2].parts[0].points: 1e308 is not a finite number ≤ 10000``.
``key_field_error(d)`` returns that path and message, or None; keys.read_key raises it as a
KeyFileError. The checks of what grading makes of a part (its kind, expected value against its
shape, choices, misconceptions' values) stay in keys.py, named by question and part (q2.loss).

No number in a key is NaN or beyond a float's range (JSON has no NaN; examprep writes none), and
none is ±Infinity but an expected value's or a misconception's (a limit, log 0 = −∞).
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable

from examprep.escape import printable, shown

MAX_POINTS = 10_000            # points and minutes of one part: a sum of them stays finite and printable
MAX_TOTAL = 1_000_000         # a whole sheet's
MAX_WHOLE = 2 ** 64            # seeds, versions and levels are whole numbers below this


class FieldError(ValueError):
    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path


def join(path: str, name: str | int) -> str:
    if isinstance(name, int):
        return f"{path}[{name}]"
    plain = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", name) is not None
    return (f"{path}.{name}" if path else name) if plain else f"{path}[\"{printable(name)}\"]"


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_MISCONCEPTION = re.compile(r"\.misconceptions\[\d+\]$")


def nonfinite(value: Any, path: str = "", infinite: bool = False) -> None:
    """Raise FieldError at the first number that is NaN, ±Infinity or an integer beyond a float's
    range. An expected value and a misconception's value may be ±Infinity (a limit: log 0 = −∞;
    grading compares them as such); an expected NaN is left to keys.py, which names the part."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "expected" and path.endswith("]") and "parts[" in path:
                continue
            nonfinite(v, join(path, k), infinite or (k == "value" and _MISCONCEPTION.search(path) is not None))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            nonfinite(v, join(path, i), infinite)
    elif _is_number(value):
        try:
            ok = math.isfinite(value) or (infinite and not math.isnan(value))
        except OverflowError:
            ok = False
        if not ok:
            raise FieldError(path, f"{shown(value)} is not a finite number")


# ------------------------------------------------------------------ the field kinds

def text(v: Any, path: str) -> None:
    if not isinstance(v, str):
        raise FieldError(path, f"must be text, got {shown(v)}")


def optional_text(v: Any, path: str) -> None:
    if v is not None:
        text(v, path)


def flag(v: Any, path: str) -> None:
    if not isinstance(v, bool):
        raise FieldError(path, f"must be true or false, got {shown(v)}")


def table(v: Any, path: str) -> None:
    if not isinstance(v, dict):
        raise FieldError(path, f"must be a table, got {shown(v)}")


def whole(low: int) -> Callable[[Any, str], None]:
    def check(v: Any, path: str) -> None:
        if isinstance(v, bool) or not isinstance(v, int) or not low <= v < MAX_WHOLE:
            raise FieldError(path, f"must be a whole number ≥ {low}, got {shown(v)}")
    return check


def at_most(limit: int) -> Callable[[Any, str], None]:
    """A number that must be finite, ≥ 0 and at most ``limit``."""
    def check(v: Any, path: str) -> None:
        if not _is_number(v):
            raise FieldError(path, f"must be a number from 0 to {limit}, got {shown(v)}")
        if v > limit and math.isfinite(v):
            raise FieldError(path, f"{shown(v)} is over the {limit} limit (a number from 0 to {limit})")
        if not 0 <= v <= limit:
            raise FieldError(path, f"{shown(v)} is not a finite number from 0 to {limit}")
    return check


amount = at_most(MAX_POINTS)      # a part's points and minutes
total = at_most(MAX_TOTAL)        # a sheet's points and minutes


def number(v: Any, path: str) -> None:
    if not _is_number(v):
        raise FieldError(path, f"must be a number, got {shown(v)}")


def list_of(item: Callable[[Any, str], None]) -> Callable[[Any, str], None]:
    def check(v: Any, path: str) -> None:
        if not isinstance(v, list):
            raise FieldError(path, f"must be a list, got {shown(v)}")
        for i, x in enumerate(v):
            item(x, join(path, i))
    return check


def optional(check: Callable[[Any, str], None]) -> Callable[[Any, str], None]:
    def inner(v: Any, path: str) -> None:
        if v is not None:
            check(v, path)
    return inner


def table_of(item: Callable[[Any, str], None]) -> Callable[[Any, str], None]:
    def check(v: Any, path: str) -> None:
        table(v, path)
        for k, x in v.items():
            item(x, join(path, k))
    return check


def cell(v: Any, path: str) -> None:
    """A value shown in a table or matrix: a number, text, null (a cell left empty: a mask), or a list of them."""
    if isinstance(v, list):
        for i, x in enumerate(v):
            cell(x, join(path, i))
    elif not (v is None or isinstance(v, str) or _is_number(v)):
        raise FieldError(path, f"must be a number or text, got {shown(v)}")


def fields(spec: dict[str, tuple[Callable[[Any, str], None], bool]], what: str) -> Callable[[Any, str], None]:
    """A table with these fields (name → (check, required)); no others."""
    def check(v: Any, path: str) -> None:
        if not isinstance(v, dict):
            raise FieldError(path, f"{what} must be a table, got {shown(v)}")
        for name, (inner, required) in spec.items():
            if name in v:
                inner(v[name], join(path, name))
            elif required:
                raise FieldError(path, f"{what} has no {name!r}")
        for name in v:
            if name not in spec:
                raise FieldError(join(path, name), f"is not a field of {what}")
    return check


# ------------------------------------------------------------------ blocks, parts, problems

_LABELS = optional(list_of(text))
BLOCKS = {
    "text": {"text": (text, True)},
    "math": {"latex": (text, True)},
    "matrix": {"name": (text, True), "values": (cell, True), "row_labels": (_LABELS, False), "col_labels": (_LABELS, False)},
    "table": {"header": (list_of(text), True), "rows": (list_of(list_of(cell)), True)},
    "heatmap": {"title": (text, True), "values": (list_of(list_of(cell)), True), "row_labels": (list_of(text), False),
                "col_labels": (list_of(text), False)},
}


def block(v: Any, path: str) -> None:
    if not isinstance(v, dict):
        raise FieldError(path, f"a block must be a table, got {shown(v)}")
    kind = v.get("type")
    if not isinstance(kind, str) or kind not in BLOCKS:
        raise FieldError(join(path, "type"), f"must be one of {', '.join(BLOCKS)}, got {shown(kind)}")
    fields({"type": (text, True), **BLOCKS[kind]}, f"a {kind} block")(v, path)


blocks = list_of(block)


def _variables(v: Any, path: str) -> None:
    if isinstance(v, dict):
        table_of(text)(v, path)
    elif not isinstance(v, list):
        raise FieldError(path, f"must be a list of names or a table of name → domain, got {shown(v)}")
    else:
        list_of(text)(v, path)


TOLERANCE = fields({"rule": (text, True), "value": (number, True), "atol": (number, False)}, "a tolerance")
RECIPE = fields({"op": (text, True), "args": (table, True), "output": (optional_text, False)}, "a recipe")
MISCONCEPTION = fields({"id": (text, True), "value": (lambda v, p: None, True), "explanation": (text, True),
                        "credit": (number, False)}, "a misconception")
PART = fields({
    "id": (text, True), "prompt": (text, True), "kind": (text, True), "expected": (lambda v, p: None, True),
    "tolerance": (TOLERANCE, True), "points": (amount, True), "minutes": (amount, True),
    "shape": (optional(list_of(whole(1))), False), "exact": (optional_text, False), "variables": (_variables, False),
    "choices": (list_of(text), False), "misconceptions": (list_of(MISCONCEPTION), False),
    "recipe": (optional(RECIPE), False), "depends_on": (list_of(text), False), "hint": (text, False),
    "model_answer": (text, False), "rubric": (list_of(text), False)}, "a part")
STEP = fields({"title": (text, True), "blocks": (blocks, True), "part": (optional_text, False)}, "a solution step")
PROBLEM = fields({
    "generator": (text, True), "version": (whole(1), True), "seed": (whole(0), True), "difficulty": (whole(0), True),
    "calculator_free": (flag, False), "variant": (text, False), "title": (text, True), "params": (table, True),
    "conventions": (table_of(text), False), "statement": (blocks, True), "parts": (list_of(PART), True),
    "solution": (list_of(STEP), True), "pins": (table, False)}, "a problem")
problems = list_of(PROBLEM)

# meta: what `sheet` and `generate --key` record; other names are the writer's own and are kept as they are
def optional(check: Callable[[Any, str], None]) -> Callable[[Any, str], None]:
    """``check``, or null: what a sheet does not set (a recipe without minutes or course) is written as null."""
    def check_or_null(v: Any, path: str) -> None:
        if v is not None:
            check(v, path)
    return check_or_null


META = {"decimal_comma": flag, "names": table_of(text), "variants": table, "sheet_id": text, "recipe": optional(text),
        "recipe_source": optional(text), "seed": optional(whole(0)), "course": optional(text), "minutes": optional(total),
        "points": optional(total), "estimated_minutes": optional(total), "topics": optional(list_of(text)),
        "difficulty": optional(whole(0)), "printed_id": text}


def _ecf(v: Any, path: str) -> None:
    """ecf_check: {"problems": [{part id: value}], "variants": {id: [...]}}; the values are any JSON."""
    fields({"problems": (list_of(table), False), "variants": (table_of(list_of(table)), False)}, "ecf_check")(v, path)


def key_field_error(d: dict[str, Any]) -> FieldError | None:
    """The first field of a key's JSON (already known to be a table with "format" examprep-key)
    that is not what examprep writes, or None."""
    try:
        nonfinite(d)
        for name, check in (("title", text), ("examprep_version", text), ("meta", table), ("problems", list_of(table)),
                            ("variants", table_of(list_of(table))), ("variant_codes", table_of(text)),
                            ("ecf_check", _ecf)):
            if name in d:
                check(d[name], name)
        for name, check in META.items():
            if name in d.get("meta", {}):
                check(d["meta"][name], join("meta", name))
        problems(d.get("problems", []), "problems")
        for sid, ps in d.get("variants", {}).items():
            problems(ps, join("variants", sid))
    except FieldError as err:
        return err
    return None
