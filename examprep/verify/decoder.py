"""Torch references of the Transformer decoder's attention: cross-attention by
F.scaled_dot_product_attention on torch projections, the causal mask by torch's CausalBias."""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right, causal_upper_left

from examprep.verify._torch import DTYPE, Reference, as_numpy, normal, pick, tensor


def ref_cross_attention(p: dict) -> dict:
    """Projections by torch (x @ W, or F.linear as nn.Linear), attention by scaled_dot_product_attention;
    the weights are SDPA applied to the identity as values."""
    x, z = tensor(p["decoder_states"]), tensor(p["encoder_output"])
    proj = (lambda a, w: a @ tensor(w)) if p.get("layout", "x-w") == "x-w" else (lambda a, w: F.linear(a, tensor(w)))
    q, k, v = proj(x, p["w_query"]), proj(z, p["w_key"]), proj(z, p["w_value"])
    mask = None if p.get("mask") is None else tensor(p["mask"]).bool()
    sdpa = lambda values: F.scaled_dot_product_attention(q[None], k[None], values[None], attn_mask=mask,  # noqa: E731
                                                         scale=p.get("scale"))[0].nan_to_num(0.0)
    scale = p.get("scale") if p.get("scale") is not None else 1 / math.sqrt(k.shape[-1])
    return {"query": as_numpy(q), "key": as_numpy(k), "value": as_numpy(v), "scores": as_numpy(q @ k.T),
            "scaled_scores": as_numpy(q @ k.T * scale),
            "weights": as_numpy(sdpa(torch.eye(k.shape[0], dtype=DTYPE))), "output": as_numpy(sdpa(v))}

def ref_causal_mask(p: dict) -> dict:
    """torch's CausalBias (causal_upper_left = is_causal, causal_lower_right) given to
    scaled_dot_product_attention with q = scores, k = v = I, so that q kᵀ = scores and the output
    is the weight matrix."""
    s = tensor(p["scores"])
    s = s[None] if s.ndim == 1 else s
    n, m = s.shape
    bias = (causal_upper_left if p.get("alignment", "top-left") == "top-left" else causal_lower_right)(n, m)
    eye = torch.eye(m, dtype=DTYPE)[None]
    weights = F.scaled_dot_product_attention(s[None], eye, eye, attn_mask=bias, scale=p.get("scale", 1.0))[0]
    allowed = bias._materialize()
    row = n - 1 if p.get("position") is None else p["position"] - 1
    return {"allowed": as_numpy(allowed.long()), "weights": as_numpy(weights.nan_to_num(0.0)),
            "masked_count": int((~allowed).sum()), "visible": int(allowed[row].sum())}

def random_cross_attention(rng: np.random.Generator) -> dict:
    """A random valid cross-attention instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    n, m, dd, de, dk, dv = ri(1, 4), ri(1, 4), ri(1, 4), ri(1, 4), ri(1, 4), ri(1, 3)
    layout = pick(rng, ["x-w", "linear"])
    shape = (lambda a, b: (a, b)) if layout == "x-w" else (lambda a, b: (b, a))
    p = {"decoder_states": normal(rng, n, dd), "encoder_output": normal(rng, m, de), "w_query": normal(rng, *shape(dd, dk)),
         "w_key": normal(rng, *shape(de, dk)), "w_value": normal(rng, *shape(de, dv)), "layout": layout}
    if rng.random() < 0.4:
        p["mask"] = rng.integers(0, 2, (n, m)).tolist()
    if rng.random() < 0.3:
        p["scale"] = float(pick(rng, [0.5, 1.0, 2.0]))
    return p

def random_causal_mask(rng: np.random.Generator) -> dict:
    """A random valid causal-mask instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    n = ri(1, 5)
    m = n if rng.random() < 0.5 else ri(n, 6)
    p = {"scores": normal(rng, n, m, scale=2), "alignment": pick(rng, ["top-left", "bottom-right"]),
         "scale": float(pick(rng, [1.0, 1.0, 0.5]))}
    if rng.random() < 0.5:
        p["position"] = ri(1, n)
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "cross-attention": Reference(ref_cross_attention, random_cross_attention),
    "causal-mask": Reference(ref_causal_mask, random_causal_mask),
}
