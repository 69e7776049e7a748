"""Torch reference of pooling: F.max_pool1d/2d and autograd."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from examprep.verify._torch import as_numpy, dims, normal, tensor


def ref_max_pool(p: dict) -> dict:
    x = tensor(p["input"], grad=True)
    n = x.ndim
    fn = F.max_pool1d if n == 1 else F.max_pool2d
    ks = dims(p["kernel_size"], n)
    stride = p.get("stride")
    y = fn(x[None, None], ks, stride=dims(stride, n) if stride is not None else None,
           padding=dims(p.get("padding", 0), n), dilation=dims(p.get("dilation", 1), n),
           ceil_mode=p.get("ceil_mode", False))[0, 0]
    out = {"output": as_numpy(y)}
    if p.get("grad_output") is not None:
        (gx,) = torch.autograd.grad(y, x, tensor(p["grad_output"]))
        out["grad_input"] = as_numpy(gx)
    return out


def random_max_pool(rng: np.random.Generator) -> dict:
    """A random valid max-pool instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    x = normal(rng, ri(4, 9)) if rng.random() < 0.3 else normal(rng, ri(3, 7), ri(3, 7))
    k = ri(1, 3)
    p = {"input": x, "kernel_size": k, "stride": ri(1, 3), "padding": ri(0, k // 2), "ceil_mode": bool(rng.random() < 0.5)}
    out = ref_max_pool(p)["output"]
    p["grad_output"] = np.round(rng.standard_normal(out.shape), 4).tolist()
    return p
