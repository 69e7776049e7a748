"""The engine's small-input fast paths (issue 26) give exactly what the numpy calls they replace give:
``_core.pad`` against ``np.pad`` (values, shape and dtype), ``all_finite`` against
``np.isfinite(arr).all()``, and ``array`` still refusing what it refused."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from examprep.engine._core import all_finite, array, pad
from examprep.errors import ParamError, ShapeError

WIDTH = st.tuples(st.integers(0, 3), st.integers(0, 3))


@st.composite
def padded_cases(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    dtype = draw(st.sampled_from([np.float64, np.int64]))
    x = np.arange(np.prod(shape), dtype=dtype).reshape(shape) - 3
    widths = [draw(WIDTH) for _ in shape]
    value = draw(st.sampled_from([0, -1, -np.inf] if dtype is np.float64 else [0, -1]))
    return x, widths, value


@given(padded_cases())
def test_pad_equals_numpy_pad(case):
    x, widths, value = case
    got, want = pad(x, widths, value), np.pad(x, widths, constant_values=value)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)


def test_pad_returns_a_new_array_even_without_padding():
    x = np.ones((2, 2))
    out = pad(x, [(0, 0), (0, 0)])
    out[0, 0] = 5
    assert x[0, 0] == 1


FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([1e308, -1e308, 0.0, -0.0]))


@given(st.lists(FLOATS, min_size=1, max_size=70), st.sampled_from([np.float64, np.float32]))
def test_all_finite_equals_numpy_isfinite(entries, dtype):
    with np.errstate(over="ignore"):
        arr = np.array(entries, dtype=dtype)
    assert all_finite(arr) == bool(np.isfinite(arr).all())
    assert all_finite(arr.reshape(1, -1)) == bool(np.isfinite(arr).all())


def test_all_finite_when_the_sum_overflows():
    assert all_finite(np.array([1e308, 1e308, -1e308]))        # finite entries whose sum is inf
    assert not all_finite(np.array([1e308, np.inf]))
    assert not all_finite(np.array([np.inf, -np.inf]))        # sum NaN


def test_array_takes_a_float64_array_as_it_is_and_still_checks_it():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert array("x", a) is a
    with pytest.raises(ParamError, match=r"^x: every value must be finite"):
        array("x", np.array([1.0, np.nan]))
    with pytest.raises(ShapeError, match=r"^x: expected a vector, got an array of shape 2×2"):
        array("x", a, 1)
    with pytest.raises(ShapeError, match=r"^x: expected a number or a matrix, got an array of shape 2"):
        array("x", np.array([1.0, 2.0]), (0, 2))
    with pytest.raises(ShapeError, match=r"^x: expected a non-empty array"):
        array("x", np.zeros((0,)))


@pytest.mark.parametrize("value, message", [
    (True, "expected numbers"), ("12", "expected numbers"), ([[1, 2], [3]], "rows of equal length"),
    ([1, float("inf")], "every value must be finite"), (np.array([1, 2]), None), ([1, 2], None)])
def test_array_converts_or_names_what_is_wrong(value, message):
    if message is None:
        out = array("x", value)
        assert out.dtype == np.float64 and out.tolist() == [1.0, 2.0]
    else:
        with pytest.raises(ParamError, match=rf"^x: .*{message}"):
            array("x", value)
