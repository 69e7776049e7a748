"""Dense (fully connected) layers, a two-layer MLP with backprop, and linear regression."""
from __future__ import annotations

import numpy as np

from examprep.engine._core import Trace, array, choice, matrix, number, vector
from examprep.engine.activations import ACTIVATIONS, activation_fn
from examprep.engine.softmax import cross_entropy
from examprep.errors import ShapeError


def dense(x, weight, bias=None, grad_output=None) -> Trace:
    """A dense layer y = W x + b, and its backward pass when grad_output (∂L/∂y) is given.

    Shapes: weight (out, in) as torch.nn.Linear; bias (out,) (zeros when omitted);
    x (in,) → y (out,), or a batch x (N, in) → y (N, out) = x Wᵀ + b (torch.nn.functional.linear).
    Backward (chain rule; e.g. CS231n "Derivatives, Backpropagation, and Vectorization"):
      single: ∂L/∂W = δ xᵀ (out, in), ∂L/∂b = δ, ∂L/∂x = Wᵀ δ;
      batch:  ∂L/∂W = δᵀ X (summed over the batch), ∂L/∂b = Σ_n δ_n, ∂L/∂X = δ W.
    Returns output, and with grad_output also grad_weight, grad_bias, grad_input.
    Raises ShapeError naming the argument whose shape does not fit.
    """
    w = matrix("weight", weight)
    out_f, in_f = w.shape
    x_arr = array("x", x, (1, 2))
    if x_arr.shape[-1] != in_f:
        raise ShapeError(f"x: expected {in_f} features to match weight {out_f}×{in_f}, got {x_arr.shape[-1]}")
    b = np.zeros(out_f) if bias is None else vector("bias", bias, out_f)
    y = x_arr @ w.T + b
    trace = Trace(output=y)
    if grad_output is not None:
        g = array("grad_output", grad_output, x_arr.ndim)
        if g.shape != y.shape:
            raise ShapeError(f"grad_output: expected the output's shape {'×'.join(map(str, y.shape))}, "
                             f"got {'×'.join(map(str, g.shape))}")
        if x_arr.ndim == 1:
            trace.update(grad_weight=np.outer(g, x_arr), grad_bias=g.copy(), grad_input=w.T @ g)
        else:
            trace.update(grad_weight=g.T @ x_arr, grad_bias=g.sum(axis=0), grad_input=g @ w)
    return trace


def mlp_backprop(x, target, w1, b1, w2, b2, *, activation: str = "relu", negative_slope: float = 0.01) -> Trace:
    """Forward and backward pass of dense → activation → dense → softmax + cross-entropy.

    Shapes: x (in,), w1 (H, in), b1 (H,), w2 (C, H), b2 (C,), target a class index in [0, C).
    Forward: a = W1 x + b1, h = act(a), z = W2 h + b2, p = softmax(z), L = −log p_target.
    Backward (Goodfellow et al. 2016, §6.5; softmax-CE gradient p − y):
      ∂L/∂z = p − y; ∂L/∂W2 = (∂L/∂z) hᵀ; ∂L/∂b2 = ∂L/∂z; ∂L/∂h = W2ᵀ ∂L/∂z;
      ∂L/∂a = ∂L/∂h ⊙ act'(a); ∂L/∂W1 = (∂L/∂a) xᵀ; ∂L/∂b1 = ∂L/∂a; ∂L/∂x = W1ᵀ ∂L/∂a.
    Returns hidden_pre, hidden, logits, probs, loss, grad_logits, grad_w2, grad_b2, grad_hidden,
    grad_hidden_pre, grad_w1, grad_b1, grad_x.
    Raises ShapeError for sizes that do not chain, ParamError for a bad target or activation.
    """
    x_arr = vector("x", x)
    w1 = matrix("w1", w1, (None, x_arr.shape[0]))
    hidden = w1.shape[0]
    b1 = vector("b1", b1, hidden)
    w2 = matrix("w2", w2, (None, hidden))
    b2 = vector("b2", b2, w2.shape[0])
    activation = choice("activation", activation, ACTIVATIONS)
    a = w1 @ x_arr + b1
    h, dh_da = activation_fn(activation, a, negative_slope)
    z = w2 @ h + b2
    ce = cross_entropy(z, target)
    gz = ce.grad_logits
    gh = w2.T @ gz
    ga = gh * dh_da
    return Trace(hidden_pre=a, hidden=h, logits=z, probs=ce.probs, loss=ce.loss,
                 activation_derivative=dh_da, grad_logits=gz, grad_w2=np.outer(gz, h), grad_b2=gz.copy(),
                 grad_hidden=gh, grad_hidden_pre=ga, grad_w1=np.outer(ga, x_arr), grad_b1=ga.copy(),
                 grad_x=w1.T @ ga)


def linear_regression(X, y, w, b=0.0, *, lr, loss: str = "mse") -> Trace:
    """Predictions, loss, gradient and one gradient-descent step of linear regression.

    Shapes: X (N, d) (or (N,) for one feature, with w a number), y (N,), w (d,), b a number.
    ŷ = X w + b, e = ŷ − y;
    loss "mse": L = (1/N) Σ e², ∂L/∂w = (2/N) Xᵀ e, ∂L/∂b = (2/N) Σ e;
    loss "half-mse": L = (1/2N) Σ e², ∂L/∂w = (1/N) Xᵀ e, ∂L/∂b = (1/N) Σ e
    (the ½ that cancels the 2, as in many textbooks; torch.nn.MSELoss is "mse").
    Step: w ← w − lr·∂L/∂w, b ← b − lr·∂L/∂b.
    Returns predictions, residuals, loss, grad_w, grad_b, w_new, b_new.
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
    if one_feature and np.ndim(w) == 0:
        gw, w_new = float(gw[0]), float(w_new[0])
    return Trace(predictions=pred, residuals=e, loss=value, grad_w=gw, grad_b=gb, w_new=w_new, b_new=b_new)
