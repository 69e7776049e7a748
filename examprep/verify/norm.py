"""Torch reference of layer normalisation: F.layer_norm and The Annotated Transformer's LayerNorm."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from examprep.verify._torch import DTYPE, as_numpy, normal, pick, tensor


def ref_layer_norm(p: dict) -> dict:
    x = tensor(p["x"])
    gamma = tensor(p.get("gamma", 1.0)) * torch.ones(x.shape[-1], dtype=DTYPE)
    beta = tensor(p.get("beta", 0.0)) * torch.ones(x.shape[-1], dtype=DTYPE)
    eps = p.get("eps", 1e-5)
    unbiased = p.get("variance", "biased") == "unbiased"
    mean = x.mean(-1)
    var = x.var(-1, unbiased=unbiased)
    if p.get("eps_placement", "added-to-std") == "inside-sqrt" and not unbiased:
        y = F.layer_norm(x, (x.shape[-1],), gamma, beta, eps)
    elif p.get("eps_placement", "added-to-std") == "inside-sqrt":
        y = gamma * (x - mean[..., None]) / torch.sqrt(var[..., None] + eps) + beta
    else:   # The Annotated Transformer's LayerNorm: a_2 * (x - mean) / (std + eps) + b_2
        y = gamma * (x - mean[..., None]) / (x.std(-1, unbiased=unbiased, keepdim=True) + eps) + beta
    return {"output": as_numpy(y), "mean": as_numpy(mean), "var": as_numpy(var)}


def random_layer_norm(rng: np.random.Generator) -> dict:
    """A random valid layer-norm instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    d = ri(2, 6)
    x = normal(rng, d, scale=2) if rng.random() < 0.5 else normal(rng, ri(1, 3), d, scale=2)
    return {"x": x, "gamma": normal(rng, d), "beta": normal(rng, d), "eps": pick(rng, [1e-5, 1e-6, 0.1]),
            "eps_placement": pick(rng, ["added-to-std", "inside-sqrt"]), "variance": pick(rng, ["biased", "unbiased"])}
