"""Recurrent networks: one step of a vanilla RNN, an LSTM and a GRU; a vanilla RNN unrolled over a
sequence with the Jacobians backprop through time multiplies; the vanishing-gradient product of a
one-unit RNN; and the pieces of a step an ECF rule recomputes from a student's own gates.

Weights are laid out as PyTorch's torch.nn.RNNCell / LSTMCell / GRUCell: weight_ih (G·H, I),
weight_hh (G·H, H), bias_ih and bias_hh (G·H,) with the gates stacked in row blocks.
Biases default to zeros (bias=False).
"""
from __future__ import annotations

import math

import numpy as np

from examprep.engine._core import Trace, array, choice, matrix, number, same_shape, shape_str, sigmoid, vector
from examprep.engine.optim import clip_by_norm
from examprep.errors import ParamError, ShapeError


def _weights(x, h, weight_ih, weight_hh, bias_ih, bias_hh, gates: int, rows: str):
    x_arr = vector("x", x)
    h_arr = vector("h", h)
    size = h_arr.shape[0]
    w_ih = matrix("weight_ih", weight_ih)
    if w_ih.shape != (gates * size, x_arr.shape[0]):
        raise ShapeError(f"weight_ih: expected shape {gates * size}×{x_arr.shape[0]} "
                         f"({gates}·hidden_size × input_size, rows {rows}), got {w_ih.shape[0]}×{w_ih.shape[1]}")
    w_hh = matrix("weight_hh", weight_hh)
    if w_hh.shape != (gates * size, size):
        raise ShapeError(f"weight_hh: expected shape {gates * size}×{size} "
                         f"({gates}·hidden_size × hidden_size, rows {rows}), got {w_hh.shape[0]}×{w_hh.shape[1]}")
    b_ih = np.zeros(gates * size) if bias_ih is None else vector("bias_ih", bias_ih, gates * size)
    b_hh = np.zeros(gates * size) if bias_hh is None else vector("bias_hh", bias_hh, gates * size)
    return x_arr, h_arr, w_ih, w_hh, b_ih, b_hh


def rnn_cell(x, h, weight_ih, weight_hh, bias_ih=None, bias_hh=None, *, nonlinearity: str = "tanh") -> Trace:
    """One Elman RNN step: h' = act(W_ih x + b_ih + W_hh h + b_hh) (torch.nn.RNNCell).

    Shapes: x (I,), h (H,), weight_ih (H, I), weight_hh (H, H), biases (H,).
    nonlinearity "tanh" (default) or "relu".
    Returns input_part (W_ih x + b_ih), hidden_part (W_hh h + b_hh), pre_activation, h_new.
    Raises ShapeError naming the argument whose shape is wrong.
    """
    nonlinearity = choice("nonlinearity", nonlinearity, ("tanh", "relu"))
    x, h, w_ih, w_hh, b_ih, b_hh = _weights(x, h, weight_ih, weight_hh, bias_ih, bias_hh, 1, "h")
    gi = w_ih @ x + b_ih
    gh = w_hh @ h + b_hh
    a = gi + gh
    h_new = np.tanh(a) if nonlinearity == "tanh" else np.maximum(a, 0.0)
    return Trace(input_part=gi, hidden_part=gh, pre_activation=a, h_new=h_new)


def lstm_cell(x, h, c, weight_ih, weight_hh, bias_ih=None, bias_hh=None, *, grad_c_new=None) -> Trace:
    """One LSTM step (Hochreiter & Schmidhuber 1997 with a forget gate; torch.nn.LSTMCell).

    Shapes: x (I,), h and c (H,), weight_ih (4H, I) and weight_hh (4H, H) with row blocks
    [i; f; g; o], biases (4H,).
    i = σ(·), f = σ(·), g = tanh(·), o = σ(·) of W_ih x + b_ih + W_hh h + b_hh (per block);
    c' = f ⊙ c + i ⊙ g;  h' = o ⊙ tanh(c').
    With grad_c_new = ∂L/∂c' (H,) and no gradient through h': the backward step along the cell state,
    cell_gradient = ∂c'_k/∂c_k = f (c' is element-wise in c, and the gates do not depend on c) and
    grad_c = ∂L/∂c = f ⊙ ∂L/∂c' (the constant error carousel; Gers, Schmidhuber & Cummins 2000).
    Returns the pre-activations (pre_i, pre_f, pre_g, pre_o), i, f, g, o, c_new, tanh_c_new, h_new;
    with grad_c_new also cell_gradient and grad_c.
    Raises ShapeError naming the argument whose shape is wrong.
    """
    x, h, w_ih, w_hh, b_ih, b_hh = _weights(x, h, weight_ih, weight_hh, bias_ih, bias_hh, 4, "i, f, g, o")
    c_arr = vector("c", c, h.shape[0])
    gates = w_ih @ x + b_ih + w_hh @ h + b_hh
    pre_i, pre_f, pre_g, pre_o = np.split(gates, 4)
    i, f, g, o = sigmoid(pre_i), sigmoid(pre_f), np.tanh(pre_g), sigmoid(pre_o)
    c_new = f * c_arr + i * g
    tc = np.tanh(c_new)
    trace = Trace(pre_i=pre_i, pre_f=pre_f, pre_g=pre_g, pre_o=pre_o, i=i, f=f, g=g, o=o,
                  c_new=c_new, tanh_c_new=tc, h_new=o * tc)
    if grad_c_new is not None:
        trace.update(cell_gradient=f.copy(), grad_c=f * vector("grad_c_new", grad_c_new, h.shape[0]))
    return trace


GRU_CONVENTIONS = ("lecture", "pytorch")
GRU_RESETS = ("after", "before", "none")


def _gru_blend(h: np.ndarray, z: np.ndarray, n: np.ndarray, convention: str) -> np.ndarray:
    return (1 - z) * h + z * n if convention == "lecture" else (1 - z) * n + z * h


def gru_cell(x, h, weight_ih, weight_hh, bias_ih=None, bias_hh=None, *,
             convention: str = "lecture", reset: str = "after") -> Trace:
    """One GRU step.

    Shapes: x (I,), h (H,), weight_ih (3H, I) and weight_hh (3H, H) with row blocks [r; z; n] as in
    torch.nn.GRUCell, biases (3H,).
    r = σ(W_ir x + b_ir + W_hr h + b_hr),  z = σ(W_iz x + b_iz + W_hz h + b_hz).
    reset: "after"  n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))   (PyTorch, cuDNN; the lecture notes)
           "before" n = tanh(W_in x + b_in + W_hn (r ⊙ h) + b_hn)   (Cho et al. 2014, eq. 8; Keras reset_after=False)
           "none"   n = tanh(W_in x + b_in + W_hn h + b_hn)         (no convention: the mistake of leaving the
                                                                    reset gate out, r computed but not applied)
    convention: "lecture" h' = (1 − z) ⊙ h + z ⊙ n   (Chung et al. 2014, eq. 5; the course notes)
                "pytorch" h' = (1 − z) ⊙ n + z ⊙ h   (Cho et al. 2014, eq. 7; torch.nn.GRUCell)
    Returns pre_r, pre_z, r, z, hidden_n (W_hn h + b_hn, or W_hn (r⊙h) + b_hn), pre_n, n, h_new.
    Raises ShapeError naming the argument whose shape is wrong, ParamError for an unknown
    convention or reset.
    """
    convention = choice("convention", convention, GRU_CONVENTIONS)
    reset = choice("reset", reset, GRU_RESETS)
    x, h, w_ih, w_hh, b_ih, b_hh = _weights(x, h, weight_ih, weight_hh, bias_ih, bias_hh, 3, "r, z, n")
    size = h.shape[0]
    gi = w_ih @ x + b_ih
    gh_rz = w_hh[: 2 * size] @ h + b_hh[: 2 * size]
    pre_r = gi[:size] + gh_rz[:size]
    pre_z = gi[size: 2 * size] + gh_rz[size:]
    r, z = sigmoid(pre_r), sigmoid(pre_z)
    w_hn, b_hn = w_hh[2 * size:], b_hh[2 * size:]
    if reset == "after":
        hidden_n = w_hn @ h + b_hn
        pre_n = gi[2 * size:] + r * hidden_n
    elif reset == "before":
        hidden_n = w_hn @ (r * h) + b_hn
        pre_n = gi[2 * size:] + hidden_n
    else:
        hidden_n = w_hn @ h + b_hn
        pre_n = gi[2 * size:] + hidden_n
    n = np.tanh(pre_n)
    h_new = _gru_blend(h, z, n, convention)
    return Trace(pre_r=pre_r, pre_z=pre_z, r=r, z=z, hidden_n=hidden_n, pre_n=pre_n, n=n, h_new=h_new)


# ----------------------------------------------- over a sequence: backprop through time

RNN_NONLINEARITIES = ("tanh", "relu")


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


def vanishing_gradient(w, x, *, u=1.0, h0=0.0, b=0.0, nonlinearity: str = "tanh", max_norm=None) -> Trace:
    """The gradient ∂h_T/∂h_0 of a one-unit RNN: a product of T local derivatives w·φ'(a_t).

    h_t = φ(w h_{t−1} + u x_t + b);  ∂h_t/∂h_{t−1} = w φ'(a_t), so ∂h_T/∂h_0 = Π_t w φ'(a_t)
    (Bengio, Simard & Frasconi 1994; Pascanu et al. 2013, §2). Since tanh' ≤ 1 (and ReLU' ∈ {0, 1}),
    |∂h_T/∂h_0| ≤ |w|^T: with |w| < 1 the gradient vanishes geometrically in T; it can only
    explode when |w| > 1 (and then only where φ' stays near 1, e.g. ReLU with a_t > 0).
    With max_norm c > 0: clipped, the gradient clipped by norm, g·min(1, c/|g|) (Pascanu et al. 2013,
    §3.2; torch.nn.utils.clip_grad_norm_), the remedy for an exploding one.
    Shapes: w, u, h0, b numbers; x (T,) the inputs (T ≥ 1).
    Returns pre_activations (T,), hidden (T,), activation_derivatives φ'(a_t) (T,),
    local_derivatives w·φ'(a_t) (T,), gradient (a number), bound |w|^T, steps T; with max_norm clipped.
    Raises ParamError for non-numbers and a max_norm ≤ 0, ShapeError for an empty or 2-D x.
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
    trace = Trace(pre_activations=np.array(pre), hidden=np.array(hidden), activation_derivatives=np.array(ders),
                  local_derivatives=local, gradient=float(np.prod(local)), bound=abs(w_) ** xs.size, steps=int(xs.size))
    if max_norm is not None:
        if number("max_norm", max_norm) <= 0:
            raise ParamError(f"max_norm: expected a positive number, got {max_norm!r}")
        trace.update(clipped=clip_by_norm(trace.gradient, max_norm))
    return trace


# ---------------------------------------------- from a student's own gates and states (ECF rules)

def gru_candidate(x, h, w_in, w_hn, b_in, b_hn, r, reset="after") -> np.ndarray:
    """n = tanh(W_in x + b_in + r⊙(W_hn h + b_hn)) (reset "after") or tanh(W_in x + b_in + W_hn(r⊙h) + b_hn)
    ("before") from a given reset gate r, as gru_cell ("none" leaves r out)."""
    reset = choice("reset", reset, GRU_RESETS)
    x_, h_ = array("x", x, 1), array("h", h, 1)
    r_ = np.atleast_1d(array("r", r, (0, 1)))
    W_in, W_hn = array("w_in", w_in, 2), array("w_hn", w_hn, 2)
    b_in, b_hn = array("b_in", b_in, 1), array("b_hn", b_hn, 1)
    if r_.shape != h_.shape:
        raise ShapeError(f"r: expected {h_.shape[0]} values, got {r_.shape[0]}")
    if reset == "after":
        return np.tanh(W_in @ x_ + b_in + r_ * (W_hn @ h_ + b_hn))
    if reset == "before":
        return np.tanh(W_in @ x_ + b_in + W_hn @ (r_ * h_) + b_hn)
    return np.tanh(W_in @ x_ + b_in + (W_hn @ h_ + b_hn))


def gru_blend(h, z, n, convention="lecture") -> np.ndarray:
    """h' from the gates: lecture (1 − z)⊙h + z⊙n, or pytorch (1 − z)⊙n + z⊙h (as gru_cell)."""
    return _gru_blend(array("h", h), array("z", z), array("n", n), convention)


def rnn_jacobian(h_new, weight_hh, nonlinearity="tanh") -> np.ndarray:
    """∂h'/∂h = diag(φ'(a)) W_hh read off the new state: tanh' = 1 − h'², ReLU' = 1[h' > 0].

    Given the states h_1 … h_T of a sequence (T×H, rows in time order) instead of one state: the
    product backprop through time forms, ∂h_T/∂h_0 = diag(φ'_T) W_hh ⋯ diag(φ'_1) W_hh (rnn_unroll's
    ``jacobian``)."""
    h, W = array("h_new", h_new, (1, 2)), array("weight_hh", weight_hh, 2)
    if W.shape != (h.shape[-1], h.shape[-1]):
        raise ShapeError(f"weight_hh: expected shape {h.shape[-1]}×{h.shape[-1]}, got {'×'.join(map(str, W.shape))}")
    der = 1.0 - h**2 if nonlinearity == "tanh" else (h > 0).astype(float)
    if h.ndim == 1:
        return der[:, None] * W
    total = der[0][:, None] * W
    for d in der[1:]:
        total = (d[:, None] * W) @ total
    return total


def rnn_local_derivatives(w, hidden, nonlinearity="tanh") -> np.ndarray:
    """w · φ'(a_t) for each state h_t of a one-unit RNN: w(1 − h_t²) for tanh, w·1[h_t > 0] for ReLU."""
    h = array("hidden", hidden, (0, 1)).reshape(-1)
    der = 1.0 - h**2 if nonlinearity == "tanh" else (h > 0).astype(float)
    return number("w", w) * der


def lstm_cell_state(f, c, i, g) -> np.ndarray:
    """c' = f ⊙ c + i ⊙ g."""
    F, C, I_, G = array("f", f), array("c", c), array("i", i), array("g", g)
    for name, v in (("c", C), ("i", I_), ("g", G)):
        same_shape(name, v, F, "f")
    return F * C + I_ * G


def lstm_hidden(o, c_new) -> np.ndarray:
    """h' = o ⊙ tanh(c')."""
    out_gate, C = array("o", o), array("c_new", c_new)
    same_shape("c_new", C, out_gate, "o")
    return out_gate * np.tanh(C)
