"""Residual connections: a residual block y = x + F(x) with the gradient through both of its paths,
and a stack of one-unit layers with or without skips (He et al. 2016), with the bound on its gradient."""
from __future__ import annotations

import numpy as np

from examprep.engine._core import Trace, array, boolean, choice, number, shape_str
from examprep.engine.activations import ACTIVATIONS, activation_fn, max_derivative
from examprep.errors import ParamError, ShapeError


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
    local_derivatives (L,), gradient ∂y_L/∂x (a number), and bound: the most |∂y_L/∂x| can be at any
    input, from φ' ≤ m (engine.activations.max_derivative): Π_l |w_l|·m plain, Π_l (1 + |w_l|·m) with
    skips — (1/4)^L for L plain sigmoid layers of weight 1, the vanishing gradient.
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
    m = max_derivative(activation, slope)
    bound = float(np.prod((1.0 if skip else 0.0) + np.abs(w) * m))
    return Trace(pre_activations=np.array(pre), outputs=np.array(outs), activation_derivatives=np.array(dphis),
                 local_derivatives=np.array(local), gradient=float(np.prod(local)), bound=bound)
