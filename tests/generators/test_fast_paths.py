"""The plain-Python fast paths of generation (issue 26) give what the numpy rules they replace give:
snap, build()'s degeneracy checks (_identical, _differs with its per-entry limits, _check), jsonable
and value_blocks. The references below are the numpy formulations, written out here."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from examprep.document import Matrix
from examprep.generators.framework import (
    Degenerate, Draft, _check, _differs, _identical, _limits, flat_floats, value_blocks,
)
from examprep.problem import Misconception, Part, Tolerance
from examprep.solve.contract import jsonable
from examprep.values import snap

NUMBERS = st.sampled_from([0, 1, -2, 3, 0.0, -0.0, 0.5, 1.5, 0.1 + 0.2, 0.3, 1e-17, -2.8e-17, 5e-14, 1e-12, 2.5e-13,
                           0.333, 0.3334, 0.3335, 1e6, 123.4, 123.5, -7.25, math.inf, -math.inf, math.nan,
                           1.7e308, -1.7e308])      # finite, but their sums overflow (the fast paths sum entries)
ENTRY = st.one_of(NUMBERS, st.floats(-1e3, 1e3, allow_nan=False), st.sampled_from([None, True, "1/4"]))


@st.composite
def values(draw, entries=ENTRY) -> Any:
    """A number, or a vector, matrix or 3-axis array of entries — now and then a ragged list."""
    shape = draw(st.sampled_from([(), (1,), (3,), (2, 2), (2, 3), (2, 1, 2), (0,)]))
    flat = [draw(entries) for _ in range(math.prod(shape))]
    if not shape:
        return flat[0]
    value = np.array(flat + [0], dtype=object)[:-1].reshape(shape).tolist()
    if len(shape) > 1 and draw(st.booleans()) and draw(st.booleans()):
        value[0] = value[0][:-1]           # ragged
    return value


def snap_reference(value: Any, relative: float = 1e-12, absolute: float = 1e-13) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float, list)):
        return value
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


def differs_reference(part: Part, value: Any, expected: Any) -> bool:
    if part.kind == "choice" or part.kind == "expression" and not isinstance(value, (int, float, list)):
        return value != expected
    try:
        got, want = np.asarray(value, dtype=float), np.asarray(expected, dtype=float)
    except (TypeError, ValueError):
        return value != expected
    if got.shape != want.shape or not np.all(np.isfinite(got)):
        return True
    return any(not part.tolerance.accepts(g, w) for g, w in zip(got.ravel(), want.ravel()))


def identical_reference(expected: Any, value: Any) -> bool:
    try:
        a, b = np.asarray(expected, dtype=float), np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return expected == value
    with np.errstate(invalid="ignore", over="ignore"):       # ∞ − ∞, 1.7e308 + 1.7e308: NaN, ∞ (not equal)
        return a.shape == b.shape and bool(np.all(np.abs(a - b) <= 1e-9 * (1 + np.abs(a))))


def same(a: Any, b: Any) -> bool:
    """Equal, NaN included, with the same types all the way down."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


TOLERANCES = st.sampled_from([Tolerance("sigfigs", 3), Tolerance("sigfigs", 2, 0.01), Tolerance("rtol", 0.01, 0),
                              Tolerance("atol", 0.05), Tolerance("decimals", 2), Tolerance("exact", 0, 0),
                              Tolerance("sigfigs-strict", 3)])


@given(values())
def test_snap_matches_the_numpy_rule(value):
    got, want = snap(value), snap_reference(value)
    assert same(got, want)
    assert (got is value) == (want is value)           # a value with no noise comes back as it is


def test_flat_floats_reads_plain_numbers_only():
    assert flat_floats([[1, 2.5], [3, 4]]) == ([1.0, 2.5, 3.0, 4.0], (2, 2))
    assert flat_floats(2) == ([2.0], ())
    assert flat_floats([[1, 2], [3]]) is None and flat_floats([True, 1]) is None
    assert flat_floats([np.float64(1.0)]) is None and flat_floats("1") is None and flat_floats([None]) is None


@given(values(), values(), TOLERANCES, st.sampled_from(["number", "vector", "matrix", "integer", "expression"]))
def test_differs_and_identical_match_the_numpy_rules(expected, value, tolerance, kind):
    part = Part("p", "?", kind, expected, tolerance=tolerance)
    assert _identical(expected, value) == identical_reference(expected, value)
    assert _differs(part, value) == differs_reference(part, value, expected)
    want, got = flat_floats(expected), flat_floats(value)
    if want is not None and got is not None:               # what _check passes: flats and lazy limits
        assert _differs(part, value, expected, (got, want), _limits(tolerance, want[0])) == \
            differs_reference(part, value, expected)


def check_reference(part: Part) -> Part | None:
    """_check's rule for one part, in numpy; None where it is Degenerate."""
    from dataclasses import replace

    if part.kind in ("number", "vector", "matrix"):
        part = replace(part, expected=snap_reference(part.expected),
                       misconceptions=tuple(replace(m, value=snap_reference(m.value)) for m in part.misconceptions))
    kept: list = []
    for m in part.misconceptions:
        if identical_reference(part.expected, m.value):
            continue
        if not differs_reference(part, m.value, part.expected):
            return None
        if any(not differs_reference(part, m.value, k.value) for k in kept):
            continue
        kept.append(m)
    return replace(part, misconceptions=tuple(kept))


@given(values(NUMBERS), st.lists(values(NUMBERS), max_size=5), TOLERANCES,
       st.sampled_from(["number", "vector", "matrix", "integer"]))
def test_check_keeps_drops_and_refuses_mistakes_as_the_numpy_rule_does(expected, wrong, tolerance, kind):
    part = Part("p", "?", kind, expected, tolerance=tolerance,
                misconceptions=tuple(Misconception(f"m{i}", v, "why") for i, v in enumerate(wrong)))
    want = check_reference(part)
    draft = Draft("t", {}, [], [part], [])
    if want is None:
        with pytest.raises(Degenerate):
            _check(draft)
        return
    got = _check(draft).parts[0]
    assert same(got.expected, want.expected)
    assert [m.id for m in got.misconceptions] == [m.id for m in want.misconceptions]
    assert all(same(a.value, b.value) for a, b in zip(got.misconceptions, want.misconceptions))


def test_check_keeps_a_part_with_nothing_to_change_as_it_is():
    part = Part("p", "?", "vector", [1.0, 2.0], misconceptions=(Misconception("m", [2.0, 1.0], "why"),))
    assert _check(Draft("t", {}, [], [part], [])).parts[0] is part


def jsonable_reference(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.astype(int).tolist() if value.dtype.kind in "iub" else jsonable_reference(value.tolist())
    if isinstance(value, (list, tuple)):
        return [jsonable_reference(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


@given(values(NUMBERS))
def test_jsonable_matches_the_recursive_rule(value):
    assert same(jsonable(value), jsonable_reference(value))
    try:
        arr = np.asarray(value, dtype=float)
    except ValueError:
        return
    assert same(jsonable(arr), jsonable_reference(arr))
    with np.errstate(over="ignore"):                          # 1.7e308 is ∞ in float32
        small = arr.astype(np.float32)
    assert same(jsonable(small), jsonable_reference(small))


def test_jsonable_copies_a_plain_list_and_keeps_numpy_scalars_and_bools_apart():
    plain = [1, 2.5]
    assert jsonable(plain) == plain and jsonable(plain) is not plain
    assert jsonable([np.float64(1.5), True, math.inf]) == [1.5, True, None]


def test_value_blocks_splits_three_axes_and_keeps_two_as_one_matrix():
    assert value_blocks("W", [[1, 2], [3, 4]]) == [Matrix("W", [[1, 2], [3, 4]])]
    assert [b.name for b in value_blocks("y", [[[1, 2]], [[3, 4]]])] == ["y[0]", "y[1]"]
    assert value_blocks("s", [[None, 1.0], [2.0, 3.0]]) == [Matrix("s", [[None, 1.0], [2.0, 3.0]])]


@pytest.mark.parametrize("lo, hi, shape, nonzero", [(-1, 1, (2, 3), False), (-2, 2, (4,), True), (0, 9, (), False),
                                                    (-1, 1, (3, 3), True), (5, 5, (2,), False)])
def test_stream_ints_draws_what_integer_draws_entry_by_entry(lo, hi, shape, nonzero):
    from examprep.generators import Stream

    fast, slow = Stream("ints", 1), Stream("ints", 1)
    want = []
    for _ in range(math.prod(shape)):
        v = slow.integer(lo, hi)
        while nonzero and v == 0:
            v = slow.integer(lo, hi)
        want.append(v)
    got = fast.ints(lo, hi, shape, nonzero)
    assert got.shape == shape and got.ravel().tolist() == want
    assert fast.bits64() == slow.bits64()                  # and the stream goes on from the same place


@given(st.integers(-5, 2), st.integers(0, 6), st.sampled_from([(), (1,), (3,), (2, 4), (2, 1, 3)]), st.booleans(),
       st.integers(0, 3))
def test_stream_ints_equals_integer_per_entry_for_any_range_and_counter(lo, width, shape, nonzero, before):
    """Stream.ints inlines bits64 (issue 26): the same values as integer(lo, hi) per entry (redrawing a 0
    where nonzero) from any counter, and the stream left at the same counter (the test above, drawn)."""
    from examprep.generators import Stream

    hi = lo + width
    if nonzero and lo == hi == 0:
        return
    fast, slow = Stream("t", lo, width), Stream("t", lo, width)
    for _ in range(before):
        fast.bits64(), slow.bits64()
    want = []
    for _ in range(math.prod(shape)):
        v = slow.integer(lo, hi)
        while nonzero and v == 0:
            v = slow.integer(lo, hi)
        want.append(float(v))
    got = fast.ints(lo, hi, shape, nonzero)
    assert got.shape == shape and got.dtype == float and got.ravel().tolist() == want
    assert fast.bits64() == slow.bits64()


CLOSE_BASE = st.one_of(NUMBERS.filter(lambda x: not isinstance(x, int)), st.floats(-1e3, 1e3, allow_nan=False))


@st.composite
def close_pairs(draw) -> tuple[Any, Any, float, float]:
    """Two values of one shape whose entries are equal, at numpy's bound atol + rtol·|b| (a hair
    inside or outside it), far apart, infinite or NaN; as floats, lists or float arrays."""
    rtol, atol = draw(st.sampled_from([(1e-05, 1e-08), (0.0, 5e-3), (0.0, 0.02), (1e-9, 0.0), (0.1, 0.0)]))
    shape = draw(st.sampled_from([(), (1,), (3,), (2, 2), (2, 1, 2)]))
    b = [draw(CLOSE_BASE) for _ in range(math.prod(shape))]
    a = []
    for y in b:
        k = draw(st.sampled_from([0.0, 0.5, 1.0, 1 - 1e-15, 1 + 1e-15, 1.0000001, 2.0, -1.0, -1.0000001, math.nan]))
        a.append(y + k * (atol + rtol * abs(y)) if math.isfinite(y) else draw(st.sampled_from([y, -y, 0.0])))
    form = draw(st.sampled_from(["array", "list", "mixed"]))
    as_value = (lambda v: np.array(v, dtype=float).reshape(shape)) if form != "list" else (
        lambda v: np.array(v, dtype=float).reshape(shape).tolist() if shape else v[0])
    va, vb = as_value(a), as_value(b)
    if form == "mixed":
        vb = vb.tolist() if shape else float(vb)
    return va, vb, rtol, atol


@given(close_pairs())
def test_allclose_matches_numpy_allclose(pair):
    from examprep.values import allclose

    a, b, rtol, atol = pair
    assert allclose(a, b, rtol=rtol, atol=atol) is bool(np.allclose(a, b, rtol=rtol, atol=atol))
    assert allclose(b, a, rtol=rtol, atol=atol) is bool(np.allclose(b, a, rtol=rtol, atol=atol))


def test_allclose_leaves_broadcasting_and_integers_to_numpy():
    from examprep.values import allclose

    assert allclose(np.ones((2, 2)), 1.0) and not allclose(np.ones((2, 2)), [1.0, 2.0])
    assert allclose(np.array([1, 2]), np.array([1, 2])) and not allclose(np.array([1, 2]), [1.0, 2.1])
    assert not allclose([1.0, 2.0], [1.0, 2.0 + 3e-5]) and allclose([1.0, 2.0], [1.0, 2.0 + 1e-5])
