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

The principal branch: a square root, a log or a fractional power of a negative number has no real
value, so the points above skip it; yet two expressions that agree wherever both are real may
differ where only one is: sqrt((x-3)*(x-5)) and sqrt(x-3)*sqrt(x-5) agree for x ≥ 5, but for x < 3
the first is real and the second is i√(3−x)·i√(5−x) = −√((x−3)(x−5)). So when the real points
agree, both sides are also evaluated with complex principal values (√−a = i√a, log −a = log a + iπ,
a^b = e^(b·log a)) at the points where one side has a real value and the other has none: the
sample points skipped, and both sides of every root or pole of a branch argument (a radicand, a
log's argument, the base of a power that is not a whole number) along each name in its domain (a
point there where both sides are real is compared as a sample point: sqrt(x-30)*sqrt(x-50) is real
only beyond every sample point). A clear difference there (over FLOAT_CLEAR of the largest
intermediate value, in floats and again at 50 digits) is a difference. Where such a point exists
the two are real on different domains, and must be one function of principal values: points where
neither side is real are compared too (sqrt(x-3)/sqrt(x-5) is −i where sqrt((x-3)/(x-5)) is i, at
x = 4). Where none exists a point where neither side is real tells nothing (log((x+1)/(1-x)) and
-log((1-x)/(x+1)), real exactly for |x| < 1, stay equivalent although their principal values differ
by 2πi for x > 1); the names keep their domains (x stays positive), only intermediate values become complex; and a point
where an argument lies within BRANCH_NEAR of a branch point or of the cut (the negative axis, where
rounding could pick the other side) tells nothing.
"""
from __future__ import annotations

import cmath
import math
import random
import threading
from typing import Any

from examprep.answers.evaluate import ARITHMETIC, call_function, checked, evaluate, has_names, unparse
from examprep.answers.tokens import MAX_EXPONENT, MAX_MAGNITUDE, AnswerParseError

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
    if kind in ARITHMETIC:
        return ARITHMETIC[kind](a, b)
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


def _at_point(a: Any, b: Any, env: dict[str, float], floats: tuple[float, float, float], approximate: bool,
              rigorous: bool) -> bool | None:
    """One point's verdict: the floats (x, y, largest value) where they tell, else intervals."""
    found = None if rigorous else _float_verdict(*floats, approximate)
    return _point_verdict(a, b, env, approximate) if found is None else found


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
    not_real: list[dict[str, float]] = []          # points where a side has no real value
    for wide in (False, True):
        defined = 0
        for env in points(variables, domains, unparse(b), wide) if variables else [{}]:
            scale = [0.0]
            try:
                x, y = _float(a, env, scale), _float(b, env, scale)
            except AnswerParseError:
                not_real.append(env)
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
            found = _at_point(a, b, env, (x, y, scale[0]), approximate, rigorous)
            if found is False:
                return False
            agreed += found is True
        if not variables or defined >= 2:
            break
    roots = _root_points(a, b, variables, domains, points(variables, domains, unparse(b))[0]) \
        if variables and not infinite else []
    for env in roots:                  # beside a radicand's root: real on both sides, as a sample point
        scale = [0.0]
        try:
            x, y = _float(a, env, scale), _float(b, env, scale)
        except AnswerParseError:
            continue
        found = _at_point(a, b, env, (x, y, scale[0]), approximate, rigorous)
        if found is False:
            return False
        agreed += found is True
    if agreed and not infinite and not rigorous and _differ_on_principal_branch(a, b, not_real + roots):
        return False
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


# ----------------------------------------------------------------------------- the principal branch

BRANCH_NEAR = 1e-9          # an argument this close to a branch point or the cut (relative to the largest value): no evidence
BRANCH_DIGITS = 50          # the digits a difference found in floats is confirmed at
ROOT_GRID = tuple(0.05 * 1.25 ** k for k in range(40))       # |value| of a name scanned for a branch argument's roots
MAX_BRANCH_POINTS = 16
_BRANCHED = ("sqrt", "ln", "log", "log10", "log2")


class _NoValue(Exception):
    """No principal value here, or one too close to a branch point or cut to be trusted."""


def _whole_exponent(node: Any) -> int | None:
    """The exponent when it is a whole number as typed (x^2, x^-1): defined for any base."""
    if node[0] == "neg":
        n = _whole_exponent(node[1])
        return None if n is None else -n
    return int(node[2]) if node[0] == "num" and node[2].isdigit() else None


def branch_arguments(node: Any, out: set | None = None) -> set:
    """The nodes with names whose sign decides a principal value: radicands, logs' arguments and the
    bases of powers that are not whole numbers."""
    out = set() if out is None else out
    kind = node[0]
    if kind in ("num", "const", "var"):
        return out
    if kind == "call":
        if node[1] in _BRANCHED and has_names(node[2][0]):
            out.add(node[2][0])
        return branch_arguments(node[2][0], out)
    if kind == "pow" and _whole_exponent(node[2]) is None and has_names(node[1]):
        out.add(node[1])
    for child in node[1:]:
        branch_arguments(child, out)
    return out


class _Floats:
    """Principal values in Python floats and complex numbers (a float stays a float while it can)."""

    near = BRANCH_NEAR

    @staticmethod
    def real(z: Any) -> bool:
        return not isinstance(z, complex)

    @staticmethod
    def number(node: Any) -> Any:
        return float(node[1])

    @staticmethod
    def name(value: float) -> Any:
        return float(value)

    @staticmethod
    def constant(name: str) -> Any:
        return math.e if name == "e" else math.pi

    @staticmethod
    def sqrt(z: Any) -> Any:
        if isinstance(z, complex):
            return cmath.sqrt(z)
        return math.sqrt(z) if z >= 0 else complex(0.0, math.sqrt(-z))

    @staticmethod
    def log(z: Any) -> Any:
        if isinstance(z, complex):
            return cmath.log(z)
        return math.log(z) if z > 0 else complex(math.log(-z), math.pi)

    @staticmethod
    def call(f: str, z: Any) -> Any:
        return getattr(cmath if isinstance(z, complex) else math, f)(z)


class _Digits:
    """The same principal values at BRANCH_DIGITS digits (mpmath), to confirm a difference."""

    near = 1e-30

    def __init__(self) -> None:
        from mpmath.ctx_mp import MPContext

        self.ctx = MPContext()
        self.ctx.dps = BRANCH_DIGITS

    def real(self, z: Any) -> bool:
        return not isinstance(z, self.ctx.mpc)

    def number(self, node: Any) -> Any:
        try:
            return self.ctx.mpf(node[2])             # the decimal as typed, exactly
        except (ValueError, TypeError):
            return self.ctx.mpf(node[1])

    def name(self, value: float) -> Any:
        return self.ctx.mpf(value)

    def constant(self, name: str) -> Any:
        return self.ctx.e if name == "e" else self.ctx.pi

    def sqrt(self, z: Any) -> Any:
        return self.ctx.sqrt(z)

    def log(self, z: Any) -> Any:
        return self.ctx.log(z)

    def call(self, f: str, z: Any) -> Any:
        return getattr(self.ctx, f)(z)


def _off_the_cut(z: Any, lib: Any, scale: list) -> None:
    """Refuse an argument of sqrt, log or a fractional power at a branch point (0) or on the cut
    (the negative axis) up to rounding: which side it lies on cannot be told."""
    limit = lib.near * scale[0]
    if float(abs(z)) <= limit or not lib.real(z) and float(z.real) < 0 and abs(float(z.imag)) <= limit:
        raise _NoValue


def _principal(node: Any, env: dict[str, float], lib: Any, scale: list) -> Any:
    value = _principal_node(node, env, lib, scale)
    size = float(abs(value))
    if not size <= MAX_MAGNITUDE:                # NaN, ∞ or past the size rules
        raise _NoValue
    scale[0] = max(scale[0], size)
    return value


def _principal_node(node: Any, env: dict[str, float], lib: Any, scale: list) -> Any:
    kind = node[0]
    if kind == "num":
        return lib.number(node)
    if kind == "const":
        if node[1] in ("inf", "∞"):
            raise _NoValue
        return lib.constant(node[1])
    if kind == "var":
        return lib.name(env[node[1]])
    if kind == "neg":
        return -_principal(node[1], env, lib, scale)
    if kind == "pct":
        return _principal(node[1], env, lib, scale) / 100
    if kind == "call":
        f, x = node[1], _principal(node[2][0], env, lib, scale)
        if f in _BRANCHED:
            _off_the_cut(x, lib, scale)
            if f == "sqrt":
                return lib.sqrt(x)
            base = {"log10": 10, "log2": 2}.get(f)
            return lib.log(x) / lib.log(lib.name(base)) if base else lib.log(x)
        if f == "abs":
            return abs(x)
        if f in ("exp", "sigmoid", "tanh"):
            power = {"exp": x, "sigmoid": -x, "tanh": 2 * x}[f]
            if float(power.real) > 690:
                raise _NoValue
            ex = lib.call("exp", power)
            return ex if f == "exp" else 1 / (1 + ex) if f == "sigmoid" else (ex - 1) / (ex + 1)
        return lib.call(f, x)
    a = _principal(node[1], env, lib, scale)
    if kind == "pow":
        n = _whole_exponent(node[2])
        if n is not None:
            if abs(n) > MAX_EXPONENT or n < 0 and a == 0:
                raise _NoValue
            return a ** n if n >= 0 else 1 / a ** -n
        b = _principal(node[2], env, lib, scale)
        if float(abs(b)) > MAX_EXPONENT:
            raise _NoValue
        _off_the_cut(a, lib, scale)
        power = b * lib.log(a)
        if float(power.real) > 690:
            raise _NoValue
        return lib.call("exp", power)
    b = _principal(node[2], env, lib, scale)
    if kind not in ARITHMETIC or kind == "div" and b == 0:
        raise _NoValue
    return ARITHMETIC[kind](a, b)


def _principal_difference(a: Any, b: Any, env: dict[str, float], lib: Any) -> bool:
    """Do a and b clearly differ at env in principal values (False where either has none)?"""
    scale = [0.0]
    try:
        x, y = _principal(a, env, lib, scale), _principal(b, env, lib, scale)
        return float(abs(x - y)) > FLOAT_CLEAR * scale[0]
    except (_NoValue, ArithmeticError, ValueError, TypeError, AttributeError):
        return False


def _root_points(a: Any, b: Any, variables: tuple[str, ...], domains: dict[str, str] | None,
                 base: dict[str, float]) -> list[dict[str, float]]:
    """Points on both sides of each root or pole of a branch argument ((x-3)/(x-5): x = 3 and x = 5),
    along each of its names (the others as in ``base``), found where the argument changes sign on
    ROOT_GRID within the name's domain."""
    found: list[dict[str, float]] = []
    for g in sorted(branch_arguments(a) | branch_arguments(b), key=unparse):
        for v in variables:
            if not _uses(g, v):
                continue
            domain = (domains or {}).get(v, "positive")
            grid = {"positive": list(ROOT_GRID), "negative": [-t for t in reversed(ROOT_GRID)]}.get(
                domain, [-t for t in reversed(ROOT_GRID)] + list(ROOT_GRID))
            values = [(t, _real_value(g, {**base, v: t})) for t in grid]
            for (t1, g1), (t2, g2) in zip(values, values[1:]):
                if g1 is None or g2 is None or (g1 < 0) == (g2 < 0):
                    continue
                r = _bisect(g, base, v, t1, t2, g1 < 0)
                step = max(0.1 * abs(r), 0.01)
                for t in (r - step, r + step):
                    if domain == "positive" and t <= 0 or domain == "negative" and t >= 0:
                        t = r / 2
                    found.append({**base, v: t})
                if len(found) >= MAX_BRANCH_POINTS:
                    return found
    return found


def _uses(node: Any, name: str) -> bool:
    kind = node[0]
    if kind == "var":
        return node[1] == name
    if kind in ("num", "const"):
        return False
    if kind == "call":
        return _uses(node[2][0], name)
    return any(_uses(x, name) for x in node[1:])


def _real_value(node: Any, env: dict[str, float]) -> float | None:
    try:
        return _float(node, env, [0.0])
    except AnswerParseError:
        return None


def _bisect(g: Any, base: dict[str, float], v: str, lo: float, hi: float, lo_negative: bool) -> float:
    """A root of g along v between lo and hi, where g's sign changes (60 halvings, or until g has
    no real value at a midpoint)."""
    for _ in range(60):
        mid = (lo + hi) / 2
        value = _real_value(g, {**base, v: mid})
        if value is None:
            break
        if (value < 0) == lo_negative:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _differ_on_principal_branch(a: Any, b: Any, tried: list[dict[str, float]]) -> bool:
    """Do a and b clearly differ in principal values at a point tried (a sample point skipped, or
    one on either side of a branch argument's root or pole) where one has a real value and the
    other has none, or, when such a point exists (their real domains differ), where neither has
    one? Where the real domains are the same, only the real values count (log((x+1)/(1-x)) and
    -log((1-x)/(x+1)), both real exactly for |x| < 1). A difference found in floats is confirmed at
    BRANCH_DIGITS digits."""
    one_real, neither = [], []
    for env in tried:
        real = (_real_value(a, env) is not None, _real_value(b, env) is not None)
        if real[0] != real[1]:
            one_real.append(env)
        elif not real[0]:
            neither.append(env)
    digits = None
    for env in one_real + (neither if one_real else []):
        if _principal_difference(a, b, env, _Floats):
            digits = digits or _Digits()
            if _principal_difference(a, b, env, digits):
                return True
    return False
