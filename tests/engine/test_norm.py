"""Layer normalisation: sympy exact values, zero mean and unit variance, torch.nn.LayerNorm."""
import numpy as np
import sympy as sp
from hypothesis import given, strategies as st
import pytest

from examprep import engine, solve

small = st.integers(-3, 3)


@given(x=st.lists(small, min_size=2, max_size=5))
def test_layer_norm_exact(x):
    if len(set(x)) == 1:
        return
    xs = [sp.Integer(v) for v in x]
    mu = sum(xs) / len(xs)
    var = sum((v - mu) ** 2 for v in xs) / len(xs)
    eps = sp.Rational(1, 100000)
    for placement, denom in (("inside-sqrt", sp.sqrt(var + eps)), ("added-to-std", sp.sqrt(var) + eps)):
        t = engine.layer_norm(x, eps=1e-5, eps_placement=placement)
        np.testing.assert_allclose(t.output, [float((v - mu) / denom) for v in xs], rtol=1e-12, atol=1e-13)
        assert abs(t.mean - float(mu)) < 1e-14 and abs(t.var - float(var)) < 1e-12


SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


@given(seed=SEEDS, d=st.integers(2, 8), eps=st.sampled_from([0.0, 1e-5]))
def test_layer_norm_output_has_zero_mean_and_unit_variance(seed, d, eps):
    x = np.random.default_rng(seed).standard_normal((3, d)) * 5
    y = engine.layer_norm(x, eps=eps, eps_placement="inside-sqrt").output
    np.testing.assert_allclose(y.mean(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=1), 1 / (1 + eps / x.var(axis=1)), rtol=1e-9)


def test_layer_norm_inside_sqrt_is_torch_layernorm_module():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(4).standard_normal((3, 6))
    ln = torch.nn.LayerNorm(6, dtype=torch.float64)
    want = ln(torch.tensor(x)).detach().numpy()
    got = solve.answer_only("layer-norm", {"x": x.tolist(), "eps_placement": "inside-sqrt"})["output"]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------------------ batch norm (issue 18)

@given(seed=SEEDS, four=st.booleans(), eps=st.sampled_from([0.0, 1e-5]))
def test_batch_norm_training_output_has_zero_mean_and_unit_variance_per_channel(seed, four, eps):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((4, 3, 2, 2) if four else (5, 3)) * 3 + 1
    axes = (0, 2, 3) if four else (0,)
    y = engine.batch_norm(x, eps=eps).output
    np.testing.assert_allclose(y.mean(axis=axes), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=axes), 1 / (1 + eps / x.var(axis=axes)), rtol=1e-9)


@given(seed=SEEDS)
def test_batch_norm_normalises_down_the_columns_where_layer_norm_goes_along_the_rows(seed):
    x = np.random.default_rng(seed).standard_normal((4, 3))
    bn = engine.batch_norm(x, eps=1e-5).output
    ln = engine.layer_norm(x.T, eps=1e-5, eps_placement="inside-sqrt").output.T
    np.testing.assert_allclose(bn, ln, rtol=1e-10, atol=1e-12)


def test_batch_norm_exact_running_statistics():
    x = [[1, 2], [3, 6], [5, 4]]
    t = engine.batch_norm(x, momentum=0.1, running_mean=[0, 1], running_var=[1, 2])
    X = sp.Matrix(x)
    for c in range(2):
        col = [X[i, c] for i in range(3)]
        mu = sum(col) / 3
        unbiased = sum((v - mu) ** 2 for v in col) / 2
        rm = sp.Rational(9, 10) * [0, 1][c] + sp.Rational(1, 10) * mu
        rv = sp.Rational(9, 10) * [1, 2][c] + sp.Rational(1, 10) * unbiased
        assert abs(t.running_mean_new[c] - float(rm)) < 1e-15 and abs(t.running_var_new[c] - float(rv)) < 1e-14
    # Keras's convention: the momentum weights the old value
    k = engine.batch_norm(x, momentum=0.9, running_mean=[0, 1], running_var=[1, 2], momentum_convention="keras")
    np.testing.assert_allclose(k.running_mean_new, t.running_mean_new, rtol=1e-14)


@given(seed=SEEDS, training=st.booleans(), four=st.booleans(), variance=st.sampled_from(["biased", "unbiased"]))
def test_batch_norm_gradients_by_finite_differences(seed, training, four, variance):
    from tests.engine.fd import close, numeric_grad
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 2, 2, 2) if four else (4, 2))
    g, b = rng.standard_normal(2), rng.standard_normal(2)
    d = rng.standard_normal(x.shape)
    kw = dict(training=training, running_mean=[0.5, -0.5], running_var=[2.0, 0.5], eps=1e-3, variance=variance)
    t = engine.batch_norm(x, g, b, grad_output=d, **kw)
    loss = lambda xx, gg, bb: float(np.sum(engine.batch_norm(xx, gg, bb, **kw).output * d))  # noqa: E731
    close(t.grad_input, numeric_grad(lambda v: loss(v, g, b), x))
    close(t.grad_gamma, numeric_grad(lambda v: loss(x, v, b), g))
    close(t.grad_beta, numeric_grad(lambda v: loss(x, g, v), b))


def test_batch_norm_refuses_one_value_per_channel_in_training():
    from examprep.errors import ParamError
    with pytest.raises(ParamError, match="more than one value per channel"):
        engine.batch_norm([[1.0, 2.0]])
    assert engine.batch_norm([[1.0, 2.0]], training=False).output.shape == (1, 2)


def test_batch_norm_from_given_statistics_and_the_running_update_match_torch():
    torch = pytest.importorskip("torch")
    x = np.array([[1.0, 2.0], [3.0, -1.0], [0.0, 4.0]])
    mean, var, gamma, beta = np.array([0.5, 1.0]), np.array([2.0, 0.25]), np.array([1.5, -1.0]), np.array([0.5, 0.0])
    want = torch.nn.functional.batch_norm(torch.tensor(x), torch.tensor(mean), torch.tensor(var), torch.tensor(gamma),
                                          torch.tensor(beta), training=False, eps=1e-5)
    np.testing.assert_allclose(engine.norm.batch_norm_from_stats(x, mean, var, 1e-5, gamma, beta), want.numpy(),
                               rtol=1e-12)
    bn = torch.nn.BatchNorm1d(2, momentum=0.1, dtype=torch.float64)
    bn.train()(torch.tensor(x))
    batch_mean, batch_var = x.mean(0), x.var(0)
    np.testing.assert_allclose(engine.norm.running_update(np.zeros(2), batch_mean), bn.running_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(engine.norm.running_update(np.ones(2), batch_var, batch_factor=3 / 2),
                               bn.running_var.numpy(), rtol=1e-12)
    # Keras: moving = momentum·moving + (1 − momentum)·batch
    np.testing.assert_allclose(engine.norm.running_update([1.0, 2.0], [3.0, 4.0], 0.99, "keras"), [1.02, 2.02])
