"""Torch references of group and instance normalisation: torch.nn.GroupNorm and torch.nn.InstanceNorm2d
modules with autograd (the unbiased variance, which torch lacks, written in torch from its formula)."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from examprep.verify._torch import DTYPE, Reference, as_numpy, normal, pick, tensor


def _reference(p: dict, num_groups: int | None, module: nn.Module) -> dict:
    """The module on x (x[None] for one example) and autograd; the statistics from x's view per group."""
    x = tensor(p["x"], grad=True)
    x4 = x if x.ndim == 4 else x[None]
    n, c = x4.shape[:2]
    g = num_groups or c
    with torch.no_grad():
        if p.get("affine"):
            module.weight.copy_(tensor(p.get("weight", 1.0)) * torch.ones(c, dtype=DTYPE))
            module.bias.copy_(tensor(p.get("bias", 0.0)) * torch.ones(c, dtype=DTYPE))
    unbiased = p.get("variance", "biased") == "unbiased"
    groups = x4.reshape(n, g, -1)
    mean, var = groups.mean(-1), groups.var(-1, unbiased=unbiased)
    if unbiased:        # torch normalises by the biased variance only: the formula, in torch
        x_hat = ((groups - mean[..., None]) / torch.sqrt(var[..., None] + p.get("eps", 1e-5))).reshape(x4.shape)
        y4 = x_hat * module.weight.view(1, c, 1, 1) + module.bias.view(1, c, 1, 1) if p.get("affine") else x_hat
    else:
        y4 = module(x4)
        x_hat = nn.functional.group_norm(x4, g, eps=p.get("eps", 1e-5))
    one = (lambda t: t) if x.ndim == 4 else (lambda t: t[0])
    out = {"output": as_numpy(one(y4)), "x_hat": as_numpy(one(x_hat)), "mean": as_numpy(one(mean)),
           "var": as_numpy(one(var)), "num_params": sum(q.numel() for q in module.parameters())}
    if p.get("grad_output") is not None:
        wanted = [x] + ([module.weight, module.bias] if p.get("affine") else [])
        grads = torch.autograd.grad(one(y4), wanted, tensor(p["grad_output"]))
        out["grad_input"] = as_numpy(grads[0])
        if p.get("affine"):
            out.update(grad_weight=as_numpy(grads[1]), grad_bias=as_numpy(grads[2]))
    return out


def ref_group_norm(p: dict) -> dict:
    c = np.shape(p["x"])[-3]
    p = {"affine": True, **p}
    return _reference(p, p["num_groups"], nn.GroupNorm(p["num_groups"], c, eps=p.get("eps", 1e-5), affine=p["affine"],
                                                       dtype=DTYPE))


def ref_instance_norm(p: dict) -> dict:
    c = np.shape(p["x"])[-3]
    p = {"affine": False, **p}
    return _reference(p, None, nn.InstanceNorm2d(c, eps=p.get("eps", 1e-5), affine=p["affine"], dtype=DTYPE))


def _random_x(rng: np.random.Generator, c: int) -> list:
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    h, w = ri(1, 3), ri(2, 3)
    return normal(rng, ri(1, 3), c, h, w, scale=2) if rng.random() < 0.6 else normal(rng, c, h, w, scale=2)


def _random_rest(rng: np.random.Generator, c: int, x: list, affine: bool) -> dict:
    p = {"x": x, "eps": pick(rng, [1e-5, 1e-3, 0.1]), "affine": affine,
         "variance": pick(rng, ["biased", "biased", "unbiased"]),
         "grad_output": np.round(rng.standard_normal(np.shape(x)), 4).tolist()}
    if affine:
        p.update(weight=normal(rng, c), bias=normal(rng, c))
    return p


def random_group_norm(rng: np.random.Generator) -> dict:
    """A random valid group-norm instance (N×C×H×W or C×H×W, G dividing C)."""
    g, per = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    x = _random_x(rng, g * per)
    return {"num_groups": g, **_random_rest(rng, g * per, x, bool(rng.random() < 0.8))}


def random_instance_norm(rng: np.random.Generator) -> dict:
    """A random valid instance-norm instance (at least two positions per channel)."""
    c = int(rng.integers(1, 5))
    return _random_rest(rng, c, _random_x(rng, c), bool(rng.random() < 0.5))


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "group-norm": Reference(ref_group_norm, random_group_norm),
    "instance-norm": Reference(ref_instance_norm, random_instance_norm),
}
