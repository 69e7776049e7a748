"""Attention: score functions, masks, softmax weights and the weighted sum of values, self-attention
with projections and heads, and the shapes and cost of multi-head attention. The decoder's own
(cross-attention, the causal mask, teacher forcing) are in engine/decoder.py."""
from __future__ import annotations

import math

import numpy as np

from examprep.engine._core import Trace, array, boolean, choice, integer, matrix, number, shape_str, vector
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


def scaled_masked_softmax(scores, scale=1.0, allowed=None) -> np.ndarray:
    """softmax over the last axis of scale·scores where allowed (1) — 0 elsewhere and on empty rows
    (scores a vector, a matrix, or one matrix per head)."""
    s = array("scores", scores, (1, 2, 3))
    ok = np.ones(s.shape, dtype=bool) if allowed is None else array("allowed", allowed).astype(bool)
    if ok.shape != s.shape:
        raise ShapeError(f"allowed: expected shape {s.shape}, got {ok.shape}")
    return masked_softmax(s * number("scale", scale), ok)


# ------------------------------------------------------------------ Transformer attention: multi-head


def multi_head_shapes(n: int, d_model: int, num_heads: int, *, m: int | None = None, batch: int = 1,
                      bytes_per_value: int = 4) -> Trace:
    """Shapes and multiply-add counts through one multi-head attention layer (Vaswani et al. 2017, §3.2.2).

    n queries attend m keys (m = n for self-attention; in cross-attention n is the decoder length and
    m the encoder length). Each of the num_heads heads has d_k = d_v = d_model / num_heads.
    Shapes (per sequence, rows × columns): Q_i (n, d_k), K_i (m, d_k), V_i (m, d_v), scores
    Q_i K_iᵀ (n, m), head output (n, d_v), concatenation and output (n, d_model).
    Counts, for a batch of ``batch`` sequences (a multiply-add is one multiplication and one addition;
    FLOPs = 2 × multiply-adds):
      score_macs_per_head = n·m·d_k          (Q_i K_iᵀ of one head, one sequence)
      score_macs          = batch·h·n·m·d_k = batch·n·m·d_model    — O(n²·d) for self-attention
      weighted_sum_macs   = batch·h·n·m·d_v  (α_i V_i)
      projection_macs     = batch·(2n + 2m)·d_model²   (W_Q and W_O on n rows, W_K and W_V on m rows)
      score_entries       = batch·h·n·m, score_bytes = score_entries·bytes_per_value (memory of the
                            attention matrices, e.g. 4 bytes in float32), score_mib = score_bytes / 2²⁰.
    Returns d_k, d_v, the shapes as [rows, columns] lists, the counts above (ints).
    Raises ParamError for sizes < 1 or num_heads not dividing d_model.
    """
    n = integer("n", n, 1)
    m = n if m is None else integer("m", m, 1)
    d = integer("d_model", d_model, 1)
    h = integer("num_heads", num_heads, 1)
    batch = integer("batch", batch, 1)
    nbytes = integer("bytes_per_value", bytes_per_value, 1)
    if d % h:
        raise ParamError(f"num_heads: must divide d_model ({d} is not divisible by {h})")
    dk = d // h
    per_head = n * m * dk
    entries = batch * h * n * m
    return Trace(d_k=dk, d_v=dk, query_shape=[n, dk], key_shape=[m, dk], value_shape=[m, dk], scores_shape=[n, m],
                 head_output_shape=[n, dk], concat_shape=[n, d], output_shape=[n, d],
                 score_macs_per_head=per_head, score_macs=batch * h * per_head, weighted_sum_macs=batch * h * per_head,
                 projection_macs=batch * (2 * n + 2 * m) * d * d, score_entries=entries, score_bytes=entries * nbytes,
                 score_mib=entries * nbytes / 2 ** 20)


def self_attention(x, w_query, w_key, w_value, *, num_heads=1, w_output=None, causal: bool = False, mask=None,
                   scale=None) -> Trace:
    """Self-attention of a sequence with learned projections (Vaswani et al. 2017, §3.2).

    Q = X W_Q, K = X W_K, V = X W_V (row vectors: x (n, d_model), w_query and w_key (d_model, d_k),
    w_value (d_model, d_v)). With h heads the columns of Q, K and V split into h equal blocks;
    head i takes block i: S_i = Q_i K_iᵀ, α_i = softmax(c·S_i) over the keys, head_i = α_i V_i.
    output = concat(head_1 … head_h) W_O (w_output (d_v, d_out)), or the concatenation without W_O.
    scale c: 1/√(d_k/h) by default (the per-head key size). causal: query i attends keys j ≤ i;
    mask (n, n) 1 = may attend; both together: both must allow. A row with nothing allowed gets
    weights 0 (and output 0), never NaN.
    Returns query, key, value (n×d_k, n×d_v whatever h is), scores (QKᵀ, before scale and mask),
    scaled_scores, allowed, weights, heads — with one head n×n and n×d_v, with h heads each with a
    leading axis of h — concat, output.
    Raises ShapeError naming the projection whose shape does not fit, ParamError for a head count
    that does not divide d_k and d_v.
    """
    X = array("x", x, 2)
    n, d_model = X.shape
    Wq = matrix("w_query", w_query, (d_model, None))
    Wk = matrix("w_key", w_key, (d_model, None))
    Wv = matrix("w_value", w_value, (d_model, None))
    d_k, d_v = Wq.shape[1], Wv.shape[1]
    if Wk.shape[1] != d_k:
        raise ShapeError(f"w_key: expected {d_model}×{d_k} (queries and keys need the same size d_k = {d_k}), "
                         f"got {shape_str(Wk.shape)}")
    h = integer("num_heads", num_heads, 1)
    if d_k % h or d_v % h:
        raise ParamError(f"num_heads: {h} heads must divide d_k = {d_k} and d_v = {d_v}")
    causal = boolean("causal", causal)
    allowed = np.ones((n, n), dtype=bool)
    if mask is not None:
        m = array("mask", mask, 2)
        if m.shape != (n, n):
            raise ShapeError(f"mask: expected {n}×{n} (queries × keys), got {shape_str(m.shape)}")
        if not np.all((m == 0) | (m == 1)):
            raise ParamError("mask: expected 0 (blocked) or 1 (may attend) in every entry")
        allowed &= m.astype(bool)
    if causal:
        allowed &= np.tri(n, dtype=bool)
    c = 1.0 / np.sqrt(d_k / h) if scale is None else number("scale", scale)
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    dk_h, dv_h = d_k // h, d_v // h
    Qh = Q.reshape(n, h, dk_h).transpose(1, 0, 2)
    Kh = K.reshape(n, h, dk_h).transpose(1, 0, 2)
    Vh = V.reshape(n, h, dv_h).transpose(1, 0, 2)
    scores = Qh @ Kh.transpose(0, 2, 1)                      # (h, n, n)
    scaled = c * scores
    weights = masked_softmax(scaled, np.broadcast_to(allowed, scaled.shape))
    heads = weights @ Vh                                     # (h, n, d_v/h)
    concat = heads.transpose(1, 0, 2).reshape(n, d_v)
    if w_output is not None:
        Wo = matrix("w_output", w_output, (d_v, None))
        out = concat @ Wo
    else:
        out = concat
    one = (lambda a: a[0]) if h == 1 else (lambda a: a)
    return Trace(query=Q, key=K, value=V, scale=c, scores=one(scores), scaled_scores=one(scaled), allowed=allowed,
                 weights=one(weights), heads=one(heads), concat=concat, output=out)
