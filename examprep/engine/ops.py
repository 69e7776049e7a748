"""Small elementary operations that recipes chain between parts (error carried forward).

Each is a pure function of arrays; they exist so a grader can recompute a later part from a
student's own earlier answer (e.g. the attention output from the student's weights).
"""
from __future__ import annotations

import numpy as np

from examprep.engine._core import array, integer, number
from examprep.engine.attention import masked_softmax
from examprep.errors import ShapeError


def matmul(a, b) -> np.ndarray:
    """a @ b (shapes must chain)."""
    A, B = array("a", a, (1, 2)), array("b", b, (1, 2))
    if A.shape[-1] != B.shape[0]:
        raise ShapeError(f"b: expected {A.shape[-1]} rows to multiply, got {B.shape[0]}")
    return A @ B


def scale(x, factor) -> np.ndarray:
    """factor · x."""
    return array("x", x) * number("factor", factor)


def scaled_masked_softmax(scores, scale=1.0, allowed=None) -> np.ndarray:
    """softmax over the last axis of scale·scores where allowed (1) — 0 elsewhere and on empty rows."""
    s = array("scores", scores, (1, 2))
    ok = np.ones(s.shape, dtype=bool) if allowed is None else array("allowed", allowed).astype(bool)
    if ok.shape != s.shape:
        raise ShapeError(f"allowed: expected shape {s.shape}, got {ok.shape}")
    return masked_softmax(s * number("scale", scale), ok)


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


def gru_candidate(x, h, w_in, w_hn, b_in, b_hn, r, reset="after") -> np.ndarray:
    """n = tanh(W_in x + b_in + r⊙(W_hn h + b_hn)) (reset "after") or tanh(W_in x + b_in + W_hn(r⊙h) + b_hn)."""
    x_, h_ = array("x", x, 1), array("h", h, 1)
    r_ = np.atleast_1d(array("r", r, (0, 1)))
    W_in, W_hn = array("w_in", w_in, 2), array("w_hn", w_hn, 2)
    b_in, b_hn = array("b_in", b_in, 1), array("b_hn", b_hn, 1)
    if r_.shape != h_.shape:
        raise ShapeError(f"r: expected {h_.shape[0]} values, got {r_.shape[0]}")
    if reset == "after":
        return np.tanh(W_in @ x_ + b_in + r_ * (W_hn @ h_ + b_hn))
    return np.tanh(W_in @ x_ + b_in + W_hn @ (r_ * h_) + b_hn)


def minus_target(probs, target_dist, divide_by=1.0) -> np.ndarray:
    """(p − q) / divide_by: the softmax-cross-entropy gradient from given probabilities."""
    p, q = array("probs", probs), array("target_dist", target_dist)
    if p.shape != q.shape:
        raise ShapeError(f"probs: expected shape {q.shape}, got {p.shape}")
    return (p - q) / number("divide_by", divide_by)


def gru_blend(h, z, n, convention="lecture") -> np.ndarray:
    """h' from the gates: lecture (1 − z)⊙h + z⊙n, or pytorch (1 − z)⊙n + z⊙h."""
    h_, z_, n_ = array("h", h), array("z", z), array("n", n)
    return (1 - z_) * h_ + z_ * n_ if convention == "lecture" else (1 - z_) * n_ + z_ * h_


OPS = {"matmul": matmul, "scale": scale, "scaled-masked-softmax": scaled_masked_softmax, "nll": nll,
       "mean-nll": mean_nll, "minus-target": minus_target, "gru-blend": gru_blend,
       "cross-entropy-from-probs": cross_entropy_from_probs, "gru-candidate": gru_candidate}
