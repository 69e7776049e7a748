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
