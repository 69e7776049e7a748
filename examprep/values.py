"""How numbers are rounded for people and cleaned of float noise, once for every output.

``rounded`` is the one rounding rule under every output's number formatter (Typst, Markdown, the
terminal, grading reports): a whole number is written plainly, anything else to a number of
significant figures. Each output then writes the result its own way (Typst's ×10^, a terminal's
plain text) and decides how to show what is not a finite number.

``snap`` is the one float-noise snapper: round-off noise of an exact zero (−2.8e−17 where a
gradient cancels) becomes 0, so keys and sheets show 0.
"""
from __future__ import annotations

import math
from typing import Any

NOISE_RELATIVE = 1e-12       # an entry this small relative to its array's largest magnitude is noise
NOISE_ABSOLUTE = 1e-13       # and so is any entry this small


def rounded(x: float, digits: int) -> str:
    """A finite number as a person writes it: a whole number plainly (below 10¹⁵), else to
    ``digits`` significant figures in Python's g format ("0.1235", "4.54e-05")."""
    f = float(x)
    if f == int(f) and abs(f) < 1e15:
        return str(int(f))
    return f"{f:.{digits}g}"


def fmt_number(x: Any, digits: int = 6) -> str:
    """A number as a person writes it: integers plainly, floats to ``digits`` significant figures."""
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int):
        return str(x)
    if isinstance(x, str):
        return x
    if x is None:
        return "-∞"      # the only undefined value we store: a masked score
    f = float(x)
    if math.isinf(f):
        return "-∞" if f < 0 else "∞"
    if math.isnan(f):
        return "undefined"
    return rounded(snap(f), digits)


def latex_number(x: float, digits: int = 4) -> str:
    """A finite number as the documents print a value (statement, worked solution and answers
    alike): rounded() to ``digits`` significant figures after snap(), an exponent as LaTeX
    (4.54 \\times 10^{-5}, not 4.54e-05). The decimal point is the renderer's to localise."""
    s = rounded(snap(x), digits)
    if "e" in s:
        mantissa, exponent = s.split("e")
        s = rf"{mantissa} \times 10^{{{int(exponent)}}}"
    return s


_PLAIN = {float, int}


def flat_floats(value: Any) -> tuple[list[float], tuple[int, ...]] | None:
    """A number or regular nested lists of numbers (int or float, not bool) as its entries in row-major
    order and its shape, in plain Python (a generator's small answers: cheaper than numpy); None for
    anything else (text, None, a bool, a ragged list, numpy values), which callers hand to numpy."""
    t = type(value)
    if t is float or t is int:
        return [float(value)], ()
    if t is not list:
        return None
    if not value:
        return [], (0,)
    if set(map(type, value)) <= _PLAIN:           # every entry an int or a float (the loop in C)
        return list(map(float, value)), (len(value),)
    rows = [flat_floats(v) for v in value]
    if rows[0] is None or not rows[0][1] or any(r is None or r[1] != rows[0][1] for r in rows):
        return None
    return [x for r in rows for x in r[0]], (len(value), *rows[0][1])


def _nested(flat: list[float], shape: tuple[int, ...]) -> Any:
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return flat
    step = len(flat) // shape[0] if shape[0] else 0
    return [_nested(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def snap_flat(value: Any, found: tuple[list[float], tuple[int, ...]], *, relative: float = NOISE_RELATIVE,
              absolute: float = NOISE_ABSOLUTE) -> tuple[Any, tuple[list[float], tuple[int, ...]]]:
    """snap() of a value whose flat_floats ``found`` the caller has: the snapped value and its
    flat_floats (``value`` and ``found`` themselves where nothing is noise)."""
    flat, shape = found
    if not math.isfinite(sum(flat)) and not all(map(math.isfinite, flat)):    # a finite sum: all finite
        return value, found
    scale = max(map(abs, flat), default=0.0)
    cut = max(relative * scale, absolute)
    if min(map(abs, flat), default=cut) >= cut or not any(x != 0 and abs(x) < cut for x in flat):
        return value, found
    flat = [0.0 if abs(x) < cut else x for x in flat]
    return _nested(flat, shape), (flat, shape)


def snap(value: Any, *, relative: float = NOISE_RELATIVE, absolute: float = NOISE_ABSOLUTE) -> Any:
    """Round-off noise to exact zeros: an entry below ``relative`` times its array's largest
    magnitude, or below ``absolute``, is 0. A number, or nested lists of numbers; anything else
    (text, a list holding a non-finite value or None) is returned as it is, and so is a value with
    no noise. A value that changed comes back as floats (a 0-d value as one float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, list)):
        return value
    found = flat_floats(value)
    if found is not None:           # the common case, in plain Python: the same rule as below
        return snap_flat(value, found, relative=relative, absolute=absolute)[0]
    import numpy as np

    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return value
    if arr.dtype != float or not np.all(np.isfinite(arr)):
        return value
    scale = float(np.max(np.abs(arr), initial=0.0))
    tiny = (np.abs(arr) < relative * scale) | (np.abs(arr) < absolute)
    if not np.any(tiny & (arr != 0)):
        return value
    arr = np.where(tiny, 0.0, arr)
    return float(arr) if arr.ndim == 0 else arr.tolist()


def allclose(a: Any, b: Any, *, rtol: float = 1e-05, atol: float = 1e-08) -> bool:
    """np.allclose(a, b, rtol, atol) for a generator's checks of its tiny values, in plain Python: every
    entry |a − b| ≤ atol + rtol·|b|, infinities close only to themselves, NaN to nothing — numpy's rule
    and its float operations, without its ~90 µs a call. Numbers, nested lists or numpy arrays of the
    same shape; anything else (broadcasting, bools, complex numbers) goes to numpy itself."""
    fa, fb = _entries(a), _entries(b)
    if fa is None or fb is None or fa[1] != fb[1]:
        import numpy as np

        return bool(np.allclose(a, b, rtol=rtol, atol=atol))
    isfinite = math.isfinite
    for x, y in zip(fa[0], fb[0]):
        if x == y:
            continue
        if not (isfinite(x) and isfinite(y) and abs(x - y) <= atol + rtol * abs(y)):
            return False
    return True


def _entries(value: Any) -> tuple[list, tuple[int, ...]] | None:
    """A number, nested lists or a numpy array as (entries in row-major order, shape), every entry an int
    or a float; None otherwise."""
    if hasattr(value, "dtype") and hasattr(value, "ravel"):     # a numpy array or scalar (no numpy import here)
        if value.dtype.kind != "f":         # integers, bools and the rest: numpy's own promotion rules
            return None
        return value.ravel().tolist(), value.shape
    return flat_floats(value)
