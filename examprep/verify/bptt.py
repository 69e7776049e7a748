"""Torch reference of backpropagation through time: the cells (nn.RNNCell, nn.LSTMCell, nn.GRUCell's
kernels; the lecture's GRU blend and Cho's reset from torch ops) unrolled over the steps, the loss
Σ_t grad_hidden_t · h_t, and autograd (∂L/∂h_t as the states' retained gradients); truncated BPTT by
detaching h (and c) after each window."""
from __future__ import annotations

import numpy as np
import torch

from examprep.verify._torch import Reference, as_numpy, normal, pick, tensor

_G = {"rnn": 1, "lstm": 4, "gru": 3}


def _gru(x, h, w_ih, w_hh, b_ih, b_hh, convention: str, reset: str) -> torch.Tensor:
    if convention == "pytorch" and reset == "after":
        return torch._VF.gru_cell(x[None], h[None], w_ih, w_hh, b_ih, b_hh)[0]
    H = h.shape[0]
    gi = w_ih @ x + b_ih
    r = torch.sigmoid(gi[:H] + w_hh[:H] @ h + b_hh[:H])
    z = torch.sigmoid(gi[H:2 * H] + w_hh[H:2 * H] @ h + b_hh[H:2 * H])
    hidden = r * (w_hh[2 * H:] @ h + b_hh[2 * H:]) if reset == "after" else w_hh[2 * H:] @ (r * h) + b_hh[2 * H:]
    n = torch.tanh(gi[2 * H:] + hidden)
    return (1 - z) * h + z * n if convention == "lecture" else (1 - z) * n + z * h


def ref_rnn_bptt(p: dict) -> dict:
    cell = p["cell"]
    xs = np.asarray(p["x"], dtype=float)
    xs = xs[:, None] if xs.ndim == 1 else xs
    T = xs.shape[0]
    w_hh = tensor(p["weight_hh"], grad=True)
    H = w_hh.shape[1]
    w_ih = tensor(p["weight_ih"], grad=True)
    zeros = np.zeros(_G[cell] * H)
    b_ih = tensor(p["bias_ih"] if p.get("bias_ih") is not None else zeros, grad=True)
    b_hh = tensor(p["bias_hh"] if p.get("bias_hh") is not None else zeros, grad=True)
    x = tensor(xs, grad=True)
    h0 = tensor(p["h0"] if p.get("h0") is not None else np.zeros(H), grad=True)
    c0 = tensor(p["c0"] if p.get("c0") is not None else np.zeros(H), grad=True)
    gh = np.zeros((T, H))
    if p.get("grad_hidden") is not None:
        given = np.asarray(p["grad_hidden"], dtype=float)
        gh = given if given.ndim == 2 else np.vstack([np.zeros((T - 1, H)), given[None]])
    k = p.get("truncation")
    act = torch.tanh if p.get("nonlinearity", "tanh") == "tanh" else torch.relu
    loss = 0
    hidden, cells, reach = [], [], []
    # with truncation k, the loss at step s sees the recurrence only from step s − k + 1: unroll one
    # window per loss (a fresh graph per window; the values equal the full unroll's)
    windows = [(0, T, None)] if k is None else [(max(s - k + 1, 0), s + 1, s) for s in range(T)]
    for start, stop, only in windows:
        h, c = h0, c0
        for t in range(stop):
            if t < start:               # the states before the window: values only, no gradient
                h, c = h.detach(), c.detach()
            if cell == "rnn":
                h = act(w_ih @ x[t] + b_ih + w_hh @ h + b_hh)
            elif cell == "lstm":
                h, c = (v[0] for v in torch._VF.lstm_cell(x[t][None], (h[None], c[None]), w_ih, w_hh, b_ih, b_hh))
            else:
                h = _gru(x[t], h, w_ih, w_hh, b_ih, b_hh, p.get("convention", "lecture"), p.get("reset", "after"))
            if t < start:
                h, c = h.detach(), c.detach()
            else:                       # ∂L/∂h_t: what reaches this window's h_t (summed over the windows)
                h.retain_grad()
                reach.append((t, h))
            if only is None:
                hidden.append(h)
                cells.append(c)
                loss = loss + (h * tensor(gh[t])).sum()
            elif t == only:
                hidden.append(h)
                cells.append(c)
                loss = loss + (h * tensor(gh[t])).sum()
    loss.backward()
    grad_h = np.zeros((T, H))
    for t, h in reach:
        if h.grad is not None:
            grad_h[t] += as_numpy(h.grad)
    out = {"hidden": as_numpy(torch.stack(hidden)), "grad_h": grad_h, "grad_weight_ih": as_numpy(w_ih.grad),
           "grad_weight_hh": as_numpy(w_hh.grad), "grad_bias_ih": as_numpy(b_ih.grad), "grad_bias_hh": as_numpy(b_hh.grad),
           "grad_h0": as_numpy(h0.grad) if h0.grad is not None else np.zeros(H),
           "grad_x": as_numpy(x.grad).reshape(np.shape(p["x"]) if np.ndim(p["x"]) == 2 else (T, 1))}
    if cell == "lstm":
        out["cell"] = as_numpy(torch.stack(cells))
        out["grad_c0"] = as_numpy(c0.grad) if c0.grad is not None else np.zeros(H)
    return out


def random_rnn_bptt(rng: np.random.Generator) -> dict:
    """A random valid rnn-bptt instance (all three cells, both GRU conventions, truncation)."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    cell = pick(rng, ["rnn", "lstm", "gru"])
    T, n_in, H = ri(1, 3), ri(1, 2), ri(1, 2)
    g = _G[cell]
    p = {"cell": cell, "x": normal(rng, T, n_in), "weight_ih": normal(rng, g * H, n_in), "weight_hh": normal(rng, g * H, H),
         "bias_ih": normal(rng, g * H), "bias_hh": normal(rng, g * H), "h0": normal(rng, H),
         "grad_hidden": normal(rng, T, H) if rng.random() < 0.7 else normal(rng, H)}
    if cell == "lstm":
        p["c0"] = normal(rng, H)
    if cell == "rnn":
        p["nonlinearity"] = pick(rng, ["tanh", "relu"])
    if cell == "gru":
        p.update(convention=pick(rng, ["lecture", "pytorch"]), reset=pick(rng, ["after", "before"]))
    if rng.random() < 0.25:
        p["truncation"] = ri(1, 2)
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "rnn-bptt": Reference(ref_rnn_bptt, random_rnn_bptt),
}
