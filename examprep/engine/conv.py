"""Convolution: output sizes (of convolution and pooling layers), receptive fields, conv2d forward and
backward. Pooling itself is engine/pool.py.

Defaults follow PyTorch (torch.nn.Conv2d, torch.nn.MaxPool2d, their "Shape" sections); "same"
padding follows TensorFlow's rule (tf.nn.convolution docs): out = ⌈n / s⌉ and the total padding
max((out − 1)·s + d·(k − 1) + 1 − n, 0) is split with the extra pixel at the end.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from examprep.engine._core import Trace, array, boolean, choice, int_tuple, integer, number, pad, shape_str
from examprep.errors import ParamError, ShapeError


def _unwrap(values: tuple[int, ...] | list[int], scalar: bool) -> Any:
    return values[0] if scalar else list(values)


def same_padding(n: int, k: int, stride: int, dilation: int = 1) -> tuple[int, int, int]:
    """TensorFlow "SAME": (output_size, pad_before, pad_after) for one dimension."""
    out = -(-n // stride)
    total = max((out - 1) * stride + dilation * (k - 1) + 1 - n, 0)
    return out, total // 2, total - total // 2


def pool_output_size(n: int, k: int, s: int, p: int, d: int = 1, ceil_mode: bool = False) -> int:
    """PyTorch's pooling output size for one dimension (ATen's pooling_output_shape):
    out = ⌊(n + 2p − d(k − 1) − 1)/s⌋ + 1, or ⌈·⌉ + 1 with ceil_mode, then one less when ceil_mode's
    last window would start in the right padding ((out − 1)·s ≥ n + p). May be < 1 (no window)."""
    num = n + 2 * p - d * (k - 1) - 1
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


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
        num = span - effective[i]
        # ceil_mode can give one (clipped) window where the kernel is larger than the padded input,
        # as PyTorch's rule does: max_pool2d of [[3, 1]] with kernel 2 and ceil_mode is [[3]]
        o = pool_output_size(n[i], k[i], s[i], p[i], d[i], ceil_mode) if ceil_mode else num // s[i] + 1
        if effective[i] > span and o < 1:
            raise ParamError(f"kernel_size: the effective kernel {effective[i]} (= dilation·(k−1)+1) is larger "
                             f"than the padded input {span}")
        quot.append(num / s[i] + 1)
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


@functools.lru_cache(maxsize=1024)
def window_index(out: int, k: int, s: int, d: int) -> np.ndarray:
    """Index array (out, k): position in the padded input of kernel tap t for output o. Cached (the
    same few geometries recur in every problem) and read-only, since every caller shares it."""
    idx = np.arange(out)[:, None] * s + np.arange(k)[None, :] * d
    idx.flags.writeable = False
    return idx


def conv2d(input, kernel, *, stride=1, padding: Any = 0, dilation=1, bias: Any = 0.0, groups=1,
           grad_output=None) -> Trace:
    """2-D (or 1-D) cross-correlation, as torch.nn.functional.conv2d, and its backward.

    Shapes: input (H, W) with kernel (kH, kW), or input (L,) with kernel (K,): one channel, bias a
    number. A C_in×H×W input takes a C_out×(C_in/groups)×kH×kW kernel: see conv2d_channels.
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
    x = array("input", input, (1, 2, 3))
    if x.ndim == 3:
        return conv2d_channels(x, kernel, stride=stride, padding=padding, dilation=dilation, bias=bias, groups=groups,
                               grad_output=grad_output)
    if integer("groups", groups, 1) != 1:
        raise ParamError("groups: applies to a C×H×W input (one channel has one group)")
    w = array("kernel", kernel, (1, 2))
    if w.ndim != x.ndim:
        raise ShapeError(f"kernel: expected a {x.ndim}-D kernel for a {x.ndim}-D input, got shape {shape_str(w.shape)}")
    one_d = x.ndim == 1
    dims = x.ndim
    s = int_tuple("stride", stride, dims, minimum=1)
    d = int_tuple("dilation", dilation, dims, minimum=1)
    pads = _pads(padding, w.shape, x.shape, s, d)
    b = number("bias", bias)
    xp = pad(x, pads)
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


def _channel_pads(padding: Any, kernel: tuple[int, int], sizes: tuple[int, int], stride: tuple[int, int],
                  dilation: tuple[int, int]) -> list[tuple[int, int]]:
    """Padding of a C×H×W input per spatial dimension as (before, after): an int, [h, w] (each on
    both sides, as torch), [[top, bottom], [left, right]], "valid" or "same" (TensorFlow's rule)."""
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ParamError(f"padding: expected an integer, [h, w], \"same\" or \"valid\", got {padding!r}")
        if padding == "valid":
            return [(0, 0), (0, 0)]
        return [same_padding(n, k, s, d)[1:] for n, k, s, d in zip(sizes, kernel, stride, dilation)]
    if isinstance(padding, (list, tuple)):
        if len(padding) != 2:
            raise ShapeError(f"padding: expected an integer or [h, w] for a C×H×W input, got a list of {len(padding)}")
        out = []
        for i, p in enumerate(padding):
            if isinstance(p, (list, tuple)):
                if len(p) != 2:
                    raise ShapeError(f"padding[{i}]: expected [before, after], got {p!r}")
                out.append((integer(f"padding[{i}][0]", p[0], 0), integer(f"padding[{i}][1]", p[1], 0)))
            else:
                v = integer(f"padding[{i}]", p, 0)
                out.append((v, v))
        return out
    v = integer("padding", padding, 0)
    return [(v, v), (v, v)]


def conv2d_channels(input, kernel, *, stride=1, padding: Any = 0, dilation=1, bias: Any = 0.0, groups=1,
                    grad_output=None) -> Trace:
    """Multi-channel 2-D cross-correlation of one example, as torch.nn.functional.conv2d, and its backward.

    Shapes: input (C_in, H, W); kernel (C_out, C_in/groups, kH, kW); bias (C_out,) or 0; output
    (C_out, H_out, W_out). groups splits the channels into that many independent blocks: output
    channel o sees only input channels of its block (groups = C_in: a depthwise convolution).
    out[o, i, j] = b[o] + Σ_{c, u, v} K[o, c, u, v] · x_pad[g(o)·C_in/groups + c, i·s_h + u·d_h, j·s_w + v·d_w].
    stride, dilation: an int or [h, w]; padding: an int, [h, w] (each on both sides, as torch),
    [[top, bottom], [left, right]], "valid", or "same" (TensorFlow's rule: out = ⌈n/s⌉, the extra
    pad at the end).
    Backward with grad_output δ (C_out, H_out, W_out): ∂L/∂x scatters δ[o,i,j]·K[o] back onto each
    window (cropped to the unpadded input), ∂L/∂K[o,c,u,v] = Σ_{i,j} δ[o,i,j]·x_pad[window],
    ∂L/∂b[o] = Σ_{i,j} δ[o,i,j] (torch.nn.grad.conv2d_input / conv2d_weight).
    Returns padded, output; with grad_output also grad_input, grad_kernel, grad_bias.
    Raises ShapeError naming both shapes when the kernel's channels do not match the input's, and
    when the window does not fit the padded input; ParamError for groups that do not divide the
    channels.
    """
    x = array("input", input, 3)
    w = array("kernel", kernel, 4)
    c_in, c_out = x.shape[0], w.shape[0]
    groups = integer("groups", groups, 1)
    if c_in % groups or c_out % groups:
        raise ParamError(f"groups: {groups} must divide both the input channels ({c_in}) and the output channels "
                         f"({c_out})")
    if w.shape[1] * groups != c_in:
        raise ShapeError(f"kernel: shape {shape_str(w.shape)} expects {w.shape[1] * groups} input channels "
                         f"({w.shape[1]} per group × {groups} group{'s' if groups > 1 else ''}), but the input "
                         f"{shape_str(x.shape)} has {c_in}")
    s = int_tuple("stride", stride, 2, minimum=1)
    d = int_tuple("dilation", dilation, 2, minimum=1)
    kernel_hw = (w.shape[2], w.shape[3])
    pads = _channel_pads(padding, kernel_hw, (x.shape[1], x.shape[2]), s, d)
    b = array("bias", bias, (0, 1))
    if b.ndim == 1 and b.shape[0] != c_out:
        raise ShapeError(f"bias: expected {c_out} values (one per output channel) or 0, got {b.shape[0]}")
    b = np.broadcast_to(b, (c_out,)).astype(float)
    xp = pad(x, [(0, 0)] + pads)
    outs = []
    for i in range(2):
        eff = d[i] * (kernel_hw[i] - 1) + 1
        if eff > xp.shape[i + 1]:
            raise ShapeError(f"kernel: the effective kernel size {eff} is larger than the padded input size "
                             f"{xp.shape[i + 1]} ({'height' if i == 0 else 'width'})")
        outs.append((xp.shape[i + 1] - eff) // s[i] + 1)
    rows = window_index(outs[0], kernel_hw[0], s[0], d[0])[:, None, :, None]
    cols = window_index(outs[1], kernel_hw[1], s[1], d[1])[None, :, None, :]
    patches = xp[:, rows, cols]                                  # (C_in, OH, OW, kH, kW)
    per_in, per_out = c_in // groups, c_out // groups
    grouped = patches.reshape(groups, per_in, *patches.shape[1:])    # (G, C_in/G, OH, OW, kH, kW)
    wg = w.reshape(groups, per_out, per_in, *kernel_hw)              # (G, C_out/G, C_in/G, kH, kW)
    out = np.einsum("gcabij,gocij->goab", grouped, wg).reshape(c_out, outs[0], outs[1]) + b[:, None, None]
    trace = Trace(padded=xp, output=out)
    if grad_output is not None:
        g = array("grad_output", grad_output, 3)
        if g.shape != out.shape:
            raise ShapeError(f"grad_output: expected the output's shape {shape_str(out.shape)}, got {shape_str(g.shape)}")
        gg = g.reshape(groups, per_out, outs[0], outs[1])
        grad_kernel = np.einsum("gcabij,goab->gocij", grouped, gg).reshape(w.shape)
        contrib = np.einsum("goab,gocij->gcabij", gg, wg).reshape(c_in, outs[0], outs[1], *kernel_hw)
        grad_pad = np.zeros_like(xp)
        shape = contrib.shape[1:]
        r, c = np.broadcast_to(rows, shape), np.broadcast_to(cols, shape)
        for ch in range(c_in):
            np.add.at(grad_pad[ch], (r, c), contrib[ch])
        crop = (slice(None),) + tuple(slice(p0, grad_pad.shape[i + 1] - p1) for i, (p0, p1) in enumerate(pads))
        trace.update(grad_input=grad_pad[crop], grad_kernel=grad_kernel, grad_bias=g.sum(axis=(1, 2)))
    return trace
