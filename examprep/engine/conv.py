"""Convolution: output sizes (of convolution and pooling layers), receptive fields, conv2d forward and
backward. Pooling itself is engine/pool.py.

Defaults follow PyTorch (torch.nn.Conv2d, torch.nn.MaxPool2d, their "Shape" sections); "same"
padding follows TensorFlow's rule (tf.nn.convolution docs): out = ⌈n / s⌉ and the total padding
max((out − 1)·s + d·(k − 1) + 1 − n, 0) is split with the extra pixel at the end.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from examprep.engine._core import Trace, array, boolean, choice, int_tuple, integer, number, shape_str
from examprep.errors import ParamError, ShapeError


def _unwrap(values: tuple[int, ...] | list[int], scalar: bool) -> Any:
    return values[0] if scalar else list(values)


def same_padding(n: int, k: int, stride: int, dilation: int = 1) -> tuple[int, int, int]:
    """TensorFlow "SAME": (output_size, pad_before, pad_after) for one dimension."""
    out = -(-n // stride)
    total = max((out - 1) * stride + dilation * (k - 1) + 1 - n, 0)
    return out, total // 2, total - total // 2


def conv_output_size(input_size, kernel_size, *, op: str = "conv", stride=None, padding: Any = 0,
                     dilation=1, ceil_mode: bool = False, transposed: bool = False,
                     output_padding=0) -> Trace:
    """Output size of a convolution or pooling layer, per spatial dimension.

    Shapes: input_size an int (one dimension) or a list [H, W, ...]; kernel_size, stride,
    padding, dilation, output_padding an int (every dimension) or one per dimension; for a single
    dimension, a convolution's padding may also be [before, after].
    Convolution (torch.nn.Conv2d, "Shape"):  out = ⌊(n + 2p − d(k−1) − 1) / s⌋ + 1.
    Pooling (torch.nn.MaxPool2d): the same with ⌈·⌉ when ceil_mode, and PyTorch's last-window rule:
      a window that would start in the right padding is dropped ((out−1)·s ≥ n + p ⇒ out − 1).
      Stride defaults to kernel_size; padding must be at most kernel_size // 2 (PyTorch's check).
    Transposed conv (torch.nn.ConvTranspose2d): out = (n−1)·s − 2p + d(k−1) + output_padding + 1,
      with output_padding < max(stride, dilation).
    padding "same": TensorFlow's rule (see module doc), returns pad_before and pad_after too;
    "valid" is padding 0.
    Returns output_size (int, or a list for several dimensions), effective_kernel d(k−1)+1, and
    quotient (the exact value before the floor/ceil); with "same" also pad_before, pad_after.
    Raises ParamError for stride or kernel < 1, negative padding, an effective kernel larger than
    the padded input, or an option that does not apply to op.
    """
    op = choice("op", op, ("conv", "pool"))
    scalar = not isinstance(input_size, (list, tuple))
    n = int_tuple("input_size", input_size, 1, minimum=1) if scalar else tuple(
        integer(f"input_size[{i}]", v, 1) for i, v in enumerate(input_size))
    if not n:
        raise ShapeError("input_size: expected an integer or a non-empty list of integers")
    dims = len(n)
    k = int_tuple("kernel_size", kernel_size, dims, minimum=1)
    s = int_tuple("stride", k if (stride is None and op == "pool") else (1 if stride is None else stride),
                  dims, minimum=1)
    d = int_tuple("dilation", dilation, dims, minimum=1)
    ceil_mode = boolean("ceil_mode", ceil_mode)
    transposed = boolean("transposed", transposed)
    if ceil_mode and op != "pool":
        raise ParamError("ceil_mode: applies to op \"pool\" only (PyTorch's convolutions always floor)")
    if transposed and op != "conv":
        raise ParamError("transposed: applies to op \"conv\" only")
    effective = tuple(di * (ki - 1) + 1 for ki, di in zip(k, d))
    trace = Trace(effective_kernel=_unwrap(effective, scalar))
    if isinstance(padding, str):
        padding = choice("padding", padding, ("same", "valid"))
        if transposed:
            raise ParamError("padding: \"same\"/\"valid\" apply to ordinary convolutions; give an integer "
                             "padding (and output_padding) for a transposed one")
        if ceil_mode:
            raise ParamError("ceil_mode: has no meaning with padding \"same\" or \"valid\"")
        if padding == "same":
            res = [same_padding(ni, ki, si, di) for ni, ki, si, di in zip(n, k, s, d)]
            trace.update(quotient=_unwrap([ni / si for ni, si in zip(n, s)], scalar),
                         output_size=_unwrap([r[0] for r in res], scalar),
                         pad_before=_unwrap([r[1] for r in res], scalar),
                         pad_after=_unwrap([r[2] for r in res], scalar))
            return trace
        padding = 0
    if dims == 1 and isinstance(padding, (list, tuple)) and len(padding) == 2 and op == "conv" and not transposed:
        # [before, after] for one dimension, as conv2d takes it
        pb = (integer("padding[0]", padding[0], 0),)
        pa = (integer("padding[1]", padding[1], 0),)
    else:
        p = int_tuple("padding", padding, dims, minimum=0)
        pb = pa = p
    p = pb
    if transposed:
        op_ = int_tuple("output_padding", output_padding, dims, minimum=0)
        for i in range(dims):
            if op_[i] >= max(s[i], d[i]):
                raise ParamError(f"output_padding: must be smaller than stride or dilation "
                                 f"(PyTorch's rule), got {op_[i]} with stride {s[i]} and dilation {d[i]}")
        out = [(n[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op_[i] + 1 for i in range(dims)]
        for i, o in enumerate(out):
            if o < 1:
                raise ParamError(f"padding: {p[i]} removes the whole output (size {o}) of the transposed convolution")
        trace.update(quotient=_unwrap([float(o) for o in out], scalar), output_size=_unwrap(out, scalar))
        return trace
    if any(op_ != 0 for op_ in int_tuple("output_padding", output_padding, dims, minimum=0)):
        raise ParamError("output_padding: applies to transposed convolutions only")
    out, quot = [], []
    for i in range(dims):
        if op == "pool" and p[i] > k[i] // 2:
            raise ParamError(f"padding: pooling padding must be at most half the kernel size "
                             f"(PyTorch's rule): {p[i]} > {k[i]} // 2")
        span = n[i] + pb[i] + pa[i]
        if effective[i] > span:
            raise ParamError(f"kernel_size: the effective kernel {effective[i]} (= dilation·(k−1)+1) is larger "
                             f"than the padded input {span}")
        num = span - effective[i]
        quot.append(num / s[i] + 1)
        if ceil_mode:
            o = -(-num // s[i]) + 1
            if (o - 1) * s[i] >= n[i] + p[i]:
                o -= 1
        else:
            o = num // s[i] + 1
        out.append(o)
    trace.update(quotient=_unwrap(quot, scalar), output_size=_unwrap(out, scalar))
    return trace


def receptive_field(layers: list[dict]) -> Trace:
    """Receptive field of a stack of conv/pool layers on the input (one dimension).

    layers: a list of {kernel_size, stride (1), dilation (1)}; padding and a name may be given and
    do not change the size. Recurrence (Araujo et al. 2019, "Computing Receptive Fields of CNNs",
    Distill, eq. 1–2): r_0 = 1, j_0 = 1;  r_l = r_{l−1} + (k_eff,l − 1)·j_{l−1},  j_l = j_{l−1}·s_l,
    with k_eff = d·(k − 1) + 1. The jump j_l is the distance in input pixels between neighbouring
    outputs of layer l.
    Returns receptive_field, jump, receptive_fields and jumps (per layer), effective_kernels.
    Raises ParamError for an empty list, a layer that is not an object, an unknown key or a size < 1.
    """
    if not isinstance(layers, (list, tuple)) or not layers:
        raise ParamError("layers: expected a non-empty list of {kernel_size, stride, dilation} objects")
    r, j = 1, 1
    rfs, jumps, effs = [], [], []
    for i, layer in enumerate(layers):
        if not isinstance(layer, dict):
            raise ParamError(f"layers[{i}]: expected an object like {{\"kernel_size\": 3, \"stride\": 1}}, got {layer!r}")
        unknown = set(layer) - {"kernel_size", "stride", "dilation", "padding", "name", "type"}
        if unknown:
            raise ParamError(f"layers[{i}]: unknown key {sorted(unknown)[0]!r} "
                             f"(expected kernel_size, stride, dilation, padding, name)")
        if "kernel_size" not in layer:
            raise ParamError(f"layers[{i}].kernel_size: missing")
        k = integer(f"layers[{i}].kernel_size", layer["kernel_size"], 1)
        s = integer(f"layers[{i}].stride", layer.get("stride", 1), 1)
        d = integer(f"layers[{i}].dilation", layer.get("dilation", 1), 1)
        if "padding" in layer and not isinstance(layer["padding"], str):
            integer(f"layers[{i}].padding", layer["padding"], 0)
        eff = d * (k - 1) + 1
        r = r + (eff - 1) * j
        j = j * s
        rfs.append(r)
        jumps.append(j)
        effs.append(eff)
    return Trace(effective_kernels=effs, receptive_fields=rfs, jumps=jumps, receptive_field=r, jump=j)


def _pads(padding: Any, kernel: tuple[int, ...], sizes: tuple[int, ...], stride: tuple[int, ...],
          dilation: tuple[int, ...]) -> list[tuple[int, int]]:
    dims = len(sizes)
    if isinstance(padding, str):
        padding = choice("padding", padding, ("same", "valid"))
        if padding == "valid":
            return [(0, 0)] * dims
        return [same_padding(n, k, s, d)[1:] for n, k, s, d in zip(sizes, kernel, stride, dilation)]
    if isinstance(padding, (list, tuple)):
        if len(padding) == dims and all(isinstance(p, (list, tuple)) for p in padding):
            out = []
            for i, p in enumerate(padding):
                if len(p) != 2:
                    raise ShapeError(f"padding[{i}]: expected [before, after], got {p!r}")
                out.append((integer(f"padding[{i}][0]", p[0], 0), integer(f"padding[{i}][1]", p[1], 0)))
            return out
        if len(padding) == 2 and not any(isinstance(p, (list, tuple)) for p in padding):
            before, after = integer("padding[0]", padding[0], 0), integer("padding[1]", padding[1], 0)
            return [(before, after)] * dims
        raise ShapeError(f"padding: expected an integer, [before, after], \"same\" or \"valid\", got {padding!r}")
    p = integer("padding", padding, 0)
    return [(p, p)] * dims


def window_index(out: int, k: int, s: int, d: int) -> np.ndarray:
    """Index array (out, k): position in the padded input of kernel tap t for output o."""
    return np.arange(out)[:, None] * s + np.arange(k)[None, :] * d


def conv2d(input, kernel, *, stride=1, padding: Any = 0, dilation=1, bias: float = 0.0, grad_output=None) -> Trace:
    """2-D (or 1-D) cross-correlation, as torch.nn.functional.conv2d with one channel, and its backward.

    Shapes: input (H, W) with kernel (kH, kW), or input (L,) with kernel (K,).
    out[i, j] = b + Σ_{u,v} kernel[u, v] · x_pad[i·s_h + u·d_h, j·s_w + v·d_w]   (no kernel flip).
    padding: an int (both sides, every dimension), [before, after] (every dimension),
    [[top, bottom], [left, right]], "valid", or "same" (TensorFlow's rule: extra pad at the end).
    Backward with grad_output δ (the output's shape): ∂L/∂x scatters δ[i,j]·kernel back onto each
    window (cropped to the unpadded input), ∂L/∂kernel[u,v] = Σ_{i,j} δ[i,j]·x_pad[window], ∂L/∂b = Σ δ
    (torch.nn.grad.conv2d_input / conv2d_weight).
    Returns padded (the zero-padded input), output; with grad_output also grad_input, grad_kernel,
    grad_bias.
    Raises ShapeError when kernel and input differ in rank or the effective kernel exceeds the
    padded input; ParamError for stride or dilation < 1.
    """
    x = array("input", input, (1, 2))
    w = array("kernel", kernel, (1, 2))
    if w.ndim != x.ndim:
        raise ShapeError(f"kernel: expected a {x.ndim}-D kernel for a {x.ndim}-D input, got shape {shape_str(w.shape)}")
    one_d = x.ndim == 1
    dims = x.ndim
    s = int_tuple("stride", stride, dims, minimum=1)
    d = int_tuple("dilation", dilation, dims, minimum=1)
    pads = _pads(padding, w.shape, x.shape, s, d)
    b = number("bias", bias)
    xp = np.pad(x, pads)
    outs = []
    for i in range(dims):
        eff = d[i] * (w.shape[i] - 1) + 1
        if eff > xp.shape[i]:
            raise ShapeError(f"kernel: the effective kernel size {eff} is larger than the padded input size {xp.shape[i]}")
        outs.append((xp.shape[i] - eff) // s[i] + 1)
    if one_d:
        xp2, w2 = xp[None, :], w[None, :]
        idx = [np.zeros((1, 1), dtype=int), window_index(outs[0], w.shape[0], s[0], d[0])]
    else:
        xp2, w2 = xp, w
        idx = [window_index(outs[i], w.shape[i], s[i], d[i]) for i in range(2)]
    rows, cols = idx[0][:, None, :, None], idx[1][None, :, None, :]
    patches = xp2[rows, cols]                                  # (OH, OW, KH, KW)
    out = np.einsum("abij,ij->ab", patches, w2) + b
    trace = Trace(padded=xp, output=out[0] if one_d else out)
    if grad_output is not None:
        g = array("grad_output", grad_output, dims)
        if g.shape != trace["output"].shape:
            raise ShapeError(f"grad_output: expected the output's shape {shape_str(trace['output'].shape)}, "
                             f"got {shape_str(g.shape)}")
        g2 = g[None, :] if one_d else g
        grad_pad = np.zeros_like(xp2)
        np.add.at(grad_pad, (np.broadcast_to(rows, patches.shape), np.broadcast_to(cols, patches.shape)),
                  g2[:, :, None, None] * w2[None, None, :, :])
        grad_kernel = np.einsum("abij,ab->ij", patches, g2)
        if one_d:
            grad_pad, grad_kernel = grad_pad[0], grad_kernel[0]
        crop = tuple(slice(p0, grad_pad.shape[i] - p1) for i, (p0, p1) in enumerate(pads))
        trace.update(grad_input=grad_pad[crop], grad_kernel=grad_kernel, grad_bias=float(g.sum()))
    return trace
