"""Pooling: max-pooling and average pooling forward and backward on 1-D, H×W and C×H×W input, as
PyTorch computes and routes them, and the other rules for tied maxima that hand computations use.

Defaults follow PyTorch (torch.nn.MaxPool2d, torch.nn.AvgPool2d, their "Shape" sections): stride
defaults to kernel_size, padding is at most kernel_size // 2, ceil_mode rounds the output size up
but drops a last window that would start in the right padding (engine.conv.pool_output_size).
"same" padding (max-pool only) follows TensorFlow's rule (tf.nn.max_pool: out = ⌈n / s⌉, the padding
split with the extra cell at the end), padded with −∞ as TensorFlow's max-pool ignores the padding.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from examprep.engine._core import Trace, array, boolean, choice, int_tuple, pad, shape_str
from examprep.engine.conv import pool_output_size, same_padding, window_index
from examprep.errors import ParamError, ShapeError


def _output_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    out = pool_output_size(n, k, s, p, d, ceil_mode)
    if out < 1:
        raise ParamError(f"kernel_size: the effective kernel {d * (k - 1) + 1} is larger than the padded input "
                         f"{n + 2 * p}, so no window fits")
    return out


class _Geometry:
    """Where the windows of a pooling layer fall: per dimension the output size, the padding before
    and after, and the extra cells a ceil_mode window reaches beyond the padding."""

    def __init__(self, x: np.ndarray, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: Any,
                 allow_same: bool):
        self.channels = x.ndim == 3
        spatial = x.shape[1:] if self.channels else x.shape
        dims = len(spatial)
        self.dims = dims
        k = int_tuple("kernel_size", kernel_size, dims, minimum=1)
        s = int_tuple("stride", k if stride is None else stride, dims, minimum=1)
        d = int_tuple("dilation", dilation, dims, minimum=1)
        ceil_mode = boolean("ceil_mode", ceil_mode)
        self.same = False
        if isinstance(padding, str):
            options = ("same", "valid") if allow_same else ("valid",)
            padding = choice("padding", padding, options)
            if padding == "same":
                if ceil_mode:
                    raise ParamError("ceil_mode: has no meaning with padding \"same\" (its output size is ⌈n/s⌉)")
                self.same = True
            else:
                padding = 0
        if self.same:
            res = [same_padding(n, ki, si, di) for n, ki, si, di in zip(spatial, k, s, d)]
            sizes = [r[0] for r in res]
            pads = [(r[1], r[2]) for r in res]
        else:
            p = int_tuple("padding", padding, dims, minimum=0)
            for i in range(dims):
                if p[i] > k[i] // 2:
                    raise ParamError(f"padding: pooling padding must be at most half the kernel size "
                                     f"(PyTorch's rule): {p[i]} > {k[i]} // 2")
            sizes = [_output_size(spatial[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(dims)]
            pads = [(p[i], p[i]) for i in range(dims)]
        # cells a ceil_mode window reaches beyond the padding (never counted, never selected)
        self.extra = [max((sizes[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - (spatial[i] + pads[i][0] + pads[i][1]), 0)
                      for i in range(dims)]
        self.k, self.s, self.d, self.pads, self.sizes, self.spatial = k, s, d, pads, sizes, tuple(spatial)

    def pad_width(self) -> list[tuple[int, int]]:
        widths = [(b, a + e) for (b, a), e in zip(self.pads, self.extra)]
        return ([(0, 0)] if self.channels else []) + widths

    def windows(self, padded: np.ndarray) -> np.ndarray:
        """(C, OH, OW, KH·KW) view of the windows of a padded (C, H', W') array (C = 1, OH = 1 as needed)."""
        if self.dims == 1:
            padded = padded[..., None, :]
            idx = [np.zeros((1, 1), dtype=int), window_index(self.sizes[0], self.k[0], self.s[0], self.d[0])]
        else:
            idx = [window_index(self.sizes[i], self.k[i], self.s[i], self.d[i]) for i in range(2)]
        if not self.channels:
            padded = padded[None]
        rows, cols = idx[0][:, None, :, None], idx[1][None, :, None, :]
        w = padded[:, rows, cols]                               # (C, OH, OW, KH, KW)
        return w.reshape(w.shape[0], w.shape[1], w.shape[2], -1)

    def shape_output(self, out: np.ndarray) -> np.ndarray:
        """(C, OH, OW) back to the input's layout: (L,), (H, W) or (C, H, W)."""
        if self.dims == 1:
            out = out[:, 0]
        return out if self.channels else out[0]

    def same_pads(self) -> dict[str, Any]:
        before = [b for b, _ in self.pads]
        after = [a for _, a in self.pads]
        if self.dims == 1:
            return {"pad_before": before[0], "pad_after": after[0]}
        return {"pad_before": before, "pad_after": after}


def _input(input: Any) -> np.ndarray:
    return array("input", input, (1, 2, 3))


def _grad(grad_output: Any, shape: tuple[int, ...]) -> np.ndarray:
    g = array("grad_output", grad_output)
    if g.shape != shape:
        raise ShapeError(f"grad_output: expected the output's shape {shape_str(shape)}, got {shape_str(g.shape)}")
    return g


def max_pool(input, kernel_size, *, stride=None, padding: Any = 0, dilation=1, ceil_mode: bool = False,
             grad_output=None) -> Trace:
    """Max-pooling, as torch.nn.functional.max_pool1d/2d, and its backward.

    Shapes: input (L,), (H, W) or (C, H, W) — each channel is pooled alone; kernel_size, stride
    (default kernel_size), padding, dilation an int or one per spatial dimension.
    padding: an int (−∞ on both sides, at most kernel_size // 2), "valid" (0) or "same"
    (TensorFlow's rule: out = ⌈n/s⌉, the extra cell of padding at the end).
    Output size: PyTorch's rule, ceil_mode's last window clipped to the input (it may be larger than
    the padded input when ceil_mode gives it a place: [[3, 1]] with kernel 2 → [[3]]).
    Ties: the first maximum in row-major order within the window wins (PyTorch's CPU kernel).
    Backward: each grad_output entry goes wholly to its window's argmax; overlapping windows add.
    Returns output, indices (row-major index into each channel's plane of each maximum, as
    return_indices=True); with "same" also pad_before and pad_after (a number for 1-D input, [h, w]
    otherwise); with grad_output also grad_input.
    Raises ParamError for padding > kernel_size // 2, ceil_mode with "same", or no window at all.
    """
    x = _input(input)
    geo = _Geometry(x, kernel_size, stride, padding, dilation, ceil_mode, allow_same=True)
    xp = pad(x, geo.pad_width(), -np.inf)
    plane = int(np.prod(geo.spatial))
    index = np.broadcast_to(np.arange(plane).reshape(geo.spatial), x.shape)
    ip = pad(index, geo.pad_width(), -1)
    windows = geo.windows(xp)
    arg = windows.argmax(axis=-1)                              # the first maximum, row-major
    out = np.take_along_axis(windows, arg[..., None], axis=-1)[..., 0]
    where = np.take_along_axis(geo.windows(ip), arg[..., None], axis=-1)[..., 0]
    trace = Trace(output=geo.shape_output(out), indices=geo.shape_output(where))
    if geo.same:
        trace.update(geo.same_pads())
    if grad_output is not None:
        g = _grad(grad_output, trace["output"].shape)
        g3 = g.reshape(where.shape)
        grad = np.zeros((where.shape[0], plane + 1))         # a window wholly in the padding (index −1) routes
        for c in range(where.shape[0]):                      # its gradient to the spare last column: nowhere
            np.add.at(grad[c], where[c].ravel(), g3[c].ravel())
        trace.update(grad_input=grad[:, :plane].reshape(x.shape))
    return trace


def avg_pool(input, kernel_size, *, stride=None, padding: Any = 0, count_include_pad: bool = True,
             ceil_mode: bool = False, grad_output=None) -> Trace:
    """Average pooling, as torch.nn.functional.avg_pool1d/2d, and its backward.

    Shapes: input (L,), (H, W) or (C, H, W) — each channel is pooled alone; kernel_size, stride
    (default kernel_size) and padding an int or one per spatial dimension. Padding is zeros, at
    most kernel_size // 2.
    out = (sum of the window's cells) / divisor, where the divisor counts the window's cells that
    lie inside the zero-padded input (count_include_pad true, PyTorch's default) or inside the
    unpadded input (false); cells that a ceil_mode window reaches beyond the padding never count
    (torch: [1, 2, 3, 4], k 3, s 2, p 1, ceil_mode → [1, 3, 2]).
    Backward: each cell of a window receives that window's gradient ÷ its divisor; overlapping
    windows add (torch's avg_pool backward).
    Returns output, divisors (per output cell); with grad_output also grad_input.
    Raises ParamError for padding > kernel_size // 2 or no window at all.
    """
    x = _input(input)
    count_include_pad = boolean("count_include_pad", count_include_pad)
    geo = _Geometry(x, kernel_size, stride, padding, 1, ceil_mode, allow_same=False)
    width = geo.pad_width()
    xp = pad(x, width)
    plane = int(np.prod(geo.spatial))
    # which cells count: those of the zero-padded input (count_include_pad) or of the input itself;
    # the cells a ceil_mode window reaches beyond the padding never count
    lead = [(0, 0)] if geo.channels else []
    if count_include_pad:
        padded_shape = [n + b + a for n, (b, a) in zip(x.shape[-geo.dims:], geo.pads)]
        ones = np.ones(([x.shape[0]] if geo.channels else []) + padded_shape)
        counted = pad(ones, lead + [(0, e) for e in geo.extra])
    else:
        counted = pad(np.ones(x.shape), width)
    windows = geo.windows(xp)
    divisors = geo.windows(counted).sum(axis=-1)
    out = windows.sum(axis=-1) / divisors
    trace = Trace(output=geo.shape_output(out), divisors=geo.shape_output(divisors))
    if grad_output is not None:
        g = _grad(grad_output, trace["output"].shape).reshape(out.shape)
        index = np.broadcast_to(np.arange(plane).reshape(geo.spatial), x.shape)
        ip = geo.windows(pad(index, width, -1))       # (C, OH, OW, K)
        share = np.broadcast_to((g / divisors)[..., None], ip.shape)
        grad = np.zeros((ip.shape[0], plane + 1))                  # the last column collects the padding
        for c in range(ip.shape[0]):
            np.add.at(grad[c], ip[c].ravel(), share[c].ravel())
        trace.update(grad_input=grad[:, :plane].reshape(x.shape))
    return trace


MAX_POOL_TIES = ("first", "last", "split", "all")


def max_pool_backward(input, kernel_size, grad_output, *, stride=None, ties: str = "first") -> Trace:
    """Route a max-pool gradient back to the input, under several rules for tied maxima.

    Windows as torch.nn.functional.max_pool2d without padding (floor mode); overlapping windows
    add their contributions. ties:
      "first"  the first maximum in row-major order takes all of δ — PyTorch's (and the contract's)
               rule, equal to examprep.engine.max_pool's grad_input;
      "last"   the last maximum in row-major order takes δ;
      "split"  every tied maximum gets δ / (number tied) — the subgradient some texts draw;
      "all"    every tied maximum gets the whole δ (over-counts: Σ ∂L/∂x ≠ Σ δ).
    Only "first" is a framework's behaviour; the others are common hand-computation variants.
    Shapes: input (H, W) or (L,); kernel_size, stride an int or one per dimension (stride defaults
    to kernel_size); grad_output the output's shape.
    Returns output, indices (the flat row-major input index that takes δ under "first" or "last";
    the first tied maximum under "split" and "all"), ties_count (maxima per window), grad_input.
    Raises ShapeError for a window larger than the input or a grad_output of the wrong shape.
    """
    ties = choice("ties", ties, MAX_POOL_TIES)
    x = array("input", input, (1, 2))
    one_d = x.ndim == 1
    x2 = x[None, :] if one_d else x
    dims = x.ndim
    k = int_tuple("kernel_size", kernel_size, dims, minimum=1)
    s = int_tuple("stride", k if stride is None else stride, dims, minimum=1)
    if one_d:
        k, s = (1, *k), (1, *s)
    out_shape = []
    for i in range(2):
        if k[i] > x2.shape[i]:
            raise ShapeError(f"kernel_size: the window {k[i]} is larger than the input size {x2.shape[i]}")
        out_shape.append((x2.shape[i] - k[i]) // s[i] + 1)
    g = array("grad_output", grad_output, dims)
    if g.shape != (tuple(out_shape[1:]) if one_d else tuple(out_shape)):
        want = out_shape[1] if one_d else "×".join(map(str, out_shape))
        raise ShapeError(f"grad_output: expected the output's shape {want}, got {shape_str(g.shape)}")
    g2 = g[None, :] if one_d else g
    oh, ow = out_shape
    rows = (np.arange(oh) * s[0])[:, None, None, None] + np.arange(k[0])[None, None, :, None]
    cols = (np.arange(ow) * s[1])[None, :, None, None] + np.arange(k[1])[None, None, None, :]
    flat_pos = (rows * x2.shape[1] + cols).reshape(oh, ow, -1)       # input index of each tap, row-major
    windows = x2[rows, cols].reshape(oh, ow, -1)
    out = windows.max(axis=-1)
    tied = windows == out[..., None]
    count = tied.sum(axis=-1)
    first = tied.argmax(axis=-1)
    last = tied.shape[-1] - 1 - tied[..., ::-1].argmax(axis=-1)
    chosen = last if ties == "last" else first
    where = np.take_along_axis(flat_pos, chosen[..., None], axis=-1)[..., 0]
    if ties in ("first", "last"):
        share = np.zeros(tied.shape)
        np.put_along_axis(share, chosen[..., None], 1.0, axis=-1)
    else:
        share = tied / (count[..., None] if ties == "split" else 1.0)
    grad = np.zeros(x2.size)
    np.add.at(grad, flat_pos.ravel(), (share * g2[..., None]).ravel())   # overlapping windows add
    grad = grad.reshape(x2.shape)
    if one_d:
        return Trace(output=out[0], indices=where[0], ties_count=count[0], grad_input=grad[0])
    return Trace(output=out, indices=where, ties_count=count, grad_input=grad)
