"""Torch references of residual connections: residual blocks (autograd, and
torch.autograd.functional.jacobian) and stacks of one-unit layers."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from examprep.verify._torch import ACTS, Reference, as_numpy, normal, pick, tensor


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


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "residual": Reference(ref_residual, random_residual),
    "residual-stack": Reference(ref_residual_stack, random_residual_stack),
}
