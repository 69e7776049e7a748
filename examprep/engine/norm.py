"""Layer normalisation, and the same normalisation from given statistics (an ECF rule)."""
from __future__ import annotations

import numpy as np

from examprep.engine._core import Trace, array, choice, number
from examprep.errors import ParamError, ShapeError

EPS_PLACEMENTS = ("added-to-std", "inside-sqrt")
VARIANCES = ("biased", "unbiased")


def layer_norm(x, gamma=1.0, beta=0.0, *, eps: float = 1e-5, eps_placement: str = "added-to-std",
               variance: str = "biased") -> Trace:
    """Layer normalisation over the last axis (per token), with learned gain γ and bias β.

    Shapes: x (D,) or (N, D); gamma and beta a number or (D,); output like x, mean and var one per row.
    eps_placement: "added-to-std"  y = γ ⊙ (x − μ)/(σ + ε) + β  (the lecture notes' formula;
                                   The Annotated Transformer's LayerNorm)
                   "inside-sqrt"   y = γ ⊙ (x − μ)/√(σ² + ε) + β  (Ba et al. 2016, eq. 4 with ε;
                                   torch.nn.LayerNorm)
    variance: "biased" σ² = (1/D) Σ (x − μ)² (PyTorch's), or "unbiased" (1/(D−1)) (torch.std's default).
    Returns mean, var, std, denominator, normalized, output.
    Raises ParamError for ε < 0 or a 1-feature input with unbiased variance, ShapeError for γ/β
    of the wrong length.
    """
    x_arr = array("x", x, (1, 2))
    d = x_arr.shape[-1]
    eps_placement = choice("eps_placement", eps_placement, EPS_PLACEMENTS)
    variance = choice("variance", variance, VARIANCES)
    eps = number("eps", eps)
    if eps < 0:
        raise ParamError(f"eps: expected a number ≥ 0, got {eps:g}")
    g = array("gamma", gamma, (0, 1))
    b = array("beta", beta, (0, 1))
    for name, arr in (("gamma", g), ("beta", b)):
        if arr.ndim == 1 and arr.shape[0] != d:
            raise ShapeError(f"{name}: expected a number or a vector of length {d}, got length {arr.shape[0]}")
    if variance == "unbiased" and d < 2:
        raise ParamError("variance: the unbiased variance needs at least 2 features")
    mean = x_arr.mean(axis=-1, keepdims=True)
    centered = x_arr - mean
    var = (centered**2).sum(axis=-1, keepdims=True) / (d if variance == "biased" else d - 1)
    std = np.sqrt(var)
    denom = std + eps if eps_placement == "added-to-std" else np.sqrt(var + eps)
    if np.any(denom == 0):
        raise ParamError("x: every feature is equal and eps is 0, so the normalisation divides by zero")
    normalized = centered / denom
    out = g * normalized + b
    squeeze = (lambda a: float(a[0])) if x_arr.ndim == 1 else (lambda a: a[:, 0])
    return Trace(mean=squeeze(mean), centered=centered, var=squeeze(var), std=squeeze(std),
                 denominator=squeeze(denom), normalized=normalized, output=out)


def layer_norm_from_stats(x, mean, var, eps=1e-5, eps_placement="added-to-std", gamma=1.0, beta=0.0) -> np.ndarray:
    """γ ⊙ (x − μ)/(σ + ε) + β ("added-to-std") or γ ⊙ (x − μ)/√(σ² + ε) + β ("inside-sqrt") from given
    statistics: x (D,) with one mean and variance, or (N, D) with one per row."""
    X = array("x", x, (1, 2))
    mu, v = array("mean", mean, (0, 1)), array("var", var, (0, 1))
    if X.ndim == 2:
        if mu.size != X.shape[0] or v.size != X.shape[0]:
            raise ShapeError(f"mean, var: expected one per row ({X.shape[0]})")
        mu, v = mu.reshape(-1, 1), v.reshape(-1, 1)
    if np.any(v < 0):
        raise ParamError("var: a variance cannot be negative")
    e = number("eps", eps)
    denom = np.sqrt(v) + e if eps_placement == "added-to-std" else np.sqrt(v + e)
    with np.errstate(divide="ignore", invalid="ignore"):
        return array("gamma", gamma) * (X - mu) / denom + array("beta", beta)
