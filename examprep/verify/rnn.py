"""Torch references of recurrent networks: nn.RNNCell, nn.LSTMCell (and its backward along the cell
state, by autograd), nn.GRUCell (the lecture's GRU blend and Cho's reset from torch ops), nn.RNN over
a sequence with autograd Jacobians, the one-unit RNN's local derivatives."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from examprep.verify._torch import DTYPE, Reference, as_numpy, normal, pick, tensor


def _cell(module: nn.Module, p: dict) -> nn.Module:
    with torch.no_grad():
        module.weight_ih.copy_(tensor(p["weight_ih"]))
        module.weight_hh.copy_(tensor(p["weight_hh"]))
        for name in ("bias_ih", "bias_hh"):
            getattr(module, name).copy_(tensor(p[name]) if p.get(name) is not None else torch.zeros_like(getattr(module, name)))
    return module


def ref_rnn_cell(p: dict) -> dict:
    x, h = tensor(p["x"]), tensor(p["h"])
    cell = _cell(nn.RNNCell(x.shape[0], h.shape[0], nonlinearity=p.get("nonlinearity", "tanh"), dtype=DTYPE), p)
    with torch.no_grad():
        return {"h_new": as_numpy(cell(x[None], h[None])[0])}


def ref_lstm_cell(p: dict) -> dict:
    x, h, c = tensor(p["x"]), tensor(p["h"]), tensor(p["c"])
    H = h.shape[0]
    cell = _cell(nn.LSTMCell(x.shape[0], H, dtype=DTYPE), p)
    with torch.no_grad():
        h1, c1 = cell(x[None], (h[None], c[None]))
        gates = F.linear(x, cell.weight_ih, cell.bias_ih) + F.linear(h, cell.weight_hh, cell.bias_hh)
    i, f, g, o = gates.chunk(4)
    out = {"i": as_numpy(torch.sigmoid(i)), "f": as_numpy(torch.sigmoid(f)), "g": as_numpy(torch.tanh(g)),
           "o": as_numpy(torch.sigmoid(o)), "c_new": as_numpy(c1[0]), "h_new": as_numpy(h1[0])}
    if p.get("grad_c_new") is not None:     # ∂c'/∂c by autograd's Jacobian (its diagonal), ∂L/∂c by autograd
        c_new = lambda cc: cell(x[None], (h[None], cc[None]))[1][0]  # noqa: E731
        out["cell_gradient"] = as_numpy(torch.diagonal(torch.autograd.functional.jacobian(c_new, c)))
        cc = c.clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(c_new(cc), cc, tensor(p["grad_c_new"]))
        out["grad_c"] = as_numpy(grad)
    return out


def ref_gru_cell(p: dict) -> dict:
    """torch.nn.GRUCell for PyTorch's convention. For the others, gates from torch ops and the
    identity lecture = h + n − pytorch (the two blends sum to h + n)."""
    x, h = tensor(p["x"]), tensor(p["h"])
    H = h.shape[0]
    cell = _cell(nn.GRUCell(x.shape[0], H, dtype=DTYPE), p)
    with torch.no_grad():
        gi = F.linear(x, cell.weight_ih, cell.bias_ih)
        w_hh, b_hh = cell.weight_hh, cell.bias_hh
        r = torch.sigmoid(gi[:H] + F.linear(h, w_hh[:H], b_hh[:H]))
        z = torch.sigmoid(gi[H:2 * H] + F.linear(h, w_hh[H:2 * H], b_hh[H:2 * H]))
        if p.get("reset", "after") == "after":
            h_torch = cell(x[None], h[None])[0]
            n = torch.tanh(gi[2 * H:] + r * F.linear(h, w_hh[2 * H:], b_hh[2 * H:]))
            assert torch.allclose(h_torch, (1 - z) * n + z * h, rtol=1e-10, atol=1e-12)
        else:   # Cho et al. 2014 eq. 8: reset applied to h before the product
            n = torch.tanh(gi[2 * H:] + F.linear(r * h, w_hh[2 * H:], b_hh[2 * H:]))
            h_torch = (1 - z) * n + z * h
        h_new = h_torch if p.get("convention", "lecture") == "pytorch" else h + n - h_torch
    return {"r": as_numpy(r), "z": as_numpy(z), "n": as_numpy(n), "h_new": as_numpy(h_new)}


def _rnn_module(n_in: int, H: int, p: dict) -> nn.RNN:
    rnn = nn.RNN(n_in, H, nonlinearity=p.get("nonlinearity", "tanh"), dtype=DTYPE)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(tensor(p["weight_ih"]))
        rnn.weight_hh_l0.copy_(tensor(p["weight_hh"]))
        for ours, theirs in (("bias_ih", "bias_ih_l0"), ("bias_hh", "bias_hh_l0")):
            getattr(rnn, theirs).copy_(tensor(p[ours]) if p.get(ours) is not None else torch.zeros(H, dtype=DTYPE))
    return rnn


def ref_rnn_unroll(p: dict) -> dict:
    """torch.nn.RNN over the whole sequence; ∂h_T/∂h_0 by torch.autograd.functional.jacobian."""
    xs = np.asarray(p["x"], dtype=np.float64)
    xs = xs[:, None] if xs.ndim == 1 else xs
    H = np.shape(p["weight_hh"])[0]
    rnn = _rnn_module(xs.shape[1], H, p)
    x = tensor(xs)[:, None, :]
    h0 = tensor(p["h0"] if p.get("h0") is not None else np.zeros(H))
    last = lambda h: rnn(x, h[None, None, :])[1][0, 0]  # noqa: E731
    out = {"hidden": as_numpy(rnn(x, h0[None, None, :])[0][:, 0, :]),
           "jacobian": as_numpy(torch.autograd.functional.jacobian(last, h0))}
    if p.get("grad_output") is not None:
        hh = h0.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(last(hh), hh, tensor(p["grad_output"]))
        out["grad_h0"] = as_numpy(g)
    return out


def ref_vanishing_gradient(p: dict) -> dict:
    """A one-unit torch.nn.RNN; each local derivative ∂h_t/∂h_{t−1} and the whole ∂h_T/∂h_0 by autograd."""
    xs = np.reshape(p["x"], -1)
    rnn = _rnn_module(1, 1, {"weight_ih": [[p.get("u", 1.0)]], "weight_hh": [[p["w"]]], "bias_ih": [p.get("b", 0.0)],
                             "nonlinearity": p.get("nonlinearity", "tanh")})
    cell = nn.RNNCell(1, 1, nonlinearity=p.get("nonlinearity", "tanh"), dtype=DTYPE)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, name).copy_(getattr(rnn, name + "_l0"))
    h0 = tensor([[[p.get("h0", 0.0)]]], grad=True)
    seq, hT = rnn(tensor(xs)[:, None, None], h0)
    (g,) = torch.autograd.grad(hT.sum(), h0)
    hidden = seq[:, 0, 0].detach()
    prev = torch.cat([h0.detach().reshape(1), hidden[:-1]])
    local = []
    for xt, hp in zip(tensor(xs), prev):
        hp = hp.reshape(1, 1).clone().requires_grad_(True)
        (d,) = torch.autograd.grad(cell(xt.reshape(1, 1), hp).sum(), hp)
        local.append(float(d))
    out = {"hidden": as_numpy(hidden), "local_derivatives": np.array(local), "gradient": float(g),
           "bound": abs(float(p["w"])) ** len(xs)}
    if p.get("max_norm") is not None:
        # torch.nn.utils.clip_grad_norm_ on a parameter holding that gradient: its norm, and its rescaling
        # g·c/‖g‖ where ‖g‖ > c (torch divides by ‖g‖ + 1e-6: the exact rule uses the norm it returns)
        param = torch.nn.Parameter(torch.zeros(1, dtype=DTYPE))
        param.grad = g.reshape(1).clone()
        norm = float(torch.nn.utils.clip_grad_norm_([param], p["max_norm"]))
        assert abs(float(param.grad) - float(g) * min(1.0, p["max_norm"] / (norm + 1e-6))) <= 1e-12 * abs(float(g))
        out["clipped"] = float(g) * min(1.0, p["max_norm"] / norm) if norm > 0 else float(g)
    return out


def _random_cell(topic: str, rng: np.random.Generator) -> dict:
    """A random valid rnn-cell, lstm-cell or gru-cell instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    g = {"rnn-cell": 1, "lstm-cell": 4, "gru-cell": 3}[topic]
    i, h = ri(1, 4), ri(1, 4)
    p = {"x": normal(rng, i), "h": normal(rng, h), "weight_ih": normal(rng, g * h, i), "weight_hh": normal(rng, g * h, h),
         "bias_ih": normal(rng, g * h), "bias_hh": normal(rng, g * h)}
    if topic == "lstm-cell":
        p["c"] = normal(rng, h)
        if rng.random() < 0.5:
            p["grad_c_new"] = normal(rng, h)
    if topic == "gru-cell":
        p.update(convention=pick(rng, ["lecture", "pytorch"]), reset=pick(rng, ["after", "before"]))
    if topic == "rnn-cell":
        p["nonlinearity"] = pick(rng, ["tanh", "relu"])
    return p


def random_rnn_cell(rng: np.random.Generator) -> dict:
    return _random_cell('rnn-cell', rng)


def random_lstm_cell(rng: np.random.Generator) -> dict:
    return _random_cell('lstm-cell', rng)


def random_gru_cell(rng: np.random.Generator) -> dict:
    return _random_cell('gru-cell', rng)


def random_rnn_unroll(rng: np.random.Generator) -> dict:
    """A random valid rnn-unroll instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    T, n_in, H = ri(1, 5), ri(1, 3), ri(1, 3)
    p = {"x": normal(rng, T, n_in), "weight_ih": normal(rng, H, n_in), "weight_hh": normal(rng, H, H), "bias_ih": normal(rng, H),
         "bias_hh": normal(rng, H), "nonlinearity": pick(rng, ["tanh", "relu"]), "grad_output": normal(rng, H)}
    if rng.random() < 0.7:
        p["h0"] = normal(rng, H)
    return p


def random_vanishing_gradient(rng: np.random.Generator) -> dict:
    """A random valid vanishing-gradient instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    T = ri(1, 12)
    p = {"w": float(normal(rng, 1, scale=1.5)[0]), "x": normal(rng, T), "u": float(normal(rng, 1)[0]),
         "h0": float(normal(rng, 1)[0]), "b": float(normal(rng, 1, scale=0.3)[0]),
         "nonlinearity": pick(rng, ["tanh", "relu"])}
    if rng.random() < 0.5:
        p["max_norm"] = float(rng.choice([0.01, 0.5, 5.0]))
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "rnn-cell": Reference(ref_rnn_cell, random_rnn_cell),
    "lstm-cell": Reference(ref_lstm_cell, random_lstm_cell),
    "gru-cell": Reference(ref_gru_cell, random_gru_cell),
    "rnn-unroll": Reference(ref_rnn_unroll, random_rnn_unroll),
    "vanishing-gradient": Reference(ref_vanishing_gradient, random_vanishing_gradient),
}
