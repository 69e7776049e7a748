"""The verdict on one part (PartResult) and what the checks share to make one: the answer's value
as an array, where in an array an entry is, the shape in words, and the value the part's ECF rule
gives from the student's own earlier answers (error carried forward)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from examprep import ecf
from examprep.answers.parse import decimal_comma_on
from examprep.answers.raw import raw_text
from examprep.answers.tokens import DECIMAL_COMMA
from examprep.errors import ExamprepError
from examprep.problem import Misconception, Part
from examprep.solve.contract import jsonable

STATUSES = ("correct", "ecf", "misconception", "wrong", "blank", "unparseable", "pending", "marked")
# "pending": a written part not yet marked by hand (0 points so far, never "wrong"); "marked": its
# points and comment from the marker (examprep grade --marks)


@dataclass(frozen=True)
class Expr:
    """A parsed exact or symbolic answer: canonical text and its syntax tree."""

    text: str
    node: tuple

    def __str__(self) -> str:
        return self.text


@dataclass
class PartResult:
    """The verdict on one part.

    status: one of STATUSES; score out of max_score (the part's points); value: the parsed answer
    (float, int, nested lists, canonical expression text or choice label; None when blank or
    unreadable); raw: the answer as written (text, or the TOML/JSON number or list; see
    raw_text); misconception: the matched one, if any; feedback: one or two sentences for the
    student; rule: the part's rule in plain words ("each entry to 3 significant figures").
    ecf_from: the earlier parts whose (student) values a carried-forward check used.
    note: for a correct answer, what a student should know about how it was accepted ("accepted as
    a decimal approximation…", "taking x as positive…"); "" otherwise. Reports show it.
    rounded: the figures of the coarsest rounding this part was docked for (rounding too coarsely,
    examprep.answers.rounding), 0 when none: the later parts of its chain are not docked again for
    entries rounded to as many figures or more.
    """

    part_id: str
    status: str
    score: float
    max_score: float
    value: Any
    misconception: Misconception | None
    feedback: str
    rule: str
    raw: Any = None
    ecf_from: tuple[str, ...] = ()
    note: str = ""
    rounded: int = 0

    @property
    def full_marks(self) -> bool:
        return self.score >= self.max_score - 1e-12

    def to_dict(self) -> dict[str, Any]:
        value = self.value.text if isinstance(self.value, Expr) else self.value
        return {"part": self.part_id, "status": self.status, "score": round(self.score, 6),
                "max_score": self.max_score, "raw": raw_text(self.raw), "value": jsonable(value),
                "misconception": self.misconception.id if self.misconception else None,
                "feedback": self.feedback, "note": self.note, "rule": self.rule, "ecf_from": list(self.ecf_from)}


def to_array(v: Any) -> np.ndarray:
    """Nested lists to a float array; None (a masked −∞ in stored values) becomes −∞."""
    if isinstance(v, list) and _has_none(v):
        v = _none_to_inf(v)
    return np.asarray(v, dtype=float)


def _has_none(v: Any) -> bool:
    return any(_has_none(x) if isinstance(x, list) else x is None for x in v)


def _none_to_inf(v: Any) -> Any:
    return [_none_to_inf(x) if isinstance(x, list) else (-math.inf if x is None else x) for x in v]


def shape_text(shape: tuple[int, ...]) -> str:
    if len(shape) == 0:
        return "one number"
    if len(shape) == 1:
        return "one number" if shape[0] == 1 else f"{shape[0]} entries"
    return "×".join(map(str, shape))


def shape_feedback(want: tuple[int, ...], got: tuple[int, ...], raw: Any = None) -> str:
    """Why an array answer has the wrong shape, in words ("expected 2×3, got 3×2 — transposed?")."""
    msg = f"expected {shape_text(want)}, got {shape_text(got)}"
    comma_sheet = decimal_comma_on()
    if len(want) == 2 and len(got) == 2 and want == got[::-1]:
        msg += " — transposed?"
    elif len(want) == 2 and len(got) == 1 and got[0] == want[0] * want[1]:
        # on a decimal-comma sheet ';' separates entries, so rows are bracketed
        msg += (" — write the rows: [[a; b]; [c; d]]" if comma_sheet
                else " — write the rows: [[a, b], [c, d]] or [a b; c d]")
    elif isinstance(raw, str) and DECIMAL_COMMA.search(raw) and not comma_sheet:
        m = DECIMAL_COMMA.search(raw)
        msg += f" — a decimal comma in {m.group(0)!r}? Use a decimal point ({m.group(1)}.{m.group(2)})"
    return msg


def where_text(idx: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(i + 1) for i in idx) + ")" if len(idx) > 1 else str(idx[0] + 1)


def ecf_value(part: Part, earlier: dict[str, Any] | None) -> np.ndarray | None:
    """The part's value recomputed through its ECF rule from the student's earlier answers."""
    if part.ecf_rule is None or not earlier:
        return None
    refs = part.depends_on
    if not refs or any(earlier.get(r) is None or isinstance(earlier.get(r), (Expr, str)) for r in refs):
        return None

    try:
        with np.errstate(all="ignore"):
            value = ecf.evaluate(part.ecf_rule, earlier)
        arr = np.asarray(value, dtype=float)
    except (ExamprepError, KeyError, ValueError, TypeError, ArithmeticError, IndexError):
        return None
    if not np.all(np.isfinite(arr) | np.isinf(arr)) or np.any(np.isnan(arr)):
        return None
    return arr


def ecf_text(part: Part, credit: float) -> str:
    refs = ", ".join(part.depends_on)
    share = "" if credit >= 1 else f" ({credit:.0%} credit)"
    return f"consistent with your own answer{'s' if len(part.depends_on) > 1 else ''} to {refs}: error carried forward{share}"


def result(part: Part, status: str, score: float, value: Any, feedback: str, rule: str, raw: Any,
            misconception: Misconception | None = None, ecf_from: tuple[str, ...] = (), note: str = "",
            rounded: int = 0) -> PartResult:
    return PartResult(part.id, status, float(score), float(part.points), value, misconception, feedback, rule, raw,
                      ecf_from, note, rounded)
