"""How numbers are rounded for people and cleaned of float noise, once for every output.

``rounded`` is the one rounding rule under every output's number formatter (Typst, Markdown, the
terminal, grading reports): a whole number is written plainly, anything else to a number of
significant figures. Each output then writes the result its own way (Typst's ×10^, a terminal's
plain text) and decides how to show what is not a finite number.

``snap`` is the one float-noise snapper: round-off noise of an exact zero (−2.8e−17 where a
gradient cancels) becomes 0, so keys and sheets show 0.
"""
from __future__ import annotations

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


def snap(value: Any, *, relative: float = NOISE_RELATIVE, absolute: float = NOISE_ABSOLUTE) -> Any:
    """Round-off noise to exact zeros: an entry below ``relative`` times its array's largest
    magnitude, or below ``absolute``, is 0. A number, or nested lists of numbers; anything else
    (text, a list holding a non-finite value or None) is returned as it is, and so is a value with
    no noise. A value that changed comes back as floats (a 0-d value as one float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, list)):
        return value
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
