"""Dense (fully connected) layers: one layer forward and backward, a two-layer MLP with softmax +
cross-entropy and its backprop, and a two-layer network with a squared-error loss (residual blocks and
stacks: engine/residual.py)."""
from __future__ import annotations

import numpy as np

from examprep.engine._core import Trace, array, choice, matrix, number, shape_str, vector
from examprep.engine.activations import ACTIVATIONS, activation_fn
from examprep.engine.softmax import cross_entropy
from examprep.errors import ParamError, ShapeError


def dense(x, weight, bias=None, grad_output=None, target=None) -> Trace:
    """A dense layer y = W x + b, and its backward pass when grad_output (∂L/∂y) is given — or a
    target t, for the loss L = ½ Σ (y − t)² (summed over a batch too): then ∂L/∂y = y − t.

    Shapes: weight (out, in) as torch.nn.Linear; bias (out,) (zeros when omitted);
    x (in,) → y (out,), or a batch x (N, in) → y (N, out) = x Wᵀ + b (torch.nn.functional.linear);
    target the output's shape.
    Backward (chain rule; e.g. CS231n "Derivatives, Backpropagation, and Vectorization"):
      single: ∂L/∂W = δ xᵀ (out, in), ∂L/∂b = δ, ∂L/∂x = Wᵀ δ;
      batch:  ∂L/∂W = δᵀ X (summed over the batch), ∂L/∂b = Σ_n δ_n, ∂L/∂X = δ W.
    Returns output, with grad_output or target also grad_weight, grad_bias, grad_input, and with
    target grad_output = y − t.
    Raises ShapeError naming the argument whose shape does not fit, ParamError for both grad_output
    and target.
    """
    w = matrix("weight", weight)
    out_f, in_f = w.shape
    x_arr = array("x", x, (1, 2))
    if x_arr.shape[-1] != in_f:
        raise ShapeError(f"x: expected {in_f} features to match weight {out_f}×{in_f}, got {x_arr.shape[-1]}")
    b = np.zeros(out_f) if bias is None else vector("bias", bias, out_f)
    y = x_arr @ w.T + b
    trace = Trace(output=y)
    if target is not None:
        if grad_output is not None:
            raise ParamError("target: give grad_output (∂L/∂y) or a target (L = ½ Σ (y − t)²), not both")
        t = array("target", target, x_arr.ndim)
        if t.shape != y.shape:
            raise ShapeError(f"target: expected the output's shape {shape_str(y.shape)}, got {shape_str(t.shape)}")
        grad_output = y - t
        trace["grad_output"] = grad_output
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


MLP_ACTIVATIONS = ACTIVATIONS + ("identity",)
OUTPUT_ACTIVATIONS = ("sigmoid", "identity")
SQUARED_LOSSES = ("half-sse", "mse")


def _act(name: str, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(φ(a), φ'(a)); "identity" besides engine.activations' functions (ReLU'(0) = 0 as PyTorch)."""
    if name == "identity":
        return a.copy(), np.ones_like(a)
    return activation_fn(name, a)


def mlp_regression(x, target, w1, b1, w2, b2, *, activation: str = "sigmoid",
                   output_activation: str = "sigmoid", loss: str = "half-sse", lr=None) -> Trace:
    """A two-layer network with a squared-error loss, forward, backward and one gradient-descent step.

    The most-copied backprop example (Mazur's "step by step" walk-through; Rumelhart et al. 1986):
        a = W1 x + b1,  h = φ(a),  z = W2 h + b2,  o = ψ(z),
        L = ½ Σ (t − o)²   ("half-sse"), or (1/out) Σ (t − o)²   ("mse", torch.nn.MSELoss).
    Shapes: x (in,), target (out,) or a number, w1 (H, in), b1 (H,), w2 (out, H), b2 (out,) —
    weights as torch.nn.Linear (W x); biases default to zeros.
    Gradients are ∂L/∂(value): grad_output_pre = ∂L/∂z = (o − t)·ψ'(z) for half-sse (2(o − t)/out·ψ'(z)
    for mse); grad_w2 = ∂L/∂z hᵀ; grad_hidden = W2ᵀ ∂L/∂z; grad_hidden_pre = grad_hidden ⊙ φ'(a);
    grad_w1 = ∂L/∂a xᵀ. With lr, every weight and bias takes one step p ← p − lr·∂L/∂p.
    Returns hidden_pre, hidden, output_pre, output, loss, grad_output_pre, grad_w2, grad_b2,
    grad_hidden, grad_hidden_pre, grad_w1, grad_b1 (and w1_new, b1_new, w2_new, b2_new with lr).
    Raises ShapeError naming the argument whose shape does not chain.
    """
    activation = choice("activation", activation, MLP_ACTIVATIONS)
    output_activation = choice("output_activation", output_activation, OUTPUT_ACTIVATIONS)
    loss = choice("loss", loss, SQUARED_LOSSES)
    xv = vector("x", x)
    W1 = matrix("w1", w1, (None, xv.shape[0]))
    hidden = W1.shape[0]
    B1 = np.zeros(hidden) if b1 is None else vector("b1", b1, hidden)
    W2 = matrix("w2", w2, (None, hidden))
    n_out = W2.shape[0]
    B2 = np.zeros(n_out) if b2 is None else vector("b2", b2, n_out)
    t = array("target", target, (0, 1))
    t = np.atleast_1d(t)
    if t.shape[0] != n_out:
        raise ShapeError(f"target: expected {n_out} value{'s' if n_out > 1 else ''} (one per output), got {t.shape[0]}")
    a = W1 @ xv + B1
    h, dh = _act(activation, a)
    z = W2 @ h + B2
    o, do = _act(output_activation, z)
    err = o - t
    if loss == "half-sse":
        value = 0.5 * float(np.sum(err**2))
        grad_o = err
    else:
        value = float(np.mean(err**2))
        grad_o = 2 * err / n_out
    gz = grad_o * do
    gW2 = np.outer(gz, h)
    gh = W2.T @ gz
    ga = gh * dh
    gW1 = np.outer(ga, xv)
    trace = Trace(hidden_pre=a, hidden=h, activation_derivative=dh, output_pre=z, output=o,
                  output_derivative=do, loss=value, grad_output=grad_o, grad_output_pre=gz, grad_w2=gW2,
                  grad_b2=gz.copy(), grad_hidden=gh, grad_hidden_pre=ga, grad_w1=gW1, grad_b1=ga.copy())
    if lr is not None:
        eta = number("lr", lr)
        trace.update(w1_new=W1 - eta * gW1, b1_new=B1 - eta * ga, w2_new=W2 - eta * gW2, b2_new=B2 - eta * gz)
    return trace
