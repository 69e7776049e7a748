"""Torch reference of linear regression: F.mse_loss and autograd."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from examprep.verify._torch import as_numpy, normal, pick, tensor


def ref_linear_regression(p: dict) -> dict:
    X = tensor(p["X"])
    X2 = X[:, None] if X.ndim == 1 else X
    w = tensor(np.atleast_1d(p["w"]), grad=True)
    b = tensor(p.get("b", 0.0), grad=True)
    pred = X2 @ w + b
    loss = F.mse_loss(pred, tensor(p["y"]))
    if p.get("loss", "mse") == "half-mse":
        loss = loss / 2
    gw, gb = torch.autograd.grad(loss, (w, b))
    lr = p["lr"]
    scalar_w = np.ndim(p["w"]) == 0
    fix = (lambda v: float(v[0])) if scalar_w else (lambda v: v)
    return {"predictions": as_numpy(pred), "loss": as_numpy(loss), "grad_w": fix(as_numpy(gw)), "grad_b": as_numpy(gb),
            "w_new": fix(as_numpy(w - lr * gw)), "b_new": as_numpy(b - lr * gb)}


def random_linear_regression(rng: np.random.Generator) -> dict:
    """A random valid linear-regression instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    n, d = ri(1, 5), ri(1, 3)
    return {"X": normal(rng, n, d), "y": normal(rng, n), "w": normal(rng, d), "b": float(round(rng.standard_normal(), 4)),
            "lr": float(pick(rng, [0.01, 0.1, 0.5])), "loss": pick(rng, ["mse", "half-mse"])}
