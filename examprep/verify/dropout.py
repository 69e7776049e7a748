"""Torch reference of dropout: ATen's own dropout kernel applied with the given mask and scale
(native_dropout_backward computes input · mask · scale, forward and backward alike), and
F.dropout in evaluation mode."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from examprep.verify._torch import Reference, as_numpy, normal, pick, tensor


def ref_dropout(p: dict) -> dict:
    x = tensor(p["x"])
    if not p.get("training", True):
        out = {"output": as_numpy(F.dropout(x, p["p"], training=False))}
        if p.get("grad_output") is not None:
            out["grad_input"] = np.asarray(p["grad_output"], dtype=float)
        return out
    mask = tensor(p["mask"]).bool()
    scale = 0.0 if p["p"] == 1 else 1.0 / (1.0 - p["p"])
    apply = lambda v: torch.ops.aten.native_dropout_backward(v, mask, scale)  # noqa: E731
    out = {"output": as_numpy(apply(x))}
    if p.get("grad_output") is not None:
        out["grad_input"] = as_numpy(apply(tensor(p["grad_output"])))
    return out


def random_dropout(rng: np.random.Generator) -> dict:
    """A random valid dropout instance whose mask torch's own F.dropout drew (seeded)."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    shape = (ri(1, 5),) if rng.random() < 0.5 else (ri(1, 3), ri(1, 4))
    p = float(pick(rng, [0.1, 0.2, 0.5, 0.75]))
    gen = torch.Generator().manual_seed(int(rng.integers(0, 2**31)))
    mask = torch.bernoulli(torch.full(shape, 1 - p, dtype=torch.float64), generator=gen)
    return {"x": normal(rng, *shape), "mask": mask.to(int).tolist(), "p": p, "grad_output": normal(rng, *shape),
            "training": bool(rng.random() < 0.85)}


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "dropout": Reference(ref_dropout, random_dropout),
}
