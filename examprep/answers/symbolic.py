"""Equivalence of exact and symbolic answers: numeric evidence at sample points, and sympy's proof.

Two expressions are compared first numerically (examprep.answers.numeric: sample points in each
variable's domain, interval arithmetic, so float rounding neither makes nor hides a difference): a
difference at any point where both are defined settles "not equivalent". When they agree, sympy is
asked, on objects built node by node from our syntax tree (never ``sympify`` on student text),
under a time limit, and only for answers whose cost is bounded first (the size of each literal, the
terms an expansion can make): the time limit works on the main thread only. sympy's verdict decides:
  proven equal (a − b simplifies to 0)            → equivalent, "checked symbolically";
  proven different (a − b expands to a nonzero
  number or polynomial)                            → not equivalent, "checked symbolically" — a
                                                     numeric agreement never overrules it;
  undecided (timeout, no proof, not asked)         → the numeric agreement decides, "checked numerically".
A decimal typed on either side (0.333333333333333 for 1/3) is an approximation: it is accepted when
it agrees to numeric.APPROX_RTOL (relative), even where sympy proves the exact values differ, and the
verdict says "as a decimal approximation" — unless sympy proves them exactly equal (0.5 for 1/2).

Variables are positive unless the part declares a domain ("real", "negative"): sympy's symbols carry
the same assumption as the sample points, so sqrt(x^2) is x for a positive x and |x| for a real one.
A positive x does not make x − 3 positive: where only one side is real, the numeric check compares
principal values (examprep.answers.numeric), so sqrt(x-3)*sqrt(x-5) is not sqrt((x-3)*(x-5)).
"""
from __future__ import annotations

import contextlib
import gc
import math
import signal
import threading
from functools import lru_cache
from typing import Any, Iterator

from examprep.answers import numeric
from examprep.answers.evaluate import ARITHMETIC, evaluate, unparse
from examprep.answers.tokens import AnswerParseError

# Time limit on one symbolic check (main thread; elsewhere only the cheap steps run — building the
# difference and expanding it — on answers within_budget, as everywhere). A timeout leaves the
# verdict to the numeric evidence and reports "checked numerically" instead of "symbolically".
SYMPY_SECONDS = 0.03
_WARM = False


class _Timeout(Exception):
    pass


RETRY_SECONDS = 0.002


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[bool]:
    """Interrupt the body after ``seconds`` (raises _Timeout) where a timer signal can be used:
    the main thread on Unix. Yields True when the limit is armed, False when it cannot be.

    Python drops an exception raised where it cannot propagate (a garbage-collector callback, a
    __del__): so the collector is paused while the limit is armed, and every alarm arms another one
    RETRY_SECONDS later until the body has ended, so a dropped _Timeout is raised again."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield False
        return
    active = [True]

    def on_alarm(signum: int, frame: Any) -> None:
        if active[0]:
            signal.setitimer(signal.ITIMER_REAL, RETRY_SECONDS)
            raise _Timeout()

    collecting = gc.isenabled()
    gc.disable()
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield True
    finally:
        while True:               # a last alarm may interrupt this clean-up: finish it all the same
            try:
                active[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old)
                break
            except _Timeout:
                continue
        if collecting:
            gc.enable()


def to_sympy(node: Any, symbols: dict[str, Any]) -> Any:
    """Build a sympy expression from a scalar node: decimals become exact Rationals."""
    import sympy as sp

    kind = node[0]
    if kind == "num":
        return sp.Rational(node[2]) if ("." in node[2] or "e" in node[2].lower()) else sp.Integer(node[2])
    if kind == "const":
        return {"e": sp.E, "pi": sp.pi, "π": sp.pi, "inf": sp.oo, "∞": sp.oo}[node[1]]
    if kind == "var":
        return symbols[node[1]]
    if kind == "neg":
        return -to_sympy(node[1], symbols)
    if kind == "pct":
        return to_sympy(node[1], symbols) / 100
    if kind == "call":
        x = to_sympy(node[2][0], symbols)
        f = node[1]
        if f == "sigmoid":
            return 1 / (1 + sp.exp(-x))
        if f == "log10":
            return sp.log(x, 10)
        if f == "log2":
            return sp.log(x, 2)
        return {"exp": sp.exp, "ln": sp.log, "log": sp.log, "sqrt": sp.sqrt, "sin": sp.sin, "cos": sp.cos,
                "tan": sp.tan, "tanh": sp.tanh, "abs": sp.Abs}[f](x)
    a, b = to_sympy(node[1], symbols), to_sympy(node[2], symbols)
    if kind in ARITHMETIC:
        return ARITHMETIC[kind](a, b)
    if kind == "pow":
        return a ** b
    raise ValueError(kind)


_ASSUMPTIONS = {"positive": {"positive": True}, "negative": {"negative": True}, "real": {"real": True}}


@lru_cache(maxsize=4096)
def _sympy_verdict(a_text: str, b_text: str, a: Any, b: Any, variables: tuple[str, ...],
                   domains: tuple[tuple[str, str], ...] = ()) -> bool | None:
    """sympy's verdict on a − b = 0: True proven equal, False proven different (a − b expands to a
    nonzero number, or to a polynomial in the variables with a nonzero coefficient), None undecided
    (timeout, no proof, infinities)."""
    import sympy as sp

    _warm_up(sp)
    domain = dict(domains)
    symbols = {v: sp.Symbol(v, **_ASSUMPTIONS[domain.get(v, "positive")]) for v in variables}
    try:
        with time_limit(SYMPY_SECONDS) as armed:
            diff = to_sympy(a, symbols) - to_sympy(b, symbols)
            if diff.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
                return None              # ∞ − ∞ is no proof of anything: the numeric verdict decides
            if diff == 0:
                return True
            expanded = sp.expand(diff)
            if expanded == 0:
                return True
            different = _proven_nonzero(sp, expanded, [symbols[v] for v in variables])
            if different:
                return False
            if not armed:
                return None          # no timer here: stop before the expensive steps
            simple = sp.simplify(diff)
            if simple == 0:
                return True
            return False if _proven_nonzero(sp, simple, [symbols[v] for v in variables]) else None
    except _Timeout:
        return None
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, RecursionError, AttributeError):
        return None


def _proven_nonzero(sp: Any, expr: Any, symbols: list[Any]) -> bool:
    """Is ``expr`` certainly not identically 0? A number sympy proves nonzero, or a polynomial in
    the symbols (numeric coefficients) with a coefficient sympy proves nonzero: such a polynomial
    vanishes on no open set, so it differs from 0 somewhere in every domain."""
    if not expr.free_symbols:
        return expr.is_zero is False
    if not expr.free_symbols <= set(symbols) or not expr.is_polynomial(*symbols):
        return False
    return any(c.is_zero is False for c in sp.Poly(expr, *symbols).coeffs())


def _warm_up(sp: Any) -> None:
    """sympy imports modules lazily during its first operations; do those once without a timer,
    so an alarm never interrupts an import half-way (which would leave a broken module behind)."""
    global _WARM
    if _WARM:
        return
    x = sp.Symbol("x", positive=True)
    sp.expand((x + 1) ** 3 - x / 2)
    # small separate cases: together they would send simplify into a slow trigonometric search
    for expr in (sp.exp(sp.log(x)) - x + sp.sqrt(x) ** 2 / (1 + x), sp.exp(2 * sp.log(x)) - x ** 2 + 1 / (1 + sp.exp(-x)),
                 sp.tanh(x) - 1, sp.sin(x) * sp.Abs(x), sp.log(x, 10) + sp.cos(x)):
        sp.simplify(expr)
    _WARM = True


# What sympy may be given, decided before it sees anything: SIGALRM (the time limit) exists only on
# the main thread, and no timer interrupts one long C-level step (Rational("1e-10000000") builds
# 10**10000000). Beyond these bounds the numeric verdict stands alone ("checked numerically").
MAX_LITERAL_DIGITS = 60        # significant digits of one number as typed
MAX_LITERAL_EXPONENT = 60      # |n| in a literal's "e±n"
MAX_TERMS = 2_000              # terms an expansion may reach (every node's estimate, summed)


def _literal_ok(text: str) -> bool:
    mantissa, _, exponent = text.lower().partition("e")
    digits = mantissa.replace(".", "")
    return len(digits) <= MAX_LITERAL_DIGITS and (not exponent or abs(int(exponent)) <= MAX_LITERAL_EXPONENT)


def _terms(node: Any, total: list[int]) -> int:
    """An upper estimate of the terms sympy's expand() makes of ``node``; adds every node's
    estimate to total[0] and stops (returning MAX_TERMS + 1) once the sum passes MAX_TERMS."""
    kind = node[0]
    if kind == "num":
        n = 1 if _literal_ok(node[2]) else MAX_TERMS + 1
    elif kind in ("const", "var"):
        n = 1
    elif kind in ("neg", "pct"):
        n = _terms(node[1], total)
    elif kind == "call":
        _terms(node[2][0], total)
        n = 1
    elif kind in ("add", "sub"):
        n = _terms(node[1], total) + _terms(node[2], total)
    elif kind in ("mul", "div"):
        n = _terms(node[1], total) * _terms(node[2], total)
    elif kind == "pow":
        base = _terms(node[1], total)
        _terms(node[2], total)
        n = _power_terms(base, node[2])
    else:
        n = MAX_TERMS + 1
    total[0] += min(n, MAX_TERMS + 1)
    if total[0] > MAX_TERMS:
        raise OverflowError
    return min(n, MAX_TERMS + 1)


def _power_terms(base: int, exponent: Any) -> int:
    """Terms of (a sum of ``base`` terms)^k expanded: C(k + base − 1, base − 1) for a whole k."""
    if base == 1:
        return 1
    try:
        k = abs(evaluate(exponent))
    except AnswerParseError:
        return 1                          # a symbolic exponent: expand() leaves the power alone
    if k != int(k) or k > MAX_TERMS:
        return 1 if k != int(k) else MAX_TERMS + 1
    return min(math.comb(int(k) + base - 1, base - 1), MAX_TERMS + 1)


def within_budget(node: Any) -> bool:
    """May sympy be given this node? Literals of at most MAX_LITERAL_DIGITS digits and exponent
    MAX_LITERAL_EXPONENT, and at most MAX_TERMS terms once expanded, in any thread."""
    try:
        _terms(node, [0])
    except (OverflowError, RecursionError):
        return False
    return True


def equivalent(a: Any, b: Any, variables: tuple[str, ...] = (), domains: dict[str, str] | None = None) -> tuple[bool, str]:
    """Are scalar nodes ``a`` (the student's) and ``b`` (the key's) the same expression?

    domains: a variable's domain ("positive", the default; "real"; "negative").
    Returns (verdict, how): how is "symbolically", "numerically", "as a decimal approximation", or
    "undecided" (not equivalent: no sample point where both are defined, and no proof).
    sympy is asked only when both are within_budget (see the module docstring for who decides).
    """
    return _equivalent(a, b, tuple(variables), tuple(sorted((domains or {}).items())))


@lru_cache(maxsize=8192)
def _equivalent(a: Any, b: Any, variables: tuple[str, ...], domains: tuple[tuple[str, str], ...]) -> tuple[bool, str]:
    # nodes are tuples: a class whose students type the same forms is checked once per form
    approximate = numeric.has_decimal(a) or numeric.has_decimal(b)
    num = numeric.verdict(a, b, variables, dict(domains), approximate)
    if num is False:
        return False, "numerically"
    if within_budget(a) and within_budget(b):
        proof = _sympy_verdict(unparse(a), unparse(b), a, b, variables, domains)
        if proof is True:
            return True, "symbolically"
        if proof is False and not approximate:
            return False, "symbolically"
    if num is None:
        return False, "undecided"
    if not approximate:
        # no proof either way: the agreement must hold beyond float rounding (interval arithmetic)
        num = numeric.verdict(a, b, variables, dict(domains), approximate, rigorous=True)
        if not num:
            return False, "numerically" if num is False else "undecided"
    return True, "as a decimal approximation" if approximate else "numerically"


def assumed_positive(a: Any, b: Any, variables: tuple[str, ...], domains: dict[str, str] | None = None) -> tuple[str, ...]:
    """The variables an equivalence took as positive (the default domain) when that decided it: the
    two differ somewhere once those variables may take either sign (sqrt(x^2) and x). () when the
    sign decides nothing, so feedback mentions the assumption only where it mattered."""
    return _assumed_positive(a, b, tuple(variables), tuple(sorted((domains or {}).items())))


@lru_cache(maxsize=8192)
def _assumed_positive(a: Any, b: Any, variables: tuple[str, ...], domains: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    declared = dict(domains)
    positive = tuple(v for v in variables if declared.get(v, "positive") == "positive")
    if not positive:
        return ()
    widened = declared | {v: "real" for v in positive}
    return positive if numeric.verdict(a, b, variables, widened) is False else ()


def clear_caches() -> None:
    """Forget every verdict remembered (tests and benchmarks that time a first sight)."""
    for cached in (_equivalent, _sympy_verdict, _assumed_positive):
        cached.cache_clear()
