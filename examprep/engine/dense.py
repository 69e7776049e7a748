"""Dense (fully connected) layers: one layer forward and backward, a two-layer MLP with softmax +
cross-entropy and its backprop, and residual blocks y = x + F(x) with the gradient through both paths."""
from __future__ import annotations

import numpy as np

from examprep.engine._core import Trace, array, boolean, choice, matrix, number, shape_str, vector
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


# ------------------------------------------------------------------------ residual connections

def _square_or_scalar(name: str, value) -> np.ndarray:
    """A weight given as a matrix, or as a number when the block works on one feature."""
    arr = array(name, value, (0, 2))
    return arr.reshape(1, 1) if arr.ndim == 0 else arr


def residual_block(x, w1, b1=None, w2=None, b2=None, *, activation: str = "relu", negative_slope: float = 0.01,
                   grad_output=None) -> Trace:
    """A residual block y = x + F(x) and the gradient through both of its paths.

    Branch: a = W1 x + b1, h = φ(a), and F(x) = W2 h + b2 when w2 is given (a two-layer branch,
    as in He et al. 2016, "Deep Residual Learning", eq. 1, without the final ReLU), else F(x) = h.
    Shapes: x (d,) or a number (d = 1); w1 (H, d) (a number when d = H = 1); b1 (H,);
    w2 (d, H), b2 (d,); without w2, H must equal d so that x + F(x) is defined.
    Jacobian (He et al. 2016b, "Identity Mappings", eq. 5): ∂y/∂x = I + ∂F/∂x with
    ∂F/∂x = W2 diag(φ'(a)) W1 (or diag(φ'(a)) W1 without w2) — the identity is the "+1 path":
    however small ∂F/∂x is, δ = ∂L/∂y reaches x unchanged.
    With grad_output δ (d,): ∂L/∂h = W2ᵀ δ, ∂L/∂a = ∂L/∂h ⊙ φ'(a), grad_branch = W1ᵀ ∂L/∂a (the
    branch's share), grad_input = δ + grad_branch; and the weights' gradients grad_w1 = ∂L/∂a xᵀ,
    grad_b1 = ∂L/∂a (grad_w2 = δ hᵀ, grad_b2 = δ with w2).
    Returns branch_pre (a), branch_hidden (h), activation_derivative φ'(a), branch (F(x)), output,
    branch_jacobian, jacobian; with grad_output also grad_hidden, grad_branch_pre, grad_branch,
    grad_input, grad_w1, grad_b1 (and grad_w2, grad_b2). A number x gives numbers back.
    Raises ShapeError when the sizes do not chain or F(x) has another size than x, ParamError for
    an unknown activation or non-finite values.
    """
    activation = choice("activation", activation, ACTIVATIONS)
    slope = number("negative_slope", negative_slope)
    x_arr = array("x", x, (0, 1))
    scalar = x_arr.ndim == 0
    xv = x_arr.reshape(1) if scalar else x_arr
    d = xv.shape[0]
    W1 = _square_or_scalar("w1", w1)
    if W1.shape[1] != d:
        raise ShapeError(f"w1: expected {d} columns to match x, got shape {shape_str(W1.shape)}")
    H = W1.shape[0]
    B1 = np.zeros(H) if b1 is None else array("b1", b1, (0, 1)).reshape(-1)
    if B1.shape != (H,):
        raise ShapeError(f"b1: expected {H} values (the rows of w1), got {B1.size}")
    a = W1 @ xv + B1
    h, dphi = activation_fn(activation, a, slope)
    if w2 is not None:
        W2 = _square_or_scalar("w2", w2)
        if W2.shape != (d, H):
            raise ShapeError(f"w2: expected shape {d}×{H} (back to x's size {d}), got {shape_str(W2.shape)}")
        B2 = np.zeros(d) if b2 is None else array("b2", b2, (0, 1)).reshape(-1)
        if B2.shape != (d,):
            raise ShapeError(f"b2: expected {d} values, got {B2.size}")
        F = W2 @ h + B2
        JF = W2 @ (dphi[:, None] * W1)
    else:
        if b2 is not None:
            raise ParamError("b2: only with w2 (a two-layer branch)")
        if H != d:
            raise ShapeError(f"w1: without w2 the branch must keep x's size {d}, but w1 has {H} rows; "
                             f"give w2 ({d}×{H}) or a {d}×{d} w1")
        W2 = None
        F = h
        JF = dphi[:, None] * W1
    y = xv + F
    J = np.eye(d) + JF
    trace = Trace(branch_pre=a, branch_hidden=h, activation_derivative=dphi, branch=F, output=y,
                  branch_jacobian=JF, jacobian=J)
    if grad_output is not None:
        g = array("grad_output", grad_output, (0, 1)).reshape(-1)
        if g.shape != (d,):
            raise ShapeError(f"grad_output: expected the output's size {d}, got {g.size}")
        gh = W2.T @ g if W2 is not None else g.copy()
        ga = gh * dphi
        gb = W1.T @ ga
        trace.update(grad_hidden=gh, grad_branch_pre=ga, grad_branch=gb, grad_input=g + gb,
                     grad_w1=np.outer(ga, xv), grad_b1=ga.copy())
        if W2 is not None:
            trace.update(grad_w2=np.outer(g, h), grad_b2=g.copy())
    if scalar:      # one feature in, numbers out (hidden-sized values stay vectors when H > 1)
        sized_d = ("branch", "output", "grad_branch", "grad_input", "branch_jacobian", "jacobian", "grad_b2")
        for k in list(trace):
            if k in sized_d or H == 1:
                trace[k] = float(np.asarray(trace[k]).ravel()[0]) if np.size(trace[k]) == 1 else trace[k]
    return trace


def residual_stack(x, weights, biases=None, *, activation: str = "tanh", skip: bool = True,
                   negative_slope: float = 0.01) -> Trace:
    """A stack of L one-unit layers, with or without skip connections, and ∂y_L/∂x.

    Layer l: a_l = w_l y_{l−1} + b_l, F_l = φ(a_l);  skip:  y_l = y_{l−1} + F_l  (residual),
    local derivative ∂y_l/∂y_{l−1} = 1 + w_l φ'(a_l);  no skip: y_l = F_l (plain), local derivative
    w_l φ'(a_l). By the chain rule ∂y_L/∂x = Π_l ∂y_l/∂y_{l−1} (y_0 = x). With |w_l φ'(a_l)| < 1 the
    plain product shrinks geometrically with depth; the residual one keeps a "1 +" in every factor
    (He et al. 2016b, "Identity Mappings in Deep Residual Networks", §3, eq. 4–5).
    Shapes: x a number; weights and biases (L,) (biases zeros when omitted).
    Returns pre_activations (L,), outputs y_1..y_L (L,), activation_derivatives φ'(a_l),
    local_derivatives (L,), gradient ∂y_L/∂x (a number).
    Raises ShapeError when biases and weights differ in length, ParamError for non-finite values or
    an unknown activation.
    """
    activation = choice("activation", activation, ACTIVATIONS)
    skip = boolean("skip", skip)
    slope = number("negative_slope", negative_slope)
    y = number("x", x)
    w = array("weights", weights, (0, 1)).reshape(-1)
    b = np.zeros_like(w) if biases is None else array("biases", biases, (0, 1)).reshape(-1)
    if b.shape != w.shape:
        raise ShapeError(f"biases: expected {w.size} values (one per layer, as weights), got {b.size}")
    pre, outs, dphis, local = [], [], [], []
    for wl, bl in zip(w, b):
        a = wl * y + bl
        f, dphi = activation_fn(activation, np.array([a]), slope)
        y = (y + float(f[0])) if skip else float(f[0])
        pre.append(a)
        outs.append(y)
        dphis.append(float(dphi[0]))
        local.append((1.0 if skip else 0.0) + wl * float(dphi[0]))
    return Trace(pre_activations=np.array(pre), outputs=np.array(outs), activation_derivatives=np.array(dphis),
                 local_derivatives=np.array(local), gradient=float(np.prod(local)))


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
