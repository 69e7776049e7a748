"""Torch references of attention: F.scaled_dot_product_attention (masks), the other score forms from
torch ops, nn.MultiheadAttention on the meta device with torch's FLOP counter (the decoder's
cross-attention and causal mask: verify/decoder.py)."""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from examprep.verify._torch import DTYPE, DTYPE_OF_BYTES, Reference, as_numpy, normal, pick, tensor


def ref_attention(p: dict) -> dict:
    q = tensor(p["query"])
    single = q.ndim == 1
    q2 = q[None] if single else q
    k, v = tensor(p["key"]), tensor(p["value"])
    score = p.get("score", "scaled-dot")
    n, m = q2.shape[0], k.shape[0]
    allowed = torch.ones((n, m), dtype=torch.bool)
    if p.get("mask") is not None:
        allowed &= tensor(p["mask"]).reshape(n, m).bool()
    if p.get("causal", False):
        allowed &= torch.ones((n, m), dtype=torch.bool).tril()
    if score == "scaled-dot":
        raw = q2 @ k.T
        scale = p.get("scale")
        out = F.scaled_dot_product_attention(q2[None], k[None], v[None], attn_mask=allowed[None], scale=scale)[0]
        s = 1 / math.sqrt(k.shape[1]) if scale is None else scale
    else:
        if score == "dot":
            raw = q2 @ k.T
        elif score == "bilinear":
            raw = q2 @ tensor(p["weight"]) @ k.T
        else:
            raw = torch.tanh((q2 @ tensor(p["w_query"]).T)[:, None, :] + (k @ tensor(p["w_key"]).T)[None]) @ tensor(p["v"])
        s = p.get("scale") if p.get("scale") is not None else 1.0
        out = None
    # weights: softmax of the masked scores, 0 for rows with nothing allowed (torch's SDPA convention)
    scores = (raw * s).masked_fill(~allowed, float("-inf"))
    w = torch.softmax(scores, -1).nan_to_num(0.0)
    if out is None:
        out = w @ v
    if single:
        return {"scores": as_numpy(raw[0]), "weights": as_numpy(w[0]), "output": as_numpy(out[0])}
    return {"scores": as_numpy(raw), "weights": as_numpy(w), "output": as_numpy(out)}


def ref_multi_head_shapes(p: dict) -> dict:
    """Runs torch.nn.MultiheadAttention on the meta device (shapes only, so long sequences cost nothing):
    shapes from its tensors, multiply-adds from torch's FlopCounterMode (FLOPs / 2), memory from the
    attention-weight tensor in the asked dtype."""
    n, d, h = p["n"], p["d_model"], p["num_heads"]
    m, b = p.get("m") or n, p.get("batch", 1)
    mha = nn.MultiheadAttention(d, h, batch_first=True, dtype=DTYPE, device="meta")
    x, z = torch.zeros(b, n, d, dtype=DTYPE, device="meta"), torch.zeros(b, m, d, dtype=DTYPE, device="meta")
    with FlopCounterMode(display=False) as fc:
        out, w = mha(x, z, z, need_weights=True, average_attn_weights=False)       # w: (b, h, n, m)
    counts = {str(k): v for k, v in fc.get_flop_counts()["Global"].items()}
    dk = mha.head_dim
    q_heads = F.linear(x, mha.in_proj_weight[:d]).reshape(b, n, h, dk).transpose(1, 2)   # (b, h, n, d_k)
    k_heads = F.linear(z, mha.in_proj_weight[d:2 * d]).reshape(b, m, h, dk).transpose(1, 2)
    with FlopCounterMode(display=False) as one:
        q_heads[0, 0] @ k_heads[0, 0].T
    per_head = one.get_total_flops() // 2
    with FlopCounterMode(display=False) as scores:
        q_heads @ k_heads.transpose(-1, -2)
    score_macs = scores.get_total_flops() // 2
    w_typed = w.to(DTYPE_OF_BYTES[p.get("bytes_per_value", 4)])
    projection_macs = (counts.get("aten.mm", 0) + counts.get("aten.addmm", 0)) // 2
    res = {"d_k": dk, "query_shape": list(q_heads.shape[-2:]), "key_shape": list(k_heads.shape[-2:]),
           "value_shape": list(k_heads.shape[-2:]), "scores_shape": list(w.shape[-2:]),
           "head_output_shape": [n, dk], "output_shape": list(out.shape[1:]),
           "score_macs_per_head": per_head, "score_macs": score_macs,
           "weighted_sum_macs": counts["aten.bmm"] // 2 - score_macs, "projection_macs": projection_macs,
           "score_entries": w_typed.numel(), "score_bytes": w_typed.numel() * w_typed.element_size(),
           "score_mib": w_typed.numel() * w_typed.element_size() / 2 ** 20}
    k = p.get("growth_factor")
    if k is not None:          # the same layer on sequences k times longer, counted by torch again
        longer = ref_multi_head_shapes({**p, "n": k * n, "m": None if p.get("m") is None else k * m, "growth_factor": None})
        res |= {"score_growth": longer["score_macs"] / score_macs,
                "projection_growth": longer["projection_macs"] / projection_macs}
    return res




def random_attention(rng: np.random.Generator) -> dict:
    """A random valid attention instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    n, m, dk, dv = ri(1, 4), ri(1, 4), ri(1, 4), ri(1, 3)
    score = pick(rng, ["scaled-dot", "scaled-dot", "dot", "bilinear", "additive"])
    dq = dk if score in ("scaled-dot", "dot") else ri(1, 4)
    p = {"query": normal(rng, n, dq), "key": normal(rng, m, dk), "value": normal(rng, m, dv), "score": score}
    if rng.random() < 0.4:
        p["mask"] = rng.integers(0, 2, (n, m)).tolist()
    if rng.random() < 0.4:
        p["causal"] = True
    if rng.random() < 0.3:
        p["scale"] = float(pick(rng, [0.5, 1.0, 2.0]))
    if score == "bilinear":
        p["weight"] = normal(rng, dq, dk)
    if score == "additive":
        da = ri(1, 3)
        p.update(w_query=normal(rng, da, dq), w_key=normal(rng, da, dk), v=normal(rng, da))
    return p


def random_multi_head_shapes(rng: np.random.Generator) -> dict:
    """A random valid multi-head-shapes instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    h = ri(1, 4)
    p = {"n": ri(1, 6), "d_model": h * ri(1, 4), "num_heads": h, "batch": ri(1, 3),
         "bytes_per_value": pick(rng, [2, 4, 8])}
    if rng.random() < 0.5:
        p["m"] = ri(1, 6)
    if rng.random() < 0.3:
        p["growth_factor"] = ri(1, 4)
    return p




def ref_self_attention(p: dict) -> dict:
    """Projections by torch (X @ W), each head by F.scaled_dot_product_attention (weights as SDPA applied to
    the identity as values), heads concatenated, W_O by a matmul."""
    x = tensor(p["x"])
    q, k, v = x @ tensor(p["w_query"]), x @ tensor(p["w_key"]), x @ tensor(p["w_value"])
    n, h = x.shape[0], p.get("num_heads", 1)
    allowed = torch.ones(n, n, dtype=torch.bool)
    if p.get("mask") is not None:
        allowed &= tensor(p["mask"]).bool()
    if p.get("causal", False):
        allowed &= torch.tril(torch.ones(n, n, dtype=torch.bool))
    split = lambda a: a.reshape(n, h, -1).transpose(0, 1)  # noqa: E731   (h, n, d/h)
    qh, kh, vh = split(q), split(k), split(v)
    scale = p.get("scale") if p.get("scale") is not None else 1 / math.sqrt(q.shape[1] / h)
    sdpa = lambda values: F.scaled_dot_product_attention(qh, kh, values, attn_mask=allowed,  # noqa: E731
                                                         scale=scale).nan_to_num(0.0)
    weights = sdpa(torch.eye(n, dtype=DTYPE).expand(h, n, n))
    heads = sdpa(vh)
    concat = heads.transpose(0, 1).reshape(n, -1)
    out = concat @ tensor(p["w_output"]) if p.get("w_output") is not None else concat
    one = (lambda a: a[0]) if h == 1 else (lambda a: a)  # noqa: E731
    scores = qh @ kh.transpose(1, 2)
    return {"query": as_numpy(q), "key": as_numpy(k), "value": as_numpy(v), "scores": as_numpy(one(scores)),
            "scaled_scores": as_numpy(one(scores * scale)), "weights": as_numpy(one(weights)),
            "heads": as_numpy(one(heads)), "output": as_numpy(out)}


def random_self_attention(rng: np.random.Generator) -> dict:
    """A random valid self-attention instance (1 or 2 heads, masks, an output projection)."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    h = pick(rng, [1, 1, 2])
    n, dm, dk, dv = ri(1, 4), ri(1, 4), h * ri(1, 2), h * ri(1, 2)
    p = {"x": normal(rng, n, dm), "w_query": normal(rng, dm, dk), "w_key": normal(rng, dm, dk),
         "w_value": normal(rng, dm, dv), "num_heads": h, "causal": bool(rng.random() < 0.3)}
    if rng.random() < 0.3:
        p["mask"] = rng.integers(0, 2, (n, n)).tolist()
    if rng.random() < 0.5:
        p["w_output"] = normal(rng, dv, ri(1, 3))
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "attention": Reference(ref_attention, random_attention),
    "multi-head-shapes": Reference(ref_multi_head_shapes, random_multi_head_shapes),
    "self-attention": Reference(ref_self_attention, random_self_attention),
}
