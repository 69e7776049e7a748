"""Check one answer against one Part: tolerance, shape, exact equivalence, misconceptions and
error carried forward. Each check returns a PartResult with the rule stated in plain words.

Order of the verdicts for a readable answer (the first that applies wins):
  correct        within the part's tolerance of the expected value (every entry of an array)
  ecf            within tolerance of the value recomputed through the part's recipe from the
                 student's own earlier answers (error carried forward; ``ecf_credit`` of the points)
  misconception  within tolerance of a known wrong value: its explanation and its credit (default 0)
  wrong          otherwise; arrays of the right shape earn the fraction of entries that are right,
                 and the feedback names what looks wrong (shape, transposition, sign, rounding)
An empty answer is "blank"; one that cannot be read is "unparseable" with the reason.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from examprep.answers.parse import (MAX_CHARS, MAX_ENTRIES, AnswerParseError, _DECIMAL_COMMA, evaluate, evaluate_all,
                                    fast_number, has_names, parse_text, shape_of, unparse)
from examprep.answers.raw import big_int, check_list, raw_text, type_word
from examprep.answers.numeric import APPROX_RTOL, has_decimal
from examprep.answers.symbolic import assumed_positive, equivalent
from examprep.errors import ExamprepError
from examprep.problem import EXACT_RTOL, Misconception, Part, Tolerance, float_noise

STATUSES = ("correct", "ecf", "misconception", "wrong", "blank", "unparseable")


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

    @property
    def full_marks(self) -> bool:
        return self.score >= self.max_score - 1e-12

    def to_dict(self) -> dict[str, Any]:
        return {"part": self.part_id, "status": self.status, "score": round(self.score, 6),
                "max_score": self.max_score, "raw": raw_text(self.raw), "value": _jsonable(self.value),
                "misconception": self.misconception.id if self.misconception else None,
                "feedback": self.feedback, "note": self.note, "rule": self.rule, "ecf_from": list(self.ecf_from)}


def _jsonable(v: Any) -> Any:
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, list):
        return [_jsonable(x) for x in v]
    if isinstance(v, Expr):
        return v.text
    return v


# ----------------------------------------------------------------------------- rules

def _fmt(x: float) -> str:
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.4g}"


def rule_text(part: Part, tolerance: Tolerance | None = None) -> str:
    """The part's checking rule in plain words, as shown to the student."""
    tol = tolerance or part.tolerance
    if part.kind == "choice":
        return "the one correct choice"
    if part.kind == "expression":
        if tol.rule == "exact" or part.variables:
            signs = ", ".join(f"{v} {d}" for v, d in part.domains)
            return ("exactly: any equivalent expression" + (f" in {', '.join(part.variables)}" if part.variables else "")
                    + (f" ({signs})" if signs else ""))
        return tol.describe()
    if part.kind == "integer" and tol.rule == "exact":
        return "exactly (a whole number)"
    text = tol.describe()
    if tol.rule == "exact":
        text = "exactly (a fraction such as 1/3 is fine; not a rounded decimal)"
    elif tol.rule == "sigfigs" and tol.atol > 0 and part.kind in ("vector", "matrix", "number"):
        # the absolute floor is looser than the significant figures for small values: say so
        try:
            want = _array(part.expected)
        except (TypeError, ValueError):
            want = np.zeros(0)
        finite = want[np.isfinite(want)]
        if finite.size and np.any(bounds(Tolerance("sigfigs", tol.value, 0.0), finite) < tol.atol):
            text += f" (or ±{tol.atol:g}, whichever is looser)"
    return ("each entry " + text) if part.kind in ("vector", "matrix") else text


def _array(v: Any) -> np.ndarray:
    """Nested lists to a float array; None (a masked −∞ in stored values) becomes −∞."""
    if isinstance(v, list) and _has_none(v):
        v = _none_to_inf(v)
    return np.asarray(v, dtype=float)


def _has_none(v: Any) -> bool:
    return any(_has_none(x) if isinstance(x, list) else x is None for x in v)


def _none_to_inf(v: Any) -> Any:
    return [_none_to_inf(x) if isinstance(x, list) else (-math.inf if x is None else x) for x in v]


def bounds(tol: Tolerance, want: np.ndarray, integer: bool = False) -> np.ndarray:
    """Per-entry allowed |answer − expected| of a tolerance (vectorised Tolerance.bound)."""
    e = np.abs(want)
    finite = np.isfinite(e)
    if tol.rule == "exact":
        return np.zeros_like(e) if integer else EXACT_RTOL * np.where(finite, e, 0)
    if tol.rule == "sigfigs":
        with np.errstate(divide="ignore", invalid="ignore"):
            mag = np.floor(np.log10(np.where((e > 0) & finite, e, 1.0)))
        return np.where(e > 0, np.maximum(0.5 * 10.0 ** (mag - int(tol.value) + 1), tol.atol), tol.atol)
    if tol.rule == "sigfigs-strict":
        return np.array([tol.bound(x) for x in e.ravel()], dtype=float).reshape(e.shape)
    if tol.rule == "rtol":
        return tol.value * np.where(finite, e, 0) + tol.atol
    if tol.rule == "atol":
        return np.full_like(e, float(tol.value))
    if tol.rule == "decimals":
        return np.full_like(e, 0.5 * 10.0 ** (-int(tol.value)))
    raise ValueError(f"unknown tolerance rule {tol.rule!r}")


def entries_ok(tol: Tolerance, got: np.ndarray, want: np.ndarray, integer: bool = False) -> np.ndarray:
    """Boolean array: which entries of ``got`` are within tolerance of ``want`` (same shape)."""
    return _within(got, want, _slack(bounds(tol, want, integer), want, integer))


def _scalar_ok(tol: Tolerance, got: float, want: float, integer: bool) -> bool:
    if integer and tol.rule == "exact":
        return got == want
    return tol.accepts(got, want)


class _Prepared:
    """What checking a part needs that depends only on the part and the tolerance (computed once
    per part: a class of 10,000 students shares it)."""

    __slots__ = ("rule", "want", "want_ok_bounds", "misconceptions", "has_inf", "shape")

    def __init__(self, part: Part, tol: Tolerance):
        self.rule = rule_text(part, tol)
        self.want = self.want_ok_bounds = None
        self.misconceptions: list[tuple[Misconception, np.ndarray | None, np.ndarray | None]] = []
        self.has_inf = False
        self.shape: tuple[int, ...] = ()
        if part.kind in ("vector", "matrix") or isinstance(part.expected, list):
            integer = part.kind == "integer"
            self.want = _array(part.expected)
            self.shape = tuple(part.shape) if part.shape else self.want.shape
            self.has_inf = bool(np.any(np.isinf(self.want)))
            self.want_ok_bounds = _slack(bounds(tol, self.want, integer), self.want, integer)
            for m in part.misconceptions:
                try:
                    mv = _array(m.value)
                except (TypeError, ValueError):
                    self.misconceptions.append((m, None, None))
                    continue
                self.misconceptions.append((m, mv, _slack(bounds(tol, mv, integer), mv, integer)))


_PREPARED: dict[int, tuple[Part, Tolerance, _Prepared]] = {}


def _prepared(part: Part, tol: Tolerance) -> _Prepared:
    hit = _PREPARED.get(id(part))
    if hit is not None and hit[0] is part and hit[1] == tol:
        return hit[2]
    prep = _Prepared(part, tol)
    if len(_PREPARED) > 50_000:
        _PREPARED.clear()
    _PREPARED[id(part)] = (part, tol, prep)     # holding the part keeps its id from being reused
    return prep


def _slack(b: np.ndarray, want: np.ndarray, integer: bool) -> np.ndarray:
    """The bounds plus float noise (Tolerance.accepts): a few ulps of max(|expected|, bound)."""
    if integer:
        return b
    with np.errstate(invalid="ignore"):
        scale = np.maximum(np.where(np.isfinite(want), np.abs(want), 0.0), b)
    return b + float_noise(1.0) * scale


def _within(got: np.ndarray, want: np.ndarray, limit: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        ok = np.abs(got - want) <= limit
    if not ok.all():
        ok |= np.isinf(got) & np.isinf(want) & (np.sign(got) == np.sign(want))
    return ok


# ----------------------------------------------------------------------------- parsing raw answers

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
    if len(text) > MAX_CHARS or not _PLAIN_LIST.fullmatch(text) or _DECIMAL_COMMA.search(text):
        return None
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
    integer = part.kind == "integer"
    if part.kind in ("number", "integer"):
        if isinstance(raw, str):
            quick = fast_number(raw)
            if quick is not None:
                value: Any = quick
            else:
                node = parse_text(raw, scalar=True, integer=integer)
                if isinstance(node, list):
                    n = len(node)
                    if n == 1 and not isinstance(node[0], list):
                        node = node[0]
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
    prep = _prepared(part, part.tolerance)
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


def _norm_choice(text: str) -> str:
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
    key = _norm_choice(text)
    for choice in part.choices:
        if _norm_choice(choice) == key:
            return choice
    # "b) text…" or "(b) text": the leading label
    head = _norm_choice(text.split(")")[0]) if ")" in text else None
    for choice in part.choices:
        if head and _norm_choice(choice) == head:
            return choice
    raise AnswerParseError(f"{text.strip()[:40]!r} is not a choice: answer with one of {', '.join(part.choices)}")


# ----------------------------------------------------------------------------- checking

def _shape_text(shape: tuple[int, ...]) -> str:
    if len(shape) == 0:
        return "one number"
    if len(shape) == 1:
        return "one number" if shape[0] == 1 else f"{shape[0]} entries"
    return "×".join(map(str, shape))


def shape_feedback(want: tuple[int, ...], got: tuple[int, ...], raw: Any = None) -> str:
    """Why an array answer has the wrong shape, in words ("expected 2×3, got 3×2 — transposed?")."""
    msg = f"expected {_shape_text(want)}, got {_shape_text(got)}"
    if len(want) == 2 and len(got) == 2 and want == got[::-1]:
        msg += " — transposed?"
    elif len(want) == 2 and len(got) == 1 and got[0] == want[0] * want[1]:
        msg += " — write the rows: [[a, b], [c, d]] or [a b; c d]"
    elif isinstance(raw, str) and _DECIMAL_COMMA.search(raw):
        m = _DECIMAL_COMMA.search(raw)
        msg += f" — a decimal comma in {m.group(0)!r}? Use a decimal point ({m.group(1)}.{m.group(2)})"
    return msg


def _round_sig(x: float, k: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, -int(math.floor(math.log10(abs(x)))) + k - 1)


def _diagnose_scalar(tol: Tolerance, got: float, want: float) -> str:
    if want != 0 and abs(got + want) <= 1e-9 * abs(want) + bounds(tol, np.array([want]))[0]:
        return "the sign is wrong"
    if want != 0 and abs(got - 100 * want) <= 100 * bounds(tol, np.array([want]))[0]:
        return "100 times too large — a percentage? Give the fraction (0.25, not 25)"
    if tol.rule == "sigfigs":
        full = _round_sig(want, int(tol.value))
        for k in range(1, int(tol.value)):
            short = _round_sig(want, k)
            if abs(got - short) <= 1e-9 * max(1.0, abs(want)) and short != full:
                return f"rounded to {k} significant figure{'s' if k > 1 else ''}; give {int(tol.value)}"
    return ""


def _where(idx: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(i + 1) for i in idx) + ")" if len(idx) > 1 else str(idx[0] + 1)


def _ecf_value(part: Part, earlier: dict[str, Any] | None) -> np.ndarray | None:
    """The part's value recomputed through its recipe from the student's earlier answers."""
    if part.recipe is None or not earlier:
        return None
    refs = part.depends_on
    if not refs or any(earlier.get(r) is None or isinstance(earlier.get(r), (Expr, str)) for r in refs):
        return None
    from examprep import recipes

    try:
        with np.errstate(all="ignore"):
            value = recipes.evaluate(part.recipe, earlier)
        arr = np.asarray(value, dtype=float)
    except (ExamprepError, KeyError, ValueError, TypeError, ArithmeticError, IndexError):
        return None
    if not np.all(np.isfinite(arr) | np.isinf(arr)) or np.any(np.isnan(arr)):
        return None
    return arr


def _result(part: Part, status: str, score: float, value: Any, feedback: str, rule: str, raw: Any,
            misconception: Misconception | None = None, ecf_from: tuple[str, ...] = (), note: str = "") -> PartResult:
    return PartResult(part.id, status, float(score), float(part.points), value, misconception, feedback, rule, raw,
                      ecf_from, note)


def check_part(part: Part, raw: Any, earlier: dict[str, Any] | None = None, *, ecf: bool = True,
               ecf_credit: float = 1.0, tolerance: Tolerance | None = None) -> PartResult:
    """Grade one raw answer to ``part``.

    earlier: {part id: the student's parsed answer} of earlier parts, for error carried forward
    through ``part.recipe`` (a part the student left blank should map to its expected value).
    ecf: whether to give carried-forward credit; ecf_credit: the fraction of the points it earns.
    tolerance: overrides the part's own tolerance (per-part or per-run settings).
    Never raises for a bad answer: it becomes status "unparseable" with the reason as feedback.
    """
    tol = tolerance or part.tolerance
    prep = _prepared(part, tol)
    rule = prep.rule
    if is_blank(raw):
        return _result(part, "blank", 0, None, "no answer", rule, raw)
    try:
        value = parse_answer(part, raw)
    except AnswerParseError as err:
        return _result(part, "unparseable", 0, None, str(err), rule, raw)
    if part.kind == "choice":
        return _check_choice(part, value, rule, raw)
    if tol.rule == "sigfigs-strict" and not part.variables:
        from examprep.answers.figures import check_strict      # the figures as written, then the value

        return check_strict(part, raw, value, tol, rule, earlier if ecf else None, ecf_credit)
    if part.kind == "expression":
        return _check_expression(part, value, rule, raw, tol)
    return _check_numeric(part, value, rule, raw, tol, earlier if ecf else None, ecf_credit, prep)


def _check_choice(part: Part, value: str, rule: str, raw: Any) -> PartResult:
    if _norm_choice(value) == _norm_choice(str(part.expected)):
        return _result(part, "correct", part.points, value, "correct", rule, raw)
    for m in part.misconceptions:
        if _norm_choice(str(m.value)) == _norm_choice(value):
            return _result(part, "misconception", m.credit * part.points, value, m.explanation, rule, raw, m)
    return _result(part, "wrong", 0, value, "not the right choice", rule, raw)


@lru_cache(maxsize=4096)
def _key_expression(text: str, variables: tuple[str, ...]) -> tuple:
    node = parse_text(text, variables=variables, scalar=True)
    if isinstance(node, list):
        raise ValueError(f"key expression {text!r} is a list")
    return node


def _check_expression(part: Part, value: Expr, rule: str, raw: Any, tol: Tolerance) -> PartResult:
    variables = tuple(part.variables)
    expected_text = part.exact or str(part.expected)
    numeric = not variables and tol.rule != "exact"
    how = ""
    if numeric:
        try:
            got = evaluate(value.node)
        except AnswerParseError as err:
            return _result(part, "unparseable", 0, None, str(err), rule, raw)
        want = part.expected if isinstance(part.expected, (int, float)) else evaluate(_key_expression(expected_text, ()))
        if _scalar_ok(tol, got, want, False):
            return _result(part, "correct", part.points, value, "correct", rule, raw)
    else:
        domains = part.variable_domains
        key_node = _key_expression(expected_text, variables)
        ok, how = equivalent(value.node, key_node, variables, domains)
        if ok:
            assumed = assumed_positive(value.node, key_node, variables, domains)
            feedback, note = _equivalent_text(how, assumed)
            return _result(part, "correct", part.points, value, feedback, rule, raw, note=note)
    for m in part.misconceptions:
        if isinstance(m.value, str):
            try:
                if equivalent(value.node, _key_expression(m.value, variables), variables, part.variable_domains)[0]:
                    return _result(part, "misconception", m.credit * part.points, value, m.explanation, rule, raw, m)
            except (AnswerParseError, ValueError):
                continue
        elif isinstance(m.value, (int, float)):
            try:
                if _scalar_ok(tol, evaluate(value.node), float(m.value), False):
                    return _result(part, "misconception", m.credit * part.points, value, m.explanation, rule, raw, m)
            except AnswerParseError:
                continue
    feedback = {"symbolically": "not equivalent to the answer (proven symbolically)",
                "undecided": "not shown equivalent: the answer and the key are defined at no common point tried"
                }.get(how, "not equivalent to the answer")
    if variables and not has_names(value.node):
        feedback = f"the answer is a formula in {', '.join(variables)}"
    elif not variables:
        try:
            got = evaluate(value.node)
            want = evaluate(_key_expression(expected_text, ()))
            if Tolerance("sigfigs", 3).accepts(got, want):
                feedback = ("numerically close, but the exact value is expected (e.g. ln 2, e^2/(1+e^2), 1/3)"
                            if has_decimal(value.node) else "close to the answer, but a different number"
                            + (" (proven symbolically)" if how == "symbolically" else ""))
        except AnswerParseError:
            pass
    return _result(part, "wrong", 0, value, feedback, rule, raw)


def _equivalent_text(how: str, assumed: tuple[str, ...] = ()) -> tuple[str, str]:
    """The feedback of a correct expression, and its note: what the student should know about how
    it was accepted (a decimal approximation; a variable taken as positive), "" when nothing."""
    notes = []
    if how == "as a decimal approximation":
        notes.append(f"accepted as a decimal approximation: within a relative {APPROX_RTOL:.0e} of the exact value"
                     .replace("e-0", "e-"))
    if assumed:
        names = ", ".join(assumed)
        notes.append(f"equivalent taking {names} as positive, as examprep takes a variable unless the part declares "
                     f"it real or negative")
    note = "; ".join(notes)
    checked = "checked numerically" if how == "as a decimal approximation" else f"checked {how}"
    return f"correct ({checked}{'; ' + note if note else ''})" if note else f"correct (equivalent, {checked})", note


def _check_numeric(part: Part, value: Any, rule: str, raw: Any, tol: Tolerance, earlier: dict[str, Any] | None,
                   ecf_credit: float, prep: _Prepared) -> PartResult:
    integer = part.kind == "integer"
    if not isinstance(value, list) and not isinstance(part.expected, list):
        return _check_scalar(part, value, rule, raw, tol, earlier, ecf_credit, integer)
    got = np.asarray(value, dtype=float)
    want = prep.want
    ok = _within(got, want, prep.want_ok_bounds) if got.shape == want.shape else None
    if ok is not None and bool(ok.all()):
        return _result(part, "correct", part.points, value, "correct", rule, raw)
    ecf_val = _ecf_value(part, earlier) if earlier is not None else None
    ecf_ok = None
    if ecf_val is not None:
        if ecf_val.size == got.size and ecf_val.shape != got.shape and got.shape == want.shape:
            ecf_val = ecf_val.reshape(got.shape)
        if ecf_val.shape == got.shape:
            ecf_ok = entries_ok(tol, got, ecf_val, integer)
            if bool(ecf_ok.all()):
                return _result(part, "ecf", ecf_credit * part.points, value, _ecf_text(part, ecf_credit), rule, raw,
                               ecf_from=tuple(part.depends_on))
    for m, mv, limit in prep.misconceptions:
        if mv is None:
            continue
        if mv.shape != got.shape and mv.size == got.size == 1:
            mv, limit = mv.reshape(got.shape), limit.reshape(got.shape)   # a one-number mistake ("the inner product")
        if mv.shape == got.shape and bool(_within(got, mv, limit).all()):
            return _result(part, "misconception", m.credit * part.points, value, m.explanation, rule, raw, m)
    if ok is None:
        return _result(part, "wrong", 0, value, shape_feedback(want.shape, got.shape, raw), rule, raw)
    frac = float(ok.mean())
    score = frac * part.points
    if ecf_ok is not None and ecf_credit * float(ecf_ok.mean()) * part.points > score:
        score = ecf_credit * float(ecf_ok.mean()) * part.points
        ok = ecf_ok
    n_ok, n = int(ok.sum()), ok.size
    bad = [_where(tuple(int(i) for i in idx)) for idx in np.argwhere(~ok)]
    where = ", ".join(bad[:4]) + (", …" if len(bad) > 4 else "")
    feedback = f"{n_ok} of {n} entries right; check entr{'y' if len(bad) == 1 else 'ies'} {where}"
    if got.ndim == 2 and got.shape[0] == got.shape[1] and bool(entries_ok(tol, got.T, want, integer).all()):
        feedback = "transposed: rows and columns are swapped"
    elif n_ok == 0:
        feedback = "no entry is right"
        if bool(entries_ok(tol, -got, want, integer).all()):
            feedback = "every sign is wrong"
    return _result(part, "wrong", score, value, feedback, rule, raw)


def _ecf_text(part: Part, credit: float) -> str:
    refs = ", ".join(part.depends_on)
    share = "" if credit >= 1 else f" ({credit:.0%} credit)"
    return f"consistent with your own answer{'s' if len(part.depends_on) > 1 else ''} to {refs}: error carried forward{share}"


def _check_scalar(part: Part, value: Any, rule: str, raw: Any, tol: Tolerance, earlier: dict[str, Any] | None,
                  ecf_credit: float, integer: bool) -> PartResult:
    want = float(part.expected) if not integer else part.expected
    got = value
    if _scalar_ok(tol, got, want, integer):
        return _result(part, "correct", part.points, value, "correct", rule, raw)
    if earlier is not None and part.recipe is not None:
        ecf_val = _ecf_value(part, earlier)
        if ecf_val is not None and ecf_val.size == 1:
            e = float(ecf_val.ravel()[0])
            if integer and e == int(e):
                e = int(e)
            if _scalar_ok(tol, got, e, integer):
                return _result(part, "ecf", ecf_credit * part.points, value, _ecf_text(part, ecf_credit), rule, raw,
                               ecf_from=tuple(part.depends_on))
    for m in part.misconceptions:
        mv = m.value
        if isinstance(mv, list):
            flat = np.asarray(_array(mv)).ravel()
            if flat.size != 1:
                continue
            mv = float(flat[0])
        if isinstance(mv, (int, float)) and not isinstance(mv, bool) and _scalar_ok(tol, got, mv, integer):
            return _result(part, "misconception", m.credit * part.points, value, m.explanation, rule, raw, m)
    if integer and isinstance(got, float):
        return _result(part, "wrong", 0, value, "the answer is a whole number", rule, raw)
    feedback = _diagnose_scalar(tol, float(got), float(want)) or "not within the tolerance"
    return _result(part, "wrong", 0, value, feedback, rule, raw)
