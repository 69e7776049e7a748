"""Torch references of positions: The Annotated Transformer's sinusoidal table, Llama's complex RoPE
and GPT-NeoX's rotate_half, and the scores and dot products built on them."""
from __future__ import annotations

import math

import numpy as np
import torch

from examprep.verify._torch import DTYPE, Reference, as_numpy, normal, pick, tensor


def ref_positional_encoding(p: dict) -> dict:
    """The Annotated Transformer's PositionalEncoding table (div_term via exp/log)."""
    d = p["d_model"]
    pos = p["position"]
    positions = torch.tensor(pos if isinstance(pos, list) else [pos], dtype=DTYPE)[:, None]
    div_term = torch.exp(torch.arange(0, d, 2, dtype=DTYPE) * -(math.log(p.get("base", 10000.0)) / d))
    pe = torch.zeros((positions.shape[0], d), dtype=DTYPE)
    pe[:, 0::2] = torch.sin(positions * div_term)
    pe[:, 1::2] = torch.cos(positions * div_term)[:, : d // 2]
    return {"encoding": as_numpy(pe if isinstance(pos, list) else pe[0])}


def ref_rope(p: dict) -> dict:
    """Interleaved: Meta's Llama reference (complex multiplication, torch.polar); rotate-half:
    GPT-NeoX / Hugging Face's rotate_half."""
    x = tensor(p["x"])
    single = x.ndim == 1
    rows = x[None] if single else x
    pos = torch.tensor([p["position"]] if single else p["position"], dtype=DTYPE)
    d = rows.shape[-1]
    inv = 1.0 / (p.get("base", 10000.0) ** (torch.arange(0, d, 2, dtype=DTYPE) / d))
    ang = pos[:, None] * inv[None]
    if p.get("style", "interleaved") == "interleaved":
        xc = torch.view_as_complex(rows.reshape(rows.shape[0], -1, 2).contiguous())
        out = torch.view_as_real(xc * torch.polar(torch.ones_like(ang), ang)).reshape(rows.shape)
    else:
        cos, sin = torch.cat([ang.cos(), ang.cos()], -1), torch.cat([ang.sin(), ang.sin()], -1)
        half = torch.cat([-rows[:, d // 2:], rows[:, : d // 2]], -1)
        out = rows * cos + half * sin
    return {"output": as_numpy(out[0] if single else out)}


def ref_rope_score(p: dict) -> dict:
    common = {"base": p.get("base", 10000.0), "style": p.get("style", "interleaved")}
    q = torch.tensor(ref_rope({"x": p["query"], "position": p["position_query"], **common})["output"])
    k = torch.tensor(ref_rope({"x": p["key"], "position": p["position_key"], **common})["output"])
    return {"query_rotated": as_numpy(q), "key_rotated": as_numpy(k), "score": float(q @ k)}


def ref_positional_encoding_relative(p: dict) -> dict:
    pos, k, d, base = p["position"], p["offset"], p["d_model"], p.get("base", 10000.0)
    table = torch.tensor(ref_positional_encoding({"position": [pos, pos + k], "d_model": d, "base": base})["encoding"])
    div_term = torch.exp(torch.arange(0, d, 2, dtype=DTYPE) * -(math.log(base) / d))
    return {"encoding": as_numpy(table[0]), "shifted": as_numpy(table[1]), "dot": float(table[0] @ table[1]),
            "wavelengths": as_numpy(2 * math.pi / div_term)}


def random_positional_encoding(rng: np.random.Generator) -> dict:
    """A random valid positional-encoding instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    pos = ri(0, 100) if rng.random() < 0.5 else [ri(0, 100) for _ in range(ri(1, 4))]
    return {"position": pos, "d_model": 2 * ri(1, 8), "base": pick(rng, [10000, 10000, 100])}


def random_rope(rng: np.random.Generator) -> dict:
    """A random valid rope instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    d = 2 * ri(1, 4)
    if rng.random() < 0.5:
        p = {"x": normal(rng, d), "position": ri(0, 50)}
    else:
        n = ri(1, 3)
        p = {"x": normal(rng, n, d), "position": [ri(0, 50) for _ in range(n)]}
    p.update(style=pick(rng, ["interleaved", "rotate-half"]), base=pick(rng, [10000, 100]))
    return p


def random_rope_score(rng: np.random.Generator) -> dict:
    """A random valid rope-score instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    d = 2 * ri(1, 4)
    return {"query": normal(rng, d), "key": normal(rng, d), "position_query": ri(0, 50), "position_key": ri(0, 50),
            "style": pick(rng, ["interleaved", "rotate-half"]), "base": pick(rng, [10000, 100])}


def random_positional_encoding_relative(rng: np.random.Generator) -> dict:
    """A random valid positional-encoding-relative instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    pos = ri(0, 100)
    return {"position": pos, "offset": ri(-pos, 50), "d_model": 2 * ri(1, 8), "base": pick(rng, [10000, 10000, 100])}


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "positional-encoding": Reference(ref_positional_encoding, random_positional_encoding),
    "rope": Reference(ref_rope, random_rope),
    "rope-score": Reference(ref_rope_score, random_rope_score),
    "positional-encoding-relative": Reference(ref_positional_encoding_relative, random_positional_encoding_relative),
}
