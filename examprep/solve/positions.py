"""Solve topics of position information: positional-encoding, rope, rope-score, positional-encoding-relative."""
from __future__ import annotations

from typing import Any, NamedTuple

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Param, Step, Topic

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


POSITIONAL_ENCODING = Topic(
    "positional-encoding", "Sinusoidal positional encoding",
    (Param("position", "int or list of ints"), Param("d_model", "int"), Param("base", "number", 10000)),
    ("encoding",),
    lambda p: engine.positional_encoding(p["position"], p["d_model"], base=p["base"]),
    positional_encoding_steps,
    lambda p: {"layout": "sin at even indices 2i, cos at odd 2i+1 (Vaswani et al. 2017)"},
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


ROPE = Topic(
    "rope", "Rotary position embedding",
    (Param("x", "vector (even length) or rows"), Param("position", "int (or one per row)"),
     Param("base", "number", 10000), Param("style", '"interleaved" or "rotate-half"', "interleaved")),
    ("output",),
    lambda p: engine.rope(p["x"], p["position"], base=p["base"], style=p["style"]),
    rope_steps,
    lambda p: {"style": _STYLES.get(p["style"], "")},
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


POSITIONAL_ENCODING_RELATIVE = Topic(
    "positional-encoding-relative", "Sinusoidal encodings at p and p + k: the dot product depends on k only",
    (Param("position", "int p"), Param("offset", "int k"), Param("d_model", "int (even)"), Param("base", "number", 10000)),
    ("encoding", "shifted", "dot", "wavelengths"),
    lambda p: engine.positional_encoding_relative(p["position"], p["offset"], p["d_model"], base=p["base"]),
    relative_steps,
    lambda p: {"layout": "sin at even indices 2i, cos at odd 2i+1 (Vaswani et al. 2017)"},
)
