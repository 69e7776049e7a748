"""Torch reference of the activations: torch's functions and autograd for the derivative."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from examprep.verify._torch import Reference, as_numpy, normal, pick, tensor


def ref_activation(p: dict) -> dict:
    x = tensor(p["x"], grad=True)
    name = p["name"]
    if name == "sigmoid":
        y = torch.sigmoid(x)
    elif name == "tanh":
        y = torch.tanh(x)
    elif name == "relu":
        y = F.relu(x)
    elif name == "leaky-relu":
        y = F.leaky_relu(x, p.get("negative_slope", 0.01))
    else:
        y = F.gelu(x, approximate=p.get("approximate", "none"))
    (g,) = torch.autograd.grad(y.sum(), x)
    return {"output": as_numpy(y), "derivative": as_numpy(g)}


def random_activation(rng: np.random.Generator) -> dict:
    """A random valid activation instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    name = pick(rng, ["sigmoid", "tanh", "relu", "leaky-relu", "gelu"])
    p = {"name": name, "x": normal(rng, ri(1, 6), scale=2)}
    if name == "leaky-relu":
        p["negative_slope"] = float(round(rng.uniform(0.01, 0.3), 3))
    if name == "gelu":
        p["approximate"] = pick(rng, ["none", "tanh"])
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "activation": Reference(ref_activation, random_activation),
}
