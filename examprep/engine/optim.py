"""Optimisation: a gradient-descent step and gradient clipping by norm."""
from __future__ import annotations

import numpy as np

from examprep.engine._core import array, number, same_shape


def sgd_step(param, grad, lr) -> np.ndarray:
    """param − lr · grad (one gradient-descent step)."""
    p, g = array("param", param), array("grad", grad)
    same_shape("grad", g, p, "param")
    out = p - number("lr", lr) * g
    return float(out) if out.ndim == 0 else out


def clip_by_norm(grad, max_norm) -> np.ndarray:
    """g · min(1, c/‖g‖₂): gradient clipping by norm (torch.nn.utils.clip_grad_norm_, up to its 1e-6)."""
    g = array("grad", grad)
    c = number("max_norm", max_norm)
    norm = float(np.sqrt(np.sum(g**2)))
    out = g * min(1.0, c / norm) if norm > 0 else g
    return float(out) if out.ndim == 0 else out
