"""Gradient flow: residual blocks and stacks, unrolled RNNs and the vanishing-gradient product,
and the ways of routing max-pool gradients through tied maxima.

Pure numpy, float64, no I/O. Every function checks its arguments (ParamError / ShapeError naming
the argument) and returns a :class:`~examprep.engine._core.Trace` with the intermediate values a
worked solution shows.
"""
from __future__ import annotations

import math

import numpy as np

from examprep.engine._core import Trace, array, boolean, choice, int_tuple, matrix, number, shape_str, vector
from examprep.engine.activations import ACTIVATIONS, activation_fn
from examprep.errors import ParamError, ShapeError

RNN_NONLINEARITIES = ("tanh", "relu")


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


def _rnn_act(nonlinearity: str, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if nonlinearity == "tanh":
        h = np.tanh(a)
        return h, 1.0 - h**2
    return np.maximum(a, 0.0), (a > 0).astype(np.float64)


def rnn_unroll(x, h0, weight_ih, weight_hh, bias_ih=None, bias_hh=None, *, nonlinearity: str = "tanh",
               grad_output=None) -> Trace:
    """A vanilla (Elman) RNN unrolled over a sequence, and the Jacobians that backprop through time
    multiplies.

    h_t = φ(W_ih x_t + b_ih + W_hh h_{t−1} + b_hh)   (torch.nn.RNN; φ = tanh or ReLU)
    ∂h_t/∂h_{t−1} = diag(φ'(a_t)) W_hh;  ∂h_T/∂h_0 = Π_{t=T..1} diag(φ'(a_t)) W_hh
    (Pascanu, Mikolov & Bengio 2013, "On the difficulty of training RNNs", eq. 3–5).
    Shapes: x (T, I) (rows are time steps; a vector is T steps of one input); h0 (H,) (zeros when
    None);
    weight_ih (H, I), weight_hh (H, H), biases (H,) (zeros when omitted).
    With grad_output δ = ∂L/∂h_T (H,): grad_h0 = (∂h_T/∂h_0)ᵀ δ.
    Returns pre_activations (T, H), hidden (T, H) = h_1..h_T, activation_derivatives (T, H),
    jacobians (T, H, H) (∂h_t/∂h_{t−1}), jacobian (H, H) (∂h_T/∂h_0); with grad_output grad_h0.
    Raises ShapeError naming the argument whose shape is wrong.
    """
    nonlinearity = choice("nonlinearity", nonlinearity, RNN_NONLINEARITIES)
    xs = array("x", x, (1, 2))
    if xs.ndim == 1:
        xs = xs[:, None]
    W_hh = matrix("weight_hh", weight_hh)
    if W_hh.shape[0] != W_hh.shape[1]:
        raise ShapeError(f"weight_hh: expected a square H×H matrix, got {shape_str(W_hh.shape)}")
    H, n_in = W_hh.shape[0], xs.shape[1]
    h = np.zeros(H) if h0 is None else vector("h0", h0, H)
    W_ih = matrix("weight_ih", weight_ih, (H, n_in))
    b_ih = np.zeros(H) if bias_ih is None else vector("bias_ih", bias_ih, H)
    b_hh = np.zeros(H) if bias_hh is None else vector("bias_hh", bias_hh, H)
    pre, hidden, ders, jacs = [], [], [], []
    total = np.eye(H)
    for xt in xs:
        a = W_ih @ xt + b_ih + W_hh @ h + b_hh
        h, der = _rnn_act(nonlinearity, a)
        J = der[:, None] * W_hh
        total = J @ total
        pre.append(a)
        hidden.append(h)
        ders.append(der)
        jacs.append(J)
    trace = Trace(pre_activations=np.array(pre), hidden=np.array(hidden), activation_derivatives=np.array(ders),
                  jacobians=np.array(jacs), jacobian=total)
    if grad_output is not None:
        g = vector("grad_output", grad_output, H)
        trace.update(grad_h0=total.T @ g)
    return trace


def vanishing_gradient(w, x, *, u=1.0, h0=0.0, b=0.0, nonlinearity: str = "tanh") -> Trace:
    """The gradient ∂h_T/∂h_0 of a one-unit RNN: a product of T local derivatives w·φ'(a_t).

    h_t = φ(w h_{t−1} + u x_t + b);  ∂h_t/∂h_{t−1} = w φ'(a_t), so ∂h_T/∂h_0 = Π_t w φ'(a_t)
    (Bengio, Simard & Frasconi 1994; Pascanu et al. 2013, §2). Since tanh' ≤ 1 (and ReLU' ∈ {0, 1}),
    |∂h_T/∂h_0| ≤ |w|^T: with |w| < 1 the gradient vanishes geometrically in T; it can only
    explode when |w| > 1 (and then only where φ' stays near 1, e.g. ReLU with a_t > 0).
    Shapes: w, u, h0, b numbers; x (T,) the inputs (T ≥ 1).
    Returns pre_activations (T,), hidden (T,), activation_derivatives φ'(a_t) (T,),
    local_derivatives w·φ'(a_t) (T,), gradient (a number), bound |w|^T, steps T.
    Raises ParamError for non-numbers, ShapeError for an empty or 2-D x.
    """
    nonlinearity = choice("nonlinearity", nonlinearity, RNN_NONLINEARITIES)
    w_, u_, h_, b_ = number("w", w), number("u", u), number("h0", h0), number("b", b)
    xs = array("x", x, (0, 1)).reshape(-1)
    # one unit: plain floats (the same recurrence as rnn_unroll, without 1×1 matrices)
    pre, hidden, ders = [], [], []
    h = h_
    for xt in xs.tolist():
        a = w_ * h + u_ * xt + b_
        if nonlinearity == "tanh":
            h = math.tanh(a)
            d = 1.0 - h * h
        else:
            h, d = (a, 1.0) if a > 0 else (0.0, 0.0)
        pre.append(a)
        hidden.append(h)
        ders.append(d)
    local = w_ * np.array(ders)
    return Trace(pre_activations=np.array(pre), hidden=np.array(hidden), activation_derivatives=np.array(ders),
                 local_derivatives=local, gradient=float(np.prod(local)), bound=abs(w_) ** xs.size, steps=int(xs.size))


MAX_POOL_TIES = ("first", "last", "split", "all")


def max_pool_backward(input, kernel_size, grad_output, *, stride=None, ties: str = "first") -> Trace:
    """Route a max-pool gradient back to the input, under several rules for tied maxima.

    Windows as torch.nn.functional.max_pool2d without padding (floor mode); overlapping windows
    add their contributions. ties:
      "first"  the first maximum in row-major order takes all of δ — PyTorch's (and the contract's)
               rule, equal to examprep.engine.max_pool's grad_input;
      "last"   the last maximum in row-major order takes δ;
      "split"  every tied maximum gets δ / (number tied) — the subgradient some texts draw;
      "all"    every tied maximum gets the whole δ (over-counts: Σ ∂L/∂x ≠ Σ δ).
    Only "first" is a framework's behaviour; the others are common hand-computation variants.
    Shapes: input (H, W) or (L,); kernel_size, stride an int or one per dimension (stride defaults
    to kernel_size); grad_output the output's shape.
    Returns output, indices (the flat row-major input index that takes δ under "first" or "last";
    the first tied maximum under "split" and "all"), ties_count (maxima per window), grad_input.
    Raises ShapeError for a window larger than the input or a grad_output of the wrong shape.
    """
    ties = choice("ties", ties, MAX_POOL_TIES)
    x = array("input", input, (1, 2))
    one_d = x.ndim == 1
    x2 = x[None, :] if one_d else x
    dims = x.ndim
    k = int_tuple("kernel_size", kernel_size, dims, minimum=1)
    s = int_tuple("stride", k if stride is None else stride, dims, minimum=1)
    if one_d:
        k, s = (1, *k), (1, *s)
    out_shape = []
    for i in range(2):
        if k[i] > x2.shape[i]:
            raise ShapeError(f"kernel_size: the window {k[i]} is larger than the input size {x2.shape[i]}")
        out_shape.append((x2.shape[i] - k[i]) // s[i] + 1)
    g = array("grad_output", grad_output, dims)
    if g.shape != (tuple(out_shape[1:]) if one_d else tuple(out_shape)):
        want = out_shape[1] if one_d else "×".join(map(str, out_shape))
        raise ShapeError(f"grad_output: expected the output's shape {want}, got {shape_str(g.shape)}")
    g2 = g[None, :] if one_d else g
    oh, ow = out_shape
    rows = (np.arange(oh) * s[0])[:, None, None, None] + np.arange(k[0])[None, None, :, None]
    cols = (np.arange(ow) * s[1])[None, :, None, None] + np.arange(k[1])[None, None, None, :]
    flat_pos = (rows * x2.shape[1] + cols).reshape(oh, ow, -1)       # input index of each tap, row-major
    windows = x2[rows, cols].reshape(oh, ow, -1)
    out = windows.max(axis=-1)
    tied = windows == out[..., None]
    count = tied.sum(axis=-1)
    first = tied.argmax(axis=-1)
    last = tied.shape[-1] - 1 - tied[..., ::-1].argmax(axis=-1)
    chosen = last if ties == "last" else first
    where = np.take_along_axis(flat_pos, chosen[..., None], axis=-1)[..., 0]
    if ties in ("first", "last"):
        share = np.zeros(tied.shape)
        np.put_along_axis(share, chosen[..., None], 1.0, axis=-1)
    else:
        share = tied / (count[..., None] if ties == "split" else 1.0)
    grad = np.zeros(x2.size)
    np.add.at(grad, flat_pos.ravel(), (share * g2[..., None]).ravel())   # overlapping windows add
    grad = grad.reshape(x2.shape)
    if one_d:
        return Trace(output=out[0], indices=where[0], ties_count=count[0], grad_input=grad[0])
    return Trace(output=out, indices=where, ties_count=count, grad_input=grad)
