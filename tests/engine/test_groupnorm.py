"""Group and instance normalisation (issue 38 item 4), LayerNorm over [C, H, W] and batch norm's ∂L/∂μ, ∂L/∂σ²:
exact fractions on hand-sized inputs, PyTorch's documented examples run through torch modules, finite
differences for every gradient, and the bad inputs refused in one line. (Random instances against the
torch references run in tests/verify/test_references.py for every topic, these included.)"""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from examprep import engine, solve
from examprep.errors import ParamError, ShapeError
from tests.engine.fd import close, numeric_grad

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


def _exact_normalise(values: list[Fraction]) -> tuple[Fraction, Fraction, list[Fraction]]:
    """μ, the biased σ² and (x − μ)/σ for values whose σ is a whole number (ε = 0)."""
    mu = sum(values) / len(values)
    var = sum((v - mu) ** 2 for v in values) / len(values)
    sigma = Fraction(round(float(var) ** 0.5))
    assert sigma * sigma == var
    return mu, var, [(v - mu) / sigma for v in values]


def test_group_norm_by_hand_two_groups_of_two_channels():
    # C×H×W = 4×1×2: group 1 (channels 0, 1) holds 1, 3, 3, 1 (μ = 2, σ² = 1), group 2 holds 3, 3, 7, 7 (μ = 5, σ² = 4)
    x = [[[1.0, 3.0]], [[3.0, 1.0]], [[3.0, 3.0]], [[7.0, 7.0]]]
    t = engine.group_norm(x, 2, eps=0.0)
    for g, chans in enumerate(([0, 1], [2, 3])):
        vals = [Fraction(int(v)) for c in chans for v in x[c][0]]
        mu, var, xh = _exact_normalise(vals)
        assert t.mean[g] == mu and t.var[g] == var
        assert (float(mu), float(var)) == ((2.0, 1.0), (5.0, 4.0))[g]
        np.testing.assert_array_equal(np.asarray(t.x_hat)[chans].ravel(), [float(v) for v in xh])
    assert t.num_params == 8 and t.group_size == 4


def test_instance_norm_of_two_values_per_channel_is_plus_or_minus_one():
    t = engine.instance_norm([[[1.0, 3.0]], [[-2.0, 6.0]]], eps=0.0)
    np.testing.assert_array_equal(t.x_hat, [[[-1.0, 1.0]], [[-1.0, 1.0]]])
    np.testing.assert_array_equal(t.mean, [2.0, 2.0])
    np.testing.assert_array_equal(t.var, [1.0, 16.0])
    assert t.num_params == 0 and engine.instance_norm([[[1.0, 3.0]]], affine=True).num_params == 2


def test_pytorch_docs_groupnorm_example_3_6_and_its_instance_and_layer_norm_cases():
    """torch.nn.GroupNorm's documentation: input 20×6×10×10, GroupNorm(3, 6) (3 groups of 2 channels),
    GroupNorm(6, 6) (instance norm), GroupNorm(1, 6) (LayerNorm over C×H×W)."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((20, 6, 10, 10))
    xt = torch.tensor(x)
    for g in (3, 6, 1):
        module = torch.nn.GroupNorm(g, 6, dtype=torch.float64)
        got = solve.answer_only("group-norm", {"x": x, "num_groups": g, "num_channels": 6})
        np.testing.assert_allclose(got["output"], module(xt).detach().numpy(), rtol=1e-9, atol=1e-12)
        assert got["num_params"] == sum(p.numel() for p in module.parameters()) == 12
    inst = torch.nn.InstanceNorm2d(6, dtype=torch.float64)(xt).detach().numpy()
    np.testing.assert_allclose(engine.instance_norm(x).output, inst, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(engine.group_norm(x, 6).output, engine.instance_norm(x).output, rtol=1e-13, atol=1e-13)
    ln = engine.layer_norm(x, eps=1e-5, eps_placement="inside-sqrt", normalized_shape=[6, 10, 10]).output
    np.testing.assert_allclose(engine.group_norm(x, 1).output, ln, rtol=1e-12, atol=1e-12)
    assert engine.group_norm(x, 3).group_size == 200


@settings(max_examples=25, deadline=None)
@given(seed=SEEDS, g=st.integers(1, 3), per=st.integers(1, 3), batched=st.booleans(), eps=st.sampled_from([0.0, 1e-5]))
def test_each_group_has_zero_mean_and_unit_variance(seed, g, per, batched, eps):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, g * per, 2, 3) if batched else (g * per, 2, 3)) * 3 + 1
    xh = engine.group_norm(x, g, eps=eps).x_hat
    groups = (xh if batched else xh[None]).reshape(-1, g, per * 6)
    raw = (x if batched else x[None]).reshape(-1, g, per * 6)
    np.testing.assert_allclose(groups.mean(-1), 0, atol=1e-12)
    np.testing.assert_allclose(groups.var(-1), 1 / (1 + eps / raw.var(-1)), rtol=1e-9)


@settings(max_examples=15, deadline=None)
@given(seed=SEEDS, variance=st.sampled_from(["biased", "unbiased"]), instance=st.booleans())
def test_group_and_instance_norm_gradients_by_finite_differences(seed, variance, instance):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 4, 1, 3))
    w, b, d = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal(x.shape)

    def run(xx, ww, bb, grad=None):
        if instance:
            return engine.instance_norm(xx, ww, bb, affine=True, eps=1e-3, variance=variance, grad_output=grad)
        return engine.group_norm(xx, 2, ww, bb, eps=1e-3, variance=variance, grad_output=grad)

    t = run(x, w, b, d)
    loss = lambda xx, ww, bb: float(np.sum(run(xx, ww, bb).output * d))  # noqa: E731
    close(t.grad_input, numeric_grad(lambda v: loss(v, w, b), x))
    close(t.grad_weight, numeric_grad(lambda v: loss(x, v, b), w))
    close(t.grad_bias, numeric_grad(lambda v: loss(x, w, v), b))


def test_the_ecf_rule_recomputes_the_output_from_given_statistics():
    x = np.arange(16.0).reshape(2, 4, 1, 2) % 5
    t = engine.group_norm(x, 2, [1.0, 2.0, 0.5, 1.0], [0.0, 1.0, -1.0, 0.5])
    got = engine.groupnorm.group_norm_from_stats(x, t.mean, t.var, 2, 1e-5, [1.0, 2.0, 0.5, 1.0], [0.0, 1.0, -1.0, 0.5])
    np.testing.assert_allclose(got, t.output, rtol=1e-12)


@pytest.mark.parametrize("call,error,words", [
    (lambda: engine.group_norm(np.ones((3, 1, 2)), 2), ParamError, ["num_groups", "divide", "3"]),
    (lambda: engine.group_norm(np.ones((4, 1, 2)), 2, num_channels=3), ShapeError, ["num_channels", "4 channels"]),
    (lambda: engine.group_norm(np.ones((2, 1, 2)), 1, weight=[2.0, 1.0], affine=False), ParamError, ["affine", "weight"]),
    (lambda: engine.group_norm(np.ones((2, 2)), 1), ShapeError, ["x", "3-D"]),
    (lambda: engine.group_norm(np.ones((2, 1, 2)), 1, eps=0.0), ParamError, ["zero variance"]),
    (lambda: engine.group_norm(np.ones((2, 1, 2)), 1, weight=[1.0, 2.0, 3.0]), ShapeError, ["weight", "2"]),
    (lambda: engine.group_norm(np.arange(4.0).reshape(2, 1, 2), 1, grad_output=np.ones((2, 2, 1))), ShapeError,
     ["grad_output", "2×1×2"]),
    (lambda: engine.instance_norm(np.ones((2, 1, 1))), ParamError, ["one position", "1×1"]),
    (lambda: engine.instance_norm(np.arange(4.0).reshape(2, 1, 2), bias=1.0), ParamError, ["InstanceNorm2d", "affine"]),
    (lambda: engine.instance_norm(np.arange(4.0).reshape(2, 1, 2), num_features=3), ShapeError, ["num_features"]),
    (lambda: engine.layer_norm(np.ones((2, 3)), normalized_shape=[2, 2]), ShapeError, ["normalized_shape 2×2", "2×3"]),
    (lambda: engine.layer_norm(np.arange(4.0).reshape(2, 2), [1.0, 2.0], normalized_shape=[2, 2]), ShapeError,
     ["gamma", "2×2"]),
    (lambda: engine.layer_norm(np.ones(2), normalized_shape=[]), ParamError, ["normalized_shape", "non-empty"]),
    (lambda: engine.param_count("layer-norm", normalized_shape=[4, 0]), ParamError, ["normalized_shape[1]", "≥ 1"]),
])
def test_bad_input_is_one_line_naming_the_argument(call, error, words):
    with pytest.raises(error) as err:
        call()
    msg = str(err.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, (w, msg)


# --------------------------------------------------------------- LayerNorm over [C, H, W] (torch's normalized_shape)

def test_pytorch_docs_layernorm_over_c_h_w_and_its_parameter_count():
    """torch.nn.LayerNorm's documentation: N, C, H, W = 20, 5, 10, 10 and nn.LayerNorm([C, H, W]):
    one mean per example, γ and β of shape 5×10×10 (1,000 parameters)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, gamma, beta = rng.standard_normal((20, 5, 10, 10)), rng.standard_normal((5, 10, 10)), rng.standard_normal((5, 10, 10))
    module = torch.nn.LayerNorm([5, 10, 10], dtype=torch.float64)
    with torch.no_grad():
        module.weight.copy_(torch.tensor(gamma))
        module.bias.copy_(torch.tensor(beta))
    got = solve.answer_only("layer-norm", {"x": x, "gamma": gamma, "beta": beta, "normalized_shape": [5, 10, 10],
                                           "eps_placement": "inside-sqrt"})
    np.testing.assert_allclose(got["output"], module(torch.tensor(x)).detach().numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got["mean"], x.mean(axis=(1, 2, 3)), rtol=1e-12)
    assert np.shape(got["var"]) == (20,)
    count = solve.answer_only("param-count", {"layer": "layer-norm", "normalized_shape": [5, 10, 10]})["count"]
    assert count == sum(p.numel() for p in module.parameters()) == 1000
    mis = {m.id: m.value for m in solve.mistakes("param-count", {"layer": "layer-norm",
                                                                 "normalized_shape": [5, 10, 10]}).of("count")}
    assert mis == {"per-channel": 10, "last-axis-only": 20}


def test_an_int_normalized_shape_is_the_last_axis_as_before():
    x = [[1.0, 2.0, 4.0], [0.0, -1.0, 5.0]]
    assert np.array_equal(engine.layer_norm(x, normalized_shape=3).output, engine.layer_norm(x).output)
    assert engine.layer_norm([[1.0, 3.0], [2.0, 6.0]], normalized_shape=[2, 2]).mean == 3.0


def test_layer_norm_over_c_h_w_ecf_rule_recomputes_the_output():
    from examprep.ecf import evaluate

    params = {"x": [[[1.0, 3.0], [0.0, 2.0]], [[5.0, 1.0], [2.0, 2.0]]], "normalized_shape": [2, 2],
              "gamma": [[1.0, 2.0], [0.5, 1.0]], "beta": 0.5}
    known = solve.mistakes("layer-norm", params)
    t = known.trace()
    recipe = solve.ecf("layer-norm", "output", known.params, t, ["mean", "var"])
    assert recipe.args["normalized_shape"] == [2, 2]
    got = evaluate(recipe, {"mean": t.mean.tolist(), "var": t.var.tolist()})
    np.testing.assert_allclose(got, t.output, rtol=1e-12)
    for m in known.of("output") + known.of("mean") + known.of("var"):      # each the problem's shape
        assert np.shape(m.value) in (np.shape(t.output), np.shape(t.mean)), m.id


# --------------------------------------------------------------- batch norm's ∂L/∂μ and ∂L/∂σ²

@settings(max_examples=20, deadline=None)
@given(seed=SEEDS, four=st.booleans(), variance=st.sampled_from(["biased", "unbiased"]))
def test_batch_norm_statistics_gradients_by_finite_differences(seed, four, variance):
    """μ and σ² as nodes: L(μ, σ²) = Σ δ·(γ(x − μ)/√(σ² + ε) + β), σ² = Σ(x − μ)²/k also a function of μ
    in training (the total derivative), and a free node for ∂L/∂σ²."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 2, 2, 2) if four else (4, 2))
    g, d = rng.standard_normal(2), rng.standard_normal(x.shape)
    axes = (0, 2, 3) if four else (0,)
    shape = (1, 2, 1, 1) if four else (1, 2)
    k = x.size // 2 - (variance == "unbiased")
    eps = 1e-3
    t = engine.batch_norm(x, g, grad_output=d, eps=eps, variance=variance)

    def loss(mu, var):
        return float(np.sum(d * g.reshape(shape) * (x - mu.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)))

    def var_of(mu):
        return ((x - mu.reshape(shape)) ** 2).sum(axis=axes) / k

    mu0 = x.mean(axis=axes)
    close(t.grad_var, numeric_grad(lambda v: loss(mu0, v), var_of(mu0)))
    close(t.grad_mean, numeric_grad(lambda m: loss(m, var_of(m)), mu0))
    # evaluation: the running statistics are the nodes, σ² free of μ
    rm, rv = np.array([0.5, -1.0]), np.array([2.0, 0.5])
    te = engine.batch_norm(x, g, grad_output=d, eps=eps, training=False, running_mean=rm, running_var=rv)
    close(te.grad_mean, numeric_grad(lambda m: loss(m, rv), rm))
    close(te.grad_var, numeric_grad(lambda v: loss(rm, v), rv))


def test_batch_norm_statistics_gradients_by_the_staged_backward_pass():
    """The staged backward pass through BN's graph (Kratzert's "Understanding the backward pass through
    Batch Normalization Layer", as CS231n's assignment sets it): x̂' = δγ, ∂L/∂(1/σ) = Σ x̂'(x − μ),
    ∂L/∂σ = −∂L/∂(1/σ)/σ², ∂L/∂σ² = ∂L/∂σ/(2σ); ∂L/∂μ = −Σ(x̂'/σ + 2(x − μ)∂L/∂σ²/N), on a 3×2 batch."""
    x = np.array([[1.0, 2.0], [3.0, 6.0], [5.0, 1.0]])
    gamma, d = np.array([2.0, 0.5]), np.array([[1.0, -1.0], [0.0, 2.0], [-1.0, 1.0]])
    eps = 1e-5
    n = x.shape[0]
    mu = x.sum(0) / n
    xmu = x - mu
    sigma = np.sqrt((xmu ** 2).sum(0) / n + eps)
    dxhat = d * gamma
    dinv = (dxhat * xmu).sum(0)
    dsigma = -dinv / sigma ** 2
    dvar = dsigma / (2 * sigma)
    dmu = -(dxhat / sigma + 2 * xmu * dvar / n).sum(0)
    t = engine.batch_norm(x, gamma, grad_output=d, eps=eps)
    np.testing.assert_allclose(t.grad_var, dvar, rtol=1e-12)
    np.testing.assert_allclose(t.grad_mean, dmu, rtol=1e-12, atol=1e-15)
    # channel 1: Σ x̂'(x − μ) = 2·(−2)·1 + 0 + (−2)·2·1 = −8, σ² = 8/3: ∂L/∂σ² = −8·(−½)(8/3)^(−3/2)
    assert t.grad_var[0] == pytest.approx(4 * (8 / 3 + eps) ** -1.5, rel=1e-12)
    assert t.grad_mean[0] == pytest.approx(0.0, abs=1e-12)        # Σ δγ = 0 in channel 1


@pytest.mark.slow
def test_sweep_of_many_random_instances_against_the_torch_modules():
    """2,000 random instances per topic (shapes, groups, affine, variance, ε) against torch.nn.GroupNorm,
    InstanceNorm2d, LayerNorm([C, H, W]) and BN's explicit-tensor autograd (the default run checks 100s
    through hypothesis in tests/verify)."""
    pytest.importorskip("torch")
    from examprep.verify import verify

    for check in verify(2000, seed=38, topics=["group-norm", "instance-norm", "layer-norm", "batch-norm"]):
        assert check.passed, check.first_failure
