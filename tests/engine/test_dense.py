"""Dense layers, the two-layer MLP and residual blocks and stacks: gradients by finite differences,
sympy exact values, the skip's "+1" path."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
import sympy as sp

from examprep import engine
from examprep.errors import ParamError, ShapeError
from tests.engine.fd import close, numeric_grad, H

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


@given(seed=SEEDS, batch=st.booleans())
def test_dense_gradients(seed, batch):
    rng = np.random.default_rng(seed)
    i, o = rng.integers(1, 4, 2)
    x = rng.standard_normal((2, i) if batch else i)
    w, b = rng.standard_normal((o, i)), rng.standard_normal(o)
    go = rng.standard_normal((2, o) if batch else o)
    t = engine.dense(x, w, b, go)
    L = lambda x_, w_, b_: float(np.sum(go * engine.dense(x_, w_, b_).output))  # noqa: E731
    close(t.grad_input, numeric_grad(lambda v: L(v, w, b), x))
    close(t.grad_weight, numeric_grad(lambda v: L(x, v, b), w))
    close(t.grad_bias, numeric_grad(lambda v: L(x, w, v), b))


@given(seed=SEEDS, batch=st.booleans())
def test_dense_with_a_target_backpropagates_half_the_squared_error(seed, batch):
    # L = ½ Σ (y − t)²: the gradients by finite differences of that loss, δ = y − t among them
    rng = np.random.default_rng(seed)
    i, o = rng.integers(1, 4, 2)
    x = rng.standard_normal((2, i) if batch else i)
    w, b, target = rng.standard_normal((o, i)), rng.standard_normal(o), rng.standard_normal((2, o) if batch else o)
    t = engine.dense(x, w, b, target=target)
    L = lambda x_, w_, b_: 0.5 * float(np.sum((engine.dense(x_, w_, b_).output - target) ** 2))  # noqa: E731
    y = engine.dense(x, w, b).output
    close(t.grad_output, numeric_grad(lambda v: 0.5 * float(np.sum((v - target) ** 2)), y))
    close(t.grad_input, numeric_grad(lambda v: L(v, w, b), x))
    close(t.grad_weight, numeric_grad(lambda v: L(x, v, b), w))
    close(t.grad_bias, numeric_grad(lambda v: L(x, w, v), b))


def test_dense_takes_a_gradient_or_a_target_not_both():
    with pytest.raises(ParamError, match="target: give grad_output"):
        engine.dense([1.0], [[2.0]], grad_output=[1.0], target=[0.0])
    with pytest.raises(ShapeError, match="target: expected the output's shape 2"):
        engine.dense([1.0], [[2.0], [1.0]], target=[0.0])


@given(seed=SEEDS, act=st.sampled_from(["relu", "sigmoid", "tanh", "gelu", "leaky-relu"]))
def test_mlp_backprop_gradients(seed, act):
    rng = np.random.default_rng(seed)
    i, h, c = 3, 4, 3
    p = dict(x=rng.standard_normal(i), w1=rng.standard_normal((h, i)), b1=rng.standard_normal(h),
             w2=rng.standard_normal((c, h)), b2=rng.standard_normal(c))
    target = int(rng.integers(0, c))
    a = p["w1"] @ p["x"] + p["b1"]
    if act in ("relu", "leaky-relu") and np.min(np.abs(a)) < 1e-3:
        return  # finite differences straddle the kink
    t = engine.mlp_backprop(target=target, activation=act, **p)

    def loss(name):
        return lambda v: engine.mlp_backprop(target=target, activation=act, **(p | {name: v})).loss

    close(t.grad_x, numeric_grad(loss("x"), p["x"]))
    close(t.grad_w1, numeric_grad(loss("w1"), p["w1"]))
    close(t.grad_b1, numeric_grad(loss("b1"), p["b1"]))
    close(t.grad_w2, numeric_grad(loss("w2"), p["w2"]))
    close(t.grad_b2, numeric_grad(loss("b2"), p["b2"]))
    close(t.grad_logits, t.grad_b2)            # ∂L/∂z = ∂L/∂b2
    close(t.grad_hidden_pre, t.grad_b1)        # ∂L/∂a = ∂L/∂b1
    # ∂L/∂h: perturb h through the second layer alone
    close(t.grad_hidden, numeric_grad(lambda hh: engine.cross_entropy(p["w2"] @ hh + p["b2"], target).loss, t.hidden))


@given(seed=SEEDS, two=st.booleans(), act=st.sampled_from(["tanh", "sigmoid", "gelu", "leaky-relu"]))
def test_residual_block_gradients_match_finite_differences(seed, two, act):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 4))
    Hn = int(rng.integers(1, 4)) if two else d
    x, w1, b1 = rng.standard_normal(d), rng.standard_normal((Hn, d)), rng.standard_normal(Hn)
    w2, b2 = (rng.standard_normal((d, Hn)), rng.standard_normal(d)) if two else (None, None)
    delta = rng.standard_normal(d)
    t = engine.residual_block(x, w1, b1, w2, b2, activation=act, grad_output=delta)
    L = lambda x_=x, w1_=w1, b1_=b1: float(delta @ engine.residual_block(x_, w1_, b1_, w2, b2, activation=act).output)  # noqa: E731
    close(t.grad_input, numeric_grad(lambda v: L(x_=v), x))
    close(t.grad_w1, numeric_grad(lambda v: L(w1_=v), w1))
    close(t.grad_b1, numeric_grad(lambda v: L(b1_=v), b1))
    jac = np.stack([numeric_grad(lambda v, i=i: engine.residual_block(v, w1, b1, w2, b2, activation=act).output[i], x)
                    for i in range(d)])
    close(t.jacobian, jac)


@given(seed=SEEDS)
def test_residual_jacobian_is_identity_plus_branch_and_the_skip_passes_delta(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 4))
    t = engine.residual_block(rng.standard_normal(d), rng.standard_normal((3, d)), None, rng.standard_normal((d, 3)),
                              activation="relu", grad_output=(delta := rng.standard_normal(d)))
    np.testing.assert_allclose(t.jacobian, np.eye(d) + t.branch_jacobian, rtol=0, atol=0)
    np.testing.assert_allclose(t.grad_input - t.grad_branch, delta, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(t.grad_input, t.jacobian.T @ delta, rtol=1e-12, atol=1e-14)


def test_residual_with_a_dead_relu_branch_still_passes_the_gradient():
    """All pre-activations negative: F'(x) = 0, yet ∂L/∂x = δ — the "+1" path."""
    t = engine.residual_block([1.0, 2.0], [[-1.0, 0.0], [0.0, -1.0]], [0.0, 0.0], activation="relu",
                              grad_output=[3.0, -2.0])
    assert t.grad_input.tolist() == [3.0, -2.0] and t.grad_branch.tolist() == [0.0, 0.0]


def test_residual_exact_with_sympy():
    x, w, b = sp.Rational(1, 2), sp.Rational(3, 2), sp.Rational(-1, 4)
    X = sp.Symbol("X")
    y = X + sp.tanh(w * X + b)
    t = engine.residual_block(0.5, 1.5, [-0.25], activation="tanh", grad_output=2.0)
    assert abs(t.output - float(y.subs(X, x))) < 1e-14
    assert abs(t.grad_input - float(2 * sp.diff(y, X).subs(X, x))) < 1e-14
    assert isinstance(t.grad_input, float) and isinstance(t.jacobian, float)


@given(seed=SEEDS, skip=st.booleans(), act=st.sampled_from(["tanh", "sigmoid"]))
def test_residual_stack_gradient_matches_finite_differences(seed, skip, act):
    rng = np.random.default_rng(seed)
    L = int(rng.integers(1, 7))
    w, b, x = rng.standard_normal(L), rng.standard_normal(L) * 0.5, float(rng.standard_normal())
    t = engine.residual_stack(x, w, b, activation=act, skip=skip)
    f = lambda v: engine.residual_stack(float(v), w, b, activation=act, skip=skip).outputs[-1]  # noqa: E731
    close(t.gradient, (f(x + H) - f(x - H)) / (2 * H))
    assert t.gradient == pytest.approx(np.prod(t.local_derivatives), rel=1e-12)


@given(seed=SEEDS, skip=st.booleans(), act=st.sampled_from(["relu", "sigmoid", "tanh", "gelu", "leaky-relu"]))
def test_residual_stack_bound_holds_for_every_input(seed, skip, act):
    # |∂y_L/∂x| ≤ Π |w_l| m (plain) or Π (1 + |w_l| m) (skips), m the activation's largest slope
    rng = np.random.default_rng(seed)
    w, b = rng.uniform(-2, 2, 4), rng.uniform(-1, 1, 4)
    m = {"relu": 1.0, "sigmoid": 0.25, "tanh": 1.0, "leaky-relu": 1.0, "gelu": 1.1289}[act]
    want = np.prod((1.0 if skip else 0.0) + np.abs(w) * m)
    for x in rng.uniform(-3, 3, 20):
        t = engine.residual_stack(float(x), w, b, activation=act, skip=skip)
        assert t.bound == pytest.approx(want, rel=1e-4)
        assert abs(t.gradient) <= t.bound * (1 + 1e-12)


def test_residual_stack_relu_is_exact():
    """ReLU layers with positive pre-activations: local derivatives 1 + w_l exactly (plain: w_l)."""
    w = [sp.Rational(1, 2), sp.Rational(1, 4), sp.Rational(3, 4)]
    res = engine.residual_stack(1.0, [float(v) for v in w], activation="relu")
    assert res.local_derivatives.tolist() == [float(1 + v) for v in w]
    assert res.gradient == float(sp.prod([1 + v for v in w]))
    plain = engine.residual_stack(1.0, [0.5, 0.25, 2.0], activation="relu", skip=False)
    assert plain.gradient == 0.25 and plain.outputs.tolist() == [0.5, 0.125, 0.25]


@given(seed=SEEDS)
def test_skips_keep_the_gradient_away_from_zero(seed):
    """With non-negative branch slopes (tanh, w_l ≥ 0) every residual factor is ≥ 1, every plain one
    ≤ max|w_l|: depth cannot make the residual gradient vanish."""
    rng = np.random.default_rng(seed)
    w = rng.uniform(0, 0.9, int(rng.integers(5, 30)))
    res = engine.residual_stack(0.3, w, activation="tanh")
    plain = engine.residual_stack(0.3, w, activation="tanh", skip=False)
    assert res.gradient >= 1.0 and abs(plain.gradient) <= 0.9 ** len(w)


# ------------------------------------------------------------------ mlp-regression (issue 18)

MAZUR = dict(x=[0.05, 0.10], target=[0.01, 0.99], w1=[[0.15, 0.20], [0.25, 0.30]], b1=[0.35, 0.35],
             w2=[[0.40, 0.45], [0.50, 0.55]], b2=[0.60, 0.60])


def test_mlp_regression_reproduces_the_step_by_step_backprop_example():
    # Matt Mazur, "A Step by Step Backpropagation Example" (2015): E_total = 0.298371109, and after
    # one step with η = 0.5, w5 = 0.35891648, w1 = 0.149780716 (he updates w1 with the OLD w5..w8)
    t = engine.mlp_regression(**MAZUR, lr=0.5)
    assert abs(t.loss - 0.298371109) < 1e-9
    assert abs(t.w2_new[0, 0] - 0.35891648) < 1e-8 and abs(t.w1_new[0, 0] - 0.149780716) < 1e-9


@given(seed=st.integers(0, 2**32 - 1), act=st.sampled_from(["sigmoid", "tanh", "identity", "relu"]),
       out_act=st.sampled_from(["sigmoid", "identity"]), loss=st.sampled_from(["half-sse", "mse"]))
def test_mlp_regression_gradients_by_finite_differences(seed, act, out_act, loss):
    rng = np.random.default_rng(seed)
    x, t_ = rng.standard_normal(3), rng.standard_normal(2)
    w1, b1, w2, b2 = rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal((2, 4)), rng.standard_normal(2)
    kw = dict(activation=act, output_activation=out_act, loss=loss)
    tr = engine.mlp_regression(x, t_, w1, b1, w2, b2, **kw)
    f = lambda a, b, c, d: engine.mlp_regression(x, t_, a, b, c, d, **kw).loss  # noqa: E731
    if act == "relu" and np.any(np.abs(tr.hidden_pre) < 1e-4):
        return                                   # a kink of ReLU: no derivative to compare
    close(tr.grad_w1, numeric_grad(lambda v: f(v, b1, w2, b2), w1))
    close(tr.grad_b1, numeric_grad(lambda v: f(w1, v, w2, b2), b1))
    close(tr.grad_w2, numeric_grad(lambda v: f(w1, b1, v, b2), w2))
    close(tr.grad_b2, numeric_grad(lambda v: f(w1, b1, w2, v), b2))


def test_mlp_regression_bad_shapes_name_the_argument():
    from examprep.errors import ShapeError
    with pytest.raises(ShapeError, match="target"):
        engine.mlp_regression(MAZUR["x"], [0.1, 0.2, 0.3], MAZUR["w1"], MAZUR["b1"], MAZUR["w2"], MAZUR["b2"])
    with pytest.raises(ShapeError, match="w2"):
        engine.mlp_regression(MAZUR["x"], [0.1], MAZUR["w1"], MAZUR["b1"], [[1.0, 2.0, 3.0]], None)
