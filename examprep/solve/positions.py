"""Solve topics of position information: positional-encoding, rope, rope-score, positional-encoding-relative."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine import ops
from examprep.engine._core import Trace
from examprep.solve.contract import Ecf, Mistake, Param, Ref, Step, Topic

_STYLES = {"interleaved": "pairs (x0,x1),(x2,x3),… (RoFormer)", "rotate-half": "pairs (x_j, x_{j+d/2}) (GPT-NeoX, Llama)"}


class PositionalEncodingSteps(NamedTuple):
    frequencies: Step
    angles: Step
    encoding: Step


def positional_encoding_steps(p: dict[str, Any], t: Trace) -> PositionalEncodingSteps:
    return PositionalEncodingSteps(
        Step("Frequencies", r"\omega_i = \text{base}^{-2i/d_{\text{model}}}", {"frequencies": t.frequencies}),
        Step("Angles", r"\text{pos} \cdot \omega_i", {"angles": t.angles}),
        Step("Sine at even indices, cosine at odd",
             r"PE_{(pos, 2i)} = \sin(pos\,\omega_i),\ PE_{(pos, 2i+1)} = \cos(pos\,\omega_i)",
             {"encoding": t.encoding}))


def _swap_pairs(v: np.ndarray) -> np.ndarray:
    """cos at even indices and sin at odd: each (sin, cos) pair swapped."""
    out = v.copy()
    out[..., 0::2], out[..., 1::2] = v[..., 1::2], v[..., 0::2]
    return out


def _concatenated(v: np.ndarray) -> np.ndarray:
    """[sin ω₀p, sin ω₁p, …, cos ω₀p, cos ω₁p, …]: the concatenated layout of tensor2tensor and fairseq."""
    return np.concatenate([v[..., 0::2], v[..., 1::2]], axis=-1)


def _encoding_in_degrees(p: dict[str, Any], t: Trace) -> np.ndarray:
    deg = np.empty_like(t.encoding)
    deg[..., 0::2], deg[..., 1::2] = np.sin(np.deg2rad(t.angles)), np.cos(np.deg2rad(t.angles))
    return deg


def _frequencies_without_the_2(p: dict[str, Any], t: Trace) -> np.ndarray:
    """ω_i = base^(−i/d): the frequencies of an encoding twice as wide, the first d/2 of them."""
    return engine.positional_encoding(p["position"], 2 * p["d_model"], base=p["base"]).frequencies[: len(t.frequencies)]


POSITIONAL_ENCODING_MISTAKES = {
    "frequencies": (   # a worked-step value the built-in problems ask
        Mistake("exponent-i-over-d", why="ω_i = 10000^(−2i/d): keep the 2.", compute=_frequencies_without_the_2),
        Mistake("dimension-index", why="i counts pairs, not dimensions: dimensions 2i and 2i + 1 share ω_i = 10000^(−2i/d).",
                compute=lambda p, t: t.frequencies ** 2),           # the exponent −2·(2i)/d of dimension 2i
        Mistake("inverted", why="The exponent is negative: the frequencies fall.", compute=lambda p, t: 1 / t.frequencies),
    ),
    "encoding": (
        Mistake("swapped-sin-cos", why="Sine goes to the even indices 2i, cosine to the odd 2i + 1.",
                compute=lambda p, t: _swap_pairs(t.encoding)),
        Mistake("degrees", why="The angles pos·ω_i are in radians.", compute=_encoding_in_degrees),
        Mistake("concatenated", why="That is the concatenated [sin …, cos …] layout (tensor2tensor); the paper interleaves "
                                    "sin and cos.", compute=lambda p, t: _concatenated(t.encoding)),
        Mistake("no-frequencies", base=1, why="Each pair has its own frequency ω_i = 10000^(−2i/d), not 1."),
    ),
}

POSITIONAL_ENCODING_ECF = {"encoding": (Ecf("solve:positional-encoding", lambda p, t: p, "encoding"),)}


POSITIONAL_ENCODING = Topic(
    "positional-encoding", "Sinusoidal positional encoding",
    (Param("position", "int or list of ints"), Param("d_model", "int"), Param("base", "number", 10000)),
    ("encoding",),
    lambda p: engine.positional_encoding(p["position"], p["d_model"], base=p["base"]),
    positional_encoding_steps,
    lambda p: {"layout": "sin at even indices 2i, cos at odd 2i+1 (Vaswani et al. 2017)"},
    mistakes=POSITIONAL_ENCODING_MISTAKES,
    ecf=POSITIONAL_ENCODING_ECF,
)


class RopeSteps(NamedTuple):
    frequencies: Step
    angles: Step                   # with their cosines and sines
    rotate: Step


def rope_steps(p: dict[str, Any], t: Trace) -> RopeSteps:
    return RopeSteps(
        Step("Frequencies", r"\theta_j = \text{base}^{-2j/d}", {"frequencies": t.frequencies}),
        Step("Angles, cosines and sines", r"m\,\theta_j", {"angles": t.angles, "cos": t.cos, "sin": t.sin}),
        Step("Rotate each pair",
             r"(a, b) \mapsto (a\cos m\theta_j - b\sin m\theta_j,\ a\sin m\theta_j + b\cos m\theta_j)",
             {"output": t.output}))


def _mirror(x: np.ndarray, style: str) -> np.ndarray:
    """+1, with −1 on each pair's second coordinate (the mirror image that turns a rotation around)."""
    flip = np.ones_like(x)
    if style == "interleaved":
        flip[..., 1::2] = -1
    else:
        flip[..., x.shape[-1] // 2:] = -1
    return flip


def clockwise(x: Any, position: Any, base: float = 10000.0, style: str = "interleaved") -> np.ndarray:
    """RoPE with every pair rotated the wrong way (by −mθ): the engine's rotation of the pair-wise mirror image,
    mirrored back."""
    x = np.asarray(x, dtype=float)
    flip = _mirror(x, style)
    return flip * engine.rope(flip * x, position, base=base, style=style).output


def _rope_in_degrees(p: dict[str, Any], t: Trace) -> np.ndarray:
    """Each pair rotated by m·θ_j read as degrees."""
    x = np.asarray(p["x"], dtype=float)
    half = x.shape[-1] // 2
    a, b = (x[..., 0::2], x[..., 1::2]) if p["style"] == "interleaved" else (x[..., :half], x[..., half:])
    cos_d, sin_d = np.cos(np.deg2rad(t.angles)), np.sin(np.deg2rad(t.angles))
    out = np.empty_like(x)
    first, second = a * cos_d - b * sin_d, a * sin_d + b * cos_d
    if p["style"] == "interleaved":
        out[..., 0::2], out[..., 1::2] = first, second
    else:
        out[..., :half], out[..., half:] = first, second
    return out


_CLOCKWISE = "RoPE rotates counter-clockwise: (a, b) → (a cos mθ − b sin mθ, a sin mθ + b cos mθ)."

ROPE_MISTAKES = {
    "angles": (        # a worked-step value the built-in problems ask
        Mistake("exponent-j-over-d", base=lambda p: p["base"] ** 0.5, why="θ_j = base^(−2j/d): the exponent has the 2."),
        Mistake("same-angle", base=1, why="Each pair has its own frequency θ_j = base^(−2j/d)."),     # every θ_j = 1
    ),
    "output": (
        Mistake("clockwise", why=_CLOCKWISE, compute=lambda p, t: clockwise(p["x"], p["position"], p["base"], p["style"])),
        Mistake("degrees", why="The angles m·θ_j are in radians, not degrees.", compute=_rope_in_degrees),
        Mistake("rotate-half", style="rotate-half", when=lambda p: np.shape(p["x"])[-1] > 2,
                why="That pairs (x_j, x_{j+d/2}) as GPT-NeoX/Llama's rotate_half; here the pairs are interleaved "
                    "(x0,x1), (x2,x3)."),
    ),
}

ROPE_ECF = {"output": (Ecf("solve:rope", lambda p, t: p, "output"),)}


ROPE = Topic(
    "rope", "Rotary position embedding",
    (Param("x", "vector (even length) or rows"), Param("position", "int (or one per row)"),
     Param("base", "number", 10000), Param("style", '"interleaved" or "rotate-half"', "interleaved")),
    ("output",),
    lambda p: engine.rope(p["x"], p["position"], base=p["base"], style=p["style"]),
    rope_steps,
    lambda p: {"style": _STYLES.get(p["style"], "")},
    mistakes=ROPE_MISTAKES,
    ecf=ROPE_ECF,
)


class RopeScoreSteps(NamedTuple):
    query: Step
    key: Step
    score: Step


def rope_score_steps(p: dict[str, Any], t: Trace) -> RopeScoreSteps:
    return RopeScoreSteps(
        Step("Rotate the query by its position", r"q' = R_{m}\, q,\ \text{pair } j \text{ by } m\theta_j",
             {"angles_query": t.angles_query, "query_rotated": t.query_rotated}),
        Step("Rotate the key by its position", r"k' = R_{n}\, k", {"angles_key": t.angles_key, "key_rotated": t.key_rotated}),
        Step("Score: depends on the positions only through m − n", r"q' \cdot k' = q^\top R_{n - m}\, k",
             {"offset": t.offset, "score": t.score}))


_UNROTATED = "Use the rotated vectors q' and k'."

ROPE_SCORE_MISTAKES = {
    "query_rotated": (
        Mistake("clockwise", why=_CLOCKWISE,
                compute=lambda p, t: clockwise(p["query"], p["position_query"], p["base"], p["style"])),),
    "key_rotated": (
        Mistake("query-position", position_key=lambda p: p["position_query"],
                why="The key is rotated by its own position n, not the query's m."),),
    "score": (
        Mistake("unrotated", why=_UNROTATED, compute=lambda p, t: t.unrotated_score),
        Mistake("only-query-rotated", why="Both the query and the key are rotated.",
                compute=lambda p, t: ops.dot(t.query_rotated, p["key"]))),
}

ROPE_SCORE_ECF = {
    "query_rotated": (Ecf("solve:rope-score", lambda p, t: p, "query_rotated"),),
    "key_rotated": (Ecf("solve:rope-score", lambda p, t: p, "key_rotated"),),
    # q'·k' of the student's own rotated vectors where asked, else the topic's own score
    "score": (Ecf("dot", lambda p, t: {"a": Ref("query_rotated"), "b": Ref("key_rotated")}),
              Ecf("solve:rope-score", lambda p, t: p, "score")),
}


ROPE_SCORE = Topic(
    "rope-score", "Attention score after rotary position embedding",
    (Param("query", "vector (even length)"), Param("key", "vector (same length)"),
     Param("position_query", "int"), Param("position_key", "int"),
     Param("base", "number", 10000), Param("style", '"interleaved" or "rotate-half"', "interleaved")),
    ("query_rotated", "key_rotated", "score"),
    lambda p: engine.rope_score(p["query"], p["key"], p["position_query"], p["position_key"], base=p["base"],
                                style=p["style"]),
    rope_score_steps,
    lambda p: {"style": _STYLES.get(p["style"], ""), "frequencies": f"θ_j = {p['base']}^(−2j/d)"},
    mistakes=ROPE_SCORE_MISTAKES,
    ecf=ROPE_SCORE_ECF,
)


class RelativeSteps(NamedTuple):
    frequencies: Step              # and wavelengths
    encodings: Step                # at p and p + k
    dot: Step


def relative_steps(p: dict[str, Any], t: Trace) -> RelativeSteps:
    return RelativeSteps(
        Step("Frequencies and wavelengths of the (sin, cos) pairs",
             r"\omega_i = \text{base}^{-2i/d_{\text{model}}},\ λ_i = 2π / \omega_i",
             {"frequencies": t.frequencies, "wavelengths": t.wavelengths}),
        Step("Encodings at p and p + k", r"PE_{(p, 2i)} = \sin(p\,\omega_i),\ PE_{(p, 2i+1)} = \cos(p\,\omega_i)",
             {"encoding": t.encoding, "shifted": t.shifted}),
        Step("Dot product: sin a sin b + cos a cos b = cos(a − b) for each pair",
             r"PE(p) \cdot PE(p + k) = \sum_i \cos(k\,\omega_i)", {"pair_terms": t.pair_terms, "dot": t.dot}))


def _relative_encoding_mistakes(field: str) -> tuple[Mistake, ...]:
    """positional-encoding's mistakes of PE(p) (``field`` "encoding") or PE(p + k) ("shifted")."""
    def in_degrees(p: dict[str, Any], t: Trace) -> np.ndarray:
        at = p["position"] + (p["offset"] if field == "shifted" else 0)
        return _encoding_in_degrees(p, engine.positional_encoding(at, p["d_model"], base=p["base"]))

    table = {m.id: m for m in POSITIONAL_ENCODING_MISTAKES["encoding"]}
    return (Mistake("swapped-sin-cos", why=table["swapped-sin-cos"].why, compute=lambda p, t: _swap_pairs(t[field])),
            Mistake("degrees", why=table["degrees"].why, compute=in_degrees),
            Mistake("concatenated", why=table["concatenated"].why, compute=lambda p, t: _concatenated(t[field])),
            Mistake("no-frequencies", base=1, why=table["no-frequencies"].why))


RELATIVE_MISTAKES = {
    "encoding": _relative_encoding_mistakes("encoding"),
    "shifted": _relative_encoding_mistakes("shifted"),
    "dot": (
        # Σ cos((2p + k)·ω_i): the sum of the two angles, as the engine's Σ cos(k'·ω_i) with p = 0, k' = 2p + k
        Mistake("cos-of-sum", position=0, offset=lambda p: 2 * p["position"] + p["offset"],
                why="sin a sin b + cos a cos b = cos(a − b), not cos(a + b): Σ cos(k·ω_i)."),
        Mistake("sines-only", why="Add the cosine products too.",
                compute=lambda p, t: float(t.encoding[0::2] @ t.shifted[0::2]))),
    "wavelengths": (
        Mistake("no-2pi", why="A sine of pos·ω repeats every 2π/ω positions.", compute=lambda p, t: 1 / t.frequencies),),
}

RELATIVE_ECF = {
    "encoding": (Ecf("solve:positional-encoding-relative", lambda p, t: p, "encoding"),),
    "shifted": (Ecf("solve:positional-encoding-relative", lambda p, t: p, "shifted"),),
    # the dot product of the student's own encodings where asked, else the topic's own
    "dot": (Ecf("dot", lambda p, t: {"a": Ref("encoding"), "b": Ref("shifted")}),
            Ecf("solve:positional-encoding-relative", lambda p, t: p, "dot")),
}


POSITIONAL_ENCODING_RELATIVE = Topic(
    "positional-encoding-relative", "Sinusoidal encodings at p and p + k: the dot product depends on k only",
    (Param("position", "int p"), Param("offset", "int k"), Param("d_model", "int (even)"), Param("base", "number", 10000)),
    ("encoding", "shifted", "dot", "wavelengths"),
    lambda p: engine.positional_encoding_relative(p["position"], p["offset"], p["d_model"], base=p["base"]),
    relative_steps,
    lambda p: {"layout": "sin at even indices 2i, cos at odd 2i+1 (Vaswani et al. 2017)"},
    mistakes=RELATIVE_MISTAKES,
    ecf=RELATIVE_ECF,
)
