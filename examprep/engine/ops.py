"""Generic arithmetic that ECF rules chain between parts (error carried forward).

Each is a pure function of arrays or numbers with its arguments checked, so a grader can recompute a
later part from a student's own earlier answer (e.g. the attention output from the student's weights,
a product of the student's local derivatives). The formulas of a subject (a GRU blend, a layer norm
from given statistics) live in that subject's module; examprep.ecf names them all in one table.
"""
from __future__ import annotations

import numpy as np

from examprep.engine._core import array, integer, number, same_shape
from examprep.errors import ParamError, ShapeError


def matmul(a, b) -> np.ndarray:
    """a @ b (shapes must chain)."""
    A, B = array("a", a, (1, 2)), array("b", b, (1, 2))
    if A.shape[-1] != B.shape[0]:
        raise ShapeError(f"b: expected {A.shape[-1]} rows to multiply, got {B.shape[0]}")
    return A @ B


def scale(x, factor) -> np.ndarray:
    """factor · x."""
    return array("x", x) * number("factor", factor)


def add(a, b) -> np.ndarray:
    """a + b, element-wise (same shapes)."""
    A, B = array("a", a), array("b", b)
    same_shape("b", B, A, "a")
    return A + B


def subtract(a, b) -> np.ndarray:
    """a − b, element-wise (same shapes): e.g. δ = y − t for L = ½‖y − t‖²."""
    A, B = array("a", a), array("b", b)
    same_shape("b", B, A, "a")
    return A - B


def multiply(a, b) -> np.ndarray:
    """a ⊙ b, element-wise (same shapes)."""
    A, B = array("a", a), array("b", b)
    same_shape("b", B, A, "a")
    return A * B


def product(values) -> float:
    """Π of all entries: a chain of local derivatives."""
    return float(np.prod(array("values", values)))


def power(base, exponent) -> float:
    """base ** exponent (a per-step factor compounded over many steps)."""
    return float(number("base", base) ** number("exponent", exponent))


def divide(a, b) -> float:
    """a / b of two numbers: a growth factor or a fraction (b ≠ 0)."""
    den = number("b", b)
    if den == 0:
        raise ParamError("b: cannot divide by zero")
    return number("a", a) / den


def dot(a, b) -> float:
    """a · b of two vectors of the same length."""
    A, B = array("a", a, 1), array("b", b, 1)
    if A.shape != B.shape:
        raise ShapeError(f"b: expected a vector of length {A.shape[0]}, got length {B.shape[0]}")
    return float(A @ B)


def matmul_bt(a, b) -> np.ndarray:
    """a @ bᵀ: the raw score matrix Q Kᵀ from Q (n×d) and K (m×d)."""
    A, B = array("a", a, 2), array("b", b, 2)
    if A.shape[1] != B.shape[1]:
        raise ShapeError(f"b: expected {A.shape[1]} columns (as a), got {B.shape[1]}")
    return A @ B.T


def int_product(values) -> int:
    """Π of integer counts (sizes, heads): exact, never rounded through floats."""
    vals = values if isinstance(values, (list, tuple)) else [values]
    out = 1
    for i, v in enumerate(vals):
        out *= integer(f"values[{i}]", v)
    return out


def total(values) -> float:
    """Σ of the given numbers (parameter counts of the parts of a layer)."""
    return float(np.sum(array("values", values, (0, 1))))


def difference_times(a, b, factor=1.0, divisor=1.0) -> float:
    """(a − b) · factor / divisor: e.g. parameters saved × bytes per parameter / 2²⁰ bytes per MiB."""
    den = number("divisor", divisor)
    if den == 0:
        raise ParamError("divisor: cannot divide by zero")
    return (number("a", a) - number("b", b)) * number("factor", factor) / den
