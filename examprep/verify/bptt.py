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


def ref_rnn_bptt_output(p: dict) -> dict:
    """The output layer and the loss from torch.nn.functional (mse_loss, cross_entropy) on the states
    of ref_rnn_bptt's unroll. Without truncation one autograd graph runs from the loss to every weight
    (∂L/∂h_t as the states' retained gradients); with truncation autograd gives each step's own δ_t =
    ∂L/∂h_t with the states held fixed, and ref_rnn_bptt's windows take it back through time."""
    xs = np.asarray(p["x"], dtype=float)
    T = (xs[:, None] if xs.ndim == 1 else xs).shape[0]
    w_y = tensor(p["weight_y"], grad=True)
    n_out = w_y.shape[0]
    b_y = tensor(p["bias_y"] if p.get("bias_y") is not None else np.zeros(n_out), grad=True)
    loss_kind = p.get("loss", "half-sse")
    reduction = p.get("reduction") or ("sum" if loss_kind == "half-sse" else "mean")
    psi = {"identity": lambda v: v, "sigmoid": torch.sigmoid, "tanh": torch.tanh}[p.get("output_activation", "identity")]
    plain = {k: v for k, v in p.items() if k not in ("weight_y", "bias_y", "target", "loss", "reduction",
                                                     "output_activation", "truncation", "grad_hidden")}
    states = tensor(ref_rnn_bptt(plain)["hidden"], grad=True)         # h_t held fixed: the own δ_t

    def head(h):
        y = psi(h @ w_y.T + b_y)
        if loss_kind == "cross-entropy":
            idx = torch.tensor(np.asarray(p["target"]).reshape(-1).astype(int))
            return y, torch.nn.functional.cross_entropy(y, idx, reduction=reduction)
        target = tensor(np.asarray(p["target"], dtype=float).reshape(T, n_out))
        scale = 0.5 if loss_kind == "half-sse" else 1.0
        return y, scale * torch.nn.functional.mse_loss(y, target, reduction=reduction)

    y, loss = head(states)
    y.retain_grad()
    loss.backward()
    own = as_numpy(states.grad)
    out = ref_rnn_bptt(plain | {"grad_hidden": own.tolist(), "truncation": p.get("truncation")})
    out.update(output=as_numpy(y.detach()), loss=loss.item(), grad_output=as_numpy(y.grad),
               grad_w_y=as_numpy(w_y.grad).copy(), grad_b_y=as_numpy(b_y.grad).copy())
    if p.get("truncation") is None:     # the whole graph at once, loss → output layer → recurrence
        full = _full_graph(plain, head)
        out.update(full)
    return out


def _full_graph(p: dict, head) -> dict:
    """One autograd graph from the loss through the output layer and the unrolled cell (nn.RNNCell,
    LSTMCell kernels, the GRU of _gru) to every weight."""
    cell = p["cell"]
    xs = np.asarray(p["x"], dtype=float)
    xs = xs[:, None] if xs.ndim == 1 else xs
    w_ih, w_hh = tensor(p["weight_ih"], grad=True), tensor(p["weight_hh"], grad=True)
    H = w_hh.shape[1]
    zeros = np.zeros(_G[cell] * H)
    b_ih = tensor(p["bias_ih"] if p.get("bias_ih") is not None else zeros, grad=True)
    b_hh = tensor(p["bias_hh"] if p.get("bias_hh") is not None else zeros, grad=True)
    h = tensor(p["h0"] if p.get("h0") is not None else np.zeros(H), grad=True)
    c = tensor(p["c0"] if p.get("c0") is not None else np.zeros(H), grad=True)
    h0 = h
    act = torch.tanh if p.get("nonlinearity", "tanh") == "tanh" else torch.relu
    hs = []
    for xt in tensor(xs):
        if cell == "rnn":
            h = act(w_ih @ xt + b_ih + w_hh @ h + b_hh)
        elif cell == "lstm":
            h, c = (v[0] for v in torch._VF.lstm_cell(xt[None], (h[None], c[None]), w_ih, w_hh, b_ih, b_hh))
        else:
            h = _gru(xt, h, w_ih, w_hh, b_ih, b_hh, p.get("convention", "lecture"), p.get("reset", "after"))
        h.retain_grad()
        hs.append(h)
    _, loss = head(torch.stack(hs))
    loss.backward()
    return {"grad_h": np.array([as_numpy(v.grad) for v in hs]), "grad_weight_ih": as_numpy(w_ih.grad),
            "grad_weight_hh": as_numpy(w_hh.grad), "grad_bias_ih": as_numpy(b_ih.grad),
            "grad_bias_hh": as_numpy(b_hh.grad), "grad_h0": as_numpy(h0.grad)}


def random_rnn_bptt_output(rng: np.random.Generator) -> dict:
    """A random valid rnn-bptt-output instance: every cell, loss, reduction and output activation."""
    p = random_rnn_bptt(rng)
    p.pop("grad_hidden")
    T = np.shape(p["x"])[0]
    H = np.shape(p["weight_hh"])[1]
    n_out = int(rng.integers(1, 4))
    loss = pick(rng, ["half-sse", "mse", "cross-entropy"])
    p.update(weight_y=normal(rng, n_out, H), bias_y=normal(rng, n_out), loss=loss)
    if rng.random() < 0.5:
        p["reduction"] = pick(rng, ["sum", "mean"])
    if loss == "cross-entropy":
        p["target"] = [int(v) for v in rng.integers(0, n_out, T)]
    else:
        p["target"] = normal(rng, T, n_out)
        p["output_activation"] = pick(rng, ["identity", "sigmoid", "tanh"])
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "rnn-bptt": Reference(ref_rnn_bptt, random_rnn_bptt),
    "rnn-bptt-output": Reference(ref_rnn_bptt_output, random_rnn_bptt_output),
}
