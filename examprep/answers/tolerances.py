"""A part's tolerance as array bounds (vectorised Tolerance.bound, float noise included), the
rule in the words a student reads, and what checking a part needs that depends only on the part
and the tolerance (prepared once per part: a class of 10,000 students shares it)."""
from __future__ import annotations

import numpy as np

from examprep.answers.result import to_array
from examprep.problem import EXACT_RTOL, Misconception, Part, Tolerance, float_noise

def rule_text(part: Part, tolerance: Tolerance | None = None) -> str:
    """The part's checking rule in plain words, as shown to the student."""
    tol = tolerance or part.tolerance
    if part.kind == "choice":
        return "the one correct choice"
    if part.kind == "written":
        return "marked by hand against the rubric"
    if part.kind == "shapes" or part.tensor_shape:
        return "exactly (whole numbers)"
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
            want = to_array(part.expected)
        except (TypeError, ValueError):
            want = np.zeros(0)
        finite = want[np.isfinite(want)]
        if finite.size and np.any(bounds(Tolerance("sigfigs", tol.value, 0.0), finite) < tol.atol):
            text += f" (or ±{tol.atol:g}, whichever is looser)"
    return ("each entry " + text) if part.kind in ("vector", "matrix") else text


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
    return within(got, want, slack(bounds(tol, want, integer), want, integer))


def scalar_ok(tol: Tolerance, got: float, want: float, integer: bool) -> bool:
    if integer and tol.rule == "exact":
        return got == want
    return tol.accepts(got, want)


class Prepared:
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
            self.want = to_array(part.expected)
            self.shape = tuple(part.shape) if part.shape else self.want.shape
            self.has_inf = bool(np.any(np.isinf(self.want)))
            self.want_ok_bounds = slack(bounds(tol, self.want, integer), self.want, integer)
            for m in part.misconceptions:
                try:
                    mv = to_array(m.value)
                except (TypeError, ValueError):
                    self.misconceptions.append((m, None, None))
                    continue
                self.misconceptions.append((m, mv, slack(bounds(tol, mv, integer), mv, integer)))


_PREPARED: dict[int, tuple[Part, Tolerance, Prepared]] = {}


def prepared(part: Part, tol: Tolerance) -> Prepared:
    hit = _PREPARED.get(id(part))
    if hit is not None and hit[0] is part and hit[1] == tol:
        return hit[2]
    prep = Prepared(part, tol)
    if len(_PREPARED) > 50_000:
        _PREPARED.clear()
    _PREPARED[id(part)] = (part, tol, prep)     # holding the part keeps its id from being reused
    return prep


def slack(b: np.ndarray, want: np.ndarray, integer: bool) -> np.ndarray:
    """The bounds plus float noise (Tolerance.accepts): a few ulps of max(|expected|, bound)."""
    if integer:
        return b
    with np.errstate(invalid="ignore"):
        scale = np.maximum(np.where(np.isfinite(want), np.abs(want), 0.0), b)
    return b + float_noise(1.0) * scale


def within(got: np.ndarray, want: np.ndarray, limit: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        ok = np.abs(got - want) <= limit
    if not ok.all():
        ok |= np.isinf(got) & np.isinf(want) & (np.sign(got) == np.sign(want))
    return ok
