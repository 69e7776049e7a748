"""The engine's small-input fast paths (issue 26) give exactly what the numpy calls they replace give:
``_core.pad`` against ``np.pad`` (values, shape and dtype)."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from examprep.engine._core import pad

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
