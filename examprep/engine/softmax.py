"""Softmax and cross-entropy, forward and gradient; and the pieces an ECF rule recomputes from a
student's own probabilities (the negative log-likelihood, cross-entropy against a target distribution,
the gradient p − q)."""
from __future__ import annotations

import numpy as np

from examprep.engine._core import Trace, array, choice, integer, number
from examprep.errors import ParamError, ShapeError


def softmax(logits, *, normalize: bool = True) -> Trace:
    """Softmax over the last axis, computed stably as exp(z − max z) / Σ exp(z − max z).

    Shapes: logits (C,) or (N, C) (any rank; the last axis is the class axis); probs the same.
    Source: torch.nn.functional.softmax(dim=-1); stability trick from CS231n "linear classify"
    notes (subtracting the max changes nothing mathematically and prevents overflow).
    normalize=False is the mistake of exponentiating without dividing by the sum: probs = e^z.
    Returns shifted (z − max), exp (of shifted), sum, probs.
    Raises ParamError for non-finite or empty logits.
    """
    z = array("logits", logits)
    if z.ndim == 0:
        raise ShapeError("logits: expected a vector or a matrix, got a single number")
    if not normalize:
        return Trace(probs=np.exp(z))
    shifted = z - z.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=-1, keepdims=True)
    return Trace(shifted=shifted, exp=e, sum=s.squeeze(-1), probs=e / s)


def log_softmax(z: np.ndarray) -> np.ndarray:
    shifted = z - z.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


REDUCTIONS = ("mean", "sum", "none")


def cross_entropy(logits, target, *, reduction: str = "mean", label_smoothing: float = 0.0) -> Trace:
    """Cross-entropy of softmax(logits) against class indices, and its gradient w.r.t. the logits.

    Shapes: logits (C,) with target an int class index, or (N, C) with target N indices.
    loss_n = −Σ_c q_nc log p_nc with q = (1−ε)·onehot + ε/C (label smoothing ε as
    torch.nn.functional.cross_entropy: the target gets 1−ε+ε/C, every other class ε/C;
    Szegedy et al. 2016, §7). reduction "mean" divides the sum over examples by N (PyTorch's
    default), "sum" does not, "none" keeps one loss per example.
    Gradient: ∂loss/∂z = p − q per example (divided by N for "mean"); for "none" the gradient of
    the sum of the per-example losses.
    Returns probs, log_probs, target_dist (q), losses, loss, grad_logits.
    Raises ShapeError for a target count that does not match N, ParamError for an index outside
    [0, C) or ε outside [0, 1].
    """
    z = array("logits", logits, (1, 2))
    reduction = choice("reduction", reduction, REDUCTIONS)
    eps = number("label_smoothing", label_smoothing)
    if not 0.0 <= eps <= 1.0:
        raise ParamError(f"label_smoothing: expected a number in [0, 1], got {eps:g}")
    single = z.ndim == 1
    z2 = z[None, :] if single else z
    n, c = z2.shape
    if single:
        if isinstance(target, (list, tuple)):
            if len(target) != 1:
                raise ShapeError(f"target: for a single logits vector expected one class index, got a list of {len(target)}")
            target = target[0]
        idx = [integer("target", target)]
    else:
        if not isinstance(target, (list, tuple, np.ndarray)):
            raise ShapeError(f"target: for {n}×{c} logits expected a list of {n} class indices, got {target!r}")
        if len(target) != n:
            raise ShapeError(f"target: expected {n} class indices (one per row of logits), got {len(target)}")
        idx = [integer(f"target[{i}]", t) for i, t in enumerate(target)]
    for i, t in enumerate(idx):
        if not 0 <= t < c:
            where = "target" if single else f"target[{i}]"
            raise ParamError(f"{where}: class index must be in [0, {c - 1}] for {c} classes, got {t}")
    logp = log_softmax(z2)
    p = np.exp(logp)
    q = np.full((n, c), eps / c)
    q[np.arange(n), idx] += 1.0 - eps
    losses = -(q * logp).sum(axis=-1)
    grad = p - q
    if reduction == "mean":
        loss = losses.mean()
        grad = grad / n
    elif reduction == "sum":
        loss = losses.sum()
    else:
        loss = losses
    if single:
        return Trace(probs=p[0], log_probs=logp[0], target_dist=q[0], losses=losses,
                     loss=float(losses[0]),
                     grad_logits=grad[0])
    return Trace(probs=p, log_probs=logp, target_dist=q, losses=losses,
                 loss=float(loss) if reduction != "none" else losses, grad_logits=grad)


# ------------------------------------------------ from given probabilities (ECF rules)

def nll(probs, target) -> float:
    """−log p[target] of a probability vector."""
    p = array("probs", probs, 1)
    t = integer("target", target, 0)
    if t >= p.shape[0]:
        raise ShapeError(f"target: {t} is outside the {p.shape[0]} probabilities")
    if p[t] <= 0:
        return float("inf")
    return float(-np.log(p[t]))


def mean_nll(probs, target) -> float:
    """Mean over rows of −log p[n, target[n]]."""
    p = array("probs", probs, 2)
    return float(np.mean([nll(row, t) for row, t in zip(p, target)]))


def cross_entropy_from_probs(probs, target_dist, reduction="mean") -> float:
    """−Σ_c q_c log p_c per row, reduced by mean or sum over rows (a vector is one row)."""
    p, q = array("probs", probs, (1, 2)), array("target_dist", target_dist, (1, 2))
    if p.shape != q.shape:
        raise ShapeError(f"probs: expected shape {q.shape}, got {p.shape}")
    with np.errstate(divide="ignore", invalid="ignore"):
        losses = -np.where(q > 0, q * np.log(np.clip(p, 0, None)), 0.0).sum(axis=-1)
    losses = np.atleast_1d(losses)
    return float(losses.mean() if reduction == "mean" else losses.sum())


def minus_target(probs, target_dist, divide_by=1.0) -> np.ndarray:
    """(p − q) / divide_by: the softmax-cross-entropy gradient from given probabilities."""
    p, q = array("probs", probs), array("target_dist", target_dist)
    if p.shape != q.shape:
        raise ShapeError(f"probs: expected shape {q.shape}, got {p.shape}")
    return (p - q) / number("divide_by", divide_by)
