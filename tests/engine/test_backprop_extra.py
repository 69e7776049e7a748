"""The gradient-flow engine (residual blocks and stacks, unrolled RNNs, the vanishing-gradient
product, max-pool tie routing) and the recipe ops the backprop/CNN/RNN generators chain.

Torch references on random instances run in test_against_torch.py (REFERENCES covers these topics);
here: central finite differences on the engine's forward pass, sympy's exact arithmetic, invariants
(hypothesis) and bad input."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from examprep import engine, solve
from examprep.engine import activations, ops, optim, regression, rnn
from examprep.errors import ParamError, ShapeError
from tests.engine.fd import H, close, numeric_grad

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


# --------------------------------------------------------------------------------- residual block

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


# -------------------------------------------------------------------------------- residual stack

@given(seed=SEEDS, skip=st.booleans(), act=st.sampled_from(["tanh", "sigmoid"]))
def test_residual_stack_gradient_matches_finite_differences(seed, skip, act):
    rng = np.random.default_rng(seed)
    L = int(rng.integers(1, 7))
    w, b, x = rng.standard_normal(L), rng.standard_normal(L) * 0.5, float(rng.standard_normal())
    t = engine.residual_stack(x, w, b, activation=act, skip=skip)
    f = lambda v: engine.residual_stack(float(v), w, b, activation=act, skip=skip).outputs[-1]  # noqa: E731
    close(t.gradient, (f(x + H) - f(x - H)) / (2 * H))
    assert t.gradient == pytest.approx(np.prod(t.local_derivatives), rel=1e-12)


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


# ----------------------------------------------------------------------------- unrolled RNN, BPTT

@given(seed=SEEDS, nl=st.sampled_from(["tanh", "relu"]))
def test_rnn_unroll_jacobian_matches_finite_differences(seed, nl):
    rng = np.random.default_rng(seed)
    T, n_in, Hn = (int(v) for v in rng.integers(1, 4, 3))
    x, h0 = rng.standard_normal((T, n_in)), rng.standard_normal(Hn)
    w_ih, w_hh, b = rng.standard_normal((Hn, n_in)), rng.standard_normal((Hn, Hn)), rng.standard_normal(Hn)
    t = engine.rnn_unroll(x, h0, w_ih, w_hh, b, None, nonlinearity=nl, grad_output=(g := rng.standard_normal(Hn)))
    last = lambda h: engine.rnn_unroll(x, h, w_ih, w_hh, b, None, nonlinearity=nl).hidden[-1]  # noqa: E731
    jac = np.stack([numeric_grad(lambda v, i=i: last(v)[i], h0) for i in range(Hn)])
    if nl == "relu" and np.any(np.abs(t.pre_activations) < 1e-4):
        return                                   # a kink inside the finite-difference step
    close(t.jacobian, jac)
    close(t.grad_h0, jac.T @ g)


def test_rnn_unroll_first_step_is_rnn_cell():
    p = {"x": [[1.0, -0.5]], "h0": [0.5, 0.0], "weight_ih": [[0.5, 1.0], [-1.0, 0.5]],
         "weight_hh": [[1.0, 0.0], [0.5, -0.5]], "bias_ih": [0.5, 0.0], "bias_hh": [0.0, -0.5]}
    cell = engine.rnn_cell(p["x"][0], p["h0"], p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"])
    np.testing.assert_array_equal(engine.rnn_unroll(**p).hidden[0], cell.h_new)


# ----------------------------------------------------------------------------- vanishing gradient

@given(seed=SEEDS, nl=st.sampled_from(["tanh", "relu"]))
def test_vanishing_gradient_never_exceeds_the_bound(seed, nl):
    rng = np.random.default_rng(seed)
    T = int(rng.integers(1, 40))
    t = engine.vanishing_gradient(float(rng.uniform(-2, 2)), rng.standard_normal(T), u=float(rng.standard_normal()),
                                  h0=float(rng.standard_normal()), nonlinearity=nl)
    assert abs(t.gradient) <= t.bound * (1 + 1e-12)
    assert t.steps == T and t.local_derivatives.shape == (T,)


@given(seed=SEEDS)
def test_vanishing_gradient_matches_finite_differences(seed):
    rng = np.random.default_rng(seed)
    w, x, u, b = float(rng.uniform(-2, 2)), rng.standard_normal(int(rng.integers(1, 10))), float(rng.standard_normal()), 0.1
    t = engine.vanishing_gradient(w, x, u=u, h0=0.2, b=b)
    f = lambda h0: engine.vanishing_gradient(w, x, u=u, h0=h0, b=b).hidden[-1]  # noqa: E731
    close(t.gradient, (f(0.2 + H) - f(0.2 - H)) / (2 * H))


def test_vanishing_gradient_with_relu_is_w_to_the_t_exactly():
    """Positive inputs keep every ReLU active: ∂h_T/∂h_0 = w^T — explodes for w > 1 (sympy exact)."""
    w = sp.Rational(3, 2)
    t = engine.vanishing_gradient(1.5, [1.0] * 20, nonlinearity="relu")
    assert t.gradient == float(w**20) == t.bound
    h = sp.Integer(0)
    for _ in range(20):
        h = w * h + 1
    assert t.hidden[-1] == float(h)


def test_vanishing_gradient_with_small_weight_vanishes_like_w_to_the_t():
    t = engine.vanishing_gradient(0.5, [0.0] * 30)      # h stays 0: tanh'(0) = 1, every factor is w
    assert t.gradient == 0.5**30 == t.bound


# ------------------------------------------------------------------------- max-pool tie routing

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


# ---------------------------------------------------------------------------------- recipe ops

def test_mse_ops_agree_with_linear_regression():
    X, y, w, b = [[1.0, 2.0], [0.0, 1.0], [2.0, -1.0]], [1.0, 0.0, 2.0], [0.5, -0.5], 0.5
    for loss in ("mse", "half-mse"):
        t = engine.linear_regression(X, y, w, b, lr=0.1, loss=loss)
        assert regression.mse_loss(t.predictions, y, loss) == pytest.approx(t.loss, rel=1e-14)
        np.testing.assert_allclose(regression.mse_grad_w(X, t.predictions, y, loss), t.grad_w, rtol=1e-14)
        assert regression.mse_grad_b(t.predictions, y, loss) == pytest.approx(t.grad_b, rel=1e-14)
        np.testing.assert_allclose(optim.sgd_step(w, t.grad_w, 0.1), t.w_new, rtol=1e-14)
    one = engine.linear_regression([1.0, 2.0], [1.0, 3.0], 0.5, lr=0.1)
    assert regression.mse_grad_w([1.0, 2.0], one.predictions, [1.0, 3.0]) == pytest.approx(one.grad_w)


def test_rnn_and_lstm_ops_agree_with_the_cells():
    rng = np.random.default_rng(0)
    x, h, c = rng.standard_normal(2), rng.standard_normal(2), rng.standard_normal(2)
    w_ih, w_hh = rng.standard_normal((8, 2)), rng.standard_normal((8, 2))
    t = engine.lstm_cell(x, h, c, w_ih, w_hh)
    np.testing.assert_allclose(rnn.lstm_cell_state(t.f, c, t.i, t.g), t.c_new, rtol=1e-14)
    np.testing.assert_allclose(rnn.lstm_hidden(t.o, t.c_new), t.h_new, rtol=1e-14)
    u = engine.rnn_unroll([x], h, w_ih[:2], w_hh[:2, :2])
    np.testing.assert_allclose(rnn.rnn_jacobian(u.hidden[0], w_hh[:2, :2]), u.jacobian, rtol=1e-13)
    v = engine.vanishing_gradient(0.7, [1.0, -1.0, 0.5])
    np.testing.assert_allclose(rnn.rnn_local_derivatives(0.7, v.hidden), v.local_derivatives, rtol=1e-13)
    assert ops.product(v.local_derivatives) == pytest.approx(v.gradient, rel=1e-14)


def test_activation_backward_op_is_the_chain_rule():
    a = np.array([-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(activations.activation_backward([1.0, 2.0, 3.0], a, "relu"), [0.0, 0.0, 3.0])
    s = engine.activation("sigmoid", a)
    np.testing.assert_allclose(activations.activation_backward([1.0, 1.0, 1.0], a, "sigmoid"), s.derivative, rtol=1e-15)


# ----------------------------------------------------------------------------------- bad input

BAD = [
    ("residual", {"x": [1, 2], "w1": [[1, 2, 3]]}, ShapeError, ["w1", "2 columns"]),
    ("residual", {"x": [1, 2], "w1": [[1, 2]]}, ShapeError, ["w1", "w2", "x's size 2"]),
    ("residual", {"x": [1, 2], "w1": [[1, 2]], "w2": [[1, 2]]}, ShapeError, ["w2", "2×1"]),
    ("residual", {"x": [1, 2], "w1": [[1, 0], [0, 1]], "grad_output": [1]}, ShapeError, ["grad_output", "size 2"]),
    ("residual", {"x": [1, 2], "w1": [[1, 0], [0, 1]], "b2": [1, 1]}, ParamError, ["b2", "w2"]),
    ("residual", {"x": 1, "w1": 1, "activation": "swish"}, ParamError, ["activation", "relu"]),
    ("residual-stack", {"x": 1, "weights": [1, 2], "biases": [1]}, ShapeError, ["biases", "2"]),
    ("residual-stack", {"x": [1, 2], "weights": [1]}, ParamError, ["x", "number"]),
    ("residual-stack", {"x": 1, "weights": [1], "skip": "yes"}, ParamError, ["skip", "true or false"]),
    ("rnn-unroll", {"x": [[1]], "weight_ih": [[1]], "weight_hh": [[1, 2]]}, ShapeError, ["weight_hh", "square"]),
    ("rnn-unroll", {"x": [[1, 2]], "weight_ih": [[1]], "weight_hh": [[1]]}, ShapeError, ["weight_ih", "1×2"]),
    ("rnn-unroll", {"x": [[1]], "h0": [0, 0], "weight_ih": [[1]], "weight_hh": [[1]]}, ShapeError, ["h0", "length 1"]),
    ("rnn-unroll", {"x": [[1]], "weight_ih": [[1]], "weight_hh": [[1]], "nonlinearity": "sigmoid"}, ParamError,
     ["nonlinearity", "tanh"]),
    ("vanishing-gradient", {"w": [1, 2], "x": [1]}, ParamError, ["w", "number"]),
    ("vanishing-gradient", {"w": 0.5, "x": []}, ShapeError, ["x", "empty"]),
    ("vanishing-gradient", {"w": 0.5}, ParamError, ["x", "missing"]),
    ("vanishing-gradient", {"w": float("nan"), "x": [1]}, ParamError, ["w", "finite"]),
]


@pytest.mark.parametrize("topic,params,err,words", BAD, ids=[f"{t}-{i}" for i, (t, *_) in enumerate(BAD)])
def test_bad_input_names_the_parameter(topic, params, err, words):
    with pytest.raises(err) as info:
        solve.solve(topic, params)
    msg = str(info.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, (w, msg)


def test_max_pool_backward_bad_input():
    with pytest.raises(ShapeError, match="grad_output"):
        engine.max_pool_backward([[1, 2], [3, 4]], 2, [[1, 2]])
    with pytest.raises(ShapeError, match="larger than the input"):
        engine.max_pool_backward([[1, 2]], 2, [[1]])
    with pytest.raises(ParamError, match="ties"):
        engine.max_pool_backward([[1, 2], [3, 4]], 2, [[1]], ties="average")


def test_new_topics_are_listed_by_solve_list():
    names = {t["topic"] for t in __import__("json").loads(solve.topics_json())}
    assert {"residual", "residual-stack", "rnn-unroll", "vanishing-gradient"} <= names


def test_clip_by_norm_matches_torch_clip_grad_norm():
    torch = pytest.importorskip("torch")
    for g, c in (([3.0, 4.0], 1.0), ([0.3, -0.4], 1.0), ([1e4], 5.0), ([-2.0, 0.0, 1.0], 0.5)):
        p = torch.zeros(len(g), dtype=torch.float64, requires_grad=True)
        p.grad = torch.tensor(g, dtype=torch.float64)
        torch.nn.utils.clip_grad_norm_([p], c)
        np.testing.assert_allclose(optim.clip_by_norm(g, c), p.grad.numpy(), rtol=1e-5)   # torch adds 1e-6 to ‖g‖
    assert optim.clip_by_norm(-3.0, 2.0) == -2.0 and optim.clip_by_norm(0.5, 2.0) == 0.5


def test_derivative_from_output_ops():
    s = engine.activation("sigmoid", [-1.0, 0.5]).output
    np.testing.assert_allclose(activations.sigmoid_derivative_from_output(s),
                               engine.activation("sigmoid", [-1.0, 0.5]).derivative)
    t = engine.activation("tanh", [-1.0, 0.5]).output
    np.testing.assert_allclose(activations.tanh_derivative_from_output(t), engine.activation("tanh", [-1.0, 0.5]).derivative)
