"""Answers: safe parsing of what students type, tolerance and symbolic checks, misconception
matching and error carried forward.

    parse_answer(part, raw)                 raw text (or a TOML/JSON number or list) -> a value
    check_part(part, raw, earlier, ...)     -> PartResult (status, score, feedback, rule)

Student text is never evaluated as code (no eval, sympify or parse_expr): see ``parse``.
"""
from __future__ import annotations

from examprep.answers.check import check_part
from examprep.answers.raw import raw_text
from examprep.answers.read import is_blank, parse_answer
from examprep.answers.result import STATUSES, Expr, PartResult, shape_feedback
from examprep.answers.tolerances import bounds, entries_ok, rule_text
from examprep.answers.tokens import AnswerParseError
from examprep.errors import ParamError
from examprep.problem import Tolerance

__all__ = ["AnswerParseError", "Expr", "PartResult", "STATUSES", "bounds", "check_part", "entries_ok", "is_blank",
           "parse_answer", "parse_tolerance", "raw_text", "rule_text", "shape_feedback"]

_RULES = ("sigfigs", "sigfigs-strict", "decimals", "rtol", "atol", "exact")


def parse_tolerance(spec: str) -> Tolerance:
    """A tolerance from text: "sigfigs:3", "sigfigs-strict:3" (exactly 3 figures written, STACK's
    NumSigFigs), "decimals:2", "rtol:0.01", "atol:0.005" or "exact", optionally with an absolute
    floor: "sigfigs:2,atol=1e-4" (not for sigfigs-strict, which has none). The one parser of
    tolerance text: --tolerance, sheet recipes and question files use it.

    Raises ParamError naming the accepted forms.
    """
    text = spec.strip().lower().replace(" ", "")
    atol = 1e-3
    if "," in text:
        text, _, extra = text.partition(",")
        if not extra.startswith("atol="):
            raise ParamError(f"tolerance {spec!r}: after the comma only atol=X is accepted, e.g. sigfigs:2,atol=1e-4")
        try:
            atol = float(extra[5:])
        except ValueError:
            raise ParamError(f"tolerance {spec!r}: atol must be a number") from None
    rule, _, val = text.partition(":")
    aliases = {"sig": "sigfigs", "sf": "sigfigs", "sigfig": "sigfigs", "dp": "decimals", "decimal": "decimals",
               "rel": "rtol", "abs": "atol", "sigfig-strict": "sigfigs-strict", "sf-strict": "sigfigs-strict"}
    rule = aliases.get(rule, rule)
    if rule not in _RULES:
        raise ParamError(f"tolerance {spec!r}: expected one of sigfigs:N, sigfigs-strict:N, decimals:N, rtol:X, "
                         "atol:X or exact")
    if rule == "exact":
        return Tolerance("exact", 0, 0)
    try:
        value = float(val)
    except ValueError:
        example = "3" if rule in ("sigfigs", "decimals") else "0.01"
        raise ParamError(f"tolerance {spec!r}: {rule} needs a number, e.g. {rule}:{example}") from None
    if not (value > 0 or rule == "decimals" and value >= 0) or value != value or value == float("inf"):
        raise ParamError(f"tolerance {spec!r}: the value must be positive")
    if rule in ("sigfigs", "sigfigs-strict", "decimals"):
        if value != int(value) or value > 15:
            raise ParamError(f"tolerance {spec!r}: {rule} takes a whole number up to 15")
        value = int(value)
    if rule == "sigfigs-strict":
        if "," in spec:
            raise ParamError(f"tolerance {spec!r}: sigfigs-strict has no absolute floor (drop ',atol=…')")
        return Tolerance("sigfigs-strict", value, 0.0)
    try:                                          # Tolerance's ranges: rtol ≤ 1, atol ≤ MAX_ATOL, a finite floor
        if rule == "rtol":
            return Tolerance("rtol", value, atol if "," in spec else 0.0)
        return Tolerance(rule, value, atol)
    except ValueError as err:
        raise ParamError(f"tolerance {spec!r}: {str(err).removeprefix('tolerance ')}") from None
