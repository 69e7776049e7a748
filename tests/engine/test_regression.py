"""Linear regression: exact rationals, finite-difference gradients, the loss and gradient ECF
formulas from given predictions."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
import sympy as sp

from examprep import engine
from examprep.engine import optim, regression
from tests.engine.fd import close, numeric_grad

small = st.integers(-3, 3)


SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


@given(X=st.lists(st.lists(small, min_size=2, max_size=2), min_size=1, max_size=4), data=st.data())
def test_linear_regression_exact_rationals(X, data):
    n = len(X)
    y = data.draw(st.lists(small, min_size=n, max_size=n))
    w = data.draw(st.lists(small, min_size=2, max_size=2))
    Xm, ym, wm, lr = sp.Matrix(X), sp.Matrix(y), sp.Matrix(w), sp.Rational(1, 10)
    e = Xm * wm - ym
    loss = (e.T * e)[0] / n
    gw = 2 * Xm.T * e / n
    t = engine.linear_regression(X, y, w, 0, lr=0.1)
    assert abs(t.loss - float(loss)) < 1e-12
    np.testing.assert_allclose(t.grad_w, [float(g) for g in gw], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(t.w_new, [float(v) for v in wm - lr * gw], rtol=1e-12, atol=1e-13)


@given(seed=SEEDS, loss_kind=st.sampled_from(["mse", "half-mse"]))
def test_linear_regression_gradients(seed, loss_kind):
    rng = np.random.default_rng(seed)
    n, d = rng.integers(1, 5), rng.integers(1, 3)
    X, y, w, b = rng.standard_normal((n, d)), rng.standard_normal(n), rng.standard_normal(d), float(rng.standard_normal())
    t = engine.linear_regression(X, y, w, b, lr=0.1, loss=loss_kind)
    close(t.grad_w, numeric_grad(lambda v: engine.linear_regression(X, y, v, b, lr=0.1, loss=loss_kind).loss, w))
    close(t.grad_b, numeric_grad(lambda v: engine.linear_regression(X, y, w, float(v), lr=0.1, loss=loss_kind).loss,
                                 np.array(b)))
    close(t.w_new, w - 0.1 * t.grad_w)


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


# ------------------------------------------------------------------ logistic regression (issue 18)

@given(seed=st.integers(0, 2**32 - 1), reduction=st.sampled_from(["mean", "sum"]))
def test_logistic_regression_gradient_by_finite_differences(seed, reduction):
    rng = np.random.default_rng(seed)
    X, y = rng.standard_normal((5, 3)) * 3, rng.integers(0, 2, 5)
    w, b = rng.standard_normal(3), float(rng.standard_normal())
    t = engine.logistic_regression(X, y, w, b, reduction=reduction)
    close(t.grad_w, numeric_grad(lambda v: engine.logistic_regression(X, y, v, b, reduction=reduction).loss, w))
    close(t.grad_b, numeric_grad(lambda v: engine.logistic_regression(X, y, w, float(v), reduction=reduction).loss,
                                 np.array(b)))


def test_logistic_regression_exact_at_zero_weights():
    # z = 0: p = 1/2 and each loss is ln 2; ∂L/∂w = Xᵀ(1/2 − y)/N
    X, y = [[1, 2], [3, -1], [0, 1]], [1, 0, 1]
    t = engine.logistic_regression(X, y, [0, 0])
    assert abs(t.loss - float(sp.log(2))) < 1e-15
    want = (sp.Matrix(X).T * sp.Matrix([sp.Rational(1, 2) - v for v in y]) / 3)
    np.testing.assert_allclose(t.grad_w, [float(v) for v in want], rtol=1e-15)


def test_logistic_loss_is_stable_for_large_logits():
    t = engine.logistic_regression([[1000.0], [-1000.0]], [0, 1], [1.0])
    assert np.isfinite(t.loss) and abs(t.loss - 1000.0) < 1e-9


def test_bce_from_given_probabilities_matches_torch_binary_cross_entropy():
    torch = pytest.importorskip("torch")
    p = np.array([0.2, 0.75, 0.5, 0.9])
    y = np.array([0.0, 1.0, 1.0, 0.0])
    X = np.array([[1.0, -2.0], [0.5, 1.0], [-1.0, 0.0], [2.0, 3.0]])
    for reduction in ("mean", "sum"):
        want = torch.nn.functional.binary_cross_entropy(torch.tensor(p), torch.tensor(y), reduction=reduction)
        assert regression.bce_from_probs(p, y, reduction) == pytest.approx(float(want), rel=1e-12)
        # the gradient through the logits, by autograd: z with σ(z) = p
        z = torch.tensor(np.log(p / (1 - p)), requires_grad=True)
        torch.nn.functional.binary_cross_entropy_with_logits(z, torch.tensor(y), reduction=reduction).backward()
        np.testing.assert_allclose(regression.bce_grad_w(X, p, y, reduction), X.T @ z.grad.numpy(), rtol=1e-12)
        assert regression.bce_grad_b(p, y, reduction) == pytest.approx(float(z.grad.sum()), rel=1e-12)
    with pytest.raises(Exception, match="probs"):
        regression.bce_from_probs([0.0, 0.5], [0, 1])


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_logistic_regression_lr_of_the_other_reduction_takes_torchs_same_step(reduction):
    # torch.optim.SGD on BCEWithLogitsLoss: the step with lr under this reduction equals the step with
    # lr_other_reduction under the other one
    torch = pytest.importorskip("torch")
    X = np.array([[1.0, -2.0], [0.5, 1.0], [-1.0, 0.0], [2.0, 3.0]])
    y = np.array([0.0, 1.0, 1.0, 0.0])
    t = engine.logistic_regression(X, y, [0.5, -0.25], 0.5, reduction=reduction, lr=0.1)
    other = "sum" if reduction == "mean" else "mean"

    def step(red: str, lr: float) -> np.ndarray:
        wb = torch.tensor([0.5, -0.25, 0.5], dtype=torch.float64, requires_grad=True)
        opt = torch.optim.SGD([wb], lr=lr)
        z = torch.tensor(X) @ wb[:2] + wb[2]
        torch.nn.functional.binary_cross_entropy_with_logits(z, torch.tensor(y), reduction=red).backward()
        opt.step()
        return wb.detach().numpy()

    np.testing.assert_allclose(step(reduction, 0.1), [*t.w_new, t.b_new], rtol=1e-12)
    np.testing.assert_allclose(step(other, t.lr_other_reduction), [*t.w_new, t.b_new], rtol=1e-12)


@pytest.mark.parametrize("loss", ["mse", "half-mse"])
def test_linear_regression_other_loss_gradient_and_lr_are_torchs(loss):
    # autograd of the other loss (torch.nn.MSELoss, or half of it) gives grad_w_other_loss, and
    # torch.optim.SGD on it with lr_other_loss takes this loss's step
    torch = pytest.importorskip("torch")
    X, y = np.array([[1.0, -2.0], [0.5, 1.0], [-1.0, 0.0], [2.0, 3.0]]), np.array([1.0, -1.0, 0.5, 2.0])
    t = engine.linear_regression(X, y, [0.5, -0.25], 0.5, lr=0.1, loss=loss)
    half_other = loss == "mse"

    wb = torch.tensor([0.5, -0.25, 0.5], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([wb], lr=t.lr_other_loss)
    mse = torch.nn.functional.mse_loss(torch.tensor(X) @ wb[:2] + wb[2], torch.tensor(y))
    (0.5 * mse if half_other else mse).backward()
    np.testing.assert_allclose(wb.grad.numpy()[:2], t.grad_w_other_loss, rtol=1e-12)
    opt.step()
    np.testing.assert_allclose(wb.detach().numpy(), [*t.w_new, t.b_new], rtol=1e-12)
