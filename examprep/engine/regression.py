"""Linear regression: predictions, the mean squared error (or ½·MSE), its gradient and one
gradient-descent step; and the loss and gradients from given predictions (ECF rules)."""
from __future__ import annotations

import numpy as np

from examprep.engine._core import Trace, array, choice, number, same_shape, sigmoid, vector
from examprep.errors import ParamError, ShapeError


def linear_regression(X, y, w, b=0.0, *, lr, loss: str = "mse") -> Trace:
    """Predictions, loss, gradient and one gradient-descent step of linear regression.

    Shapes: X (N, d) (or (N,) for one feature, with w a number), y (N,), w (d,), b a number.
    ŷ = X w + b, e = ŷ − y;
    loss "mse": L = (1/N) Σ e², ∂L/∂w = (2/N) Xᵀ e, ∂L/∂b = (2/N) Σ e;
    loss "half-mse": L = (1/2N) Σ e², ∂L/∂w = (1/N) Xᵀ e, ∂L/∂b = (1/N) Σ e
    (the ½ that cancels the 2, as in many textbooks; torch.nn.MSELoss is "mse").
    Step: w ← w − lr·∂L/∂w, b ← b − lr·∂L/∂b.
    Returns predictions, residuals, loss, grad_w, grad_b, w_new, b_new, and for the other loss L'
    (½·MSE for MSE, MSE for ½·MSE): grad_w_other_loss ∂L'/∂w and lr_other_loss, the learning rate
    that takes the same step on L' (2·lr from MSE to ½·MSE: its gradient is half as large).
    Raises ShapeError when X, y and w do not agree, ParamError for a missing or non-finite lr.
    """
    loss = choice("loss", loss, ("mse", "half-mse"))
    X_arr = array("X", X, (1, 2))
    one_feature = X_arr.ndim == 1
    n = X_arr.shape[0]
    y_arr = vector("y", y, n)
    if one_feature:
        w_arr = array("w", w, (0, 1))
        if w_arr.size != 1:
            raise ShapeError(f"w: X has one feature (a vector), so w must be one number, got {w_arr.size} values")
        X2 = X_arr[:, None]
        w_vec = w_arr.reshape(1)
    else:
        X2 = X_arr
        w_vec = vector("w", w, X_arr.shape[1])
    b_val = number("b", b)
    lr_val = number("lr", lr)
    pred = X2 @ w_vec + b_val
    e = pred - y_arr
    factor = 2.0 if loss == "mse" else 1.0
    value = float(np.mean(e**2)) / (1.0 if loss == "mse" else 2.0)
    gw = factor / n * (X2.T @ e)
    gb = factor / n * float(e.sum())
    w_new = w_vec - lr_val * gw
    b_new = b_val - lr_val * gb
    gw_other = (1.0 if loss == "mse" else 2.0) / n * (X2.T @ e)
    if one_feature and np.ndim(w) == 0:
        gw, w_new, gw_other = float(gw[0]), float(w_new[0]), float(gw_other[0])
    return Trace(predictions=pred, residuals=e, loss=value, grad_w=gw, grad_b=gb, w_new=w_new, b_new=b_new,
                 grad_w_other_loss=gw_other, lr_other_loss=lr_val * (2.0 if loss == "mse" else 0.5))


# ------------------------------------------------ from given predictions (ECF rules)

def _mse_parts(predictions, target, loss):
    p, t = array("predictions", predictions, 1), array("target", target, 1)
    same_shape("predictions", p, t, "target")
    return p - t, (2.0 if choice("loss", loss, ("mse", "half-mse")) == "mse" else 1.0)


def mse_loss(predictions, target, loss="mse") -> float:
    """(1/N) Σ (ŷ − y)² ("mse") or (1/2N) Σ (ŷ − y)² ("half-mse")."""
    e, factor = _mse_parts(predictions, target, loss)
    return float(np.mean(e**2) * factor / 2.0)


def mse_grad_w(X, predictions, target, loss="mse") -> np.ndarray:
    """∂L/∂w = (2/N) Xᵀ(ŷ − y) ("mse") or (1/N) Xᵀ(ŷ − y) ("half-mse"); X (N, d) or (N,) for one feature."""
    e, factor = _mse_parts(predictions, target, loss)
    X_ = array("X", X, (1, 2))
    if X_.shape[0] != e.shape[0]:
        raise ShapeError(f"X: expected {e.shape[0]} rows (one per prediction), got {X_.shape[0]}")
    g = factor / e.shape[0] * (X_.T @ e)
    return float(g) if X_.ndim == 1 else g


def mse_grad_b(predictions, target, loss="mse") -> float:
    """∂L/∂b = (2/N) Σ (ŷ − y) ("mse") or (1/N) Σ (ŷ − y) ("half-mse")."""
    e, factor = _mse_parts(predictions, target, loss)
    return float(factor / e.shape[0] * e.sum())


def _softplus(z: np.ndarray) -> np.ndarray:
    """log(1 + e^z), stable for large |z|."""
    return np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))


def logistic_regression(X, y, w, b=0.0, *, reduction: str = "mean", lr=None) -> Trace:
    """Logistic regression: binary cross-entropy from the logits, its gradient and one step.

    z = X w + b,  p = σ(z),  ℓ_n = −[y_n log p_n + (1 − y_n) log(1 − p_n)] computed from the logits as
    softplus(z) − y z (stable for large |z|, as torch.nn.BCEWithLogitsLoss); L = mean or sum of ℓ.
    ∂L/∂z = (p − y) (÷ N for the mean); ∂L/∂w = Xᵀ ∂L/∂z; ∂L/∂b = Σ ∂L/∂z.
    Shapes: X (N, d), or (N,) for one feature with w a number; y (N,) of values in [0, 1] (labels 0/1;
    soft labels as PyTorch); w (d,); b a number.
    Returns logits, probs, losses (per example), loss, grad_logits, grad_w, grad_b (and w_new, b_new
    with lr: p ← p − lr·∂L/∂p, and lr_other_reduction: the learning rate that takes the same step
    under the other reduction, lr/N for the sum from the mean and lr·N for the mean from the sum,
    since the sum's gradient is N times the mean's).
    Raises ShapeError naming the argument that does not fit, ParamError for labels outside [0, 1].
    """
    reduction = choice("reduction", reduction, ("mean", "sum"))
    Xa = array("X", X, (1, 2))
    one_feature = Xa.ndim == 1
    if one_feature:
        Xa = Xa[:, None]
    n, d = Xa.shape
    ya = vector("y", y, n)
    if np.any((ya < 0) | (ya > 1)):
        raise ParamError("y: expected labels 0 or 1 (or probabilities in [0, 1])")
    wa = array("w", w, (0, 1))
    w_scalar = wa.ndim == 0
    wa = np.atleast_1d(wa)
    if wa.shape[0] != d:
        raise ShapeError(f"w: expected {d} weight{'s' if d > 1 else ''} (one per feature of X), got {wa.shape[0]}")
    bb = number("b", b)
    z = Xa @ wa + bb
    p = sigmoid(z)
    losses = _softplus(z) - ya * z
    loss = float(losses.mean() if reduction == "mean" else losses.sum())
    gz = (p - ya) / (n if reduction == "mean" else 1)
    gw = Xa.T @ gz
    gb = float(gz.sum())
    shape_w = (lambda v: float(v[0])) if w_scalar else (lambda v: v)
    trace = Trace(logits=z, probs=p, losses=losses, loss=loss, grad_logits=gz, grad_w=shape_w(gw), grad_b=gb)
    if lr is not None:
        eta = number("lr", lr)
        trace.update(w_new=shape_w(wa - eta * gw), b_new=bb - eta * gb,
                     lr_other_reduction=eta / n if reduction == "mean" else eta * n)
    return trace


def _bce_parts(probs, target, reduction):
    p, t = array("probs", probs, 1), array("target", target, 1)
    same_shape("probs", p, t, "target")
    return p, t, (p.shape[0] if choice("reduction", reduction, ("mean", "sum")) == "mean" else 1)


def bce_from_probs(probs, target, reduction="mean") -> float:
    """Binary cross-entropy −Σ [y log p + (1 − y) log(1 − p)] from given probabilities (mean or sum): an
    ECF rule, the loss from a student's own probabilities."""
    p, t, n = _bce_parts(probs, target, reduction)
    if np.any((p <= 0) | (p >= 1)):
        raise ParamError("probs: expected probabilities strictly between 0 and 1")
    return float(-(t * np.log(p) + (1 - t) * np.log(1 - p)).sum() / n)


def bce_grad_w(X, probs, target, reduction="mean") -> np.ndarray:
    """∂L/∂w = Xᵀ(p − y) (÷ N for the mean) from given probabilities; X (N, d) or (N,) for one feature."""
    p, t, n = _bce_parts(probs, target, reduction)
    X_ = array("X", X, (1, 2))
    if X_.shape[0] != p.shape[0]:
        raise ShapeError(f"X: expected {p.shape[0]} rows (one per probability), got {X_.shape[0]}")
    g = X_.T @ (p - t) / n
    return float(g) if X_.ndim == 1 else g


def bce_grad_b(probs, target, reduction="mean") -> float:
    """∂L/∂b = Σ (p − y) (÷ N for the mean) from given probabilities."""
    p, t, n = _bce_parts(probs, target, reduction)
    return float((p - t).sum() / n)
