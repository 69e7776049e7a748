"""Convolution: output sizes are the exact floor, conv2d gradients by finite differences, the
receptive field and "same" padding invariants."""
import numpy as np
import sympy as sp
from hypothesis import given, strategies as st
import math

from examprep import engine
from tests.engine.fd import close, numeric_grad


@given(n=st.integers(1, 300), k=st.integers(1, 11), s=st.integers(1, 5), p=st.integers(0, 5), d=st.integers(1, 3))
def test_conv_output_size_is_the_exact_floor(n, k, s, p, d):
    eff = d * (k - 1) + 1
    if eff > n + 2 * p:
        return
    want = sp.floor(sp.Rational(n + 2 * p - eff, s)) + 1
    assert engine.conv_output_size(n, k, stride=s, padding=p, dilation=d).output_size == int(want)


SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


@given(seed=SEEDS, one_d=st.booleans(), stride=st.integers(1, 2), dilation=st.integers(1, 2),
       padding=st.sampled_from([0, 1, "same", [1, 0]]))
def test_conv2d_gradients(seed, one_d, stride, dilation, padding):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(6 if one_d else (5, 6))
    k = rng.standard_normal(2 if one_d else (2, 3))
    kw = dict(stride=stride, dilation=dilation, padding=padding)
    out = engine.conv2d(x, k, **kw).output
    go = rng.standard_normal(out.shape)
    t = engine.conv2d(x, k, bias=0.5, grad_output=go, **kw)
    L = lambda x_, k_, b_=0.5: float(np.sum(go * engine.conv2d(x_, k_, bias=b_, **kw).output))  # noqa: E731
    close(t.grad_input, numeric_grad(lambda v: L(v, k), x))
    close(t.grad_kernel, numeric_grad(lambda v: L(x, v), k))
    close(t.grad_bias, numeric_grad(lambda v: L(x, k, float(v)), np.array(0.5)))


@given(layers=st.lists(st.fixed_dictionaries({"kernel_size": st.integers(1, 5), "stride": st.integers(1, 3),
                                               "dilation": st.integers(1, 3)}), min_size=1, max_size=6))
def test_receptive_field_grows_monotonically(layers):
    t = engine.receptive_field(layers)
    assert t.receptive_fields == sorted(t.receptive_fields)
    assert t.jump == math.prod(layer["stride"] for layer in layers)


@given(n=st.integers(1, 200), k=st.integers(1, 7), s=st.integers(1, 4), d=st.integers(1, 3))
def test_same_padding_keeps_ceil_n_over_s_and_conv2d_agrees(n, k, s, d):
    t = engine.conv_output_size(n, k, stride=s, dilation=d, padding="same")
    assert t.output_size == math.ceil(n / s)
    assert 0 <= t.pad_after - t.pad_before <= 1
    out = engine.conv2d(np.ones(n), np.ones(k), stride=s, dilation=d, padding="same").output
    assert out.shape == (t.output_size,)
