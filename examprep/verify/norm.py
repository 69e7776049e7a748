"""Torch references of normalisation: F.layer_norm and The Annotated Transformer's LayerNorm; F.batch_norm."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from examprep.verify._torch import DTYPE, Reference, as_numpy, normal, pick, tensor


def ref_layer_norm(p: dict) -> dict:
    """F.layer_norm over normalized_shape (the last axis without it); the other conventions in torch from
    their formulas, over the same axes."""
    x = tensor(p["x"])
    shape = p.get("normalized_shape")
    shape = (x.shape[-1],) if shape is None else tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
    dims = tuple(range(-len(shape), 0))
    gamma = tensor(p.get("gamma", 1.0)) * torch.ones(shape, dtype=DTYPE)
    beta = tensor(p.get("beta", 0.0)) * torch.ones(shape, dtype=DTYPE)
    eps = p.get("eps", 1e-5)
    unbiased = p.get("variance", "biased") == "unbiased"
    mean = x.mean(dims, keepdim=True)
    var = x.var(dims, unbiased=unbiased, keepdim=True)
    if p.get("eps_placement", "added-to-std") == "inside-sqrt" and not unbiased:
        y = F.layer_norm(x, shape, gamma, beta, eps)
    elif p.get("eps_placement", "added-to-std") == "inside-sqrt":
        y = gamma * (x - mean) / torch.sqrt(var + eps) + beta
    else:   # The Annotated Transformer's LayerNorm: a_2 * (x - mean) / (std + eps) + b_2
        y = gamma * (x - mean) / (x.std(dims, unbiased=unbiased, keepdim=True) + eps) + beta
    lead = x.shape[:x.ndim - len(shape)]
    return {"output": as_numpy(y), "mean": as_numpy(mean.reshape(lead)), "var": as_numpy(var.reshape(lead))}


def random_layer_norm(rng: np.random.Generator) -> dict:
    """A random valid layer-norm instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    conventions = {"eps": pick(rng, [1e-5, 1e-6, 0.1]), "eps_placement": pick(rng, ["added-to-std", "inside-sqrt"]),
                   "variance": pick(rng, ["biased", "unbiased"])}
    if rng.random() < 0.3:       # torch.nn.LayerNorm([C, H, W]) (or [H, W]) on C×H×W or N×C×H×W input
        shape = [ri(1, 3), ri(1, 3), ri(2, 3)][int(rng.random() < 0.3):]
        lead = [ri(1, 3)] if rng.random() < 0.5 else []
        return {"x": normal(rng, *lead, *shape, scale=2), "gamma": normal(rng, *shape), "beta": normal(rng, *shape),
                "normalized_shape": shape, **conventions}
    d = ri(2, 6)
    x = normal(rng, d, scale=2) if rng.random() < 0.5 else normal(rng, ri(1, 3), d, scale=2)
    return {"x": x, "gamma": normal(rng, d), "beta": normal(rng, d), **conventions}


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
        out.update(_statistics_gradients(p, x.detach(), gamma.detach(), beta.detach(), rm, rv))
    return out


def _statistics_gradients(p: dict, x, gamma, beta, rm, rv) -> dict:
    """∂L/∂μ and ∂L/∂σ² by autograd, μ and σ² computed as explicit tensors of the graph (the batch's,
    σ² from μ, in training; the running ones as leaves in evaluation)."""
    c = x.shape[1]
    axes = [0] + list(range(2, x.ndim))
    shape = [1, c] + [1] * (x.ndim - 2)
    if p.get("training", True):
        x = x.clone().requires_grad_(True)          # μ and σ² are nodes between x and y
        mean = x.mean(dim=axes)
        var = ((x - mean.view(shape)) ** 2).sum(dim=axes) / (x.numel() // c - (p.get("variance", "biased") == "unbiased"))
    else:
        mean, var = rm.clone().requires_grad_(True), rv.clone().requires_grad_(True)
    y = gamma.view(shape) * (x - mean.view(shape)) / torch.sqrt(var.view(shape) + p.get("eps", 1e-5)) + beta.view(shape)
    gm, gv = torch.autograd.grad(y, (mean, var), tensor(p["grad_output"]))
    return {"grad_mean": as_numpy(gm), "grad_var": as_numpy(gv)}


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
