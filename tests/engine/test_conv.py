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


# ------------------------------------------------------------------ multi-channel and grouped (issue 18)

def test_multi_channel_conv_sums_each_filter_over_the_input_channels():
    # each output channel = Σ over the input channels of a 2-D cross-correlation, plus its bias (CS231n)
    rng = np.random.default_rng(0)
    x, kernel, b = rng.integers(-2, 3, (3, 5, 5)), rng.integers(-1, 2, (2, 3, 3, 3)), [1.0, -1.0]
    t = engine.conv2d(x, kernel, bias=b, stride=2, padding=1)
    for o in range(2):
        want = sum(engine.conv2d(x[c], kernel[o, c], stride=2, padding=1).output for c in range(3)) + b[o]
        close(t.output[o], want)


def test_depthwise_conv_is_one_single_channel_conv_per_channel():
    rng = np.random.default_rng(1)
    x, k = rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 1, 2, 2))
    t = engine.conv2d(x, k, groups=3, padding=[1, 0])
    for c in range(3):
        close(t.output[c], engine.conv2d(np.pad(x[c], [(1, 1), (0, 0)]), k[c, 0]).output)


def test_one_by_one_convolution_mixes_channels_at_each_pixel():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((3, 4, 4)), rng.standard_normal((2, 3, 1, 1))
    close(engine.conv2d(x, w).output, np.einsum("oc,chw->ohw", w[:, :, 0, 0], x))


@given(seed=st.integers(0, 2**32 - 1), groups=st.sampled_from([1, 2]), stride=st.integers(1, 2),
       padding=st.sampled_from([0, 1, "same", [1, 0]]))
def test_multi_channel_conv_gradients_by_finite_differences(seed, groups, stride, padding):
    rng = np.random.default_rng(seed)
    x, k, b = rng.standard_normal((2 * groups, 4, 5)), rng.standard_normal((2 * groups, 2, 2, 3)), rng.standard_normal(2 * groups)
    run = lambda xx, kk, bb, g=None: engine.conv2d(xx, kk, bias=bb, groups=groups, stride=stride,  # noqa: E731
                                                    padding=padding, grad_output=g)
    g = rng.standard_normal(run(x, k, b).output.shape)
    t = run(x, k, b, g)
    close(t.grad_input, numeric_grad(lambda v: float(np.sum(run(v, k, b).output * g)), x))
    close(t.grad_kernel, numeric_grad(lambda v: float(np.sum(run(x, v, b).output * g)), k))
    close(t.grad_bias, numeric_grad(lambda v: float(np.sum(run(x, k, v).output * g)), b))


def test_multi_channel_conv_of_small_integers_is_exact():
    x = [[[1, 2, 0], [0, 1, 3], [2, 1, 0]], [[0, 1, 1], [2, 0, 1], [1, 1, 2]]]
    k = [[[[1, 0], [0, 1]], [[0, 1], [1, 0]]], [[[1, 1], [0, 0]], [[-1, 0], [0, 2]]]]
    X, K = sp.Array(x), sp.Array(k)
    want = [[[1 + sum(K[o, c, u, v] * X[c, i + u, j + v] for c in range(2) for u in range(2) for v in range(2))
              - 2 * o for j in range(2)] for i in range(2)] for o in range(2)]
    assert engine.conv2d(x, k, bias=[1, -1]).output.tolist() == [[[float(v) for v in r] for r in ch] for ch in want]
