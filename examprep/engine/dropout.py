"""Dropout: inverted dropout with a given mask, forward and backward (Srivastava et al. 2014; PyTorch)."""
from __future__ import annotations

import numpy as np

from examprep.engine._core import Trace, array, boolean, number, shape_str
from examprep.errors import ParamError, ShapeError


def dropout(x, mask, *, p: float, grad_output=None, training: bool = True, inverted: bool = True) -> Trace:
    """Inverted dropout with a given mask, as torch.nn.functional.dropout in training mode.

    Shapes: x any shape; mask the same shape, 1 = kept, 0 = dropped; p the probability of dropping.
    Kept values are scaled by 1/(1 − p) so the expected output equals x (Srivastava et al. 2014 scale
    at test time instead; PyTorch scales at training time, so evaluation is the identity).
    p = 1 drops everything: the output is 0 (PyTorch). training false (evaluation): the identity, the
    mask unused. inverted false: the original dropout, which keeps values unscaled while training and
    multiplies by 1 − p at evaluation instead (Srivastava et al. 2014, §2).
    Backward: ∂L/∂x = δ ⊙ mask / (1 − p).
    Returns scale (1/(1 − p), 0 when p = 1), output; with grad_output also grad_input.
    Raises ParamError for p outside [0, 1] or a mask that is not 0/1, ShapeError for a mask or
    grad_output of another shape.
    """
    xa = array("x", x)
    p = number("p", p)
    if not 0 <= p <= 1:
        raise ParamError(f"p: expected a probability in [0, 1], got {p:g}")
    ma = array("mask", mask)
    if ma.shape != xa.shape:
        raise ShapeError(f"mask: expected x's shape {shape_str(xa.shape)}, got {shape_str(ma.shape)}")
    if not np.all((ma == 0) | (ma == 1)):
        raise ParamError("mask: expected 0 (dropped) or 1 (kept) in every entry")
    training = boolean("training", training)
    inverted = boolean("inverted", inverted)
    if training:
        keep = ma
        scale = (0.0 if p == 1 else 1.0 / (1.0 - p)) if inverted else 1.0
    else:
        keep = np.ones_like(ma)
        scale = 1.0 if inverted else 1.0 - p
    out = xa * keep * scale
    trace = Trace(scale=scale, output=out)
    if grad_output is not None:
        d = array("grad_output", grad_output)
        if d.shape != xa.shape:
            raise ShapeError(f"grad_output: expected x's shape {shape_str(xa.shape)}, got {shape_str(d.shape)}")
        trace["grad_input"] = d * keep * scale
    return trace
