"""The generators' framework: the random Stream (examprep.stream), the Draft a generator returns, the registry
decorator, and the checks build() applies (examprep.generators re-exports all of it).

A generator is a function ``(rng: Stream, difficulty: int, calculator_free: bool) -> Draft``;
``build`` turns it into a Problem stamped with (generator, version, seed, difficulty), retrying
with the next sub-stream when an instance is degenerate (all-equal scores, a misconception that
equals the answer within tolerance) — deterministically, so a seed always gives the same Problem.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable

import numpy as np

from examprep.document import Math, Matrix
from examprep.problem import Part, Problem, SolutionStep, float_noise
from examprep.solve.contract import Step, jsonable
from examprep.stream import Stream  # noqa: F401  (re-exported: the generators import it from here)
from examprep.values import flat_floats, snap, snap_flat


class Degenerate(Exception):
    """Raised by a generator when the drawn instance is not a good problem; build() redraws."""


@dataclass
class Draft:
    """What a generator returns; build() adds the generator's name, version, seed and difficulty."""

    title: str
    params: dict[str, Any]
    statement: list
    parts: list[Part]
    solution: list[SolutionStep]
    conventions: dict[str, str] = field(default_factory=dict)
    variant: str = ""      # the structural choice drawn (a short label), which item analysis groups by


@dataclass(frozen=True)
class Generator:
    name: str
    title: str
    syllabus: str
    version: int
    levels: tuple[int, ...]
    fn: Callable[..., Draft]
    calculator_free: bool = True
    requires: tuple[str, ...] = ()     # options the generator needs (e.g. "checkpoint"), given to fn as `options`
    requires_hint: str = ""            # how to get them, shown when they are missing
    figures: Callable[[Problem], list] | None = None     # the figures its worked solution draws (sheets render them)
    # the solve topic answer each part asks, where the part has no solve recipe saying so: part id →
    # (topic, answer), from the Problem (its params) alone, so that an old key's parts are linked too
    answers: Callable[[Problem], dict[str, tuple[str, str]]] | None = None


REGISTRY: dict[str, Generator] = {}


def generator(name: str, *, title: str, syllabus: str, version: int = 1, levels: tuple[int, ...] = (1, 2, 3),
              calculator_free: bool = True, requires: tuple[str, ...] = (), requires_hint: str = "",
              figures: Callable[[Problem], list] | None = None,
              answers: Callable[[Problem], dict[str, tuple[str, str]]] | None = None):
    """Register a generator function under ``name``. A generator with ``requires`` (say a trained
    checkpoint) is left out of load_all(), which serves the features that draw topics on their
    own (quiz, sheets, tests); get() and build() still find it. ``figures(problem)`` returns the
    figures its worked solution draws beside the numbers; ``answers(problem)`` the solve topic answer
    its parts ask (part id → (topic, answer)) where no ``solve:`` recipe says so."""
    def wrap(fn: Callable[..., Draft]) -> Callable[..., Draft]:
        REGISTRY[name] = Generator(name, title, syllabus, version, levels, fn, calculator_free, requires, requires_hint,
                                   figures, answers)
        return fn
    return wrap


_EXPECTED: Any = object()      # _differs' default: the part's own expected answer
_UNSET: Any = object()


class _Limits:
    """Per entry of an expected value, the largest |answer − entry| ``tolerance.accepts`` allows
    (None for a non-finite entry: only itself is right), each computed the first time a comparison
    reaches it — most mistakes differ at their first entry."""

    __slots__ = ("tolerance", "flat", "cache")

    def __init__(self, tolerance: Any, flat: list[float]):
        self.tolerance, self.flat, self.cache = tolerance, flat, [_UNSET] * len(flat)

    def exceeded_by(self, got: list[float]) -> bool:
        """True where some entry of ``got`` (finite, of the same length) is outside its limit."""
        cache, flat = self.cache, self.flat
        for i, g in enumerate(got):
            w, lim = flat[i], cache[i]
            if lim is _UNSET:
                if math.isfinite(w):
                    b = self.tolerance.bound(w)
                    lim = b + float_noise(max(abs(w), b))
                else:
                    lim = None
                cache[i] = lim
            if (g != w) if lim is None else abs(g - w) > lim:
                return True
        return False


def _limits(tolerance: Any, flat: list[float]) -> _Limits | None:
    """The _Limits of an expected value; None for a rule that reads the digits written
    ("sigfigs-strict"), which only ``accepts`` applies."""
    return None if tolerance.rule == "sigfigs-strict" else _Limits(tolerance, flat)


def _differs(part: Part, value: Any, expected: Any = _EXPECTED, flats: tuple | None = None,
             limits: _Limits | None = None) -> bool:
    """True when ``value`` is clearly different from the part's expected answer (or from ``expected``
    where given: an earlier mistake's value, checked with the part's tolerance). ``flats``: the two
    values' flat_floats, and ``limits`` the expected value's _limits, where the caller has them."""
    expected = part.expected if expected is _EXPECTED else expected
    if part.kind in ("choice",) or part.kind == "expression" and not isinstance(value, (int, float, list)):
        return value != expected
    got, want = flats or (flat_floats(value), flat_floats(expected))
    if got is not None and want is not None:       # plain numbers: the same rule as below, without numpy
        if got[1] != want[1]:
            return True
        if not math.isfinite(sum(got[0])) and not all(map(math.isfinite, got[0])):    # a finite sum: all finite
            return True
        if limits is not None:                     # Tolerance.accepts with its bounds computed once
            return limits.exceeded_by(got[0])
        accepts = part.tolerance.accepts
        return any(not accepts(g, w) for g, w in zip(got[0], want[0]))
    try:
        got = np.asarray(value, dtype=float)
        want = np.asarray(expected, dtype=float)
    except (TypeError, ValueError):
        return value != expected
    if got.shape != want.shape:
        return True
    if not np.all(np.isfinite(got)):
        return True
    return any(not part.tolerance.accepts(g, w) for g, w in zip(got.ravel(), want.ravel()))


def _identical(expected: Any, value: Any, flats: tuple | None = None) -> bool:
    """Equal up to float rounding: the mistake and the right method agree on this instance."""
    a, b = flats or (flat_floats(expected), flat_floats(value))
    if a is not None and b is not None:            # plain numbers: the same rule as below, without numpy
        return a[1] == b[1] and all(abs(x - y) <= 1e-9 * (1 + abs(x)) for x, y in zip(a[0], b[0]))
    try:
        a, b = np.asarray(expected, dtype=float), np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return expected == value
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= 1e-9 * (1 + np.abs(a))))


def _kept_limits(part: Part, kept: list) -> _Limits | None:
    """A kept mistake's _limits, computed the first time a later mistake is compared with it."""
    if kept[2] is _UNSET:
        numeric = part.kind not in ("choice", "expression") and kept[1] is not None
        kept[2] = _limits(part.tolerance, kept[1][0]) if numeric else None
    return kept[2]


def _snapped(value: Any, flat: Any) -> tuple[Any, Any]:
    """snap(value) and its flat_floats, given the value's flat_floats (None: snap through numpy)."""
    if flat is None:
        value = snap(value)
        return value, flat_floats(value)
    return snap_flat(value, flat)


def _check(draft: Draft) -> Draft:
    """Float noise snapped to 0 in numeric answers and mistakes; a mistake that gives the right
    answer dropped (nothing to diagnose), one within tolerance of it Degenerate, one equal to an
    earlier mistake dropped (the first explanation kept). A part with nothing to change is kept as
    it is (dataclasses.replace re-runs its checks); each value is flattened once."""
    parts = []
    for part in draft.parts:
        mistakes = part.misconceptions
        if not mistakes and part.kind not in ("number", "vector", "matrix"):
            parts.append(part)
            continue
        expected = part.expected
        want = flat_floats(expected)
        flats = [flat_floats(m.value) for m in mistakes]
        if part.kind in ("number", "vector", "matrix"):
            expected, want = _snapped(expected, want)
            snapped, changed = [], expected is not part.expected
            for i, m in enumerate(mistakes):
                value, flats[i] = _snapped(m.value, flats[i])
                if value is not m.value:
                    m, changed = replace(m, value=value), True
                snapped.append(m)
            if changed:
                mistakes = tuple(snapped)
                part = replace(part, expected=expected, misconceptions=mistakes)
        kept: list[list] = []     # [mistake, its flat_floats, its _limits once a later mistake needs them]
        numeric = part.kind not in ("choice", "expression")
        limits = _limits(part.tolerance, want[0]) if mistakes and numeric and want is not None else None
        for m, got in zip(mistakes, flats):
            if _identical(expected, m.value, (want, got)):
                continue    # the mistaken method gives the right answer here: nothing to diagnose
            if not _differs(part, m.value, expected, (got, want), limits):
                raise Degenerate(f"misconception {m.id} equals the answer of part {part.id}")
            if any(not _differs(part, m.value, k[0].value, (got, k[1]), _kept_limits(part, k)) for k in kept):
                continue    # the same wrong value as an earlier mistake: keep the first explanation
            kept.append([m, got, _UNSET])
        parts.append(part if len(kept) == len(mistakes) else replace(part, misconceptions=tuple(k[0] for k in kept)))
    draft.parts = parts
    return draft


def exact_matmul(a: list, b: list) -> list[list[float]]:
    """a @ b of nested lists of small integers or halves, in plain Python: exact, so the engine's value
    to the bit, without numpy's per-call cost — for a generator's checks of its draws before the
    engine is called."""
    return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]


def plain_array(a: Any, decimals: int | None = None) -> np.ndarray:
    """``a`` as floats (rounded to ``decimals`` where given) with every -0.0 made 0.0, so that a
    problem never shows "-0" (the from-model generators' slices of real weights)."""
    arr = np.asarray(a, dtype=float)
    return (arr if decimals is None else np.round(arr, decimals)) + 0.0


def nice(x: float, sig: int = 3) -> str:
    """A number as printed in a statement: at most ``sig`` significant digits and no trailing zeros
    after the point; a number with more than ``sig`` digits before the point as its nearest whole
    number (12345.6: "12346"), whose zeros are digits (999.96: "1000", once "1")."""
    x = float(x)
    if x == 0:
        return "0"
    if x == int(x) and abs(x) < 10 ** sig:
        return str(int(x))
    digits = sig - int(math.floor(math.log10(abs(x)))) - 1
    text = f"{round(x, max(digits, 0)):.{max(digits, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def value_blocks(name: str, value: Any, labels: Callable[[tuple[int, ...]], str] | None = None) -> list[Matrix]:
    """A named value as Matrix blocks: one block for a number, vector or matrix; a value with three or
    more axes (channels × H × W, heads × n × n, a C_out × C_in × k × k kernel) as one labelled matrix
    per index of its leading axes — ``name[0]``, ``name[0, 1]`` (PyTorch's indexing), or what
    ``labels(index)`` says — since the document model's matrices have two axes. A masked score (−∞)
    is stored as None: JSON has no infinity; renderers show −∞."""
    found = flat_floats(value)
    if found is not None and len(found[1]) < 3:       # plain numbers (most values): their shape without numpy
        return [Matrix(name, jsonable(value))]
    try:
        arr = np.asarray(value, dtype=float)           # a masked None reads as NaN here: only the shape counts
    except (TypeError, ValueError):                    # text, or a ragged list: shown as it is
        arr = None
    if arr is None or arr.ndim < 3:
        return [Matrix(name, jsonable(value))]
    label = labels or (lambda idx: f"{name}[{', '.join(map(str, idx))}]")
    whole = np.asarray(value, dtype=object)
    return [Matrix(label(idx), jsonable(np.asarray(whole[idx]).tolist())) for idx in np.ndindex(*arr.shape[:-2])]


def steps_from(steps: Step | Iterable[Step | None] | None, part: str | None = None, prefix: str = "") -> list[SolutionStep]:
    """Worked-solution steps from solve's named steps (one Step, several, or None for a step the
    instance does not have): formula as Math, values as Matrix blocks (see value_blocks: a value
    with three or more axes becomes one matrix per channel or head)."""
    if steps is None:
        return []
    out = []
    for st in [steps] if isinstance(steps, Step) else steps:
        if st is None:
            continue
        blocks: list = [Math(st.formula)] if st.formula else []
        for name, val in st.values.items():
            blocks += value_blocks(name, val)
        out.append(SolutionStep(prefix + st.title, blocks, part))
    return out


def step_per_part(step: Step | None, parts: dict[str, str | None], prefix: str = "",
                  titles: dict[str, str] | None = None) -> list[SolutionStep]:
    """One named step whose values answer several parts, as one worked-solution step per part.

    ``parts`` maps what a part asks to its id, in the order shown: a value's name ("params"), or one
    block of a value with channels (value_blocks' label, "output[1]"); several names may map to one
    part. The formula goes with the first piece, and so does every value or block not named.
    ``titles`` (optional, by name) gives a later piece its own title; by default "<title>: <name>"."""
    if step is None:
        return []
    keys = list(parts)
    order = list(dict.fromkeys(parts[k] for k in keys))            # one piece per part, in order
    pieces: dict[str | None, list] = {pid: [] for pid in order}
    for name, val in step.values.items():
        for block in value_blocks(name, val):
            key = block.name if block.name in parts else name if name in parts else keys[0]
            pieces[parts[key]].append(block)
    out = []
    for i, pid in enumerate(order):
        first = next(k for k in keys if parts[k] == pid)
        head: list = [Math(step.formula)] if i == 0 and step.formula else []
        title = step.title if i == 0 else (titles or {}).get(first, f"{step.title}: {first}")
        out.append(SolutionStep(prefix + title, head + pieces[pid], pid))
    return out
