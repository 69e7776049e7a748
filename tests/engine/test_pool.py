"""Max-pooling: the gradient by finite differences, the rules for tied maxima, PyTorch's rule
against torch."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from examprep import engine, solve
from examprep.errors import ParamError, ShapeError
from tests.engine.fd import close, numeric_grad

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


@given(seed=SEEDS, one_d=st.booleans(), ceil_mode=st.booleans(), padding=st.integers(0, 1))
def test_max_pool_gradient(seed, one_d, ceil_mode, padding):
    rng = np.random.default_rng(seed)
    x = rng.permutation(30)[: 7 if one_d else 30].astype(float)   # distinct values: no ties
    x = x if one_d else x.reshape(5, 6)
    kw = dict(stride=2, padding=padding, ceil_mode=ceil_mode)
    out = engine.max_pool(x, 2, **kw).output
    go = rng.standard_normal(out.shape)
    t = engine.max_pool(x, 2, grad_output=go, **kw)
    close(t.grad_input, numeric_grad(lambda v: float(np.sum(go * engine.max_pool(v, 2, **kw).output)), x))


@given(seed=SEEDS, k=st.integers(1, 3), s=st.integers(1, 3))
def test_max_pool_first_tie_rule_is_the_engine_max_pool(seed, k, s):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, (int(rng.integers(k, 6)), int(rng.integers(k, 6)))).astype(float)   # many ties
    out = engine.max_pool(x, k, stride=s)
    g = rng.integers(-3, 4, out.output.shape).astype(float)
    ref = engine.max_pool(x, k, stride=s, grad_output=g)
    ours = engine.max_pool_backward(x, k, g, stride=s, ties="first")
    np.testing.assert_array_equal(ours.output, ref.output)
    np.testing.assert_array_equal(ours.grad_input, ref.grad_input)
    np.testing.assert_array_equal(ours.indices, ref.indices)
    split = engine.max_pool_backward(x, k, g, stride=s, ties="split")
    assert split.grad_input.sum() == pytest.approx(g.sum())          # shares conserve δ
    every = engine.max_pool_backward(x, k, g, stride=s, ties="all")
    assert every.grad_input.sum() == pytest.approx((g * ours.ties_count).sum())


def test_max_pool_tie_rules_on_a_hand_example():
    x = [[3, 3], [1, 3]]
    assert engine.max_pool_backward(x, 2, [[6]], ties="first").grad_input.tolist() == [[6, 0], [0, 0]]
    assert engine.max_pool_backward(x, 2, [[6]], ties="last").grad_input.tolist() == [[0, 0], [0, 6]]
    assert engine.max_pool_backward(x, 2, [[6]], ties="split").grad_input.tolist() == [[2, 2], [0, 2]]
    assert engine.max_pool_backward(x, 2, [[6]], ties="all").grad_input.tolist() == [[6, 6], [0, 6]]
    one_d = engine.max_pool_backward([1, 2, 2, 0], 2, [1, 5], stride=2, ties="last")
    assert one_d.grad_input.tolist() == [0, 1, 5, 0] and one_d.output.tolist() == [2, 2]


def test_max_pool_first_tie_rule_matches_torch():
    torch = pytest.importorskip("torch")
    x = torch.tensor([[2.0, 2.0, 1.0, 2.0], [0.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0]], dtype=torch.float64,
                     requires_grad=True)
    y = torch.nn.functional.max_pool2d(x[None, None], 2, stride=1)[0, 0]
    g = torch.arange(1.0, 1 + y.numel(), dtype=torch.float64).reshape(y.shape)
    (gx,) = torch.autograd.grad(y, x, g)
    ours = engine.max_pool_backward(x.detach().numpy(), 2, g.numpy(), stride=1)
    np.testing.assert_array_equal(ours.grad_input, gx.numpy())


def test_max_pool_ties_route_to_first_maximum_like_torch():
    pytest.importorskip("torch")
    from tests.verify.helpers import assert_agrees

    p = {"input": [[3, 3, 1], [3, 2, 3], [0, 3, 3]], "kernel_size": 2, "stride": 1, "grad_output": [[1, 2], [4, 8]]}
    assert_agrees("max-pool", p)
    assert solve.answer_only("max-pool", p)["grad_input"].tolist() == [[1, 2, 0], [4, 0, 8], [0, 0, 0]]


def test_max_pool_backward_bad_input():
    with pytest.raises(ShapeError, match="grad_output"):
        engine.max_pool_backward([[1, 2], [3, 4]], 2, [[1, 2]])
    with pytest.raises(ShapeError, match="larger than the input"):
        engine.max_pool_backward([[1, 2]], 2, [[1]])
    with pytest.raises(ParamError, match="ties"):
        engine.max_pool_backward([[1, 2], [3, 4]], 2, [[1]], ties="average")


# ------------------------------------------------------------------ C×H×W, "same", avg-pool (issue 18)

def test_max_pool_on_channels_pools_each_channel_alone():
    x = np.arange(2 * 4 * 4, dtype=float).reshape(2, 4, 4) * np.array([1, -1])[:, None, None]
    t = engine.max_pool(x, 2)
    for c in range(2):
        close(t.output[c], engine.max_pool(x[c], 2).output)
        np.testing.assert_array_equal(t.indices[c], engine.max_pool(x[c], 2).indices)


def test_max_pool_tensorflow_same_pads_with_minus_infinity_at_the_end():
    # tf.nn.max_pool(x, 2, 2, "SAME") on a 2×3 input gives [[5, 6]] (Stack Overflow q/37674306)
    t = engine.max_pool([[1, 2, 3], [4, 5, 6]], 2, stride=2, padding="same")
    assert t.output.tolist() == [[5, 6]] and t.pad_before == [0, 0] and t.pad_after == [0, 1]
    # all-negative input: a zero padding would win, −∞ never does
    t = engine.max_pool([-3.0, -1.0, -2.0], 2, stride=2, padding="same")
    assert t.output.tolist() == [-1.0, -2.0] and (t.pad_before, t.pad_after) == (0, 1)


def test_ceil_mode_keeps_a_window_larger_than_the_padded_input_as_torch():
    # torch.nn.functional.max_pool2d of [[-4, -5, 5], [-5, -1, 1]], kernel 3, stride 3, ceil_mode → [[5]]
    assert engine.max_pool([[-4, -5, 5], [-5, -1, 1]], 3, stride=3, ceil_mode=True).output.tolist() == [[5.0]]
    assert engine.max_pool([[3, 1]], 2, ceil_mode=True).output.tolist() == [[3.0]]
    assert engine.conv_output_size(2, 9, op="pool", padding=3, ceil_mode=True).output_size == 1
    with pytest.raises(ParamError, match="larger"):
        engine.max_pool([[-4, -5, 5], [-5, -1, 1]], 3, stride=3)


def test_same_padding_refuses_ceil_mode():
    with pytest.raises(ParamError, match="ceil_mode"):
        engine.max_pool([1, 2, 3], 2, padding="same", ceil_mode=True)


def test_avg_pool_divisor_rules_as_torch_documents():
    # torch: avg_pool1d([1, 2, 3, 4], 3, 2, padding 1, ceil_mode) = [1, 3, 2] (the last window's
    # cells beyond the padding never count; count_include_pad counts the zero padding)
    t = engine.avg_pool([1, 2, 3, 4], 3, stride=2, padding=1, ceil_mode=True)
    close(t.output, [1.0, 3.0, 2.0])
    assert t.divisors.tolist() == [3, 3, 2]
    t = engine.avg_pool([1, 2, 3, 4], 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
    close(t.output, [1.5, 3.0, 4.0])


@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 3), s=st.integers(1, 3), p=st.integers(0, 1),
       ceil=st.booleans(), include=st.booleans())
def test_avg_pool_gradient_by_finite_differences(seed, k, s, p, ceil, include):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 5, 4))
    p = min(p, k // 2)
    t = engine.avg_pool(x, k, stride=s, padding=p, ceil_mode=ceil, count_include_pad=include)
    g = rng.standard_normal(t.output.shape)
    got = engine.avg_pool(x, k, stride=s, padding=p, ceil_mode=ceil, count_include_pad=include, grad_output=g)
    f = lambda v: float(np.sum(engine.avg_pool(v, k, stride=s, padding=p, ceil_mode=ceil,  # noqa: E731
                                               count_include_pad=include).output * g))
    close(got.grad_input, numeric_grad(f, x))


@given(seed=st.integers(0, 2**32 - 1))
def test_avg_pool_without_padding_hands_back_exactly_the_gradient_it_received(seed):
    # non-overlapping windows that tile the input: each window's δ is split in N parts of δ/N
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 4, 6))
    g = rng.standard_normal((3, 2, 3))
    got = engine.avg_pool(x, 2, grad_output=g).grad_input
    close(got.sum(), g.sum())
    close(got[:, ::2, ::2], g / 4)


def test_avg_pool_with_integers_is_exact_fractions():
    import sympy as sp
    x = [[1, 2, 0], [3, 5, 1], [2, 2, 7]]
    t = engine.avg_pool(x, 2, stride=1)
    want = [[sp.Rational(1 + 2 + 3 + 5, 4), sp.Rational(2 + 0 + 5 + 1, 4)],
            [sp.Rational(3 + 5 + 2 + 2, 4), sp.Rational(5 + 1 + 2 + 7, 4)]]
    assert t.output.tolist() == [[float(v) for v in row] for row in want]
