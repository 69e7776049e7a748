"""Rounding too coarsely, one rule for a number and for every entry of a vector or matrix.

Under a "sigfigs:N" rule an answer (or entry) is *rounded to k figures* (k < N) when it has k
significant figures and lies within half a unit in the k-th figure of the expected value (either
way at a tie: 1.2 and 1.3 are both 1.25 rounded to 2). It earns what any answer outside the rule
earns (nothing for that entry), and the feedback says so once, naming the figures: "entries 1, 3
rounded to 2 significant figures; give 3".

The penalty counts once per chain and per rounding habit: a part that depends (``Part.depends_on``,
through any number of steps) on a part already docked for rounding to k figures is not docked again
for entries rounded to k figures or more. Those entries, the expected value or the value carried
forward from the student's own answers rounded to the figures written, earn the carried-forward
credit. An entry rounded coarser than the chain was docked at (1 figure after a docking at 2) is a
new rounding: docked, and from then on the chain's figures are the coarser ones (RoundingChain keeps,
per problem, where the rounding was counted and at how many figures).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable, NamedTuple

import numpy as np

from examprep.problem import Part, Tolerance


def rounded_figures(tol: Tolerance, got: Any, want: Any, where: Any = True) -> np.ndarray:
    """Per entry of ``got`` (same shape as ``want``), the figures k < N it was rounded to, counted as
    its shortest decimal shows them ("1e+06" and "1.0" read as 1); 0 where it is not a coarser
    rounding of ``want`` (or the rule is not "sigfigs:N").
    ``where``: the entries to look at (the others are 0), e.g. those outside the rule."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    out = np.zeros(got.shape, dtype=int)
    if tol.rule != "sigfigs" or got.shape != want.shape:
        return out
    n = int(tol.value)
    with np.errstate(all="ignore"):     # only entries within half a unit of the first figure can be rounding
        size = np.abs(want)
        first = 0.5 * 10.0 ** np.floor(np.log10(np.where(size > 0, size, 1.0)))
        look = (np.broadcast_to(where, got.shape) & (got != 0) & (size > 0) & np.isfinite(got) & np.isfinite(want)
                & (np.abs(got - want) <= first * (1 + 1e-9)))
    for idx in zip(*np.nonzero(np.atleast_1d(look))):
        idx = idx[:got.ndim]
        out[idx] = _figures(tol, float(got[idx]), float(want[idx]), n)
    return out


@lru_cache(maxsize=None)
def _to(k: int) -> Tolerance:
    return Tolerance("sigfigs", k, 0.0)


def _figures(tol: Tolerance, got: float, want: float, n: int) -> int:
    if tol.accepts(got, want):
        return 0                                   # as precise as the rule asks: not rounded too coarsely
    for k in range(1, n):
        if float(f"{got:.{k}g}") == got and _to(k).accepts(got, want):    # k figures written, k figures right
            return k
    return 0


def figures_text(ks: Any, n: int, counted_in: str = "") -> str:
    """"rounded to 2 significant figures; give 3" for the figures ``ks`` (the nonzero ones count;
    ``n`` 0: without "; give N"); ``counted_in``: the part where this chain's rounding was already
    docked, said after the figures."""
    found = sorted({int(k) for k in np.ravel(ks) if k})
    words = str(found[-1]) if len(found) == 1 else ", ".join(map(str, found[:-1])) + f" or {found[-1]}"
    counted = f", as in {counted_in}, where the rounding was already counted" if counted_in else ""
    give = f"; give {n}" if n else ""
    return f"rounded to {words} significant figure{'s' if found[-1] > 1 else ''}{counted}{give}"


def mistake_text(explanation: str, ks: Any, n: int) -> str:
    """A known mistake's explanation where the answer is also the right value rounded to the figures
    ``ks``: the mistake is named (it wins), and the feedback says why the rounding could not be told from it."""
    return (f"{explanation.rstrip('.')} (also the right value {figures_text(ks, 0)}: too few figures to tell "
            f"the two apart; give {n})")


def counted_text(counted_in: str, credit: float) -> str:
    """The feedback of a part excused for rounding: where the rounding was already counted."""
    share = "" if credit >= 1 else f" ({credit:.0%} credit)"
    return (f"rounded, as in {counted_in}, where the rounding was already counted (once per chain): "
            f"error carried forward{share}")


class Counted(NamedTuple):
    """Where a part's chain was already docked for rounding: ``part``, the first part docked at the
    chain's coarsest figures, and ``figures``, those figures (the fewest docked so far). Entries of
    a later part rounded to ``figures`` or more are not docked again; coarser ones are."""

    part: str
    figures: int


class RoundingChain:
    """Where, in one problem, rounding too coarsely was already docked. Grade the parts in order:
    ``counted_for(part)`` before checking one, ``after(part, result)`` once it is checked."""

    def __init__(self, parts: Iterable[Part]) -> None:
        self.depends_on = {p.id: tuple(p.depends_on) for p in parts}
        self.docked: dict[str, int] = {}        # part id -> the figures it was docked at, in grading order

    def counted_for(self, part: Part) -> Counted | None:
        """The docked parts ``part`` depends on, through any number of steps, as one Counted (the
        coarsest figures among them); None when none."""
        ancestors: set[str] = set()
        todo = list(part.depends_on)
        while todo:
            d = todo.pop()
            if d not in ancestors:
                ancestors.add(d)
                todo.extend(self.depends_on.get(d, ()))
        docked = [(k, d) for d, k in self.docked.items() if d in ancestors]
        if not docked:
            return None
        k = min(k for k, _ in docked)
        return Counted(next(d for kd, d in docked if kd == k), k)

    def after(self, part: Part, result: Any) -> None:
        """Record ``part`` as docked where its result was (``rounded``: the figures it was docked at)."""
        k = int(getattr(result, "rounded", 0) or 0)
        if k:
            self.docked[part.id] = k
