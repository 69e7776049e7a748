"""Softmax and cross-entropy: sympy exact values, finite-difference gradients, invariants."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from examprep import engine
from tests.engine.fd import close, numeric_grad

small = st.integers(-3, 3)


def exact_softmax(z):
    e = [sp.exp(sp.Integer(v)) for v in z]
    s = sum(e)
    return [ei / s for ei in e]


SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


@given(z=st.lists(small, min_size=2, max_size=5), data=st.data())
def test_softmax_and_cross_entropy_exact(z, data):
    t = data.draw(st.integers(0, len(z) - 1))
    p = exact_softmax(z)
    ce = engine.cross_entropy(z, t)
    np.testing.assert_allclose(ce.probs, [float(v) for v in p], rtol=1e-13)
    assert abs(ce.loss - float(-sp.log(p[t]))) < 1e-12
    grad = [pi - (1 if i == t else 0) for i, pi in enumerate(p)]
    np.testing.assert_allclose(ce.grad_logits, [float(g) for g in grad], rtol=1e-12, atol=1e-14)


def test_cross_entropy_gradient_is_p_minus_y_symbolically():
    """∂/∂z_i of −log softmax(z)_y is p_i − [i = y], derived by sympy, evaluated against the engine."""
    z = sp.symbols("z0:3")
    p = [sp.exp(zi) / sum(sp.exp(zj) for zj in z) for zi in z]
    loss = -sp.log(p[1])
    vals = {z[0]: 1, z[1]: -2, z[2]: sp.Rational(1, 2)}
    want = [float(sp.diff(loss, zi).subs(vals)) for zi in z]
    np.testing.assert_allclose(engine.cross_entropy([1, -2, 0.5], 1).grad_logits, want, rtol=1e-13)


@given(seed=SEEDS, batch=st.booleans(), smoothing=st.sampled_from([0.0, 0.1]),
       reduction=st.sampled_from(["mean", "sum"]))
def test_cross_entropy_grad_logits(seed, batch, smoothing, reduction):
    rng = np.random.default_rng(seed)
    c = int(rng.integers(2, 6))
    if batch:
        n = int(rng.integers(1, 4))
        z, t = rng.standard_normal((n, c)), rng.integers(0, c, n).tolist()
    else:
        z, t = rng.standard_normal(c), int(rng.integers(0, c))
    kw = dict(reduction=reduction, label_smoothing=smoothing)
    g = engine.cross_entropy(z, t, **kw).grad_logits
    close(g, numeric_grad(lambda zz: engine.cross_entropy(zz, t, **kw).loss, z))


floats = st.floats(-50, 50, allow_nan=False)


@given(z=st.lists(floats, min_size=1, max_size=8), shift=floats)
def test_softmax_sums_to_one_and_ignores_shifts(z, shift):
    p = engine.softmax(z).probs
    assert abs(p.sum() - 1) < 1e-12 and np.all(p >= 0)
    np.testing.assert_allclose(engine.softmax(np.array(z) + shift).probs, p, rtol=1e-9, atol=1e-300)


def test_softmax_without_normalising_is_the_exponentials():
    """normalize=False: the mistake of exponentiating the logits and stopping there."""
    z = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]])
    np.testing.assert_array_equal(engine.softmax(z, normalize=False).probs, np.exp(z))
    np.testing.assert_allclose(engine.softmax(z).probs, np.exp(z) / np.exp(z).sum(axis=1, keepdims=True), rtol=1e-14)


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.3])
def test_cross_entropy_target_dist_is_torchs_smoothed_target(smoothing):
    # torch's gradient of the summed loss is p − q: q read from torch.nn.functional.cross_entropy's autograd
    torch = pytest.importorskip("torch")
    z = torch.tensor([[1.0, -2.0, 0.5, 0.0], [0.3, 2.0, -1.0, 1.5]], dtype=torch.float64, requires_grad=True)
    target = [2, 0]
    torch.nn.functional.cross_entropy(z, torch.tensor(target), reduction="sum", label_smoothing=smoothing).backward()
    q = (torch.softmax(z, dim=1) - z.grad).detach().numpy()
    got = engine.cross_entropy(z.detach().numpy(), target, reduction="sum", label_smoothing=smoothing).target_dist
    np.testing.assert_allclose(got, q, rtol=1e-12, atol=1e-15)
