"""Shared helpers of the engine: the Trace result type and argument checks.

Every check raises :class:`~examprep.errors.ParamError` or :class:`~examprep.errors.ShapeError`
with a one-line message naming the argument, what was expected and what was given.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from examprep.errors import ParamError, ShapeError


class Trace(dict):
    """An engine result: the answer values and the intermediate values a worked solution shows.

    A plain ordered dict (name → float, int or ndarray) that also allows attribute access
    (``trace.h_new``), so callers read it like a named tuple.
    """

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {shape_str(value.shape)}"
    if isinstance(value, (list, tuple)):
        try:
            return f"an array of shape {shape_str(np.asarray(value, dtype=float).shape)}"
        except (ValueError, TypeError):
            return "a ragged or non-numeric list"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def shape_str(shape: tuple[int, ...]) -> str:
    return "×".join(str(d) for d in shape) if shape else "scalar"


def all_finite(arr: np.ndarray) -> bool:
    """True where every entry of a numeric array is finite. A small array is summed in plain Python
    (a finite sum needs finite entries; a sum that overflows falls back to the entry-wise check):
    cheaper than np.isfinite(arr).all() on the engine's 2×2…4×4 values."""
    if arr.size <= 64 and math.isfinite(sum(arr.ravel().tolist())):
        return True
    return bool(np.isfinite(arr).all())


def array(name: str, value: Any, ndim: int | tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` as a finite float64 array; ``ndim`` restricts the number of dimensions."""
    if type(value) is np.ndarray and value.dtype == np.float64:     # already one (what np.asarray returns)
        arr = value
    else:
        if isinstance(value, (bool, np.bool_)) or isinstance(value, str):
            raise ParamError(f"{name}: expected numbers, got {_describe(value)}")
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (ValueError, TypeError):
            raise ParamError(f"{name}: expected a number or a rectangular array of numbers (rows of equal "
                             f"length), got {_describe(value)}") from None
        if arr.dtype == object:
            raise ParamError(f"{name}: expected a rectangular array of numbers, got {_describe(value)}")
    if ndim is not None and (arr.ndim != ndim if type(ndim) is int else arr.ndim not in ndim):
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        want = " or ".join({0: "a number", 1: "a vector", 2: "a matrix"}.get(d, f"{d}-D array") for d in allowed)
        raise ShapeError(f"{name}: expected {want}, got {_describe(arr)}")
    if arr.size == 0:
        raise ShapeError(f"{name}: expected a non-empty array, got an empty one")
    if not all_finite(arr):
        raise ParamError(f"{name}: every value must be finite, got NaN or infinity")
    return arr


def vector(name: str, value: Any, length: int | None = None) -> np.ndarray:
    arr = array(name, value, 1)
    if length is not None and arr.shape[0] != length:
        raise ShapeError(f"{name}: expected a vector of length {length}, got length {arr.shape[0]}")
    return arr


def matrix(name: str, value: Any, shape: tuple[int | None, int | None] | None = None) -> np.ndarray:
    arr = array(name, value, 2)
    if shape is not None:
        for got, want in zip(arr.shape, shape):
            if want is not None and got != want:
                w = "×".join("?" if s is None else str(s) for s in shape)
                raise ShapeError(f"{name}: expected shape {w}, got {shape_str(arr.shape)}")
    return arr


def number(name: str, value: Any) -> float:
    if type(value) is float or type(value) is int:      # the common case, before the slower ABC checks
        if math.isfinite(value):
            return float(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ParamError(f"{name}: expected a number, got {_describe(value)}")
    out = float(value)
    if not math.isfinite(out):
        raise ParamError(f"{name}: expected a finite number, got {value!r}")
    return out


def integer(name: str, value: Any, minimum: int | None = None) -> int:
    """An int (a float with an integral value is accepted: JSON writers emit 3.0)."""
    if type(value) is int and (minimum is None or value >= minimum):    # the common case, before the ABC checks
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ParamError(f"{name}: expected an integer, got {_describe(value)}")
    if isinstance(value, numbers.Integral):
        out = int(value)
    else:
        if not math.isfinite(value) or value != int(value):
            raise ParamError(f"{name}: expected an integer, got {value!r}")
        if abs(value) > 2 ** 53:          # 1e100 is 10000000000000000159…: not the integer the user wrote
            raise ParamError(f"{name}: expected an integer, got {value!r} (a float this large is not an exact "
                             "integer: write its digits)")
        out = int(value)
    if minimum is not None and out < minimum:
        raise ParamError(f"{name}: expected an integer ≥ {minimum}, got {out}")
    return out


def int_tuple(name: str, value: Any, n: int, minimum: int | None = None) -> tuple[int, ...]:
    """An int broadcast to ``n`` dimensions, or a list of exactly ``n`` ints."""
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ShapeError(f"{name}: expected one integer or a list of {n}, got a list of {len(value)}")
        return tuple(integer(f"{name}[{i}]", v, minimum) for i, v in enumerate(value))
    return (integer(name, value, minimum),) * n


def choice(name: str, value: Any, options: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in options:
        raise ParamError(f"{name}: expected one of {', '.join(repr(o) for o in options)}, got {_describe(value)}")
    return value


def boolean(name: str, value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise ParamError(f"{name}: expected true or false, got {_describe(value)}")


def same_shape(name: str, a: np.ndarray, ref: np.ndarray, ref_name: str) -> None:
    """Raise ShapeError naming ``name`` unless ``a`` has the shape of ``ref`` (named ``ref_name``)."""
    if a.shape != ref.shape:
        raise ShapeError(f"{name}: expected the shape of {ref_name} "
                         f"{'×'.join(map(str, ref.shape)) or 'scalar'}, got {'×'.join(map(str, a.shape)) or 'scalar'}")


MAX_PADDED = 10_000_000     # entries of a padded input (80 MB of float64): far beyond any problem by hand


def pad(x: np.ndarray, widths: Any, value: float = 0) -> np.ndarray:
    """``x`` with ``value`` added around it: ``widths`` one (before, after) per axis, as
    ``np.pad(x, widths, constant_values=value)`` gives it (same values, same dtype), built as one
    filled array and one slice assignment — np.pad's generality costs ~20 µs a call on the engine's
    tiny arrays."""
    shape, where = [], []
    for n, (before, after) in zip(x.shape, widths):
        shape.append(before + n + after)
        where.append(slice(before, before + n))
    if math.prod(shape) > MAX_PADDED:
        raise ParamError(f"padding: the padded input would be {'×'.join(map(str, shape))} "
                         f"({math.prod(shape):,} entries); the engine computes hand-sized problems "
                         f"(at most {MAX_PADDED:,} entries)")
    out = np.full(shape, value, dtype=x.dtype)
    out[tuple(where)] = x
    return out


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Logistic function, stable for large |x| (no overflow warning)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    ex = np.exp(x[~pos])
    out[~pos] = ex / (1.0 + ex)
    return out
