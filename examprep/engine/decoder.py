"""The Transformer decoder's attention: cross-attention (queries from the decoder, keys and values
from the encoder output), the causal mask and its alignment, and teacher forcing's right shift."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from examprep.engine._core import Trace, array, choice, integer, matrix, number
from examprep.engine.attention import attention, masked_softmax
from examprep.errors import ParamError, ShapeError

LAYOUTS = ("x-w", "linear")
ALIGNMENTS = ("top-left", "bottom-right")


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
