"""Torch references of dense layers: F.linear and autograd for the layer, the two-layer MLP with
F.cross_entropy, residual blocks (torch.autograd.functional.jacobian) and stacks."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from examprep.verify._torch import ACTS, Reference, as_numpy, normal, pick, tensor


def ref_dense(p: dict) -> dict:
    x = tensor(p["x"], grad=True)
    w = tensor(p["weight"], grad=True)
    b = tensor(p["bias"] if p.get("bias") is not None else np.zeros(w.shape[0]), grad=True)
    y = F.linear(x, w, b)
    out = {"output": as_numpy(y)}
    if p.get("grad_output") is not None:
        gx, gw, gb = torch.autograd.grad(y, (x, w, b), tensor(p["grad_output"]))
        out.update(grad_weight=as_numpy(gw), grad_bias=as_numpy(gb), grad_input=as_numpy(gx))
    return out


def ref_mlp_backprop(p: dict) -> dict:
    x = tensor(p["x"], grad=True)
    w1, b1, w2, b2 = (tensor(p[n], grad=True) for n in ("w1", "b1", "w2", "b2"))
    a = F.linear(x, w1, b1)
    a.retain_grad()
    h = ACTS[p.get("activation", "relu")](a)
    h.retain_grad()
    z = F.linear(h, w2, b2)
    z.retain_grad()
    loss = F.cross_entropy(z[None, :], torch.tensor([p["target"]]))
    loss.backward()
    return {"hidden_pre": as_numpy(a), "hidden": as_numpy(h), "logits": as_numpy(z), "probs": as_numpy(torch.softmax(z, -1)),
            "loss": as_numpy(loss), "grad_logits": as_numpy(z.grad), "grad_w2": as_numpy(w2.grad), "grad_b2": as_numpy(b2.grad),
            "grad_hidden": as_numpy(h.grad), "grad_hidden_pre": as_numpy(a.grad), "grad_w1": as_numpy(w1.grad),
            "grad_b1": as_numpy(b1.grad), "grad_x": as_numpy(x.grad)}


def _scalarise(value: np.ndarray, scalar: bool) -> Any:
    return float(value.reshape(-1)[0]) if scalar and value.size == 1 else value


def ref_residual(p: dict) -> dict:
    """y = x + F(x) by autograd: the branch's share of ∂L/∂x is the gradient of δ·F(x) alone."""
    scalar = np.ndim(p["x"]) == 0
    x = tensor(np.atleast_1d(p["x"]), grad=True)
    w1 = tensor(np.atleast_2d(p["w1"]), grad=True)
    b1 = tensor(p["b1"] if p.get("b1") is not None else np.zeros(w1.shape[0]), grad=True)
    b1 = b1.reshape(-1).detach().requires_grad_(True)
    act = p.get("activation", "relu")
    phi = (lambda a: F.leaky_relu(a, p.get("negative_slope", 0.01))) if act == "leaky-relu" else ACTS[act]
    two = p.get("w2") is not None
    h = phi(F.linear(x, w1, b1))
    leaves = [x, w1, b1]
    if two:
        w2 = tensor(np.atleast_2d(p["w2"]), grad=True)
        b2 = tensor(np.reshape(p["b2"], -1) if p.get("b2") is not None else np.zeros(w2.shape[0]), grad=True)
        branch = F.linear(h, w2, b2)
        leaves += [w2, b2]
    else:
        branch = h
    y = x + branch
    H = w1.shape[0]
    one = lambda v: _scalarise(v, scalar and H == 1)  # noqa: E731
    out = {"branch": _scalarise(as_numpy(branch), scalar), "output": _scalarise(as_numpy(y), scalar)}

    def forward(xx: torch.Tensor) -> torch.Tensor:
        hh = phi(F.linear(xx, w1.detach(), b1.detach()))
        return xx + (F.linear(hh, w2.detach(), b2.detach()) if two else hh)

    out["jacobian"] = _scalarise(as_numpy(torch.autograd.functional.jacobian(forward, x.detach())), scalar)
    if p.get("grad_output") is not None:
        delta = tensor(np.atleast_1d(p["grad_output"]))
        (gb,) = torch.autograd.grad(branch, x, delta, retain_graph=True)
        grads = torch.autograd.grad(y, leaves, delta)
        out.update(grad_branch=_scalarise(as_numpy(gb), scalar), grad_input=_scalarise(as_numpy(grads[0]), scalar),
                   grad_w1=one(as_numpy(grads[1])), grad_b1=one(as_numpy(grads[2])))
        if two:
            out.update(grad_w2=one(as_numpy(grads[3])), grad_b2=_scalarise(as_numpy(grads[4]), scalar))
    return out


def ref_residual_stack(p: dict) -> dict:
    act = p.get("activation", "tanh")
    phi = (lambda a: F.leaky_relu(a, 0.01)) if act == "leaky-relu" else ACTS[act]
    skip = p.get("skip", True)
    w = np.reshape(p["weights"], -1)
    b = np.reshape(p["biases"], -1) if p.get("biases") is not None else np.zeros_like(w)
    x = tensor(p["x"], grad=True)
    y, outs, local = x, [], []
    for wl, bl in zip(w, b):
        prev = y.detach().requires_grad_(True)
        nxt = (prev + phi(wl * prev + bl)) if skip else phi(wl * prev + bl)
        (d,) = torch.autograd.grad(nxt, prev)
        local.append(float(d))
        y = (y + phi(wl * y + bl)) if skip else phi(wl * y + bl)
        outs.append(float(y.detach()))
    (g,) = torch.autograd.grad(y, x)
    return {"outputs": np.array(outs), "local_derivatives": np.array(local), "gradient": float(g)}


def random_dense(rng: np.random.Generator) -> dict:
    """A random valid dense instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    i, o = ri(1, 4), ri(1, 4)
    batch = rng.random() < 0.5
    x = normal(rng, ri(1, 3), i) if batch else normal(rng, i)
    p = {"x": x, "weight": normal(rng, o, i), "bias": normal(rng, o)}
    p["grad_output"] = normal(rng, len(x), o) if batch else normal(rng, o)
    return p


def random_mlp_backprop(rng: np.random.Generator) -> dict:
    """A random valid mlp-backprop instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    i, h, c = ri(1, 4), ri(1, 4), ri(2, 4)
    return {"x": normal(rng, i), "target": ri(0, c - 1), "w1": normal(rng, h, i), "b1": normal(rng, h),
            "w2": normal(rng, c, h), "b2": normal(rng, c), "activation": pick(rng, ["relu", "sigmoid", "tanh"])}


def random_residual(rng: np.random.Generator) -> dict:
    """A random valid residual instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    act = pick(rng, ["relu", "tanh", "sigmoid", "leaky-relu"])
    if rng.random() < 0.25:                        # one feature: numbers in and out
        p = {"x": float(normal(rng, 1)[0]), "w1": float(normal(rng, 1)[0]), "b1": normal(rng, 1)}
    else:
        d = ri(1, 3)
        two = rng.random() < 0.6
        H = ri(1, 4) if two else d
        p = {"x": normal(rng, d), "w1": normal(rng, H, d), "b1": normal(rng, H)}
        if two:
            p.update(w2=normal(rng, d, H), b2=normal(rng, d))
    p["activation"] = act
    p["grad_output"] = float(normal(rng, 1)[0]) if np.ndim(p["x"]) == 0 else normal(rng, len(p["x"]))
    return p


def random_residual_stack(rng: np.random.Generator) -> dict:
    """A random valid residual-stack instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    L = ri(1, 6)
    return {"x": float(normal(rng, 1)[0]), "weights": normal(rng, L), "biases": normal(rng, L, scale=0.5),
            "activation": pick(rng, ["tanh", "sigmoid", "relu"]), "skip": bool(rng.random() < 0.5)}


def ref_mlp_regression(p: dict) -> dict:
    """Two torch layers, the squared-error loss (½Σ or F.mse_loss), autograd, and one torch.optim.SGD step."""
    acts = dict(ACTS, identity=lambda a: a)
    w1, w2 = tensor(p["w1"], grad=True), tensor(p["w2"], grad=True)
    b1 = tensor(p["b1"] if p.get("b1") is not None else np.zeros(len(p["w1"])), grad=True)
    b2 = tensor(p["b2"] if p.get("b2") is not None else np.zeros(len(p["w2"])), grad=True)
    x = tensor(p["x"])
    t = tensor(np.atleast_1d(p["target"]))
    a = w1 @ x + b1
    h = acts[p.get("activation", "sigmoid")](a)
    z = w2 @ h + b2
    o = acts[p.get("output_activation", "sigmoid")](z)
    loss = 0.5 * ((t - o) ** 2).sum() if p.get("loss", "half-sse") == "half-sse" else F.mse_loss(o, t)
    for v in (a, h, z):
        v.retain_grad()
    loss.backward()
    out = {"hidden_pre": as_numpy(a), "hidden": as_numpy(h), "output_pre": as_numpy(z), "output": as_numpy(o),
           "loss": float(loss.detach()), "grad_output_pre": as_numpy(z.grad), "grad_w2": as_numpy(w2.grad),
           "grad_b2": as_numpy(b2.grad), "grad_hidden": as_numpy(h.grad), "grad_hidden_pre": as_numpy(a.grad),
           "grad_w1": as_numpy(w1.grad), "grad_b1": as_numpy(b1.grad)}
    if p.get("lr") is not None:
        torch.optim.SGD([w1, b1, w2, b2], lr=p["lr"]).step()
        out.update(w1_new=as_numpy(w1), b1_new=as_numpy(b1), w2_new=as_numpy(w2), b2_new=as_numpy(b2))
    return out


def random_mlp_regression(rng: np.random.Generator) -> dict:
    """A random valid mlp-regression instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    i, h, o = ri(1, 3), ri(1, 3), ri(1, 2)
    return {"x": normal(rng, i), "target": np.round(rng.uniform(0, 1, o), 3).tolist(), "w1": normal(rng, h, i),
            "b1": normal(rng, h), "w2": normal(rng, o, h), "b2": normal(rng, o),
            "activation": pick(rng, ["sigmoid", "relu", "tanh", "identity"]),
            "output_activation": pick(rng, ["sigmoid", "identity"]), "loss": pick(rng, ["half-sse", "mse"]),
            "lr": pick(rng, [None, 0.5, 0.1])}


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "dense": Reference(ref_dense, random_dense),
    "mlp-backprop": Reference(ref_mlp_backprop, random_mlp_backprop),
    "residual": Reference(ref_residual, random_residual),
    "residual-stack": Reference(ref_residual_stack, random_residual_stack),
    "mlp-regression": Reference(ref_mlp_regression, random_mlp_regression),
}
