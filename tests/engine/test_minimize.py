"""minimize: textbook trajectories recomputed in the test (sympy rationals, the sources' own recurrences),
the gradient against finite differences, Nesterov's two forms against their identity, the tolerance stop,
and bad or hostile objectives refused in one line. torch.optim on the same objective checks random
instances (tests/verify/test_references.py)."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from examprep import solve
from examprep.errors import ExamprepError, ParamError
from tests.engine.fd import numeric_grad


def _answer(**params):
    return solve.answer_only("minimize", params)


def test_d2l_gradient_descent_on_x_squared():
    # d2l 12.3.1: f(x) = x², x₀ = 10, η = 0.2, ten steps: x ← 0.6 x, so x₁₀ = 10·0.6¹⁰ = 0.0604661…
    a = _answer(objective="x**2", params={"x": 10}, lr=0.2, steps=10)
    assert a["params_new"][0] == pytest.approx(float(10 * sp.Rational(3, 5) ** 10), rel=1e-14)
    assert a["steps_taken"] == 10 and len(a["losses"]) == 11 and a["losses"][0] == 100


def test_keras_sgd_docstring_steps():
    # tf.keras.optimizers.SGD's usage: var = 1, loss = var²/2, lr 0.1: one step gives 0.9; with momentum 0.9 the
    # first step moves by 0.1 and the second by 0.18
    assert _answer(objective="x**2/2", params={"x": 1.0}, lr=0.1, steps=1)["params_new"][0] == pytest.approx(0.9)
    a = _answer(objective="x**2/2", params={"x": 1.0}, lr=0.1, steps=2, optimizer="momentum", momentum=0.9)
    x1, x2 = a["params_per_step"][:, 0]
    assert 1 - x1 == pytest.approx(0.1) and x1 - x2 == pytest.approx(0.18)


def test_d2l_momentum_on_the_ill_conditioned_quadratic():
    # d2l 12.6: f = 0.1 x1² + 2 x2² from (−5, −2), momentum_2d with η = 0.6, β = 0.5, twenty steps:
    # v ← β v + ∇f, x ← x − η v (its own recurrence, in rationals)
    eta, beta = sp.Rational(3, 5), sp.Rational(1, 2)
    x, v = [sp.Integer(-5), sp.Integer(-2)], [0, 0]
    for _ in range(20):
        g = [sp.Rational(1, 5) * x[0], 4 * x[1]]
        v = [beta * v[i] + g[i] for i in range(2)]
        x = [x[i] - eta * v[i] for i in range(2)]
    a = _answer(objective="0.1*x1**2 + 2*x2**2", params={"x1": -5, "x2": -2}, lr=0.6, steps=20, optimizer="momentum",
                momentum=0.5)
    np.testing.assert_allclose(a["params_new"], [float(c) for c in x], rtol=1e-9, atol=1e-13)


@given(x=st.floats(-2, 2), y=st.floats(-2, 2))
def test_the_symbolic_gradient_agrees_with_finite_differences(x, y):
    text = "exp(0.5*x)*y**2 + log(1 + x**2) - sqrt(2 + y**2)/3"
    a = _answer(objective=text, params={"x": x, "y": y}, lr=0.0, steps=1)

    def f(p):
        return float(np.exp(0.5 * p[0]) * p[1] ** 2 + np.log(1 + p[0] ** 2) - np.sqrt(2 + p[1] ** 2) / 3)
    np.testing.assert_allclose(a["grads_per_step"][0], numeric_grad(f, np.array([x, y])), rtol=1e-6, atol=1e-7)


@given(a=st.sampled_from([0.5, 1.0, 2.0, 3.0]), b=st.sampled_from([0.25, 1.0, 4.0]), mu=st.sampled_from([0.5, 0.9]),
       lr=st.sampled_from([0.05, 0.1]), steps=st.integers(1, 6))
def test_torchs_nesterov_keeps_the_look_ahead_point_of_the_look_ahead_form(a, b, mu, lr, steps):
    # with v′ = η v, torch's parameters are p − μ v′ of the look-ahead form at every step (Sutskever et al. 2013)
    p = {"objective": f"{a}*x**2 + {b}*x*y + y**2", "params": {"x": 1.5, "y": -1.0}, "lr": lr, "steps": steps,
         "optimizer": "nesterov", "momentum": mu}
    ours = solve.compute("minimize", p)[2]
    look = solve.compute("minimize", p | {"nesterov_form": "look-ahead"})[2]
    np.testing.assert_allclose(ours.params_new, look.params_new - mu * look.velocity, rtol=1e-12, atol=1e-12)


def test_the_tolerance_stops_at_the_first_small_update():
    # x ← 0.8 x from 1: the k-th update is 0.2·0.8^(k−1), below 1e-3 first at k = 25
    k = next(k for k in range(1, 100) if 0.2 * 0.8 ** (k - 1) < 1e-3)
    a = _answer(objective="x**2", params={"x": 1}, lr=0.1, tolerance=1e-3)
    assert a["steps_taken"] == k and a["converged"] is True
    capped = _answer(objective="x**2", params={"x": 1}, lr=0.1, tolerance=1e-3, steps=5)
    assert capped["steps_taken"] == 5 and capped["converged"] is False


def test_linear_regression_model_by_hand():
    # X = [1, 2], y = [2, 4], w = b = 0, MSE: ∂L/∂w = (2/2)Σ x(ŷ − y) = −10, ∂L/∂b = −6; lr 0.1 → w = 1, b = 0.6
    a = _answer(model="linear-regression", X=[[1.0], [2.0]], y=[2.0, 4.0], params={"w": [0.0]}, lr=0.1, steps=1)
    np.testing.assert_allclose(a["params_new"], [1.0, 0.6])
    assert a["losses"][0] == 10.0


def test_the_objective_text_never_reaches_sympify(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("sympify called on text")
    monkeypatch.setattr(sp, "sympify", refuse)
    monkeypatch.setattr(sp.parsing.sympy_parser, "parse_expr", refuse)
    solve.answer_only("minimize", {"objective": "3*u**2 - u + 7", "params": {"u": 2}, "lr": 0.1, "steps": 2})


REFUSED = [
    ({"objective": "__import__('os').system('true')", "params": {"x": 1}}, "objective"),
    ({"objective": "x.real", "params": {"x": 1}}, "attributes"),
    ({"objective": "max(x, 0)", "params": {"x": 1}}, "no derivative"),
    ({"objective": "x < 1", "params": {"x": 1}}, "no derivative"),
    ({"objective": "x**2 + z", "params": {"x": 1}}, "'z'"),
    ({"objective": "x**2", "params": {"x": 1, "y": 2}}, "'y' does not appear"),
    ({"objective": "log(x)", "params": {"x": 1}, "lr": 2, "steps": 3}, "undefined"),
    ({"objective": "x**2", "params": {"x": 1}, "lr": 1e200, "steps": 5}, "diverges"),
    ({"objective": "x**2", "params": {"x": "one"}}, "params.x"),
    ({"objective": "x**2", "params": [1]}, "params"),
    ({"objective": "x**2", "model": "mlp", "params": {"x": 1}}, "not both"),
    ({"model": "linear-regression", "params": {"w": [1]}, "X": [[1]]}, "y: missing"),
    ({"model": "linear-regression", "params": {"w": [1], "v": 2}, "X": [[1]], "y": [1]}, "'v'"),
    ({"objective": "x**2", "params": {"x": 1}, "steps": None}, "steps"),
    ({"objective": "x**2", "params": {"x": 1}, "optimizer": "momentum", "nesterov_form": "look-ahead"}, "nesterov"),
    ({"objective": "x**2", "params": {"x": 1}, "optimizer": "sgd", "momentum": 0.9}, "momentum"),
]


@pytest.mark.parametrize("params, words", REFUSED, ids=[str(i) for i in range(len(REFUSED))])
def test_bad_input_is_refused_in_one_line_naming_it(params, words):
    full = {"lr": 0.1, "steps": 2} | params
    with pytest.raises(ExamprepError) as err:
        solve.solve("minimize", {k: v for k, v in full.items() if v is not None})
    assert words in str(err.value) and "\n" not in str(err.value)
    assert isinstance(err.value, ParamError)
