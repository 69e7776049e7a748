"""Numeric evidence that two expressions are equal: both evaluated at sample points of their
variables, in interval arithmetic, so that float rounding never passes for a difference and never
hides one.

At each point both sides are first evaluated in floats (the size rules of
examprep.answers.parse.evaluate apply, and a side that is undefined there, such as the log of a
negative number, skips the point). Floats decide the point when they clearly can: a difference over
FLOAT_CLEAR of the largest intermediate value is no rounding, and a decimal's tolerance far above
the rounding is resolved in floats (ties excepted). Otherwise — and, for exact forms, to confirm an
agreement that sympy could not prove — each side is enclosed in an interval (mpmath.iv, a rigorous
bound on the rounding) at 50 significant digits, then 200, then 700 while the answer is still open:
  exact forms (no decimal typed on either side): the point shows a difference when the interval of
      a − b excludes 0 — a proof, not a guess; it shows agreement when that interval is narrower
      than 1e-25 of the largest intermediate value (so a cancellation to 0 agrees with 0);
  a decimal typed on either side (0.333333333333333, 2.0*x): the two agree where |a − b| is at most
      APPROX_RTOL of the key's value |b| (a tie included): "accepted as a decimal approximation".
Infinite values (a key of inf) compare in the extended reals: ∞ = ∞ = 2·∞, −∞ ≠ ∞.

Sample points lie in each variable's domain: "positive" (the default, as probabilities and targets
are), "negative" or "real" (both signs); values in (0.1, 0.9) in size, then (1.1, 9.9) where too
few points of the first range are defined (x − 2 > 0 needs x > 2). The points are drawn from a
seed (the key's text), so a verdict is the same on every run and machine.
"""
from __future__ import annotations

import math
import random
import threading
from typing import Any

from examprep.answers.evaluate import call_function, checked, evaluate, unparse
from examprep.answers.tokens import AnswerParseError

POINTS = 6
APPROX_RTOL = 1e-8
PRECISIONS = (50, 200, 700)        # significant digits of the interval evaluation, tried in turn
EXACT_AGREEMENT = 1e-25            # an interval of a − b this narrow, relative to the largest intermediate, agrees

_LOCAL = threading.local()


def _ctx(dps: int) -> Any:
    """This thread's own mpmath interval context (mpmath's global one is shared by all threads)."""
    ctx = getattr(_LOCAL, "ctx", None)
    if ctx is None:
        from mpmath.ctx_iv import MPIntervalContext

        ctx = _LOCAL.ctx = MPIntervalContext()
    ctx.dps = dps
    return ctx


def has_decimal(node: Any) -> bool:
    """Was a decimal typed anywhere in the node (0.5, 2.0, 1E-3)? An integer or 50% is exact."""
    kind = node[0]
    if kind == "num":
        return any(c in node[2] for c in ".eE")
    if kind in ("const", "var"):
        return False
    if kind == "call":
        return any(has_decimal(a) for a in node[2])
    return any(has_decimal(x) for x in node[1:])


def _has_inf(node: Any) -> bool:
    kind = node[0]
    if kind == "const":
        return node[1] in ("inf", "∞")
    if kind in ("num", "var"):
        return False
    if kind == "call":
        return any(_has_inf(a) for a in node[2])
    return any(_has_inf(x) for x in node[1:])


def points(variables: tuple[str, ...], domains: dict[str, str] | None, seed: str, wide: bool = False) -> list[dict[str, float]]:
    """POINTS sample points: each variable in its domain, |value| in (0.1, 0.9), or (1.1, 9.9) when ``wide``.
    A "real" variable is negative at every other point, so both signs are always tried."""
    rng = random.Random(seed + ("/wide" if wide else ""))
    out = []
    for k in range(POINTS):
        env = {}
        for v in variables:
            size = (1.1 + 8.8 * rng.random()) if wide else (0.1 + 0.8 * rng.random())
            domain = (domains or {}).get(v, "positive")
            negative = domain == "negative" or domain == "real" and (k + len(env)) % 2 == 1
            env[v] = -size if negative else size
        out.append(env)
    return out


def _interval(node: Any, env: dict[str, float], ctx: Any, scale: list) -> Any:
    """The node's value enclosed in an interval of ``ctx``; scale[0] becomes the largest magnitude
    of any intermediate value (the size the rounding of a cancellation is relative to)."""
    value = _node_interval(node, env, ctx, scale)
    scale[0] = _raw_max(scale[0], *_magnitudes(value))
    return value


def _node_interval(node: Any, env: dict[str, float], ctx: Any, scale: list) -> Any:
    kind = node[0]
    if kind == "num":
        return ctx.mpf(node[2])
    if kind == "const":
        return ctx.e if node[1] == "e" else ctx.pi
    if kind == "var":
        return ctx.mpf(env[node[1]])
    if kind == "neg":
        return -_interval(node[1], env, ctx, scale)
    if kind == "pct":
        return _interval(node[1], env, ctx, scale) / 100
    if kind == "call":
        return _call(node[1], _interval(node[2][0], env, ctx, scale), ctx)
    a = _interval(node[1], env, ctx, scale)
    if kind == "pow":
        exponent = node[2]
        if exponent[0] == "num" and exponent[2].isdigit():
            return a ** int(exponent[2])           # an integer power: defined for a negative base too
        if exponent[0] == "neg" and exponent[1][0] == "num" and exponent[1][2].isdigit():
            return 1 / a ** int(exponent[1][2])
        return a ** _interval(exponent, env, ctx, scale)
    b = _interval(node[2], env, ctx, scale)
    if kind == "add":
        return a + b
    if kind == "sub":
        return a - b
    if kind == "mul":
        return a * b
    if kind == "div":
        return a / b
    raise ValueError(kind)


def _call(f: str, x: Any, ctx: Any) -> Any:
    if f == "exp":
        return ctx.exp(x)
    if f in ("ln", "log"):
        return ctx.log(x)
    if f == "log10":
        return ctx.log(x) / ctx.log(10)
    if f == "log2":
        return ctx.log(x) / ctx.log(2)
    if f == "sqrt":
        return ctx.sqrt(x)
    if f == "sin":
        return ctx.sin(x)
    if f == "cos":
        return ctx.cos(x)
    if f == "tan":
        return ctx.tan(x)
    if f == "tanh":
        return 1 - 2 / (ctx.exp(2 * x) + 1)
    if f == "sigmoid":
        return 1 / (1 + ctx.exp(-x))
    if f == "abs":
        return abs(x)
    raise ValueError(f)


# Endpoints are compared as mpmath's raw binary floats (sign, mantissa, exponent, bits): no objects
# are built, which keeps a check of a class's answers quick.

def _magnitudes(iv: Any) -> tuple[tuple, tuple]:
    from mpmath.libmp import mpf_abs

    lo, hi = iv._mpi_
    return mpf_abs(lo), mpf_abs(hi)


def _raw_max(*values: tuple) -> tuple:
    from mpmath.libmp import mpf_lt

    best = values[0]
    for v in values[1:]:
        if mpf_lt(best, v):
            best = v
    return best


def _point_verdict(a: Any, b: Any, env: dict[str, float], approximate: bool) -> bool | None:
    """False: the two differ at this point; True: they agree; None: it cannot be told here."""
    from mpmath.libmp import finf, fninf, fnan, fzero, from_float, mpf_gt, mpf_lt, mpf_mul, mpf_neg, mpf_sub, round_up

    for dps in PRECISIONS:
        ctx = _ctx(dps)
        scale = [fzero]
        try:
            x, y = _interval(a, env, ctx, scale), _interval(b, env, ctx, scale)
            lo, hi = (x - y)._mpi_
            size = _raw_max(*_magnitudes(y))            # the key's value: "relative to the exact value"
        except (ArithmeticError, ValueError, TypeError, AttributeError):
            return None                      # complex or undefined in the interval: no evidence here
        if any(v in (finf, fninf, fnan) for v in (lo, hi, scale[0])):
            return None
        if approximate:
            allowed = mpf_mul(from_float(APPROX_RTOL), size, 60, round_up)
            if mpf_gt(lo, allowed) or mpf_lt(hi, mpf_neg(allowed)):
                return False
            if not mpf_lt(lo, mpf_neg(allowed)) and not mpf_gt(hi, allowed):
                return True
        elif mpf_gt(lo, fzero) or mpf_lt(hi, fzero):
            return False                     # the enclosure of a − b excludes 0: a proof of a difference
        width = mpf_sub(hi, lo, 60, round_up)
        if not mpf_gt(width, mpf_mul(from_float(EXACT_AGREEMENT), scale[0], 60)):
            return True                      # equal to 25 digits of the largest intermediate value
    return None


_EPS = 2.0 ** -52
FLOAT_NOISE = 1e-13       # float rounding of ≤ 200 operations, relative to the largest intermediate value
FLOAT_CLEAR = 1e-7        # a difference this large, relative to it, is no rounding: floats tell at once


def _float(node: Any, env: dict[str, float], scale: list) -> float:
    """parse.evaluate's value and refusals, and scale[0] = the largest |intermediate value|."""
    kind = node[0]
    if kind in ("num", "const", "var"):
        value = evaluate(node, env)
    elif kind == "neg":
        value = -_float(node[1], env, scale)
    elif kind == "pct":
        value = _float(node[1], env, scale) / 100.0
    elif kind == "call":
        value = checked(call_function(node[1], _float(node[2][0], env, scale)))
    else:
        a, b = _float(node[1], env, scale), _float(node[2], env, scale)
        value = evaluate((kind, ("num", a, ""), ("num", b, "")))       # the operation with parse's size rules
    if not math.isinf(value):
        scale[0] = max(scale[0], abs(value))
    return value


def verdict(a: Any, b: Any, variables: tuple[str, ...], domains: dict[str, str] | None = None,
            approximate: bool | None = None, rigorous: bool = False) -> bool | None:
    """Do scalar nodes ``a`` (the student's) and ``b`` (the key's) agree numerically?

    True: they agree at every sample point where both are defined (at least one); False: they
    differ at one; None: no point tells (neither is defined at the same point).
    approximate: compare to APPROX_RTOL (default: when a decimal was typed on either side).
    Floats decide a point where they can: a difference over FLOAT_CLEAR of the largest intermediate
    value, or (approximate) a tolerance far above the float noise. Elsewhere, and everywhere when
    ``rigorous``, interval arithmetic decides (a difference it shows is a proof).
    """
    if approximate is None:
        approximate = has_decimal(a) or has_decimal(b)
    infinite = _has_inf(a) or _has_inf(b)
    agreed = 0
    for wide in (False, True):
        defined = 0
        for env in points(variables, domains, unparse(b), wide) if variables else [{}]:
            scale = [0.0]
            try:
                x, y = _float(a, env, scale), _float(b, env, scale)
            except AnswerParseError:
                continue
            defined += 1
            if infinite or math.isinf(x) or math.isinf(y):
                # ∞ enters only as itself (overflow is refused by the size rules): compare in floats
                if math.isinf(x) or math.isinf(y):
                    if x != y:
                        return False
                    agreed += 1
                elif abs(x - y) > (APPROX_RTOL if approximate else 1e-12) * abs(y):
                    return False
                else:
                    agreed += 1
                continue
            found = None if rigorous else _float_verdict(x, y, scale[0], approximate)
            if found is None:
                found = _point_verdict(a, b, env, approximate)
            if found is False:
                return False
            agreed += found is True
        if not variables or defined >= 2:
            break
    return True if agreed else None


def _float_verdict(x: float, y: float, scale: float, approximate: bool) -> bool | None:
    """What floats alone can tell at a point: False (differ), True (agree), None (ask the intervals)."""
    noise, d = FLOAT_NOISE * scale, abs(x - y)
    if approximate:
        allowed = APPROX_RTOL * abs(y)
        if noise > 1e-3 * allowed or abs(d - allowed) <= noise + 4 * _EPS * max(abs(x), abs(y)):
            return None                      # rounding is not far below the tolerance, or it is a tie
        return d <= allowed
    if d > FLOAT_CLEAR * scale:
        return False
    return True if d <= noise else None
