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
