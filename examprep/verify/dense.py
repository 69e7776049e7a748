"""Torch references of dense layers: F.linear and autograd for the layer (and its squared error to a
target), the two-layer MLP with F.cross_entropy, and the two-layer network with a squared-error loss."""
from __future__ import annotations


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
    if p.get("target") is not None:         # L = ½ Σ (y − t)²: its gradients by autograd, ∂L/∂y among them
        y.retain_grad()
        (0.5 * ((y - tensor(p["target"])) ** 2).sum()).backward()
        out.update(grad_output=as_numpy(y.grad), grad_weight=as_numpy(w.grad), grad_bias=as_numpy(b.grad),
                   grad_input=as_numpy(x.grad))
    elif p.get("grad_output") is not None:
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


def random_dense(rng: np.random.Generator) -> dict:
    """A random valid dense instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    i, o = ri(1, 4), ri(1, 4)
    batch = rng.random() < 0.5
    x = normal(rng, ri(1, 3), i) if batch else normal(rng, i)
    p = {"x": x, "weight": normal(rng, o, i), "bias": normal(rng, o)}
    p["grad_output"] = normal(rng, len(x), o) if batch else normal(rng, o)
    if rng.random() < 0.3:                  # a target instead: L = ½ Σ (y − t)²
        p["target"] = p.pop("grad_output")
    return p


def random_mlp_backprop(rng: np.random.Generator) -> dict:
    """A random valid mlp-backprop instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    i, h, c = ri(1, 4), ri(1, 4), ri(2, 4)
    return {"x": normal(rng, i), "target": ri(0, c - 1), "w1": normal(rng, h, i), "b1": normal(rng, h),
            "w2": normal(rng, c, h), "b2": normal(rng, c), "activation": pick(rng, ["relu", "sigmoid", "tanh"])}


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
    "mlp-regression": Reference(ref_mlp_regression, random_mlp_regression),
}
