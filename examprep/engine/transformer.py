"""Transformer bookkeeping and the attention variants the Transformer generators need.

Multi-head shapes and cost, cross-attention with projections, the causal mask and its alignment,
teacher forcing's right shift, RoPE scores, the relative-position property of sinusoidal
encodings, LoRA's training memory and training time from a compute budget.
Pure functions: no I/O, no randomness, no formatting; each returns a :class:`Trace`.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from examprep.engine._core import Trace, array, choice, integer, matrix, number, vector
from examprep.engine.attention import attention, masked_softmax
from examprep.engine.counts import lora, scaling_law
from examprep.engine.positions import positional_encoding, rope
from examprep.errors import ParamError, ShapeError

LAYOUTS = ("x-w", "linear")
ALIGNMENTS = ("top-left", "bottom-right")
OPTIMIZERS = {"adam": 2, "sgd-momentum": 1, "sgd": 0}     # optimizer states per trained value


def multi_head_shapes(n: int, d_model: int, num_heads: int, *, m: int | None = None, batch: int = 1,
                      bytes_per_value: int = 4) -> Trace:
    """Shapes and multiply-add counts through one multi-head attention layer (Vaswani et al. 2017, §3.2.2).

    n queries attend m keys (m = n for self-attention; in cross-attention n is the decoder length and
    m the encoder length). Each of the num_heads heads has d_k = d_v = d_model / num_heads.
    Shapes (per sequence, rows × columns): Q_i (n, d_k), K_i (m, d_k), V_i (m, d_v), scores
    Q_i K_iᵀ (n, m), head output (n, d_v), concatenation and output (n, d_model).
    Counts, for a batch of ``batch`` sequences (a multiply-add is one multiplication and one addition;
    FLOPs = 2 × multiply-adds):
      score_macs_per_head = n·m·d_k          (Q_i K_iᵀ of one head, one sequence)
      score_macs          = batch·h·n·m·d_k = batch·n·m·d_model    — O(n²·d) for self-attention
      weighted_sum_macs   = batch·h·n·m·d_v  (α_i V_i)
      projection_macs     = batch·(2n + 2m)·d_model²   (W_Q and W_O on n rows, W_K and W_V on m rows)
      score_entries       = batch·h·n·m, score_bytes = score_entries·bytes_per_value (memory of the
                            attention matrices, e.g. 4 bytes in float32), score_mib = score_bytes / 2²⁰.
    Returns d_k, d_v, the shapes as [rows, columns] lists, the counts above (ints).
    Raises ParamError for sizes < 1 or num_heads not dividing d_model.
    """
    n = integer("n", n, 1)
    m = n if m is None else integer("m", m, 1)
    d = integer("d_model", d_model, 1)
    h = integer("num_heads", num_heads, 1)
    batch = integer("batch", batch, 1)
    nbytes = integer("bytes_per_value", bytes_per_value, 1)
    if d % h:
        raise ParamError(f"num_heads: must divide d_model ({d} is not divisible by {h})")
    dk = d // h
    per_head = n * m * dk
    entries = batch * h * n * m
    return Trace(d_k=dk, d_v=dk, query_shape=[n, dk], key_shape=[m, dk], value_shape=[m, dk], scores_shape=[n, m],
                 head_output_shape=[n, dk], concat_shape=[n, d], output_shape=[n, d],
                 score_macs_per_head=per_head, score_macs=batch * h * per_head, weighted_sum_macs=batch * h * per_head,
                 projection_macs=batch * (2 * n + 2 * m) * d * d, score_entries=entries, score_bytes=entries * nbytes,
                 score_mib=entries * nbytes / 2 ** 20)


def _project(name: str, x: np.ndarray, w: Any, layout: str) -> np.ndarray:
    """x (rows, d_in) times the projection ``name``: x W (W d_in×d_out) or x Wᵀ (W d_out×d_in)."""
    if layout == "x-w":
        W = matrix(name, w, (x.shape[1], None))
        return x @ W
    W = matrix(name, w, (None, x.shape[1]))
    return x @ W.T


def cross_attention(decoder_states, encoder_output, w_query, w_key, w_value, *, mask=None, scale=None,
                    layout: str = "x-w") -> Trace:
    """Single-head cross-attention of an encoder-decoder Transformer (Vaswani et al. 2017, §3.2.3).

    The queries come from the decoder, the keys and values from the encoder output:
      layout "x-w":    Q = X_dec W_Q, K = Z W_K, V = Z W_V with W_Q (d_dec, d_k), W_K (d_enc, d_k),
                       W_V (d_enc, d_v)  — the paper's W^Q ∈ ℝ^{d_model×d_k};
      layout "linear": Q = X_dec W_Qᵀ, … with W_Q (d_k, d_dec), as torch.nn.Linear stores its weight.
    Then O = softmax(Q Kᵀ · scale) V with scale 1/√d_k unless given (engine.attention).
    Shapes: decoder_states (n, d_dec), encoder_output (m, d_enc); mask (n, m) of 0/1, 1 = may attend
    (e.g. 0 in the columns of padded encoder tokens); output (n, d_v), weights (n, m).
    Returns query, key, value and everything engine.attention returns (scores before scaling, scale,
    scaled_scores, allowed, masked_scores, weights, output).
    Raises ShapeError naming the projection whose shape does not fit, ParamError for a bad layout.
    """
    layout = choice("layout", layout, LAYOUTS)
    x = matrix("decoder_states", decoder_states)
    z = matrix("encoder_output", encoder_output)
    q = _project("w_query", x, w_query, layout)
    k = _project("w_key", z, w_key, layout)
    v = _project("w_value", z, w_value, layout)
    if q.shape[1] != k.shape[1]:
        raise ShapeError(f"w_key: projects to d_k = {k.shape[1]}, but w_query projects to {q.shape[1]}; they must agree")
    att = attention(q, k, v, mask=mask, scale=scale)
    return Trace(query=q, key=k, value=v, **att)


def causal_mask(n: int, m: int | None = None, *, alignment: str = "top-left") -> np.ndarray:
    """The (n, m) boolean causal mask, True = may attend.

    alignment "top-left":     query i may attend key j ≤ i          (torch's is_causal, causal_upper_left);
              "bottom-right": query i may attend key j ≤ i + (m − n) (causal_lower_right; FlashAttention) —
                              the last query sees every key, as when decoding with a key/value cache.
    Equal for n = m. Raises ParamError for sizes < 1.
    """
    n = integer("n", n, 1)
    m = n if m is None else integer("m", m, 1)
    alignment = choice("alignment", alignment, ALIGNMENTS)
    return np.tri(n, m, k=0 if alignment == "top-left" else m - n, dtype=bool)


def causal_softmax(scores, *, alignment: str = "top-left", scale: float = 1.0) -> Trace:
    """Causally masked softmax of a score matrix: the decoder's masked self-attention weights.

    Shapes: scores (n, m) (rows queries, columns keys; a vector is one row). The scores are multiplied
    by ``scale``, set to −∞ where the causal mask forbids (see causal_mask for ``alignment``), and
    softmaxed over each row; masked weights are exactly 0 and a row with nothing allowed gets zeros.
    Returns allowed (0/1 ints), masked_scores (−∞ where masked), weights, masked_count, allowed_count.
    Raises ShapeError for a non-matrix, ParamError for a bad alignment or scale.
    """
    arr = array("scores", scores, (1, 2))
    arr = arr[None, :] if arr.ndim == 1 else arr
    n, m = arr.shape
    allowed = causal_mask(n, m, alignment=alignment)
    scaled = arr * number("scale", scale)
    return Trace(allowed=allowed.astype(int), masked_scores=np.where(allowed, scaled, -np.inf),
                 weights=masked_softmax(scaled, allowed), masked_count=int((~allowed).sum()),
                 allowed_count=int(allowed.sum()))


def _token(name: str, value: Any) -> str | int:
    if isinstance(value, bool) or not isinstance(value, (str, numbers.Integral)):
        raise ParamError(f"{name}: expected a token (a string or an integer id), got {value!r}")
    return value if isinstance(value, str) else int(value)


def teacher_forcing(tokens, *, bos: Any = "<go>", eos: Any = None) -> Trace:
    """Decoder input and labels for teacher forcing with the right shift (Vaswani et al. 2017, §3.1:
    "the output embeddings are offset by one position").

    Without eos: decoder_input = [bos, y_1, …, y_{T−1}], labels = [y_1, …, y_T]  (length T);
    with eos:    decoder_input = [bos, y_1, …, y_T],     labels = [y_1, …, y_T, eos] (length T + 1).
    Position t reads decoder_input[0..t] (the causal mask hides the rest) and is trained to predict
    labels[t], so no position sees the token it must predict.
    tokens: a non-empty list of strings or integer ids; bos/eos the same kind of token.
    Returns decoder_input, labels, length.
    Raises ParamError for an empty list or a token that is neither a string nor an integer.
    """
    if not isinstance(tokens, (list, tuple)) or not tokens:
        raise ParamError(f"tokens: expected a non-empty list of tokens, got {tokens!r}")
    toks = [_token(f"tokens[{i}]", t) for i, t in enumerate(tokens)]
    bos = _token("bos", bos)
    if eos is None:
        inp, labels = [bos] + toks[:-1], toks
    else:
        inp, labels = [bos] + toks, toks + [_token("eos", eos)]
    return Trace(decoder_input=inp, labels=labels, length=len(labels))


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
    d = integer("d_model", d_model, 2)
    if d % 2:
        raise ParamError(f"d_model: the relative-position identity needs whole (sin, cos) pairs, so an even d_model, got {d}")
    if p + k < 0:
        raise ParamError(f"offset: position + offset must be ≥ 0, got {p} + {k}")
    pe = positional_encoding([p, p + k], d, base=base)
    freq = pe.frequencies
    return Trace(frequencies=freq, wavelengths=2 * math.pi / freq, encoding=pe.encoding[0], shifted=pe.encoding[1],
                 dot=float(pe.encoding[0] @ pe.encoding[1]), pair_terms=np.cos(k * freq))


def lora_memory(d: int, k: int, r: int, *, num_matrices: int = 1, bytes_per_value: int = 4,
                optimizer: str = "adam") -> Trace:
    """Training memory that LoRA saves on gradients and optimizer states (Hu et al. 2021, §4.2).

    Full fine-tuning keeps, for every trained value, its gradient and the optimizer's states (Adam: two
    moments; SGD with momentum: one; plain SGD: none); LoRA keeps them only for B (d×r) and A (r×k).
    values_per_param = 1 + states; bytes per trained parameter = bytes_per_value · values_per_param
    (float32: 4 bytes). The frozen weights and the activations are needed in both cases and are not counted.
    Returns trainable_params, full_params, fraction (engine.lora), values_per_param,
    full_training_bytes, lora_training_bytes, saved_bytes and saved_mib (saved_bytes / 2²⁰).
    Raises ParamError for sizes < 1 or an unknown optimizer.
    """
    base = lora(d, k, r, num_matrices=num_matrices)
    opt = choice("optimizer", optimizer, tuple(OPTIMIZERS))
    nbytes = integer("bytes_per_value", bytes_per_value, 1)
    per = 1 + OPTIMIZERS[opt]
    full = base.full_params * per * nbytes
    ours = base.trainable_params * per * nbytes
    return Trace(trainable_params=base.trainable_params, full_params=base.full_params, fraction=base.fraction,
                 values_per_param=per, bytes_per_param=per * nbytes, full_training_bytes=full,
                 lora_training_bytes=ours, saved_bytes=full - ours, saved_mib=(full - ours) / 2 ** 20)


def training_time(*, compute=None, params=None, tokens=None, num_gpus: int = 1, peak_flops: float,
                  utilization: float = 1.0) -> Trace:
    """Wall-clock training time from a compute budget (Kaplan et al. 2020: C = 6·N·D FLOPs).

    compute C in FLOPs, or params N and tokens D (then C = 6ND, engine.scaling_law); num_gpus
    accelerators of peak_flops FLOP/s each, used at a fraction ``utilization`` of their peak (model
    FLOPs utilisation, MFU; 1 = peak, 0.3–0.5 is typical).
    throughput = num_gpus · peak_flops · utilization (FLOP/s); seconds = C / throughput.
    Returns compute, throughput, seconds, hours, days.
    Raises ParamError when compute is given together with params or tokens, when neither is complete,
    or for values out of range (utilization must be in (0, 1]).
    """
    if compute is not None and (params is not None or tokens is not None):
        raise ParamError("compute: give compute, or params and tokens (C = 6ND), not both")
    if compute is None:
        if params is None or tokens is None:
            raise ParamError("params, tokens: give both (C = 6ND), or compute")
        c = scaling_law(params=params, tokens=tokens).compute
    else:
        c = number("compute", compute)
        if c <= 0:
            raise ParamError(f"compute: expected a positive number of FLOPs, got {c:g}")
    g = integer("num_gpus", num_gpus, 1)
    peak = number("peak_flops", peak_flops)
    if peak <= 0:
        raise ParamError(f"peak_flops: expected a positive number of FLOP/s, got {peak:g}")
    u = number("utilization", utilization)
    if not 0 < u <= 1:
        raise ParamError(f"utilization: expected a fraction in (0, 1], got {u:g}")
    throughput = g * peak * u
    seconds = c / throughput
    return Trace(compute=c, throughput=throughput, seconds=seconds, hours=seconds / 3600, days=seconds / 86400)


__all__ = ["ALIGNMENTS", "LAYOUTS", "OPTIMIZERS", "causal_mask", "causal_softmax", "cross_attention",
           "lora_memory", "multi_head_shapes", "positional_encoding_relative", "rope_score", "teacher_forcing",
           "training_time"]
