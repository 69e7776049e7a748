"""Torch references of softmax and cross-entropy: torch.softmax, F.cross_entropy and autograd."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from examprep.verify._torch import Reference, as_numpy, normal, pick, tensor


def ref_softmax(p: dict) -> dict:
    return {"probs": as_numpy(torch.softmax(tensor(p["logits"]), dim=-1))}


def ref_cross_entropy(p: dict) -> dict:
    z = tensor(p["logits"], grad=True)
    single = z.ndim == 1
    target = torch.tensor([p["target"]] if single else p["target"], dtype=torch.long)
    zz = z[None, :] if single else z
    red = p.get("reduction", "mean")
    loss = F.cross_entropy(zz, target, reduction=red, label_smoothing=p.get("label_smoothing", 0.0))
    (g,) = torch.autograd.grad(loss.sum(), z)
    out_loss = loss[0] if (single and red == "none") else loss
    # the (smoothed) target q: the summed loss's gradient is p − q
    summed = F.cross_entropy(zz, target, reduction="sum", label_smoothing=p.get("label_smoothing", 0.0))
    (gs,) = torch.autograd.grad(summed, z)
    return {"loss": as_numpy(out_loss), "probs": as_numpy(torch.softmax(z, -1)), "grad_logits": as_numpy(g),
            "target_dist": as_numpy(torch.softmax(z, -1) - gs)}


def random_softmax(rng: np.random.Generator) -> dict:
    """A random valid softmax instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    return {"logits": normal(rng, ri(2, 6), scale=3) if rng.random() < 0.5 else normal(rng, ri(1, 4), ri(2, 5), scale=3)}


def random_cross_entropy(rng: np.random.Generator) -> dict:
    """A random valid cross-entropy instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    c = ri(2, 6)
    p = {"reduction": pick(rng, ["mean", "sum", "none"]), "label_smoothing": pick(rng, [0.0, 0.0, 0.1, 0.25])}
    if rng.random() < 0.5:
        p.update(logits=normal(rng, c, scale=2), target=ri(0, c - 1))
    else:
        n = ri(1, 4)
        p.update(logits=normal(rng, n, c, scale=2), target=[ri(0, c - 1) for _ in range(n)])
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "softmax": Reference(ref_softmax, random_softmax),
    "cross-entropy": Reference(ref_cross_entropy, random_cross_entropy),
}
