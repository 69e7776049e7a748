"""Backpropagation through time for RNN, LSTM and GRU cells unrolled over a sequence (Werbos 1990),
alone or with an output layer and a loss on every step."""
from __future__ import annotations

import numpy as np

from examprep.engine._core import Trace, array, choice, integer, matrix, shape_str, sigmoid, vector
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


OUTPUT_LOSSES = ("half-sse", "mse", "cross-entropy")
OUTPUT_ACTIVATIONS = ("identity", "sigmoid", "tanh")
LOSS_REDUCTIONS = ("sum", "mean")
_DEFAULT_REDUCTION = {"half-sse": "sum", "mse": "mean", "cross-entropy": "mean"}


def rnn_bptt_output(cell: str, x, target, weight_ih, weight_hh, weight_y, bias_ih=None, bias_hh=None, bias_y=None, *,
                    h0=None, c0=None, nonlinearity: str = "tanh", convention: str = "lecture", reset: str = "after",
                    output_activation: str = "identity", loss: str = "half-sse", reduction: str | None = None,
                    truncation=None) -> Trace:
    """A recurrent cell unrolled over T steps with an output layer y_t = ψ(W_y h_t + b_y) and a loss on
    every step, and all its gradients by backpropagation through time.

    The cell, x, h0, c0, its weights and options are rnn_bptt's. weight_y (O, H), bias_y (O,) (zeros
    when omitted). output_activation ψ: "identity", "sigmoid" or "tanh" (cross-entropy takes logits:
    identity only).
    loss (over every step and output unit; reduction None takes the loss's usual one):
      "half-sse"      ½ Σ_t Σ_k (y_tk − target_tk)², reduction "sum" (default); "mean" divides by T·O;
      "mse"           torch.nn.MSELoss: Σ_t Σ_k (y_tk − target_tk)² / (T·O) ("mean", default) or the sum;
      "cross-entropy" torch.nn.CrossEntropyLoss over the T steps as a batch: target holds T class
                      indices, loss = (1/T) Σ_t −log softmax(y_t)[target_t] ("mean", default) or the sum.
    target: (T, O) for the squared losses (a T-vector when O = 1), T class indices for cross-entropy.
    Backward: ∂L/∂y_t from the loss, ∂L/∂(W_y h_t + b_y) = ∂L/∂y_t ⊙ ψ', ∂L/∂W_y = Σ_t (that) h_tᵀ,
    ∂L/∂b_y its sum over t, and δ_t = W_yᵀ (that) is the gradient each step's own loss sends into h_t;
    then rnn_bptt with grad_hidden = δ (each ∂L/∂h_t adds what step t + 1 sends back).
    Returns rnn_bptt's trace plus output (T, O) = y_t, logits (T, O) = W_y h_t + b_y, loss, losses (T,):
    each step's share of the loss, grad_output (T, O) = ∂L/∂y_t, grad_logits (T, O), grad_w_y,
    grad_b_y, grad_hidden_own (T, H) = δ_t, and grad_w_y_steps (T, O, H): each step's share of grad_w_y.
    Raises ShapeError naming the argument whose shape is wrong, ParamError for a class index outside
    [0, O) or an option the loss does not take.
    """
    loss = choice("loss", loss, OUTPUT_LOSSES)
    psi = choice("output_activation", output_activation, OUTPUT_ACTIVATIONS)
    reduction = _DEFAULT_REDUCTION[loss] if reduction is None else choice("reduction", reduction, LOSS_REDUCTIONS)
    if loss == "cross-entropy" and psi != "identity":
        raise ParamError("output_activation: cross-entropy takes the logits W_y h + b_y (softmax is in the loss): "
                         "use \"identity\"")
    forward = rnn_bptt(cell, x, weight_ih, weight_hh, bias_ih, bias_hh, h0=h0, c0=c0, nonlinearity=nonlinearity,
                       convention=convention, reset=reset)
    hs = forward.hidden
    T, H = hs.shape
    W_y = matrix("weight_y", weight_y, (None, H))
    n_out = W_y.shape[0]
    b_y = np.zeros(n_out) if bias_y is None else vector("bias_y", bias_y, n_out)
    z = hs @ W_y.T + b_y
    y = z if psi == "identity" else sigmoid(z) if psi == "sigmoid" else np.tanh(z)
    der = np.ones_like(z) if psi == "identity" else y * (1 - y) if psi == "sigmoid" else 1 - y**2
    if loss == "cross-entropy":
        idx = np.asarray(array("target", target, (0, 1))).reshape(-1)
        if idx.shape[0] != T:
            raise ShapeError(f"target: expected {T} class indices (one per step), got {idx.shape[0]}")
        if np.any(idx != np.round(idx)) or np.any(idx < 0) or np.any(idx >= n_out):
            raise ParamError(f"target: expected class indices in [0, {n_out}) (weight_y has {n_out} rows), got {idx.tolist()}")
        onehot = np.eye(n_out)[idx.astype(int)]
        shifted = z - z.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        losses = -(onehot * logp).sum(axis=1)
        g_y = np.exp(logp) - onehot
    else:
        tgt = array("target", target, (1, 2))
        if tgt.ndim == 1 and n_out == 1:
            tgt = tgt[:, None]
        if tgt.shape != (T, n_out):
            raise ShapeError(f"target: expected {T}×{n_out} (one row per step, one value per output), got {shape_str(tgt.shape)}")
        scale = 0.5 if loss == "half-sse" else 1.0
        losses = scale * ((y - tgt) ** 2).sum(axis=1)
        g_y = 2 * scale * (y - tgt)
    count = (T if loss == "cross-entropy" else T * n_out) if reduction == "mean" else 1
    losses, g_y = losses / count, g_y / count
    g_z = g_y * der
    own = g_z @ W_y
    trace = rnn_bptt(cell, x, weight_ih, weight_hh, bias_ih, bias_hh, h0=h0, c0=c0, nonlinearity=nonlinearity,
                     convention=convention, reset=reset, grad_hidden=own, truncation=truncation)
    steps_w_y = g_z[:, :, None] * hs[:, None, :]
    trace.update(output=y, logits=z, loss=float(losses.sum()), losses=losses, grad_output=g_y, grad_logits=g_z,
                 grad_w_y=steps_w_y.sum(axis=0), grad_b_y=g_z.sum(axis=0), grad_hidden_own=own, grad_w_y_steps=steps_w_y)
    return trace
