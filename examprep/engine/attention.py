"""Attention: score functions, masks, softmax weights and the weighted sum of values."""
from __future__ import annotations

import math

import numpy as np

from examprep.engine._core import Trace, array, boolean, choice, matrix, number, shape_str, vector
from examprep.errors import ParamError, ShapeError

SCORES = ("scaled-dot", "dot", "bilinear", "additive")


def masked_softmax(scores: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of the allowed entries; masked entries get 0, and a row with no
    allowed entry gets all zeros (as torch's scaled_dot_product_attention, never NaN)."""
    masked = np.where(allowed, scores, -np.inf)
    row_max = np.max(masked, axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    e = np.where(allowed, np.exp(masked - row_max), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def attention(query, key, value, *, mask=None, causal: bool = False, score: str = "scaled-dot",
              scale=None, weight=None, w_query=None, w_key=None, v=None) -> Trace:
    """Attention of n queries over m key/value pairs.

    Shapes: query (n, d_q) (or (d_q,) for one query), key (m, d_k), value (m, d_v);
    mask (n, m) of 0/1 with 1 = may attend; output (n, d_v), weights (n, m).
    score: "scaled-dot" e_ij = q_i·k_j (Vaswani et al. 2017, eq. 1), scaled by 1/√d_k by default;
           "dot" e_ij = q_i·k_j (Luong et al. 2015, eq. 8);
           "bilinear" e_ij = q_iᵀ W k_j with weight W (d_q, d_k) (Luong et al. 2015 "general");
           "additive" e_ij = vᵀ tanh(W_q q_i + W_k k_j) with w_query (d_a, d_q), w_key (d_a, d_k),
           v (d_a,) (Bahdanau et al. 2015, eq. 6).
    scale multiplies the scores (default 1/√d_k for "scaled-dot", else 1; a given scale always
    applies). causal: query i may attend key j ≤ i (top-left aligned, as torch's is_causal).
    Masked scores become −∞ before the softmax (weights 0); a row that may attend to nothing gets
    weights 0 and output 0, as torch.nn.functional.scaled_dot_product_attention, never NaN.
    Returns scores (before scale and mask), scale, scaled_scores, allowed (the effective 0/1 mask),
    masked_scores (−∞ where masked), weights, output.
    Raises ShapeError for dimensions that do not agree, ParamError for a missing score weight.
    """
    score = choice("score", score, SCORES)
    q = array("query", query, (1, 2))
    single = q.ndim == 1
    q2 = q[None, :] if single else q
    k = matrix("key", key)
    val = matrix("value", value)
    if val.shape[0] != k.shape[0]:
        raise ShapeError(f"value: expected {k.shape[0]} rows (one per key), got {val.shape[0]}")
    n, m = q2.shape[0], k.shape[0]
    if score in ("scaled-dot", "dot"):
        if q2.shape[1] != k.shape[1]:
            raise ShapeError(f"key: {score} scores need d_k = d_q = {q2.shape[1]}, got d_k = {k.shape[1]}")
        scores = q2 @ k.T
    elif score == "bilinear":
        if weight is None:
            raise ParamError("weight: the bilinear score qᵀWk needs weight (d_q × d_k)")
        w = matrix("weight", weight, (q2.shape[1], k.shape[1]))
        scores = q2 @ w @ k.T
    else:
        for name, val_ in (("w_query", w_query), ("w_key", w_key), ("v", v)):
            if val_ is None:
                raise ParamError(f"{name}: the additive score vᵀtanh(W_q q + W_k k) needs w_query, w_key and v")
        wq = matrix("w_query", w_query, (None, q2.shape[1]))
        wk = matrix("w_key", w_key, (wq.shape[0], k.shape[1]))
        vv = vector("v", v, wq.shape[0])
        hidden = np.tanh((q2 @ wq.T)[:, None, :] + (k @ wk.T)[None, :, :])   # (n, m, d_a)
        scores = hidden @ vv
    if scale is None:
        s = 1.0 / math.sqrt(k.shape[1]) if score == "scaled-dot" else 1.0
    else:
        s = number("scale", scale)
    allowed = np.ones((n, m), dtype=bool)
    if mask is not None:
        mk = array("mask", mask, (1, 2) if single else 2)
        mk = mk.reshape(1, -1) if mk.ndim == 1 else mk
        if mk.shape != (n, m):
            raise ShapeError(f"mask: expected shape {n}×{m} (queries × keys), got {shape_str(mk.shape)}")
        if not np.all((mk == 0) | (mk == 1)):
            raise ParamError("mask: expected 0/1 entries (1 = may attend)")
        allowed &= mk.astype(bool)
    if boolean("causal", causal):
        allowed &= np.tril(np.ones((n, m), dtype=bool))
    scaled = scores * s
    weights = masked_softmax(scaled, allowed)
    out = weights @ val
    masked = np.where(allowed, scaled, -np.inf)
    if single:
        return Trace(scores=scores[0], scale=s, scaled_scores=scaled[0], allowed=allowed[0].astype(int),
                     masked_scores=masked[0], weights=weights[0], output=out[0])
    return Trace(scores=scores, scale=s, scaled_scores=scaled, allowed=allowed.astype(int),
                 masked_scores=masked, weights=weights, output=out)
