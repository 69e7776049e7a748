"""Position information: sinusoidal encodings and the relative-position property of their dot product,
rotary embeddings (RoPE) and the attention score they give."""
from __future__ import annotations

import math

import numpy as np

from examprep.engine._core import Trace, array, choice, integer, number, vector
from examprep.errors import ParamError, ShapeError


def _positions(position, name: str = "position") -> tuple[np.ndarray, bool]:
    if isinstance(position, (list, tuple)):
        if not position:
            raise ShapeError(f"{name}: expected an integer or a non-empty list of integers")
        return np.array([integer(f"{name}[{i}]", p, 0) for i, p in enumerate(position)], dtype=np.float64), False
    return np.array([integer(name, position, 0)], dtype=np.float64), True


MAX_D_MODEL = 100_000      # the engine's encodings are arrays of d_model entries (GPT-3's d_model is 12,288)


def _d_model(value: int, minimum: int) -> int:
    """d_model as an integer ≥ ``minimum`` and at most MAX_D_MODEL: 100000000 ran for minutes and took
    gigabytes before any answer."""
    d = integer("d_model", value, minimum)
    if d > MAX_D_MODEL:
        raise ParamError(f"d_model: at most {MAX_D_MODEL:,} (the engine computes hand-sized problems), got {d:,}")
    return d


def positional_encoding(position, d_model: int, *, base: float = 10000.0) -> Trace:
    """Sinusoidal positional encoding (Vaswani et al. 2017, §3.5).

    PE(pos, 2i) = sin(pos / base^{2i/d_model}),  PE(pos, 2i+1) = cos(pos / base^{2i/d_model}).
    Shapes: position an int → encoding (d_model,); a list of P ints → (P, d_model).
    An odd d_model ends with a sine.
    Returns frequencies (base^{−2i/d_model}, one per pair), angles, encoding.
    Raises ParamError for a negative position, d_model < 1 or base ≤ 0.
    """
    pos, single = _positions(position)
    d = _d_model(d_model, 1)
    base = number("base", base)
    if base <= 0:
        raise ParamError(f"base: expected a positive number, got {base:g}")
    i = np.arange((d + 1) // 2)
    freq = base ** (-2.0 * i / d)
    angles = pos[:, None] * freq[None, :]
    enc = np.empty((pos.shape[0], d))
    enc[:, 0::2] = np.sin(angles)
    enc[:, 1::2] = np.cos(angles[:, : d // 2])
    if single:
        return Trace(frequencies=freq, angles=angles[0], encoding=enc[0])
    return Trace(frequencies=freq, angles=angles, encoding=enc)


def rope(x, position, *, base: float = 10000.0, style: str = "interleaved") -> Trace:
    """Rotary position embedding (Su et al. 2021, RoFormer, eq. 34) of a vector or of rows.

    Pair j of d/2 is rotated by the angle position·θ_j with θ_j = base^{−2j/d}:
      (a, b) → (a cos − b sin, a sin + b cos).
    style: "interleaved" pairs (x_0, x_1), (x_2, x_3), …  (the RoFormer paper; GPT-J);
           "rotate-half" pairs (x_j, x_{j+d/2})           (GPT-NeoX, Llama's rotate_half).
    Shapes: x (d,) with position an int, or x (n, d) with position a list of n ints; d even.
    Returns frequencies θ, angles, cos, sin, output.
    Raises ShapeError for an odd d or a position count that does not match the rows.
    """
    style = choice("style", style, ("interleaved", "rotate-half"))
    x_arr = array("x", x, (1, 2))
    d = x_arr.shape[-1]
    if d % 2:
        raise ShapeError(f"x: RoPE rotates pairs, so the length must be even, got {d}")
    base = number("base", base)
    if base <= 0:
        raise ParamError(f"base: expected a positive number, got {base:g}")
    pos, single = _positions(position)
    rows = x_arr[None, :] if x_arr.ndim == 1 else x_arr
    if x_arr.ndim == 1 and not single:
        raise ShapeError("position: a single vector x takes one integer position")
    if x_arr.ndim == 2:
        if single:
            raise ShapeError(f"position: x has {rows.shape[0]} rows, so give a list of {rows.shape[0]} positions")
        if pos.shape[0] != rows.shape[0]:
            raise ShapeError(f"position: expected {rows.shape[0]} positions (one per row of x), got {pos.shape[0]}")
    theta = base ** (-2.0 * np.arange(d // 2) / d)
    angles = pos[:, None] * theta[None, :]
    cos, sin = np.cos(angles), np.sin(angles)
    if style == "interleaved":
        a, b = rows[:, 0::2], rows[:, 1::2]
    else:
        a, b = rows[:, : d // 2], rows[:, d // 2:]
    ra, rb = a * cos - b * sin, a * sin + b * cos
    out = np.empty_like(rows)
    if style == "interleaved":
        out[:, 0::2], out[:, 1::2] = ra, rb
    else:
        out[:, : d // 2], out[:, d // 2:] = ra, rb
    if x_arr.ndim == 1:
        return Trace(frequencies=theta, angles=angles[0], cos=cos[0], sin=sin[0], output=out[0])
    return Trace(frequencies=theta, angles=angles, cos=cos, sin=sin, output=out)


def rope_score(query, key, position_query: int, position_key: int, *, base: float = 10000.0,
               style: str = "interleaved") -> Trace:
    """The attention score of a query and a key after rotary position embedding (Su et al. 2021, §3.4.2).

    q' = RoPE(q, m), k' = RoPE(k, n) (engine.rope; style "interleaved" or "rotate-half"), score = q'·k'.
    RoPE makes the score depend on the positions only through the offset m − n:
    q'·k' = Σ_j Re[(q_{2j} + i q_{2j+1}) (k_{2j} − i k_{2j+1}) e^{i(m−n)θ_j}] (interleaved pairs).
    Shapes: query and key (d,), d even. Positions are integers ≥ 0.
    Returns query_rotated, key_rotated, score, unrotated_score (q·k), offset (m − n).
    Raises ShapeError for vectors of different or odd length.
    """
    q = vector("query", query)
    k = vector("key", key, q.shape[0])
    rq = rope(q, position_query, base=base, style=style)
    rk = rope(k, position_key, base=base, style=style)
    return Trace(query_rotated=rq.output, key_rotated=rk.output, score=float(rq.output @ rk.output),
                 unrotated_score=float(q @ k), offset=integer("position_query", position_query, 0)
                 - integer("position_key", position_key, 0), angles_query=rq.angles, angles_key=rk.angles)


def positional_encoding_relative(position: int, offset: int, d_model: int, *, base: float = 10000.0) -> Trace:
    """Sinusoidal encodings at positions p and p + k, and why their dot product depends on k only.

    With ω_i = base^{−2i/d_model} (Vaswani et al. 2017, §3.5), sin a sin b + cos a cos b = cos(a − b) gives
      PE(p)·PE(p + k) = Σ_i cos(k ω_i)   — the same for every p;
    and PE(p + k) is PE(p) with each (sin, cos) pair rotated by the angle k ω_i. The wavelength of pair i
    is 2π/ω_i, from 2π (pair 0) to 2π·base^{(d−2)/d}.
    Shapes: encoding, shifted (d_model,); frequencies, wavelengths, pair_terms (d_model/2,).
    Returns frequencies, wavelengths, encoding, shifted, dot, pair_terms (cos(k ω_i)).
    Raises ParamError for an odd d_model (the last lone sine breaks the identity), a negative position
    or p + k < 0.
    """
    p = integer("position", position, 0)
    k = integer("offset", offset)
    d = _d_model(d_model, 2)
    if d % 2:
        raise ParamError(f"d_model: the relative-position identity needs whole (sin, cos) pairs, so an even d_model, got {d}")
    if p + k < 0:
        raise ParamError(f"offset: position + offset must be ≥ 0, got {p} + {k}")
    pe = positional_encoding([p, p + k], d, base=base)
    freq = pe.frequencies
    return Trace(frequencies=freq, wavelengths=2 * math.pi / freq, encoding=pe.encoding[0], shifted=pe.encoding[1],
                 dot=float(pe.encoding[0] @ pe.encoding[1]), pair_terms=np.cos(k * freq))
