"""Recurrent cells: vanilla RNN, LSTM and GRU, one time step.

Weights are laid out as PyTorch's torch.nn.RNNCell / LSTMCell / GRUCell: weight_ih (G·H, I),
weight_hh (G·H, H), bias_ih and bias_hh (G·H,) with the gates stacked in row blocks.
Biases default to zeros (bias=False).
"""
from __future__ import annotations

import numpy as np

from examprep.engine._core import Trace, choice, matrix, sigmoid, vector
from examprep.errors import ShapeError


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


def lstm_cell(x, h, c, weight_ih, weight_hh, bias_ih=None, bias_hh=None) -> Trace:
    """One LSTM step (Hochreiter & Schmidhuber 1997 with a forget gate; torch.nn.LSTMCell).

    Shapes: x (I,), h and c (H,), weight_ih (4H, I) and weight_hh (4H, H) with row blocks
    [i; f; g; o], biases (4H,).
    i = σ(·), f = σ(·), g = tanh(·), o = σ(·) of W_ih x + b_ih + W_hh h + b_hh (per block);
    c' = f ⊙ c + i ⊙ g;  h' = o ⊙ tanh(c').
    Returns the pre-activations (pre_i, pre_f, pre_g, pre_o), i, f, g, o, c_new, tanh_c_new, h_new.
    Raises ShapeError naming the argument whose shape is wrong.
    """
    x, h, w_ih, w_hh, b_ih, b_hh = _weights(x, h, weight_ih, weight_hh, bias_ih, bias_hh, 4, "i, f, g, o")
    c_arr = vector("c", c, h.shape[0])
    gates = w_ih @ x + b_ih + w_hh @ h + b_hh
    pre_i, pre_f, pre_g, pre_o = np.split(gates, 4)
    i, f, g, o = sigmoid(pre_i), sigmoid(pre_f), np.tanh(pre_g), sigmoid(pre_o)
    c_new = f * c_arr + i * g
    tc = np.tanh(c_new)
    return Trace(pre_i=pre_i, pre_f=pre_f, pre_g=pre_g, pre_o=pre_o, i=i, f=f, g=g, o=o,
                 c_new=c_new, tanh_c_new=tc, h_new=o * tc)


GRU_CONVENTIONS = ("lecture", "pytorch")
GRU_RESETS = ("after", "before")


def gru_cell(x, h, weight_ih, weight_hh, bias_ih=None, bias_hh=None, *,
             convention: str = "lecture", reset: str = "after") -> Trace:
    """One GRU step.

    Shapes: x (I,), h (H,), weight_ih (3H, I) and weight_hh (3H, H) with row blocks [r; z; n] as in
    torch.nn.GRUCell, biases (3H,).
    r = σ(W_ir x + b_ir + W_hr h + b_hr),  z = σ(W_iz x + b_iz + W_hz h + b_hz).
    reset: "after"  n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))   (PyTorch, cuDNN; the lecture notes)
           "before" n = tanh(W_in x + b_in + W_hn (r ⊙ h) + b_hn)   (Cho et al. 2014, eq. 8; Keras reset_after=False)
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
    else:
        hidden_n = w_hn @ (r * h) + b_hn
        pre_n = gi[2 * size:] + hidden_n
    n = np.tanh(pre_n)
    h_new = (1 - z) * h + z * n if convention == "lecture" else (1 - z) * n + z * h
    return Trace(pre_r=pre_r, pre_z=pre_z, r=r, z=z, hidden_n=hidden_n, pre_n=pre_n, n=n, h_new=h_new)
