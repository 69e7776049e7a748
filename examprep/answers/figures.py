"""Significant figures as written, and the strict rule that checks them ("sigfigs-strict:N").

How figures are counted (the conventions of STACK's numbers fixtures, moodle-qtype_stack
tests/fixtures/numbersfixtures.class.php; signs, brackets and a power of ten do not count):
  0.245 → 3; 0.0010 → 2 (leading zeros never count); 2.000 → 4; 100.0 → 4; 100. → 3
  1234 → 4; 2000 → 1 to 4 and 120 → 2 to 3 (trailing zeros of a whole number may or may not count)
  0 → 1; 0.0 → 1; 0.00 → 2; 0.000 → 3 (zero: as many as the decimals written, at least 1)
  4.320e-3, 4.320×10^-3 → 4; 1E3 → 1; 1.00e3 → 3 (the mantissa's figures)
An answer has N figures when N is within its range. Only a decimal number as written has
figures: 1/3, π, √2 or an expression have none, and a TOML or JSON number (not text) has lost the
zeros it was written with, so it is refused with a hint to write it in quotes.

The strict check of an answer (examprep.problem.Tolerance "sigfigs-strict"): each entry must be
written with exactly N figures *and* be within half a unit of the expected value rounded to N
figures (strictly: a tie is refused); the feedback names which of the two failed.
"""
from __future__ import annotations

import decimal
import re
from typing import Any

import numpy as np

from examprep.answers.evaluate import evaluate
from examprep.answers.parse import parse_text
from examprep.answers.result import Expr, ecf_text, ecf_value, result, shape_feedback, to_array, where_text
from examprep.answers.tokens import AnswerParseError
from examprep.problem import Misconception, Part, Tolerance, round_sigfigs

_LITERAL = re.compile(r"(\d*)(?:\.(\d*))?(?:[eE][+-]?\d+)?")


def literal_figures(text: str) -> tuple[int, int] | None:
    """The (fewest, most) significant figures of a number literal as typed ("0.0010" → (2, 2),
    "2000" → (1, 4)), or None when it is not one."""
    m = _LITERAL.fullmatch(text)
    if not m or not (m.group(1) or m.group(2)):
        return None
    whole, fraction = m.group(1), m.group(2)
    point = fraction is not None
    fraction = fraction or ""
    digits = (whole + fraction).lstrip("0")
    if not digits:                                    # zero: 0 → 1, 0.0 → 1, 0.00 → 2
        return max(1, len(fraction)), max(1, len(fraction))
    if point:
        return len(digits), len(digits)
    trailing = len(digits) - len(digits.rstrip("0"))
    return len(digits) - trailing, len(digits)


def written(node: Any) -> tuple[tuple[int, int], decimal.Decimal] | None:
    """A node that is a decimal number as written — a literal with an optional sign (in brackets or
    not) and an optional power of ten (1.38*10^-1, 138×10⁻³) — as (its figures, its exact value);
    None for anything else (1/3, π, √2)."""
    kind = node[0]
    if kind == "neg":
        inner = written(node[1])
        return None if inner is None else (inner[0], -inner[1])
    if kind == "num":
        figures = literal_figures(node[2])
        return None if figures is None else (figures, decimal.Decimal(node[2]))
    if kind == "pow":
        power = _power_of_ten(node)
        return None if power is None else ((1, 1), decimal.Decimal(1).scaleb(power))
    if kind == "mul":                        # 1.38*10^-1; -138*10^-3 reads as (-138)*10^-3
        power = _power_of_ten(node[2])
        literal = node[1][1] if node[1][0] == "neg" else node[1]
        mantissa = written(node[1]) if power is not None and literal[0] == "num" else None
        if mantissa is not None:
            return mantissa[0], mantissa[1].scaleb(power)
    return None


def _power_of_ten(node: Any) -> int | None:
    """k for a node 10^k (k a whole number, maybe negative), else None."""
    if node[0] != "pow" or node[1] != ("num", 10.0, "10"):
        return None
    k, sign = node[2], 1
    if k[0] == "neg":
        k, sign = k[1], -1
    if k[0] == "num" and k[2].isdigit() and len(k[2]) < 5:
        return sign * int(k[2])
    return None


def typed_to(value: Any, n: int) -> Any:
    """A value (number or nested lists) as a student writes it to exactly ``n`` significant figures:
    the expected value rounded as the strict rule rounds it ("0.0499", "1.0E+1"). For self-tests."""
    if isinstance(value, list):
        return "[" + ", ".join(typed_to(v, n) for v in value) + "]"
    if isinstance(value, str):
        return value
    if value is None:
        return "-inf"
    r = round_sigfigs(float(value), n)[0]
    if r == 0:
        return "0." + "0" * n if n > 1 else "0"
    return str(r)


class _Entry:
    """One entry of an answer as written: its figures and exact value, or why it has none."""

    __slots__ = ("figures", "value", "why")

    def __init__(self, figures: tuple[int, int] | None, value: decimal.Decimal | None, why: str = ""):
        self.figures, self.value, self.why = figures, value, why


def entries(raw: Any) -> list[_Entry]:
    """Every entry of a raw answer (text, or a TOML/JSON integer, or lists of them) in row-major
    order, as written. Raises AnswerParseError for a TOML/JSON number that is not an integer."""
    if isinstance(raw, (list, tuple)):
        return [e for x in raw for e in entries(x)]
    if isinstance(raw, int) and not isinstance(raw, bool):
        text = str(abs(raw))
        return [_Entry(literal_figures(text), decimal.Decimal(raw))]
    if isinstance(raw, float):
        raise AnswerParseError(f"significant figures are counted as written: put the answer in quotes, "
                               f"e.g. \"{raw!r}\", keeping its zeros")
    node = parse_text(str(raw), scalar=False)
    return [_entry(n) for n in _leaves(node)]


def _leaves(node: Any) -> list:
    if isinstance(node, list):
        return [leaf for x in node for leaf in _leaves(x)]
    return [node]


def _entry(node: Any) -> _Entry:
    found = written(node)
    if found is None:
        return _Entry(None, None, "not a decimal number")
    return _Entry(found[0], found[1])


def _figures_text(f: tuple[int, int]) -> str:
    low, high = f
    n = f"{low}" if low == high else f"{low} to {high}"
    return f"{n} significant figure{'s' if high > 1 else ''}"


def check_strict(part: Part, raw: Any, value: Any, tol: Tolerance, rule: str, earlier: dict[str, Any] | None,
                 ecf_credit: float) -> Any:
    """Grade a readable answer under "sigfigs-strict": every entry written with exactly N figures
    and within half a unit of the expected value rounded to N figures; carried-forward values
    and misconceptions are recognised by their value. Returns a PartResult."""
    n = int(tol.value)
    if isinstance(value, Expr):
        value = evaluate(value.node)
    try:
        typed = entries(raw)
    except AnswerParseError as err:
        return result(part, "unparseable", 0, None, str(err), rule, raw)
    got = np.asarray(value, dtype=float)
    want = to_array(part.expected)
    if got.size != len(typed):                  # a single row typed flat, and the like: figures by value order
        typed = typed[:got.size] + [_Entry(None, None, "not a decimal number")] * (got.size - len(typed))
    flat_got = got.ravel()
    exact = [e.value if e.value is not None else decimal.Decimal(repr(float(g))) for e, g in zip(typed, flat_got)]
    figures_ok = np.array([e.figures is not None and e.figures[0] <= n <= e.figures[1] for e in typed])

    def value_ok(target: np.ndarray) -> np.ndarray:
        flat = target.ravel()
        return np.array([tol.within_rounded(x, float(w)) if np.isfinite(w) else float(g) == float(w)
                         for x, g, w in zip(exact, flat_got, flat)])

    if got.shape != want.shape and got.size != want.size:
        return result(part, "wrong", 0, value, shape_feedback(want.shape, got.shape, raw), rule, raw)
    finite = np.isfinite(want.ravel())
    figures_ok |= ~finite                        # a masked −∞ needs no figures
    values = value_ok(want)
    if bool((values & figures_ok).all()):
        return result(part, "correct", part.points, value, "correct", rule, raw)
    ecf_val = ecf_value(part, earlier) if earlier is not None and part.ecf_rule is not None else None
    if ecf_val is not None and ecf_val.size == got.size and bool((value_ok(ecf_val) & figures_ok).all()):
        return result(part, "ecf", ecf_credit * part.points, value, ecf_text(part, ecf_credit), rule, raw,
                       ecf_from=tuple(part.depends_on))
    for m in part.misconceptions:
        mv = _misconceptionto_array(m)
        if mv is not None and mv.size == got.size and bool(value_ok(mv).all()):
            return result(part, "misconception", m.credit * part.points, value, m.explanation, rule, raw, m)
    if got.size == 1:
        return result(part, "wrong", 0, value, _scalar_feedback(typed[0], bool(values[0]), bool(figures_ok[0]), n),
                       rule, raw)
    ok = values & figures_ok
    shape = want.shape if got.size == want.size else got.shape
    where = [where_text(tuple(int(k) for k in np.unravel_index(i, shape))) for i in np.flatnonzero(~ok)]
    if bool(values.all()):
        listed = ", ".join(where[:4]) + (", …" if len(where) > 4 else "")
        feedback = (f"the values are right, but not the figures of entr{'y' if len(where) == 1 else 'ies'} {listed}: "
                    f"give each with exactly {n} significant figure{'s' if n > 1 else ''}")
    else:
        problems = []
        for i, at in zip(np.flatnonzero(~ok), where):
            what = " and ".join(w for w, bad in (("value", not values[i]), ("figures", not figures_ok[i])) if bad)
            problems.append(f"entry {at}: {what}")
        more = ", …" if len(problems) > 4 else ""
        feedback = f"{int(ok.sum())} of {ok.size} entries right; " + ", ".join(problems[:4]) + more
    return result(part, "wrong", float(ok.mean()) * part.points, value, feedback, rule, raw)


def _misconceptionto_array(m: Misconception) -> np.ndarray | None:
    try:
        return to_array(m.value)
    except (TypeError, ValueError):
        return None


def _scalar_feedback(entry: _Entry, value_ok: bool, figures_ok: bool, n: int) -> str:
    value = f"value: not within half a unit of the {_ordinal(n)} significant figure"
    if entry.figures is None:
        figures = f"figures: write a decimal number with exactly {n} significant figure{'s' if n > 1 else ''}"
    else:
        figures = f"figures: written with {_figures_text(entry.figures)}; give exactly {n}"
    if value_ok:
        return f"the value is right, but not the {figures}"
    return f"{value}; {figures}" if not figures_ok else value


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
