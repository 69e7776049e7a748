"""Pooling: max-pooling forward and backward as PyTorch routes the gradient, and the other rules
for tied maxima that hand computations use.

Output sizes follow engine.conv.conv_output_size with op "pool" (PyTorch's ceil_mode rule).
"""
from __future__ import annotations

import numpy as np

from examprep.engine._core import Trace, array, boolean, choice, int_tuple, shape_str
from examprep.engine.conv import conv_output_size, window_index
from examprep.errors import ShapeError


def max_pool(input, kernel_size, *, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
             grad_output=None) -> Trace:
    """Max-pooling of a 1-D or 2-D input, as torch.nn.functional.max_pool1d/2d, and its backward.

    Shapes: input (L,) or (H, W); kernel_size, stride (default kernel_size), padding, dilation an
    int or one per dimension. Padding is −∞ (it never wins). Output size as conv_output_size with
    op "pool" (PyTorch's ceil_mode last-window rule; windows past the end are clipped).
    Ties: the first maximum in row-major order within the window wins (PyTorch's CPU kernel).
    Backward: each grad_output entry goes wholly to its window's argmax; overlapping windows add.
    Returns output, indices (flat row-major index into the input of each maximum, as
    return_indices=True); with grad_output also grad_input.
    Raises ParamError for padding > kernel_size // 2, ShapeError for a window larger than the input.
    """
    x = array("input", input, (1, 2))
    dims = x.ndim
    k = int_tuple("kernel_size", kernel_size, dims, minimum=1)
    s = int_tuple("stride", k if stride is None else stride, dims, minimum=1)
    d = int_tuple("dilation", dilation, dims, minimum=1)
    p = int_tuple("padding", padding, dims, minimum=0)
    ceil_mode = boolean("ceil_mode", ceil_mode)
    sizes = conv_output_size(list(x.shape), list(k), op="pool", stride=list(s), padding=list(p),
                             dilation=list(d), ceil_mode=ceil_mode)["output_size"]
    # pad with −inf on both sides, plus enough at the end for a clipped ceil_mode window
    extra = [max((sizes[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - (x.shape[i] + 2 * p[i]), 0) for i in range(dims)]
    xp = np.pad(x, [(p[i], p[i] + extra[i]) for i in range(dims)], constant_values=-np.inf)
    flat_index = np.pad(np.arange(x.size).reshape(x.shape), [(p[i], p[i] + extra[i]) for i in range(dims)],
                        constant_values=-1)
    if dims == 1:
        xp, flat_index = xp[None, :], flat_index[None, :]
        idx = [np.zeros((1, 1), dtype=int), window_index(sizes[0], k[0], s[0], d[0])]
    else:
        idx = [window_index(sizes[i], k[i], s[i], d[i]) for i in range(2)]
    rows, cols = idx[0][:, None, :, None], idx[1][None, :, None, :]
    windows = xp[rows, cols]                                   # (OH, OW, KH, KW)
    oh, ow = windows.shape[:2]
    flat = windows.reshape(oh, ow, -1)
    arg = flat.argmax(axis=-1)                                 # first maximum, row-major
    out = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
    where = np.take_along_axis(flat_index[rows, cols].reshape(oh, ow, -1), arg[..., None], axis=-1)[..., 0]
    if dims == 1:
        out, where = out[0], where[0]
    trace = Trace(output=out, indices=where)
    if grad_output is not None:
        g = array("grad_output", grad_output, dims)
        if g.shape != out.shape:
            raise ShapeError(f"grad_output: expected the output's shape {shape_str(out.shape)}, got {shape_str(g.shape)}")
        grad = np.zeros(x.size)
        np.add.at(grad, where.ravel(), g.ravel())
        trace.update(grad_input=grad.reshape(x.shape))
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
