"""Torch references of regression: F.mse_loss (linear) and F.binary_cross_entropy_with_logits (logistic),
autograd and torch.optim.SGD."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from examprep.verify._torch import Reference, as_numpy, normal, pick, tensor


def ref_linear_regression(p: dict) -> dict:
    X = tensor(p["X"])
    X2 = X[:, None] if X.ndim == 1 else X
    w = tensor(np.atleast_1d(p["w"]), grad=True)
    b = tensor(p.get("b", 0.0), grad=True)
    pred = X2 @ w + b
    mse = F.mse_loss(pred, tensor(p["y"]))
    half = p.get("loss", "mse") == "half-mse"
    loss, other = (mse / 2, mse) if half else (mse, mse / 2)
    gw, gb = torch.autograd.grad(loss, (w, b), retain_graph=True)
    ow, ob = torch.autograd.grad(other, (w, b))
    lr = p["lr"]
    scalar_w = np.ndim(p["w"]) == 0
    fix = (lambda v: float(v[0])) if scalar_w else (lambda v: v)
    # the other loss's rate for the same step: lr scaled by how much smaller its gradient is
    ratio = float(torch.linalg.vector_norm(torch.cat([gw, gb[None]])) / torch.linalg.vector_norm(torch.cat([ow, ob[None]])))
    return {"predictions": as_numpy(pred), "loss": as_numpy(loss), "grad_w": fix(as_numpy(gw)), "grad_b": as_numpy(gb),
            "w_new": fix(as_numpy(w - lr * gw)), "b_new": as_numpy(b - lr * gb), "grad_w_other_loss": fix(as_numpy(ow)),
            "lr_other_loss": lr * ratio}


def random_linear_regression(rng: np.random.Generator) -> dict:
    """A random valid linear-regression instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    n, d = ri(1, 5), ri(1, 3)
    return {"X": normal(rng, n, d), "y": normal(rng, n), "w": normal(rng, d), "b": float(round(rng.standard_normal(), 4)),
            "lr": float(pick(rng, [0.01, 0.1, 0.5])), "loss": pick(rng, ["mse", "half-mse"])}


def ref_logistic_regression(p: dict) -> dict:
    """F.binary_cross_entropy_with_logits, autograd, one torch.optim.SGD step."""
    X = tensor(p["X"])
    X = X[:, None] if X.ndim == 1 else X
    w = tensor(np.atleast_1d(p["w"]), grad=True)
    b = tensor(p.get("b", 0.0), grad=True)
    z = X @ w + b
    z.retain_grad()
    loss = F.binary_cross_entropy_with_logits(z, tensor(p["y"]), reduction=p.get("reduction", "mean"))
    loss.backward()
    scalar = np.ndim(p["w"]) == 0
    shaped = (lambda v: float(v[0])) if scalar else (lambda v: v)  # noqa: E731
    out = {"logits": as_numpy(z), "probs": as_numpy(torch.sigmoid(z)), "loss": float(loss.detach()),
           "grad_w": shaped(as_numpy(w.grad)), "grad_b": float(b.grad)}
    if p.get("lr") is not None:
        # the other reduction's rate for the same step: lr scaled by how much smaller its gradient is
        other = F.binary_cross_entropy_with_logits(X @ w + b, tensor(p["y"]),
                                                   reduction="sum" if p.get("reduction", "mean") == "mean" else "mean")
        ow, ob = torch.autograd.grad(other, (w, b))
        norm = lambda a, c: torch.linalg.vector_norm(torch.cat([a, c.reshape(1)]))  # noqa: E731
        out["lr_other_reduction"] = p["lr"] * float(norm(w.grad, b.grad) / norm(ow, ob))
        torch.optim.SGD([w, b], lr=p["lr"]).step()
        out.update(w_new=shaped(as_numpy(w)), b_new=float(b.detach()))
    return out


def random_logistic_regression(rng: np.random.Generator) -> dict:
    """A random valid logistic-regression instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    n, d = ri(1, 5), ri(1, 3)
    return {"X": normal(rng, n, d, scale=2), "y": rng.integers(0, 2, n).tolist(), "w": normal(rng, d),
            "b": float(round(rng.standard_normal(), 3)), "reduction": pick(rng, ["mean", "sum"]),
            "lr": pick(rng, [None, 0.1, 0.5])}


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "linear-regression": Reference(ref_linear_regression, random_linear_regression),
    "logistic-regression": Reference(ref_logistic_regression, random_logistic_regression),
}
