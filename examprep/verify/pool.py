"""Torch reference of pooling: F.max_pool1d/2d, F.avg_pool1d/2d and autograd; TensorFlow's "same"
padding by F.pad with −∞ (as tf.nn.max_pool, which never selects the padding)."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from examprep.verify._torch import Reference, as_numpy, dims, normal, pick, tensor, tf_same


def _batched(x: torch.Tensor) -> tuple[torch.Tensor, int]:
    """x as (N=1, C, …) for torch's pooling functions, and its number of spatial dimensions."""
    if x.ndim == 3:
        return x[None], 2
    return x[None, None], x.ndim


def _unbatched(y: torch.Tensor, ndim: int) -> torch.Tensor:
    return y[0] if ndim == 3 else y[0, 0]


def ref_max_pool(p: dict) -> dict:
    x = tensor(p["input"], grad=True)
    xb, n = _batched(x)
    fn = F.max_pool1d if n == 1 else F.max_pool2d
    ks = dims(p["kernel_size"], n)
    stride = dims(p["stride"], n) if p.get("stride") is not None else ks
    dil = dims(p.get("dilation", 1), n)
    padding = p.get("padding", 0)
    if padding == "same":
        spatial = x.shape[-n:]
        pairs = [tf_same(spatial[i], ks[i], stride[i], dil[i]) for i in range(n)]
        xb = F.pad(xb, [v for pair in reversed(pairs) for v in pair], value=-float("inf"))
        padding = 0
    elif padding == "valid":
        padding = 0
    y = _unbatched(fn(xb, ks, stride=stride, padding=dims(padding, n), dilation=dil,
                      ceil_mode=p.get("ceil_mode", False)), x.ndim)
    out = {"output": as_numpy(y)}
    if p.get("grad_output") is not None:
        (gx,) = torch.autograd.grad(y, x, tensor(p["grad_output"]))
        out["grad_input"] = as_numpy(gx)
    return out


def ref_avg_pool(p: dict) -> dict:
    x = tensor(p["input"], grad=True)
    xb, n = _batched(x)
    fn = F.avg_pool1d if n == 1 else F.avg_pool2d
    ks = dims(p["kernel_size"], n)
    stride = dims(p["stride"], n) if p.get("stride") is not None else ks
    y = _unbatched(fn(xb, ks, stride=stride, padding=dims(p.get("padding", 0), n), ceil_mode=p.get("ceil_mode", False),
                      count_include_pad=p.get("count_include_pad", True)), x.ndim)
    out = {"output": as_numpy(y)}
    if p.get("grad_output") is not None:
        (gx,) = torch.autograd.grad(y, x, tensor(p["grad_output"]))
        out["grad_input"] = as_numpy(gx)
    return out


def _random_input(rng: np.random.Generator) -> list:
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    u = rng.random()
    if u < 0.25:
        return normal(rng, ri(4, 9))
    if u < 0.6:
        return normal(rng, ri(3, 7), ri(3, 7))
    return normal(rng, ri(1, 3), ri(3, 6), ri(3, 6))


def random_max_pool(rng: np.random.Generator) -> dict:
    """A random valid max-pool instance (1-D, H×W or C×H×W; integer or TensorFlow "same" padding)."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    x = _random_input(rng)
    k = ri(1, 3)
    p = {"input": x, "kernel_size": k, "stride": ri(1, 3)}
    if rng.random() < 0.25:
        p["padding"] = "same"
    else:
        p.update(padding=ri(0, k // 2), ceil_mode=bool(rng.random() < 0.5))
    out = ref_max_pool(p)["output"]
    p["grad_output"] = np.round(rng.standard_normal(out.shape), 4).tolist()
    return p


def random_avg_pool(rng: np.random.Generator) -> dict:
    """A random valid avg-pool instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    x = _random_input(rng)
    k = ri(1, 3)
    p = {"input": x, "kernel_size": k, "stride": ri(1, 3), "padding": ri(0, k // 2),
         "ceil_mode": bool(rng.random() < 0.5), "count_include_pad": pick(rng, [True, False])}
    out = ref_avg_pool(p)["output"]
    p["grad_output"] = np.round(rng.standard_normal(out.shape), 4).tolist()
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "max-pool": Reference(ref_max_pool, random_max_pool),
    "avg-pool": Reference(ref_avg_pool, random_avg_pool),
}
