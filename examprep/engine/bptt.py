"""Backpropagation through time for RNN, LSTM and GRU cells unrolled over a sequence (Werbos 1990)."""
from __future__ import annotations

import numpy as np

from examprep.engine._core import Trace, array, choice, integer, matrix, shape_str, vector
from examprep.engine.rnn import GRU_CONVENTIONS, GRU_RESETS, gru_cell, lstm_cell, rnn_cell
from examprep.errors import ParamError, ShapeError

CELLS = ("rnn", "lstm", "gru")
_GATES = {"rnn": 1, "lstm": 4, "gru": 3}


def rnn_bptt(cell: str, x, weight_ih, weight_hh, bias_ih=None, bias_hh=None, *, h0=None, c0=None,
             nonlinearity: str = "tanh", convention: str = "lecture", reset: str = "after", grad_hidden=None,
             truncation=None) -> Trace:
    """A recurrent cell unrolled over T steps and its gradients by backpropagation through time.

    cell "rnn" (torch.nn.RNNCell), "lstm" (LSTMCell, rows i, f, g, o) or "gru" (GRUCell, rows
    r, z, n; convention and reset as gru_cell: the lecture's blend h' = (1 − z)⊙h + z⊙n by default).
    Shapes: x (T, I) — row t is the input at step t+1 (a vector is T steps of one input); weight_ih
    (G·H, I), weight_hh (G·H, H), biases (G·H,) (zeros when omitted); h0, c0 (H,) (zeros when
    omitted; c0 for lstm only).
    grad_hidden: ∂L/∂h_t arriving from outside the recurrence (a loss on each output), (T, H); an
    H-vector means the last step alone. ∂L/∂c_t arrives only through the recurrence.
    Backward (Werbos 1990): walking t = T…1, the gradient reaching h_t is grad_hidden[t] plus what
    step t+1 sends back; each weight's gradient is the SUM over the steps of that step's cell gradient,
    because the same weights act at every step.
    truncation k (truncated BPTT, Williams & Peng 1990): each step's loss sends its gradient back at most
    k steps (k = 1: no gradient through the recurrence at all); None (default): all the way.
    Returns hidden (T, H) = h_1…h_T, cell (T, H; lstm), the per-step traces' pre-activations and gates
    (steps: a list of the cells' traces), grad_weight_ih, grad_weight_hh, grad_bias_ih, grad_bias_hh,
    grad_h0, grad_c0 (lstm), grad_x (T, I), grad_h (T, H): the total ∂L/∂h_t at each step, and
    grad_weight_ih_steps, grad_weight_hh_steps, grad_bias_ih_steps, grad_bias_hh_steps (T, …): each
    step's share of the weight and bias gradients.
    Raises ShapeError naming the argument whose shape is wrong, ParamError for an option the cell
    does not have.
    """
    cell = choice("cell", cell, CELLS)
    xs = array("x", x, (1, 2))
    if xs.ndim == 1:
        xs = xs[:, None]
    T, n_in = xs.shape
    G = _GATES[cell]
    W_hh = matrix("weight_hh", weight_hh)
    H = W_hh.shape[1]
    if W_hh.shape[0] != G * H:
        raise ShapeError(f"weight_hh: expected {G}H×H for a {cell} cell (H = {H} from its columns), "
                         f"got {shape_str(W_hh.shape)}")
    W_ih = matrix("weight_ih", weight_ih, (G * H, n_in))
    b_ih = np.zeros(G * H) if bias_ih is None else vector("bias_ih", bias_ih, G * H)
    b_hh = np.zeros(G * H) if bias_hh is None else vector("bias_hh", bias_hh, G * H)
    h = np.zeros(H) if h0 is None else vector("h0", h0, H)
    if cell != "lstm" and c0 is not None:
        raise ParamError("c0: only an LSTM has a cell state")
    c = np.zeros(H) if c0 is None or cell != "lstm" else vector("c0", c0, H)
    if truncation is not None:
        truncation = integer("truncation", truncation, 1)
    if cell == "gru":
        convention = choice("convention", convention, GRU_CONVENTIONS)
        reset = choice("reset", reset, GRU_RESETS)
    if grad_hidden is None:
        dh_out = np.zeros((T, H))
    else:
        gh = array("grad_hidden", grad_hidden, (1, 2))
        if gh.ndim == 1:
            if gh.shape[0] != H:
                raise ShapeError(f"grad_hidden: expected {H} values (∂L/∂h_T) or a {T}×{H} matrix, got {gh.shape[0]}")
            dh_out = np.zeros((T, H))
            dh_out[-1] = gh
        elif gh.shape != (T, H):
            raise ShapeError(f"grad_hidden: expected {T}×{H} (one row per step) or {H} values, got {shape_str(gh.shape)}")
        else:
            dh_out = gh
    # forward, keeping each step's trace
    steps, hs, cs, prev_h, prev_c = [], [], [], [], []
    for xt in xs:
        prev_h.append(h)
        prev_c.append(c)
        if cell == "rnn":
            tr = rnn_cell(xt, h, W_ih, W_hh, b_ih, b_hh, nonlinearity=nonlinearity)
        elif cell == "lstm":
            tr = lstm_cell(xt, h, c, W_ih, W_hh, b_ih, b_hh)
            c = tr.c_new
            cs.append(c)
        else:
            tr = gru_cell(xt, h, W_ih, W_hh, b_ih, b_hh, convention=convention, reset=reset)
        h = tr.h_new
        steps.append(tr)
        hs.append(h)
    def back(t: int, dh: np.ndarray, dc: np.ndarray):
        """One step of the backward pass at step t: ∂L/∂(pre-activations) of the input and hidden
        products (their row layouts), the input fed to W_hh's rows, and the gradients sent to h_{t−1}
        (and c_{t−1})."""
        tr, hp = steps[t], prev_h[t]
        if cell == "rnn":
            der = 1 - tr.h_new**2 if nonlinearity == "tanh" else (tr.pre_activation > 0).astype(float)
            d = dh * der
            return d, d, np.broadcast_to(hp, (G * H, H)), W_hh.T @ d, None
        if cell == "lstm":
            dc = dc + dh * tr.o * (1 - tr.tanh_c_new**2)
            d_i, d_f, d_g, d_o = dc * tr.g, dc * prev_c[t], dc * tr.i, dh * tr.tanh_c_new
            d = np.concatenate([d_i * tr.i * (1 - tr.i), d_f * tr.f * (1 - tr.f), d_g * (1 - tr.g**2),
                                d_o * tr.o * (1 - tr.o)])
            return d, d, np.broadcast_to(hp, (G * H, H)), W_hh.T @ d, dc * tr.f
        if convention == "lecture":
            dz, dn, dh_direct = dh * (tr.n - hp), dh * tr.z, dh * (1 - tr.z)
        else:
            dz, dn, dh_direct = dh * (hp - tr.n), dh * (1 - tr.z), dh * tr.z
        dpre_n = dn * (1 - tr.n**2)
        W_hn = W_hh[2 * H:]
        if reset == "after":            # n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
            d_hidden_n, dr, n_input = dpre_n * tr.r, dpre_n * tr.hidden_n, hp
            dh_from_n = W_hn.T @ d_hidden_n
        else:                           # n = tanh(W_in x + b_in + W_hn (r ⊙ h) + b_hn)
            d_rh = W_hn.T @ dpre_n
            d_hidden_n, dr, n_input = dpre_n, d_rh * hp, tr.r * hp
            dh_from_n = d_rh * tr.r
        dpre_r, dpre_z = dr * tr.r * (1 - tr.r), dz * tr.z * (1 - tr.z)
        d_ih = np.concatenate([dpre_r, dpre_z, dpre_n])
        d_hh = np.concatenate([dpre_r, dpre_z, d_hidden_n])
        rows_input = np.concatenate([np.broadcast_to(hp, (2 * H, H)), np.broadcast_to(n_input, (H, H))])
        return d_ih, d_hh, rows_input, dh_direct + W_hh[:2 * H].T @ d_hh[:2 * H] + dh_from_n, None

    # backward through time: the gradient reaching h_t is what its own loss sends plus what step
    # t + 1 sends back (only within ``truncation`` steps of the loss that sent it, when truncated)
    zero = np.zeros(H)
    contrib_ih, contrib_hh = np.zeros((T,) + W_ih.shape), np.zeros((T,) + W_hh.shape)
    contrib_bih, contrib_bhh = np.zeros((T, G * H)), np.zeros((T, G * H))
    gx, totals = np.zeros_like(xs), np.zeros((T, H))
    grad_h0, grad_c0 = np.zeros(H), np.zeros(H)
    sweeps = [(T - 1, 0, None)] if truncation is None else [(s, max(s - truncation + 1, 0), s) for s in range(T)]
    for top, bottom, only in sweeps:
        dh_next, dc_next = zero, zero
        for t in range(top, bottom - 1, -1):
            dh = (dh_out[t] if only is None or t == only else zero) + dh_next
            totals[t] += dh
            d_ih, d_hh, rows_input, dh_next, dc_prev = back(t, dh, dc_next)
            dc_next = zero if dc_prev is None else dc_prev
            contrib_ih[t] += np.outer(d_ih, xs[t])
            contrib_hh[t] += d_hh[:, None] * rows_input
            contrib_bih[t] += d_ih
            contrib_bhh[t] += d_hh
            gx[t] += W_ih.T @ d_ih
        if bottom == 0:
            grad_h0 += dh_next
            grad_c0 += dc_next
    trace = Trace(steps=steps, hidden=np.array(hs), grad_weight_ih=contrib_ih.sum(axis=0),
                  grad_weight_hh=contrib_hh.sum(axis=0), grad_bias_ih=contrib_bih.sum(axis=0),
                  grad_bias_hh=contrib_bhh.sum(axis=0), grad_h0=grad_h0, grad_x=gx, grad_h=totals,
                  grad_weight_ih_steps=contrib_ih, grad_weight_hh_steps=contrib_hh, grad_bias_ih_steps=contrib_bih,
                  grad_bias_hh_steps=contrib_bhh)
    if cell == "lstm":
        trace.update(cell=np.array(cs), grad_c0=grad_c0)
    return trace
