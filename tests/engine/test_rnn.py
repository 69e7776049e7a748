"""Recurrent networks: the GRU conventions against torch and each other, the unrolled RNN's
Jacobians and the vanishing-gradient product by finite differences, the ECF formulas of a step."""
import numpy as np
from hypothesis import given, strategies as st
import pytest
import sympy as sp

from examprep import engine, solve
from examprep.engine import ops, rnn
from examprep.errors import ParamError
from tests.engine.fd import H, close, numeric_grad

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


@given(seed=SEEDS, h=st.integers(1, 4))
def test_gru_conventions_sum_to_h_plus_n(seed, h):
    rng = np.random.default_rng(seed)
    args = (rng.standard_normal(2), rng.standard_normal(h), rng.standard_normal((3 * h, 2)), rng.standard_normal((3 * h, h)))
    lec = engine.gru_cell(*args, convention="lecture")
    pt = engine.gru_cell(*args, convention="pytorch")
    np.testing.assert_allclose(lec.h_new + pt.h_new, args[1] + lec.n, rtol=1e-12)


def test_gru_both_conventions_and_resets_match_torch_gates():
    pytest.importorskip("torch")
    from examprep.verify import random_params
    from tests.verify.helpers import assert_agrees

    rng = np.random.default_rng(1)
    for convention in ("lecture", "pytorch"):
        for reset in ("after", "before"):
            p = random_params("gru-cell", rng) | {"convention": convention, "reset": reset}
            assert_agrees("gru-cell", p)


def test_gru_pytorch_convention_is_torch_grucell_exactly():
    torch = pytest.importorskip("torch")
    from examprep.verify import random_params

    p = random_params("gru-cell", np.random.default_rng(2)) | {"convention": "pytorch", "reset": "after"}
    cell = torch.nn.GRUCell(len(p["x"]), len(p["h"]), dtype=torch.float64)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, name).copy_(torch.tensor(p[name], dtype=torch.float64))
        want = cell(torch.tensor([p["x"]], dtype=torch.float64), torch.tensor([p["h"]], dtype=torch.float64))[0]
    np.testing.assert_allclose(solve.answer_only("gru-cell", p)["h_new"], want.numpy(), rtol=1e-12)


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


@given(seed=SEEDS, nl=st.sampled_from(["tanh", "relu"]))
def test_rnn_jacobian_of_a_sequences_states_is_the_product_by_finite_differences(seed, nl):
    rng = np.random.default_rng(seed)
    T, Hn = (int(v) for v in rng.integers(1, 4, 2))
    x, h0, w_ih, w_hh = rng.standard_normal((T, 1)), rng.standard_normal(Hn), rng.standard_normal((Hn, 1)), \
        rng.standard_normal((Hn, Hn))
    t = engine.rnn_unroll(x, h0, w_ih, w_hh, nonlinearity=nl)
    if nl == "relu" and np.any(np.abs(t.pre_activations) < 1e-4):
        return                                   # a kink inside the finite-difference step
    last = lambda h: engine.rnn_unroll(x, h, w_ih, w_hh, nonlinearity=nl).hidden[-1]  # noqa: E731
    close(rnn.rnn_jacobian(t.hidden, w_hh, nl), np.stack([numeric_grad(lambda v, i=i: last(v)[i], h0) for i in range(Hn)]))


def test_rnn_unroll_first_step_is_rnn_cell():
    p = {"x": [[1.0, -0.5]], "h0": [0.5, 0.0], "weight_ih": [[0.5, 1.0], [-1.0, 0.5]],
         "weight_hh": [[1.0, 0.0], [0.5, -0.5]], "bias_ih": [0.5, 0.0], "bias_hh": [0.0, -0.5]}
    cell = engine.rnn_cell(p["x"][0], p["h0"], p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"])
    np.testing.assert_array_equal(engine.rnn_unroll(**p).hidden[0], cell.h_new)


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


@given(seed=SEEDS, h=st.integers(1, 3))
def test_lstm_backward_along_the_cell_state_matches_finite_differences(seed, h):
    rng = np.random.default_rng(seed)
    x, h0, c = rng.standard_normal(2), rng.standard_normal(h), rng.standard_normal(h)
    w_ih, w_hh, b = rng.standard_normal((4 * h, 2)), rng.standard_normal((4 * h, h)), rng.standard_normal(4 * h)
    delta = rng.standard_normal(h)
    t = engine.lstm_cell(x, h0, c, w_ih, w_hh, b, None, grad_c_new=delta)
    c_new = lambda cc: engine.lstm_cell(x, h0, cc, w_ih, w_hh, b, None).c_new  # noqa: E731
    jac = np.stack([numeric_grad(lambda v, i=i: c_new(v)[i], c) for i in range(h)])
    close(np.diag(t.cell_gradient), jac)                     # c' is element-wise in c: a diagonal Jacobian
    close(t.grad_c, numeric_grad(lambda v: float(delta @ c_new(v)), c))
    assert "grad_c" not in engine.lstm_cell(x, h0, c, w_ih, w_hh, b, None)


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


def test_gru_without_the_reset_gate_is_the_candidate_of_w_h_and_the_cell_otherwise_unchanged():
    """reset="none" (the no-reset mistake) against the GRU equations written out in numpy."""
    rng = np.random.default_rng(7)
    x, h = rng.standard_normal(3), rng.standard_normal(2)
    w_ih, w_hh, b_ih, b_hh = (rng.standard_normal(s) for s in ((6, 3), (6, 2), 6, 6))
    t = engine.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh, reset="none")
    right = engine.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh)
    n = np.tanh(w_ih[4:] @ x + b_ih[4:] + w_hh[4:] @ h + b_hh[4:])
    np.testing.assert_allclose(t.n, n, rtol=1e-12)
    np.testing.assert_allclose(t.h_new, (1 - right.z) * h + right.z * n, rtol=1e-12)
    np.testing.assert_array_equal(t.r, right.r)
    np.testing.assert_allclose(engine.rnn.gru_candidate(x, h, w_ih[4:], w_hh[4:], b_ih[4:], b_hh[4:], right.r, reset="none"),
                               n, rtol=1e-12)
    with pytest.raises(ParamError, match="reset"):
        engine.rnn.gru_candidate(x, h, w_ih[4:], w_hh[4:], b_ih[4:], b_hh[4:], right.r, reset="sideways")


def test_vanishing_gradient_clipped_by_norm_keeps_the_sign_and_caps_the_size():
    t = engine.vanishing_gradient(2.0, [1.0] * 10, nonlinearity="relu", max_norm=5.0)    # ∂h/∂h_0 = 2^10
    assert t.gradient == 1024.0 and t.clipped == 5.0
    assert engine.vanishing_gradient(-0.5, [0.0] * 3, max_norm=5.0).clipped == -0.125        # within the norm: as it is
    with pytest.raises(ParamError, match="max_norm"):
        engine.vanishing_gradient(2.0, [1.0], max_norm=0)
