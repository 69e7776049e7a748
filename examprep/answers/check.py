"""Check one answer against one Part: tolerance, shape, exact equivalence, misconceptions and
error carried forward. Each check returns a PartResult with the rule stated in plain words.

Order of the verdicts for a readable answer (the first that applies wins):
  correct        within the part's tolerance of the expected value (every entry of an array)
  ecf            within tolerance of the value recomputed through the part's ECF rule from the
                 student's own earlier answers (error carried forward; ``ecf_credit`` of the points)
  misconception  within tolerance of a known wrong value: its explanation and its credit (default 0)
  wrong          otherwise; arrays of the right shape earn the fraction of entries that are right,
                 and the feedback names what looks wrong (shape, transposition, sign, rounding)
An empty answer is "blank"; one that cannot be read is "unparseable" with the reason.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from examprep.answers.evaluate import evaluate, has_names
from examprep.answers.figures import check_strict
from examprep.answers.numeric import APPROX_RTOL, has_decimal
from examprep.answers.parse import parse_text
from examprep.answers.read import is_blank, norm_choice, parse_answer
from examprep.answers.rounding import Counted, counted_text, figures_text, mistake_text, rounded_figures
from examprep.answers.result import (STATUSES, Expr, PartResult, ecf_text, ecf_value, result, shape_feedback,
                                     to_array, where_text)
from examprep.answers.shapes import check_shapes
from examprep.answers.symbolic import assumed_positive, equivalent
from examprep.answers.tokens import AnswerParseError
from examprep.answers.tolerances import Prepared, bounds, entries_ok, prepared, rule_text, scalar_ok, within
from examprep.problem import Part, Tolerance

__all__ = ["STATUSES", "Expr", "PartResult", "check_part", "parse_answer", "rule_text"]


def _diagnose_scalar(tol: Tolerance, got: float, want: float) -> str:
    if want != 0 and abs(got + want) <= 1e-9 * abs(want) + bounds(tol, np.array([want]))[0]:
        return "the sign is wrong"
    if want != 0 and abs(got - 100 * want) <= 100 * bounds(tol, np.array([want]))[0]:
        return "100 times too large — a percentage? Give the fraction (0.25, not 25)"
    k = rounded_figures(tol, got, want)
    return figures_text(k, int(tol.value)) if k else ""


def check_part(part: Part, raw: Any, earlier: dict[str, Any] | None = None, *, ecf: bool = True,
               ecf_credit: float = 1.0, tolerance: Tolerance | None = None,
               rounding_counted: Counted | None = None) -> PartResult:
    """Grade one raw answer to ``part``.

    earlier: {part id: the student's parsed answer} of earlier parts, for error carried forward
    through ``part.ecf_rule`` (a part the student left blank should map to its expected value).
    ecf: whether to give carried-forward credit; ecf_credit: the fraction of the points it earns.
    tolerance: overrides the part's own tolerance (per-part or per-run settings).
    rounding_counted: where this part's chain was already docked for rounding too coarsely, and at
    how many figures (answers.rounding.RoundingChain); None when not: with ECF on, entries rounded
    to those figures or more are carried forward here, not docked again; coarser ones are docked.
    A known mistake's value wins over a rounding of the key that equals it (its feedback says both).
    Never raises for a bad answer: it becomes status "unparseable" with the reason as feedback.
    """
    if part.kind == "written":
        return written_result(part, raw)
    tol = tolerance or part.tolerance
    if part.kind == "shapes":                  # shapes of different lengths: no array to compare, shape by shape
        shapes_rule = rule_text(part, tol)
        return (result(part, "blank", 0, None, "no answer", shapes_rule, raw) if is_blank(raw)
                else check_shapes(part, raw, shapes_rule))
    prep = prepared(part, tol)
    rule = prep.rule
    if is_blank(raw):
        return result(part, "blank", 0, None, "no answer", rule, raw)
    try:
        value = parse_answer(part, raw)
    except AnswerParseError as err:
        return result(part, "unparseable", 0, None, str(err), rule, raw)
    if part.kind == "choice":
        return _check_choice(part, value, rule, raw)
    if tol.rule == "sigfigs-strict" and not part.variables:
        return check_strict(part, raw, value, tol, rule, earlier if ecf else None, ecf_credit)
    if part.kind == "expression":
        return _check_expression(part, value, rule, raw, tol)
    return _check_numeric(part, value, rule, raw, tol, earlier if ecf else None, ecf_credit, prep,
                          rounding_counted if ecf else None)


PENDING_FEEDBACK = "to be marked by hand"


def written_result(part: Part, raw: Any) -> PartResult:
    """A written part's verdict before it is marked: "pending", 0 points of its own, never wrong;
    what the student wrote is kept (``raw``) for the marker. ``examprep grade --marks`` replaces
    it with the marker's points (status "marked"). Nothing written (empty or only spaces) is
    "blank" as any part left blank is: no answer, 0 points, nothing to mark."""
    if is_blank(raw):
        return result(part, "blank", 0, None, "no answer", "marked by hand against the rubric", raw)
    return PartResult(part.id, "pending", 0.0, part.points, str(raw), None, PENDING_FEEDBACK,
                      "marked by hand against the rubric", raw=raw)


def _check_choice(part: Part, value: str, rule: str, raw: Any) -> PartResult:
    if norm_choice(value) == norm_choice(str(part.expected)):
        return result(part, "correct", part.points, value, "correct", rule, raw)
    for m in part.misconceptions:
        if norm_choice(str(m.value)) == norm_choice(value):
            return result(part, "misconception", m.credit * part.points, value, m.explanation, rule, raw, m)
    return result(part, "wrong", 0, value, "not the right choice", rule, raw)


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
            return result(part, "unparseable", 0, None, str(err), rule, raw)
        want = part.expected if isinstance(part.expected, (int, float)) else evaluate(_key_expression(expected_text, ()))
        if scalar_ok(tol, got, want, False):
            return result(part, "correct", part.points, value, "correct", rule, raw)
    else:
        domains = part.variable_domains
        key_node = _key_expression(expected_text, variables)
        ok, how = equivalent(value.node, key_node, variables, domains)
        if ok:
            assumed = assumed_positive(value.node, key_node, variables, domains)
            feedback, note = _equivalent_text(how, assumed)
            return result(part, "correct", part.points, value, feedback, rule, raw, note=note)
    for m in part.misconceptions:
        if isinstance(m.value, str):
            try:
                if equivalent(value.node, _key_expression(m.value, variables), variables, part.variable_domains)[0]:
                    return result(part, "misconception", m.credit * part.points, value, m.explanation, rule, raw, m)
            except (AnswerParseError, ValueError):
                continue
        elif isinstance(m.value, (int, float)):
            try:
                if scalar_ok(tol, evaluate(value.node), float(m.value), False):
                    return result(part, "misconception", m.credit * part.points, value, m.explanation, rule, raw, m)
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
    return result(part, "wrong", 0, value, feedback, rule, raw)


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
                   ecf_credit: float, prep: Prepared, rounding_counted: Counted | None = None) -> PartResult:
    integer = part.kind == "integer"
    if not isinstance(value, list) and not isinstance(part.expected, list):
        return _check_scalar(part, value, rule, raw, tol, earlier, ecf_credit, integer, rounding_counted)
    got = np.asarray(value, dtype=float)
    want = prep.want
    ok = within(got, want, prep.want_ok_bounds) if got.shape == want.shape else None
    if ok is not None and bool(ok.all()):
        return result(part, "correct", part.points, value, "correct", rule, raw)
    ecf_val = ecf_value(part, earlier) if earlier is not None else None
    ecf_ok = None
    if ecf_val is not None:
        if ecf_val.size == got.size and ecf_val.shape != got.shape and got.shape == want.shape:
            ecf_val = ecf_val.reshape(got.shape)
        if ecf_val.shape == got.shape:
            ecf_ok = entries_ok(tol, got, ecf_val, integer)
            if bool(ecf_ok.all()):
                return result(part, "ecf", ecf_credit * part.points, value, ecf_text(part, ecf_credit), rule, raw,
                               ecf_from=tuple(part.depends_on))
    # the entries each reference (the key, the carried-forward value) gets right, and those it gets rounded
    refs = [(r, r_ok, rounded_figures(tol, got, r, ~r_ok)) for r, r_ok in ((want, ok), (ecf_val, ecf_ok))
            if r_ok is not None]
    for m, mv, limit in prep.misconceptions:
        if mv is None:
            continue
        if mv.shape != got.shape and mv.size == got.size == 1:
            mv, limit = mv.reshape(got.shape), limit.reshape(got.shape)   # a one-number mistake ("the inner product")
        if mv.shape == got.shape and bool(within(got, mv, limit).all()):
            also = next((rounded for _, r_ok, rounded in refs if rounded.any() and bool((r_ok | (rounded > 0)).all())),
                        None)          # also the key rounded: the mistake is named, and the rounding said
            feedback = m.explanation if also is None else mistake_text(m.explanation, also, int(tol.value))
            return result(part, "misconception", m.credit * part.points, value, feedback, rule, raw, m)
    floor = rounding_counted.figures if rounding_counted else 0      # rounded to ≥ floor: counted already
    if rounding_counted:                # the rounding was docked earlier in the chain: not again
        for _, r_ok, rounded in refs:
            if bool((r_ok | (rounded >= floor)).all()):
                return result(part, "ecf", ecf_credit * part.points, value,
                              counted_text(rounding_counted.part, ecf_credit), rule, raw,
                              ecf_from=tuple(part.depends_on))
    if ok is None:
        return result(part, "wrong", 0, value, shape_feedback(want.shape, got.shape, raw), rule, raw)
    # per entry: 1 when right, the carried-forward credit when a carried-forward value is (or, past a
    # rounding already counted, when rounded to as many figures), 0 otherwise; the better reference counts
    best = None
    for i, (_, r_ok, rounded) in enumerate(refs):
        credit = np.where(r_ok, 1.0 if i == 0 else ecf_credit, 0.0)
        if rounding_counted:
            credit = np.where(rounded >= floor, ecf_credit, credit)
        if best is None or float(credit.mean()) > float(best[0].mean()):
            best = (credit, r_ok, rounded)
    credit, ok, rounded = best
    score = float(credit.mean()) * part.points
    n_ok, n = int(ok.sum()), ok.size

    def where(mask: np.ndarray) -> tuple[str, str]:
        bad = [where_text(tuple(int(i) for i in idx)) for idx in np.argwhere(mask)]
        return "entry" if len(bad) == 1 else "entries", ", ".join(bad[:4]) + (", …" if len(bad) > 4 else "")

    excused = (rounded >= floor) & (rounded > 0) if rounding_counted else np.zeros(rounded.shape, dtype=bool)
    docked = (rounded > 0) & ~excused
    said = []
    if excused.any():
        give = 0 if docked.any() else int(tol.value)
        said.append("{} {} ".format(*where(excused)) + figures_text(rounded[excused], give, rounding_counted.part))
    if docked.any():
        said.append("{} {} ".format(*where(docked)) + figures_text(rounded[docked], int(tol.value)))
    if (~ok & (rounded == 0)).any():
        said.append("check {} {}".format(*where(~ok & (rounded == 0))))
    feedback = (f"{n_ok} of {n} entries right; " if n_ok else "") + "; ".join(said)
    if got.ndim == 2 and got.shape[0] == got.shape[1] and bool(entries_ok(tol, got.T, want, integer).all()):
        feedback = "transposed: rows and columns are swapped"
    elif n_ok == 0 and not rounded.any():
        feedback = "no entry is right"
        if bool(entries_ok(tol, -got, want, integer).all()):
            feedback = "every sign is wrong"
    return result(part, "wrong", score, value, feedback, rule, raw,
                  rounded=int(rounded[docked].min()) if docked.any() else 0)


def _check_scalar(part: Part, value: Any, rule: str, raw: Any, tol: Tolerance, earlier: dict[str, Any] | None,
                  ecf_credit: float, integer: bool, rounding_counted: Counted | None = None) -> PartResult:
    want = float(part.expected) if not integer else part.expected
    got = value
    if scalar_ok(tol, got, want, integer):
        return result(part, "correct", part.points, value, "correct", rule, raw)
    e = None
    if earlier is not None and part.ecf_rule is not None:
        ecf_val = ecf_value(part, earlier)
        if ecf_val is not None and ecf_val.size == 1:
            e = float(ecf_val.ravel()[0])
            if integer and e == int(e):
                e = int(e)
            if scalar_ok(tol, got, e, integer):
                return result(part, "ecf", ecf_credit * part.points, value, ecf_text(part, ecf_credit), rule, raw,
                               ecf_from=tuple(part.depends_on))
    # the figures written where the answer is the key's value or the carried-forward one rounded, else 0
    k = 0 if integer else max(int(rounded_figures(tol, float(got), float(r))) for r in (want, e) if r is not None)
    for m in part.misconceptions:
        mv = m.value
        if isinstance(mv, list):
            flat = np.asarray(to_array(mv)).ravel()
            if flat.size != 1:
                continue
            mv = float(flat[0])
        if isinstance(mv, (int, float)) and not isinstance(mv, bool) and scalar_ok(tol, got, mv, integer):
            feedback = mistake_text(m.explanation, k, int(tol.value)) if k else m.explanation
            return result(part, "misconception", m.credit * part.points, value, feedback, rule, raw, m)
    if rounding_counted and k >= rounding_counted.figures > 0:     # rounded as the chain already was, or finer
        return result(part, "ecf", ecf_credit * part.points, value, counted_text(rounding_counted.part, ecf_credit),
                      rule, raw, ecf_from=tuple(part.depends_on))
    if integer and isinstance(got, float):
        written = raw.strip() if isinstance(raw, str) and len(raw.strip()) <= 40 else f"{got:.15g}"   # 1.010 as typed
        return result(part, "wrong", 0, value, f"expected a whole number, not {written}", rule, raw)
    feedback = (_diagnose_scalar(tol, float(got), float(want)) or (figures_text(k, int(tol.value)) if k else "")
                or _not_right(tol, integer))
    return result(part, "wrong", 0, value, feedback, rule, raw, rounded=k if feedback.startswith("rounded to") else 0)


def _not_right(tol: Tolerance, integer: bool) -> str:
    """A wrong number as a teacher says it: an exact rule has no tolerance to fall outside of."""
    if tol.rule != "exact":
        return "not within the tolerance"
    return "not the right whole number" if integer else "not the exact value"
