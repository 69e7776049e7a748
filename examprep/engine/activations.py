"""Activation functions and their derivatives.

Derivatives at kinks follow PyTorch's autograd: ReLU'(0) = 0, LeakyReLU'(0) = negative_slope.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from examprep.engine._core import Trace, array, choice, number, same_shape, sigmoid

ACTIVATIONS = ("sigmoid", "tanh", "relu", "leaky-relu", "gelu")
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_erf = np.vectorize(math.erf, otypes=[np.float64])


def activation(name: str, x, *, negative_slope: float = 0.01, approximate: str = "none") -> Trace:
    """Value and derivative of an activation, element-wise.

    Shapes: x a number or an array of any shape; output and derivative have x's shape.
    name: "sigmoid" σ(x) = 1/(1+e^{-x}), σ' = σ(1−σ) ≤ 1/4;
          "tanh" tanh', = 1 − tanh² ≤ 1;
          "relu" max(0, x), derivative 1 for x > 0 else 0 (torch.nn.ReLU autograd);
          "leaky-relu" x if x > 0 else negative_slope·x (torch.nn.LeakyReLU; derivative at 0 is
          negative_slope, as PyTorch's backward);
          "gelu" x·Φ(x) (Hendrycks & Gimpel 2016, eq. 1; torch.nn.GELU), approximate="tanh" uses
          0.5x(1+tanh(√(2/π)(x+0.044715x³))) as torch.nn.GELU(approximate="tanh").
    Returns output, derivative (and for gelu cdf Φ(x), pdf φ(x)); max_derivative gives the largest
    value the derivative takes over all real x.
    Raises ParamError for an unknown name or non-finite x.
    """
    name = choice("name", name, ACTIVATIONS)
    approximate = choice("approximate", approximate, ("none", "tanh"))
    negative_slope = number("negative_slope", negative_slope)
    x_arr = array("x", x)
    scalar = x_arr.ndim == 0
    if name == "sigmoid":
        out = sigmoid(x_arr)
        der = out * (1.0 - out)
        trace = Trace(output=out, derivative=der)
    elif name == "tanh":
        out = np.tanh(x_arr)
        der = 1.0 - out**2
        trace = Trace(output=out, derivative=der)
    elif name == "relu":
        out = np.maximum(x_arr, 0.0)
        der = (x_arr > 0).astype(np.float64)
        trace = Trace(output=out, derivative=der)
    elif name == "leaky-relu":
        out = np.where(x_arr > 0, x_arr, negative_slope * x_arr)
        der = np.where(x_arr > 0, 1.0, negative_slope)
        trace = Trace(output=out, derivative=der)
    else:
        pdf = np.exp(-0.5 * x_arr**2) / math.sqrt(2.0 * math.pi)
        if approximate == "none":
            cdf = 0.5 * (1.0 + _erf(x_arr / math.sqrt(2.0)))
            out = x_arr * cdf
            der = cdf + x_arr * pdf
        else:
            inner = _SQRT_2_OVER_PI * (x_arr + 0.044715 * x_arr**3)
            t = np.tanh(inner)
            cdf = 0.5 * (1.0 + t)
            out = x_arr * cdf
            der = cdf + 0.5 * x_arr * (1.0 - t**2) * _SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * x_arr**2)
        trace = Trace(cdf=cdf, pdf=pdf, output=out, derivative=der)
    if scalar:
        return Trace({k: float(v) for k, v in trace.items()})
    return trace


@functools.cache
def max_derivative(name: str, negative_slope: float = 0.01, approximate: str = "none") -> float:
    """sup over real x of φ'(x): how much one layer of φ can at most stretch a gradient.

    sigmoid 1/4 (σ' = σ(1 − σ), at x = 0); tanh 1 (1 − tanh², at 0); relu 1; leaky-relu
    max(1, negative_slope); gelu Φ(√2) + √2 φ(√2) ≈ 1.1289 (GELU'' = φ(x)(2 − x²) vanishes at √2),
    its tanh approximation's found by a golden-section search of its derivative on [1, 2].
    Raises ParamError for an unknown name or approximation.
    """
    name = choice("name", name, ACTIVATIONS)
    approximate = choice("approximate", approximate, ("none", "tanh"))
    if name == "sigmoid":
        return 0.25
    if name in ("tanh", "relu"):
        return 1.0
    if name == "leaky-relu":
        return max(1.0, number("negative_slope", negative_slope))
    if approximate == "none":
        return 0.5 * (1.0 + math.erf(1.0)) + math.sqrt(2.0) * math.exp(-1.0) / math.sqrt(2.0 * math.pi)

    def slope(v: float) -> float:               # the tanh-approximate GELU' at one point, as activation()
        t = math.tanh(_SQRT_2_OVER_PI * (v + 0.044715 * v**3))
        return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * _SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * v * v)

    lo, hi, ratio = 1.0, 2.0, (math.sqrt(5.0) - 1.0) / 2.0
    while hi - lo > 1e-12:                       # the slope rises, then falls, on [1, 2]: one maximum
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        lo, hi = (a, hi) if slope(a) < slope(b) else (lo, b)
    return slope((lo + hi) / 2.0)


def activation_fn(name: str, x: np.ndarray, negative_slope: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """(output, derivative) of an activation on an already-checked array: used by other topics."""
    t = activation(name, x, negative_slope=negative_slope)
    return np.asarray(t["output"], dtype=np.float64), np.asarray(t["derivative"], dtype=np.float64)


# ---------------------------------------------- backward and derivatives from values (ECF rules)

def activation_backward(grad_output, x, name="relu", negative_slope=0.01) -> np.ndarray:
    """∂L/∂x = ∂L/∂φ(x) ⊙ φ'(x) for an element-wise activation φ at pre-activation x."""
    g, x_ = array("grad_output", grad_output), array("x", x)
    same_shape("grad_output", g, x_, "x")
    return g * activation_fn(name, x_, number("negative_slope", negative_slope))[1]


def sigmoid_derivative_from_output(output) -> np.ndarray:
    """σ'(x) = σ(x)(1 − σ(x)) from the value s = σ(x)."""
    s = array("output", output)
    return s * (1.0 - s)


def tanh_derivative_from_output(output) -> np.ndarray:
    """tanh'(x) = 1 − tanh²(x) from the value t = tanh(x)."""
    t = array("output", output)
    return 1.0 - t**2
