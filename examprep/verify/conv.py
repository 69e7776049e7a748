"""Torch references of convolution: the real layers' output shapes, the receptive field measured by
autograd through a stack of conv1d layers, conv1d/conv2d and their gradients."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from examprep.verify._torch import DTYPE, Reference, as_numpy, dims, normal, pick, tensor, tf_same


def ref_conv_output_size(p: dict) -> dict:
    """Runs the real torch layer on a zero input and reads the output shape."""
    sizes = dims(p["input_size"], 1) if not isinstance(p["input_size"], (list, tuple)) else list(p["input_size"])
    n = len(sizes)
    k = dims(p["kernel_size"], n)
    op = p.get("op", "conv")
    stride = dims(p.get("stride") if p.get("stride") is not None else (k if op == "pool" else 1), n)
    dil = dims(p.get("dilation", 1), n)
    x = torch.zeros((1, 1, *sizes), dtype=DTYPE)
    padding = p.get("padding", 0)
    out: dict[str, Any] = {}
    if padding == "same":
        # TensorFlow's rule, stated independently: output ⌈n/s⌉ and the least total padding giving it
        pads_before, pads_after = [], []
        for i in range(n):
            want = -(-sizes[i] // stride[i])
            total = 0
            while (sizes[i] + total - dil[i] * (k[i] - 1) - 1) // stride[i] + 1 < want:
                total += 1
            pads_before.append(total // 2)
            pads_after.append(total - total // 2)
        flat = [v for i in reversed(range(n)) for v in (pads_before[i], pads_after[i])]
        x = F.pad(x, flat)
        padding = 0
        out.update(pad_before=pads_before if n > 1 else pads_before[0],
                   pad_after=pads_after if n > 1 else pads_after[0])
    elif padding == "valid":
        padding = 0
    pad = dims(padding, n)
    conv = {1: (F.conv1d, F.conv_transpose1d, F.max_pool1d), 2: (F.conv2d, F.conv_transpose2d, F.max_pool2d)}[n]
    kernel = torch.zeros((1, 1, *k), dtype=DTYPE)
    if op == "pool":
        y = conv[2](x, k, stride=stride, padding=pad, dilation=dil, ceil_mode=p.get("ceil_mode", False))
    elif p.get("transposed", False):
        y = conv[1](x, kernel, stride=stride, padding=pad, dilation=dil,
                    output_padding=dims(p.get("output_padding", 0), n))
    else:
        y = conv[0](x, kernel, stride=stride, padding=pad, dilation=dil)
    shape = list(y.shape[2:])
    out["output_size"] = shape if isinstance(p["input_size"], (list, tuple)) else shape[0]
    return out


def ref_receptive_field(p: dict) -> dict:
    """Receptive field measured by autograd: the input positions one output depends on, through
    a real stack of torch conv1d layers with all-ones kernels."""
    layers = p["layers"]
    rfs = []
    for depth in range(1, len(layers) + 1):
        stack = layers[:depth]
        length = 1
        for L in reversed(stack):            # the input length that yields exactly one output
            length = (length - 1) * L.get("stride", 1) + L.get("dilation", 1) * (L["kernel_size"] - 1) + 1
        x = torch.ones((1, 1, length + 8), dtype=DTYPE, requires_grad=True)
        y = x
        for L in stack:
            w = torch.ones((1, 1, L["kernel_size"]), dtype=DTYPE)
            y = F.conv1d(y, w, stride=L.get("stride", 1), dilation=L.get("dilation", 1))
        (g,) = torch.autograd.grad(y[0, 0, 0], x)
        nz = torch.nonzero(g[0, 0]).flatten()
        rfs.append(int(nz.max() - nz.min() + 1))
    jumps = list(np.cumprod([L.get("stride", 1) for L in layers]).astype(int))
    return {"receptive_field": rfs[-1], "receptive_fields": rfs, "jump": int(jumps[-1]), "jumps": [int(j) for j in jumps]}


def _pad_pairs(padding: Any, n: int) -> list[tuple[int, int]]:
    if isinstance(padding, (list, tuple)):
        if all(isinstance(q, (list, tuple)) for q in padding):
            return [tuple(q) for q in padding]
        return [tuple(padding)] * n
    return [(padding, padding)] * n


def ref_conv2d(p: dict) -> dict:
    if np.ndim(p["input"]) == 3:
        return _ref_conv2d_channels(p)
    x = tensor(p["input"], grad=True)
    k = tensor(p["kernel"], grad=True)
    b = tensor([p.get("bias", 0.0)], grad=True)
    n = x.ndim
    stride, dil = dims(p.get("stride", 1), n), dims(p.get("dilation", 1), n)
    padding = p.get("padding", 0)
    if padding == "same":
        pairs = []
        for i in range(n):
            want = -(-x.shape[i] // stride[i])
            total = max((want - 1) * stride[i] + dil[i] * (k.shape[i] - 1) + 1 - x.shape[i], 0)
            pairs.append((total // 2, total - total // 2))
    elif padding == "valid":
        pairs = [(0, 0)] * n
    else:
        pairs = _pad_pairs(padding, n)
    flat = [v for i in reversed(range(n)) for v in pairs[i]]
    xp = F.pad(x[None, None], flat)
    fn = F.conv1d if n == 1 else F.conv2d
    y = fn(xp, k[None, None], b, stride=stride, dilation=dil)[0, 0]
    out = {"output": as_numpy(y)}
    if p.get("grad_output") is not None:
        gx, gk, gb = torch.autograd.grad(y, (x, k, b), tensor(p["grad_output"]))
        out.update(grad_input=as_numpy(gx), grad_kernel=as_numpy(gk), grad_bias=float(gb[0]))
    return out


def random_conv_output_size(rng: np.random.Generator) -> dict:
    """A random valid conv-output-size instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    op = pick(rng, ["conv", "pool"])
    dims = ri(1, 2)
    n = [ri(10, 40) for _ in range(dims)]
    k = ri(1, 5)
    p: dict[str, Any] = {"input_size": n if dims > 1 else n[0], "kernel_size": k, "op": op, "stride": ri(1, 3),
                         "dilation": ri(1, 2)}
    if op == "pool":
        p["padding"] = ri(0, k // 2)
        p["ceil_mode"] = bool(rng.random() < 0.5)
    else:
        mode = pick(rng, ["int", "same", "transposed"])
        if mode == "int":
            p["padding"] = ri(0, 3)
        elif mode == "same":
            p["padding"] = "same"
        else:
            p.update(transposed=True, padding=ri(0, 1), output_padding=ri(0, p["stride"] - 1))
    return p


def random_receptive_field(rng: np.random.Generator) -> dict:
    """A random valid receptive-field instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    return {"layers": [{"kernel_size": ri(1, 4), "stride": ri(1, 2), "dilation": ri(1, 3)} for _ in range(ri(1, 4))]}


def random_conv2d(rng: np.random.Generator) -> dict:
    """A random valid conv2d instance (a third of them multi-channel)."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    if rng.random() < 0.35:
        return random_conv2d_channels(rng)
    if rng.random() < 0.3:
        x = normal(rng, ri(5, 8))
        k = normal(rng, ri(1, 3))
    else:
        x = normal(rng, ri(5, 7), ri(5, 7))
        k = normal(rng, ri(1, 3), ri(1, 3))
    p = {"input": x, "kernel": k, "stride": ri(1, 2), "dilation": ri(1, 2), "bias": float(round(rng.standard_normal(), 3)),
         "padding": pick(rng, [0, 1, "same", [0, 1]])}
    out = ref_conv2d(p)["output"]
    p["grad_output"] = np.round(rng.standard_normal(out.shape), 4).tolist()
    return p


def _ref_conv2d_channels(p: dict) -> dict:
    """F.conv2d on one C_in×H×W example with groups; padding by F.pad (torch's own padding= for
    ints and [h, w], explicit pairs and TensorFlow's "same" rule otherwise); gradients by autograd."""
    x = tensor(p["input"], grad=True)
    k = tensor(p["kernel"], grad=True)
    c_out = k.shape[0]
    b = (tensor(p.get("bias", 0.0)) * torch.ones(c_out, dtype=DTYPE)).detach().requires_grad_(True)
    stride, dil = dims(p.get("stride", 1), 2), dims(p.get("dilation", 1), 2)
    padding = p.get("padding", 0)
    groups = p.get("groups", 1)
    if padding == "same":
        pairs = [tf_same(x.shape[i + 1], k.shape[i + 2], stride[i], dil[i]) for i in range(2)]
        xp, torch_pad = F.pad(x[None], [*pairs[1], *pairs[0]]), 0
    elif isinstance(padding, (list, tuple)) and any(isinstance(v, (list, tuple)) for v in padding):
        xp, torch_pad = F.pad(x[None], [*padding[1], *padding[0]]), 0
    else:
        xp, torch_pad = x[None], (0 if padding == "valid" else padding)
    y = F.conv2d(xp, k, b, stride=stride, padding=torch_pad, dilation=dil, groups=groups)[0]
    out = {"output": as_numpy(y)}
    if p.get("grad_output") is not None:
        gx, gk, gb = torch.autograd.grad(y, (x, k, b), tensor(p["grad_output"]))
        out.update(grad_input=as_numpy(gx), grad_kernel=as_numpy(gk), grad_bias=as_numpy(gb))
    return out


def random_conv2d_channels(rng: np.random.Generator) -> dict:
    """A random valid multi-channel (possibly grouped) conv2d instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    groups = pick(rng, [1, 1, 2])
    c_in, c_out = groups * ri(1, 2), groups * ri(1, 2)
    kh, kw = ri(1, 3), ri(1, 3)
    p = {"input": normal(rng, c_in, ri(4, 6), ri(4, 6)), "kernel": normal(rng, c_out, c_in // groups, kh, kw),
         "bias": normal(rng, c_out), "groups": groups, "stride": ri(1, 2), "dilation": ri(1, 2),
         "padding": pick(rng, [0, 1, "same", [1, 0], [[0, 1], [1, 0]]])}
    try:
        out = ref_conv2d(p)["output"]
    except RuntimeError:            # the window does not fit this draw: draw again
        return random_conv2d_channels(rng)
    p["grad_output"] = np.round(rng.standard_normal(out.shape), 4).tolist()
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "conv-output-size": Reference(ref_conv_output_size, random_conv_output_size),
    "receptive-field": Reference(ref_receptive_field, random_receptive_field),
    "conv2d": Reference(ref_conv2d, random_conv2d),
}
