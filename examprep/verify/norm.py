"""Torch references of normalisation: F.layer_norm and The Annotated Transformer's LayerNorm; F.batch_norm."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from examprep.verify._torch import DTYPE, Reference, as_numpy, normal, pick, tensor


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


def ref_batch_norm(p: dict) -> dict:
    """F.batch_norm (training or eval, running statistics updated in place) and autograd; the
    conventions torch lacks (Keras's momentum, the biased running variance, normalising by the
    unbiased variance) written in torch from their formulas."""
    x = tensor(p["x"], grad=True)
    c = x.shape[1]
    ones = torch.ones(c, dtype=DTYPE)
    gamma = (tensor(p.get("gamma", 1.0)) * ones).detach().requires_grad_(True)
    beta = (tensor(p.get("beta", 0.0)) * ones).detach().requires_grad_(True)
    rm = tensor(p.get("running_mean", 0.0)) * ones
    rv = tensor(p.get("running_var", 1.0)) * ones
    eps, momentum, training = p.get("eps", 1e-5), p.get("momentum", 0.1), p.get("training", True)
    keras = p.get("momentum_convention", "pytorch") == "keras"
    torch_momentum = 1 - momentum if keras else momentum
    default = (p.get("variance", "biased") == "biased" and p.get("running_var_update", "unbiased") == "unbiased")
    if default or not training:
        rm_new, rv_new = rm.clone(), rv.clone()
        y = F.batch_norm(x, rm_new, rv_new, gamma, beta, training=training, momentum=torch_momentum, eps=eps)
    else:
        axes = [0] + list(range(2, x.ndim))
        shape = [1, c] + [1] * (x.ndim - 2)
        mean = x.mean(dim=axes)
        biased = x.var(dim=axes, unbiased=False)
        unbiased = x.var(dim=axes, unbiased=True)
        var = biased if p.get("variance", "biased") == "biased" else unbiased
        y = gamma.view(shape) * (x - mean.view(shape)) / torch.sqrt(var.view(shape) + eps) + beta.view(shape)
        batch_var = unbiased if p.get("running_var_update", "unbiased") == "unbiased" else biased
        rm_new = (1 - torch_momentum) * rm + torch_momentum * mean.detach()
        rv_new = (1 - torch_momentum) * rv + torch_momentum * batch_var.detach()
    out = {"output": as_numpy(y), "running_mean_new": as_numpy(rm_new), "running_var_new": as_numpy(rv_new)}
    if p.get("grad_output") is not None:
        gx, gg, gb = torch.autograd.grad(y, (x, gamma, beta), tensor(p["grad_output"]))
        out.update(grad_input=as_numpy(gx), grad_gamma=as_numpy(gg), grad_beta=as_numpy(gb))
    return out


def random_batch_norm(rng: np.random.Generator) -> dict:
    """A random valid batch-norm instance (N×C or N×C×H×W, training or evaluation)."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    c = ri(1, 3)
    x = normal(rng, ri(2, 4), c, scale=2) if rng.random() < 0.6 else normal(rng, ri(1, 3), c, ri(1, 3), ri(2, 3), scale=2)
    p = {"x": x, "gamma": normal(rng, c), "beta": normal(rng, c), "eps": pick(rng, [1e-5, 1e-3, 0.1]),
         "training": bool(rng.random() < 0.7), "running_mean": normal(rng, c),
         "running_var": np.round(rng.uniform(0.5, 2, c), 4).tolist(), "momentum": pick(rng, [0.1, 0.2, 0.9]),
         "momentum_convention": pick(rng, ["pytorch", "pytorch", "keras"]),
         "running_var_update": pick(rng, ["unbiased", "unbiased", "biased"]),
         "variance": pick(rng, ["biased", "biased", "unbiased"])}
    p["grad_output"] = np.round(rng.standard_normal(np.shape(x)), 4).tolist()
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "layer-norm": Reference(ref_layer_norm, random_layer_norm),
    "batch-norm": Reference(ref_batch_norm, random_batch_norm),
}
