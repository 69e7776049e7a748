"""Solve topics of attention: attention, multi-head-shapes, self-attention (the decoder's cross-attention,
causal-mask and teacher-forcing: solve/decoder.py)."""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine import ops
from examprep.engine._core import Trace, integer
from examprep.solve.contract import Ecf, Mistake, Param, Ref, Step, Topic
from examprep.values import allclose


def _given(p: dict[str, Any], name: str) -> bool:
    return p.get(name) is not None


# ------------------------------------------------------------------------------------- attention

_SCORE_FORMULA = {"scaled-dot": r"s_{ij} = q_i \cdot k_j", "dot": r"s_{ij} = q_i \cdot k_j",
                  "bilinear": r"s_{ij} = q_i^\top W k_j", "additive": r"s_{ij} = v^\top \tanh(W_q q_i + W_k k_j)"}


class AttentionSteps(NamedTuple):
    scores: Step
    scale: Step                    # scaled_scores
    mask: Step | None              # with a mask or causal
    softmax: Step                  # weights
    output: Step


def attention_steps(p: dict[str, Any], t: Trace) -> AttentionSteps:
    masked = _given(p, "mask") or p["causal"]
    return AttentionSteps(
        Step("Scores", _SCORE_FORMULA[p["score"]], {"scores": t.scores}),
        Step("Scale", r"s_{ij} / \sqrt{d_k}" if p["score"] == "scaled-dot" and p["scale"] is None else r"c \cdot s_{ij}",
             {"scale": t.scale, "scaled_scores": t.scaled_scores}),
        # (in JSON a −∞ score is null, as the README says: not for paper)
        Step("Mask: −∞ where a query may not attend",
             r"s_{ij} = -\infty \text{ where } M_{ij} = 0" + (r",\ j > i" if p["causal"] else ""),
             {"allowed": t.allowed, "masked_scores": t.masked_scores}) if masked else None,
        Step("Softmax over the keys" + (" (a row with no allowed key gets weights 0)" if masked else ""),
             r"\alpha_{ij} = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}}", {"weights": t.weights}),
        Step("Weighted sum of the values", r"o_i = \sum_j \alpha_{ij} v_j", {"output": t.output}))


def _scaled_dot(p: dict[str, Any]) -> bool:
    return p["score"] == "scaled-dot" and p["scale"] is None


def _masked(p: dict[str, Any]) -> bool:
    return _given(p, "mask") or bool(p.get("causal"))


def _by_columns(t: Trace) -> Any:
    """Softmax over the queries (down each column) instead of over the keys."""
    return engine.masked_softmax(t.scaled_scores.T, t.allowed.T.astype(bool)).T


def _after_softmax(t: Trace) -> Any:
    """The unmasked softmax with the masked weights zeroed afterwards (rows no longer sum to 1)."""
    return engine.softmax(t.scaled_scores).probs * t.allowed


_d_k = lambda p: 1.0 / len(np.atleast_2d(np.asarray(p["key"], dtype=float))[0])  # noqa: E731  (scale 1/d_k)


def _queries(p: dict[str, Any]) -> int:
    """How many queries: one for a vector (a decoder state attending the encoder states)."""
    return len(np.atleast_2d(np.asarray(p["query"], dtype=float)))


def _several_queries(p: dict[str, Any]) -> bool:
    return _queries(p) > 1           # normalising over the queries needs more than one


def _one_query(p: dict[str, Any]) -> bool:
    """One query: the lecture's context vector c = Σ_j α_j h_j (Bahdanau; Luong), whose own mistakes
    (weights by plain normalisation, raw scores or uniform weights) are declared for that form."""
    return _queries(p) == 1


def _dot_form(p: dict[str, Any]) -> bool:
    return p["score"] in ("scaled-dot", "dot")


def _unscaled_dot(p: dict[str, Any]) -> bool:
    """A dot-product score with no scaling: the "dot" form, or scaled-dot at scale 1 (the lecture's
    unprojected self-attention)."""
    return (p["score"] == "dot" and p["scale"] in (None, 1.0)) or (p["score"] == "scaled-dot" and p["scale"] == 1.0)


def _queries_are_keys(p: dict[str, Any]) -> bool:
    """Queries equal to the keys (self-attention without projections): QKᵀ is symmetric, so its
    transpose is no mistake."""
    q, k = np.asarray(p["query"], dtype=float), np.asarray(p["key"], dtype=float)
    return q.shape == k.shape and bool(np.array_equal(q, k))


def _sum_not_dot(p: dict[str, Any], t: Trace) -> Any:
    """Every entry of q_i and of k_j added, s_ij = Σ_k q_ik + Σ_k k_jk, instead of multiplied pairwise."""
    q, k = np.atleast_2d(np.asarray(p["query"], dtype=float)), np.asarray(p["key"], dtype=float)
    return np.add.outer(q.sum(axis=1), k.sum(axis=1)).reshape(np.shape(t.scores))


def _additive_with(p: dict[str, Any], act: str) -> Any:
    """vᵀ φ(W_k k_j + W_q q_i) with another φ ("identity": no tanh; "sigmoid"), through the engine's
    dense layers and activations (the hand computation: each W_k k_j and W_q q_i once)."""
    q2 = np.atleast_2d(np.asarray(p["query"], dtype=float))
    v = np.asarray(p["v"], dtype=float)[None, :]
    keys = [engine.dense(k, p["w_key"]).output for k in np.asarray(p["key"], dtype=float)]
    rows = []
    for q in q2:
        query = engine.dense(q, p["w_query"]).output
        pres = [k + query for k in keys]
        rows.append([float(engine.dense(pre if act == "identity" else engine.activation(act, pre).output, v).output[0])
                     for pre in pres])
    out = np.array(rows)
    return out[0] if np.ndim(p["query"]) == 1 else out


def _linear_normalisation(t: Trace) -> Any:
    """Each score divided by the row's sum, e_j / Σ_k e_k (no exponential); None where the sum is 0."""
    s = t.scaled_scores
    total = s.sum(axis=-1, keepdims=True)
    return None if np.any(np.abs(total) <= 1e-9) else s / total


_NO_FORM = {"score": "dot", "weight": None, "w_query": None, "w_key": None, "v": None}      # the plain dot product

ATTENTION_MISTAKES = {
    "scores": (
        # the dot form names no scale (Luong's); the lecture's unprojected self-attention (scaled-dot at scale 1)
        # asks its scores before any scale, where scaling them would be the next step's value
        Mistake("scaled", compute=lambda p, t: ops.scale(t.scores, 1.0 / math.sqrt(np.shape(p["key"])[-1])),
                when=lambda p: p["score"] == "dot" and p["scale"] is None,
                why="The dot-product form here is unscaled: e_j = sᵀh_j."),
        Mistake("sum-not-dot", compute=_sum_not_dot, when=_dot_form,
                why="A dot product multiplies entries pairwise and adds them."),
        Mistake("transposed-w", weight=lambda p: np.asarray(p["weight"], dtype=float).T.tolist(),
                when=lambda p: p["score"] == "bilinear",
                why="e_j = sᵀ W h_j: W multiplies h_j, and sᵀ the result — not sᵀWᵀh_j."),
        Mistake("dot-only", score="dot", weight=None, when=lambda p: p["score"] == "bilinear",
                why="The bilinear form puts W between s and h_j."),
        Mistake("no-tanh", compute=lambda p, t: _additive_with(p, "identity"), when=lambda p: p["score"] == "additive",
                why="Apply tanh to W₁h_j + W₂s before the dot product with v."),
        Mistake("sigmoid", compute=lambda p, t: _additive_with(p, "sigmoid"), when=lambda p: p["score"] == "additive",
                why="The nonlinearity is tanh, not σ."),
        Mistake("swapped-weights", w_query=lambda p: p["w_key"], w_key=lambda p: p["w_query"],
                when=lambda p: p["score"] == "additive",
                why="W₁ multiplies the encoder state h_j and W₂ the decoder state s.")),
    "scaled_scores": (
        Mistake("no-scale", scale=1.0, when=_scaled_dot,
                why="You forgot to divide by √d_k: scaled dot-product attention uses QKᵀ/√d_k."),
        Mistake("divide-by-dk", scale=_d_k, when=_scaled_dot, why="You divided by d_k; the scale is 1/√d_k."),
        Mistake("transposed", compute=lambda p, t: t.scaled_scores.T,
                when=lambda p: np.ndim(p["query"]) == 2 and not _queries_are_keys(p),
                why="Rows are queries and columns are keys: the score matrix is QKᵀ, not KQᵀ.")),
    "weights": (
        Mistake("wrong-axis", compute=lambda p, t: _by_columns(t), when=_several_queries,
                why="You normalised each column (over the queries); softmax runs over the keys, along each row."),
        Mistake("no-scale", scale=1.0, when=_scaled_dot, why="You forgot to divide by √d_k before the softmax."),
        Mistake("divide-by-dk", scale=_d_k, when=_scaled_dot, why="You divided by d_k instead of √d_k."),
        Mistake("scaled", score="scaled-dot", scale=None, when=_unscaled_dot,
                why="This dot-product score is unscaled: no 1/√d scaling before the softmax."),
        Mistake("mask-after-softmax", compute=lambda p, t: _after_softmax(t), when=_masked,
                why="You zeroed the masked weights after the softmax; set masked scores to −∞ before it so each row "
                    "still sums to 1."),
        Mistake("no-mask", compute=lambda p, t: engine.softmax(t.scaled_scores).probs, when=lambda p: bool(p["causal"]),
                why="The causal mask stops token i attending to later tokens j > i."),
        Mistake("other-form", **_NO_FORM, when=lambda p: p["score"] in ("bilinear", "additive"),
                why="Those are the weights of the dot-product scores; use this form's own scores."),
        Mistake("linear-normalisation", compute=lambda p, t: _linear_normalisation(t), when=_one_query,
                why="Softmax exponentiates first: α_j = e^{e_j} / Σ e^{e_k}, not e_j / Σ e_k.")),
    "output": (
        Mistake("wrong-axis", compute=lambda p, t: ops.matmul(_by_columns(t), p["value"]), when=_several_queries,
                why="Your weights were normalised over the queries (columns) instead of over the keys (rows)."),
        Mistake("no-scale", scale=1.0, when=_scaled_dot,
                why="Your weights came from unscaled scores: divide QKᵀ by √d_k before the softmax."),
        Mistake("mask-after-softmax", compute=lambda p, t: ops.matmul(_after_softmax(t), p["value"]), when=_masked,
                why="Your weights were masked after the softmax, so rows no longer sum to 1."),
        Mistake("scores-as-weights", compute=lambda p, t: ops.matmul(t.scores, p["value"]), when=_one_query,
                why="Weight the encoder states by the softmax weights α, not the raw scores."),
        Mistake("uniform", when=_one_query,
                compute=lambda p, t: np.broadcast_to(np.asarray(p["value"], dtype=float)[t.allowed.reshape(-1) > 0]
                                                     .mean(axis=0), np.shape(t.output)),
                why="The weights are not uniform: use α.")),
}


def _unmasked_one_query(p: dict[str, Any]) -> bool:
    return _one_query(p) and not _masked(p)


ATTENTION_ECF = {
    # the bilinear and additive forms: the scores recomputed from the problem's parameters, or from the student's
    # W where a part asks it (the reduced-rank W = u wᵀ); the dot forms' scores have no earlier answer to carry
    "scores": (Ecf("solve:attention", lambda p, t: {**p, "weight": Ref("weight")}, "scores",
                   when=lambda p: p.get("score") == "bilinear"),
               Ecf("solve:attention", lambda p, t: p, "scores", when=lambda p: p.get("score") in ("bilinear", "additive"))),
    "weights": (Ecf("scaled-masked-softmax", lambda p, t: {"scores": Ref("scaled_scores"), "scale": 1.0, "allowed": t.allowed}),
                # one query and no mask: no mask to carry
                Ecf("scaled-masked-softmax", lambda p, t: {"scores": Ref("scores"), "scale": t.scale},
                    when=_unmasked_one_query),
                Ecf("scaled-masked-softmax", lambda p, t: {"scores": Ref("scores"), "scale": t.scale, "allowed": t.allowed})),
    "output": (Ecf("matmul", lambda p, t: {"a": Ref("weights"), "b": np.asarray(p["value"], dtype=float)}),),
}


ATTENTION = Topic(
    "attention", "Attention weights and output",
    (Param("query", "matrix (n×d_q) or vector"), Param("key", "matrix (m×d_k)"), Param("value", "matrix (m×d_v)"),
     Param("mask", "n×m of 0/1, 1 = may attend (optional)", None), Param("causal", "bool", False),
     Param("score", '"scaled-dot", "dot", "bilinear" or "additive"', "scaled-dot"),
     Param("scale", "number (1/√d_k for scaled-dot, else 1)", None),
     Param("weight", "matrix (d_q×d_k), bilinear only", None),
     Param("w_query", "matrix (d_a×d_q), additive only", None),
     Param("w_key", "matrix (d_a×d_k), additive only", None),
     Param("v", "vector (d_a), additive only", None)),
    ("scores", "scaled_scores", "weights", "output"),
    lambda p: engine.attention(p["query"], p["key"], p["value"], mask=p["mask"], causal=p["causal"], score=p["score"],
                               scale=p["scale"], weight=p["weight"], w_query=p["w_query"], w_key=p["w_key"], v=p["v"]),
    attention_steps,
    mistakes=ATTENTION_MISTAKES,
    ecf=ATTENTION_ECF,
    conventions=lambda p: {"score": p["score"],
               "scale": ("1/√d_k" if p["score"] == "scaled-dot" and p["scale"] is None
                         else str(p["scale"] if p["scale"] is not None else 1)),
               "mask": "1 = may attend; masked weights are 0; a fully masked row gets weights 0 and output 0",
               "causal": "query i attends keys j ≤ i" if p["causal"] else "no causal mask"},
)


# ----------------------------------------------------------------------------- multi-head-shapes

class MultiHeadSteps(NamedTuple):
    d_k: Step
    projections: Step              # query, key and value shapes of one head
    scores: Step                   # one head's score matrix shape
    output: Step                   # head output, concatenation and output shapes
    score_macs_per_head: Step
    score_macs: Step               # all heads (and the weighted sum)
    projection_macs: Step
    memory: Step                   # the attention matrices' entries, bytes, MiB
    growth: Step | None            # with growth_factor: the sequence k times longer


def multi_head_steps(p: dict[str, Any], t: Trace) -> MultiHeadSteps:
    b = r"B \cdot " if p["batch"] != 1 else ""
    return MultiHeadSteps(
        Step("Head size: the model width is split across the heads", r"d_k = d_v = d_{\text{model}} / h", {"d_k": t.d_k}),
        Step("Per-head projections (rows are tokens)",
             r"Q_i = X W_i^Q\ (n \times d_k),\ K_i = Z W_i^K,\ V_i = Z W_i^V\ (m \times d_k)",
             {"query_shape": t.query_shape, "key_shape": t.key_shape, "value_shape": t.value_shape}),
        Step("Scores of one head: one row per query, one column per key", r"Q_i K_i^\top\ (n \times m)",
             {"scores_shape": t.scores_shape}),
        Step("Head output, concatenation of the h heads, output projection",
             r"\alpha_i V_i\ (n \times d_v),\ "
             r"\text{concat}(\text{head}_1, \text{…}, \text{head}_h)\, W^O\ (n \times d_{\text{model}})",
             {"head_output_shape": t.head_output_shape, "concat_shape": t.concat_shape, "output_shape": t.output_shape}),
        Step("Multiply-adds of one head's scores (n·m dot products of length d_k)", r"n \cdot m \cdot d_k",
             {"score_macs_per_head": t.score_macs_per_head}),
        Step("All heads" + (" and sequences" if p["batch"] != 1 else "") + ": quadratic in the sequence length",
             rf"{b}h \cdot n \cdot m \cdot d_k = {b}n \cdot m \cdot d_{{\text{{model}}}}",
             {"score_macs": t.score_macs, "weighted_sum_macs": t.weighted_sum_macs}),
        Step("Projections W_Q, W_K, W_V, W_O: linear in the sequence length",
             rf"{b}(2n + 2m)\, d_{{\text{{model}}}}^2", {"projection_macs": t.projection_macs}),
        Step("Memory of the attention matrices",
             rf"{b}h \cdot n \cdot m \text{{ values}} \times \text{{bytes per value}},"
             r"\ 1\ \text{MiB} = 2^{20}\ \text{bytes}",
             {"score_entries": t.score_entries, "score_bytes": t.score_bytes, "score_mib": t.score_mib}),
        Step(f"Sequence {p['growth_factor']} times longer: the scores grow as n², the projections as n",
             r"\frac{h (k n)(k m) d_k}{h\, n m\, d_k} = k^2,\ \ "
             r"\frac{(2kn + 2km)\, d_{\text{model}}^2}{(2n + 2m)\, d_{\text{model}}^2} = k",
             {"score_growth": t.score_growth, "projection_growth": t.projection_growth})
        if p.get("growth_factor") is not None else None)


def _multi_head(p: dict[str, Any]) -> Trace:
    """The layer's shapes and counts; with growth_factor k, also how much the score and projection
    multiply-adds grow when the sequence (n, and m if given) is k times longer."""
    t = engine.multi_head_shapes(p["n"], p["d_model"], p["num_heads"], m=p["m"], batch=p["batch"],
                                 bytes_per_value=p["bytes_per_value"])
    k = p.get("growth_factor")
    if k is None:
        return t
    k = integer("growth_factor", k, 1)
    long = engine.multi_head_shapes(k * p["n"], p["d_model"], p["num_heads"], m=None if p["m"] is None else k * p["m"],
                                    batch=p["batch"], bytes_per_value=p["bytes_per_value"])
    return Trace(t, score_growth=long.score_macs // t.score_macs, projection_growth=long.projection_macs // t.projection_macs)


def _self(p: dict[str, Any]) -> bool:
    return p["m"] is None


def _cross(p: dict[str, Any]) -> bool:
    return p["m"] is not None


_SWAPPED = {"n": lambda p: p["m"], "m": lambda p: p["n"]}      # queries and keys swapped (cross-attention)
_OTHER_DTYPE = {2: 4, 4: 2}                                      # bfloat16/float16 ↔ float32

MULTI_HEAD_MISTAKES = {
    "d_k": (Mistake("no-split", num_heads=1, why="The heads share d_model: d_k = d_model / h."),
            Mistake("times-heads", why="Heads split the model width; they do not multiply it.",
                    compute=lambda p, t: p["d_model"] * p["num_heads"])),
    "query_shape": (Mistake("no-split", num_heads=1, why="Each head projects to d_k = d_model/h columns."),
                    Mistake("transposed", why="Rows are tokens: Q_i is n × d_k.", compute=lambda p, t: t.query_shape[::-1])),
    "scores_shape": (
        Mistake("query-shape", why="QKᵀ has one row per query and one column per key: n × n.", when=_self,
                compute=lambda p, t: t.query_shape),
        Mistake("d-by-d", why="d_k × d_k would be QᵢᵀKᵢ (a sum over tokens); the scores QᵢKᵢᵀ are n × n.", when=_self,
                compute=lambda p, t: [t.d_k, t.d_k]),
        Mistake("transposed", why="Rows are the decoder's queries, columns the encoder's keys: n × m.", when=_cross,
                **_SWAPPED),
        Mistake("self-attention", m=None, when=_cross,
                why="The keys are the m encoder positions, not the n decoder positions.")),
    "output_shape": (
        Mistake("encoder-length", why="One output row per query, that is per decoder position.", when=_cross, **_SWAPPED),
        Mistake("one-head", why="After concatenating the heads and W_O the width is d_model.",
                when=lambda p: p["num_heads"] > 1, compute=lambda p, t: t.head_output_shape),
        Mistake("heads-times-model", why="Each head outputs d_v = d_model/h columns, so the concatenation is n × d_model.",
                when=_self, compute=lambda p, t: [p["n"], p["num_heads"] * p["d_model"]])),
    "score_macs_per_head": (
        Mistake("no-split", num_heads=1, why="Each head's dot products have length d_k = d_model/h, not d_model."),
        Mistake("flops-not-macs", why="That counts FLOPs (2 per multiply-add); the question asks for multiply-adds.",
                compute=lambda p, t: 2 * t.score_macs_per_head)),
    "score_macs": (
        Mistake("one-head", why="That is one head's cost: all h heads compute scores.",
                when=lambda p: p["num_heads"] > 1, compute=lambda p, t: t.score_macs // p["num_heads"]),
        Mistake("no-split", why="With d_k = d_model/h per head, all heads together cost n²·d_model.",
                compute=lambda p, t: engine.multi_head_shapes(p["n"], p["d_model"], 1, m=p["m"], batch=p["batch"],
                                                              bytes_per_value=p["bytes_per_value"]).score_macs
                * p["num_heads"]),),
    "score_entries": (
        Mistake("one-head", num_heads=1, why="Each head has its own matrix of attention weights."),
        Mistake("one-sequence", batch=1, why="Each sequence of the batch has its own matrices."),
        Mistake("n-by-dk", why="A score matrix is n × n (query × key), not n × d_k.",
                compute=lambda p, t: p["batch"] * p["num_heads"] * p["n"] * t.d_k),),
    "score_mib": (
        Mistake("decimal-megabytes", why="1 MiB = 2²⁰ = 1,048,576 bytes, not 10⁶.", compute=lambda p, t: t.score_bytes / 1e6),
        Mistake("wrong-dtype", bytes_per_value=lambda p: _OTHER_DTYPE[p["bytes_per_value"]],
                when=lambda p: p["bytes_per_value"] in _OTHER_DTYPE,
                why="Use the stored dtype's size: 2 bytes a value in bfloat16, 4 in float32.")),
    "score_growth": (
        Mistake("linear", compute=lambda p, t: t.projection_growth,
                why="The projections grow linearly (k×), but every query meets every key: the score cost grows as n², "
                    "k²×."),
        Mistake("cubic", compute=lambda p, t: p["growth_factor"] ** 3, why="d_k is fixed; only n × n grows: k², not k³.")),
}


def _keys(p: dict[str, Any]) -> int:
    return p["n"] if p.get("m") is None else p["m"]


# the rules read the problem's parameters as given (a generator may leave m, batch and bytes_per_value at their defaults)
MULTI_HEAD_ECF = {
    # (the growth factor changes no d_k)
    "d_k": (Ecf("solve:multi-head-shapes", lambda p, t: {k: v for k, v in p.items() if k != "growth_factor"}, "d_k"),),
    "score_macs_per_head": (Ecf("int-product", lambda p, t: {"values": [p["n"], _keys(p), Ref("d_k")]}),),
    "score_macs": (Ecf("int-product", lambda p, t: {"values": [Ref("score_macs_per_head"), p["num_heads"]]
                                                     + ([p["batch"]] if p.get("batch", 1) != 1 else [])}),),
    "score_entries": (Ecf("int-product", lambda p, t: {"values": [p.get("batch", 1), p["num_heads"], p["n"], _keys(p)]}),),
    "score_mib": (Ecf("difference-times", lambda p, t: {"a": Ref("score_entries"), "b": 0,
                                                        "factor": p.get("bytes_per_value", 4), "divisor": 2 ** 20}),),
}


_MULTI_HEAD_ANSWERS = ("d_k", "query_shape", "key_shape", "value_shape", "scores_shape", "head_output_shape",
                       "output_shape", "score_macs_per_head", "score_macs", "weighted_sum_macs", "projection_macs",
                       "score_entries", "score_bytes", "score_mib")

MULTI_HEAD_SHAPES = Topic(
    "multi-head-shapes", "Shapes and cost of a multi-head attention layer",
    (Param("n", "int (queries: sequence length, or the decoder length in cross-attention)"),
     Param("d_model", "int"), Param("num_heads", "int (divides d_model)"),
     Param("m", "int (keys and values; = n for self-attention)", None),
     Param("batch", "int (sequences)", 1), Param("bytes_per_value", "int (4 for float32)", 4),
     Param("growth_factor", "int k (optional): the sequence k times longer (n, and m if given)", None)),
    _MULTI_HEAD_ANSWERS + ("score_growth", "projection_growth"),
    _multi_head,
    multi_head_steps,
    lambda p: {"d_k": "d_model / num_heads, and d_v = d_k (Vaswani et al. 2017; torch.nn.MultiheadAttention)",
               "shapes": "(rows, columns) with one row per token, per sequence",
               "cost": "multiply-adds (1 multiply-add = 2 FLOPs)"},
    answer_names=lambda p, t: _MULTI_HEAD_ANSWERS + (("score_growth", "projection_growth")
                                                     if p.get("growth_factor") is not None else ()),
    shapes=("query_shape", "key_shape", "value_shape", "scores_shape", "head_output_shape", "output_shape"),
    mistakes=MULTI_HEAD_MISTAKES,
    ecf=MULTI_HEAD_ECF,
)


# -------------------------------------------------------------------------------- self-attention

class SelfAttentionSteps(NamedTuple):
    projections: Step              # query, key, value
    scores: Step
    scale: Step                    # scaled_scores
    mask: Step | None              # with a mask or causal
    softmax: Step                  # weights
    heads: Step
    output: Step                   # concat (and W_O)


def self_attention_steps(p: dict[str, Any], t: Trace) -> SelfAttentionSteps:
    h = p["num_heads"]
    masked = _given(p, "mask") or bool(p["causal"])
    per_head = f", per head (columns split into {h} blocks)" if h > 1 else ""
    scale = (r"s_{ij} / \sqrt{d_k/h}" if h > 1 else r"s_{ij} / \sqrt{d_k}") if p["scale"] is None else r"c \cdot s_{ij}"
    return SelfAttentionSteps(
        Step("Projections (row vectors: one row per token)", r"Q = X W_Q,\ \ K = X W_K,\ \ V = X W_V",
             {"query": t.query, "key": t.key, "value": t.value}),
        Step("Scores" + per_head, r"S = Q K^\top" if h == 1 else r"S_i = Q_i K_i^\top", {"scores": t.scores}),
        Step("Scale" + (" by the per-head key size" if h > 1 else ""), scale,
             {"scale": t.scale, "scaled_scores": t.scaled_scores}),
        Step("Mask: −∞ where a token may not attend",
             r"s_{ij} = -\infty \text{ where } M_{ij} = 0" + (r",\ j > i" if p["causal"] else ""), {"allowed": t.allowed})
        if masked else None,
        Step("Softmax over the keys (along each row)", r"\alpha_{ij} = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}}",
             {"weights": t.weights}),
        Step("Weighted sums of the values" + per_head,
             r"\mathrm{head} = \alpha V" if h == 1 else r"\mathrm{head}_i = \alpha_i V_i", {"heads": t.heads}),
        Step("Concatenate the heads" + (" and project with W_O" if p["w_output"] is not None else ""),
             r"O = \mathrm{concat}(\mathrm{head}_1, \text{…}, \mathrm{head}_h)" + (r" W_O" if p["w_output"] is not None else ""),
             {"concat": t.concat, "output": t.output}))


def _self_scaled(p: dict[str, Any]) -> bool:
    return p["scale"] is None


def _full_dk(p: dict[str, Any]) -> float:
    return 1.0 / float(np.sqrt(np.shape(p["w_query"])[1]))


def _self_by_columns(t: Trace) -> Any:
    """Softmax over the queries (down each column) instead of over the keys."""
    s = np.atleast_3d(t.scaled_scores.T).T if t.scaled_scores.ndim == 2 else t.scaled_scores
    allowed = np.broadcast_to(t.allowed, s.shape)
    cols = np.stack([engine.masked_softmax(si.T, ai.T.astype(bool)).T for si, ai in zip(s, allowed)])
    return cols[0] if t.scaled_scores.ndim == 2 else cols


def _square_projection(p: dict[str, Any]) -> bool:
    w = np.asarray(p["w_query"], dtype=float)
    return w.shape[0] == w.shape[1] and not allclose(w, w.T)


def _square_not_symmetric(name: str) -> Any:
    """A square weight that is not symmetric: its transpose is a wrong weight of the same shape."""
    def when(p: dict[str, Any]) -> bool:
        w = np.asarray(p[name], dtype=float)
        return w.shape[0] == w.shape[1] and not allclose(w, w.T)
    return when


def _one_head_weights(p: dict[str, Any], t: Trace) -> Any:
    """One head over all the columns (num_heads 1), its weights given for each of the problem's heads."""
    one = engine.self_attention(p["x"], p["w_query"], p["w_key"], p["w_value"], num_heads=1, w_output=None,
                                causal=p["causal"], mask=p["mask"], scale=p["scale"])
    return np.stack([one.weights] * p["num_heads"])


_several_heads = lambda p: p["num_heads"] > 1     # noqa: E731

SELF_ATTENTION_MISTAKES = {
    "query": (Mistake("transposed-weight", compute=lambda p, t: ops.matmul(p["x"], np.asarray(p["w_query"], dtype=float).T),
                      when=_square_projection, why="Q = X W_Q with W_Q as given (d_model×d_k): rows of X times W_Q."),
              Mistake("key-weights", w_query=lambda p: p["w_key"], why="Queries use W_Q; W_K makes the keys.")),
    "key": (Mistake("query-weights", w_key=lambda p: p["w_query"], why="Keys use W_K; W_Q makes the queries."),),
    "value": (Mistake("transposed-weight", compute=lambda p, t: ops.matmul(p["x"], np.asarray(p["w_value"], dtype=float).T),
                      when=_square_not_symmetric("w_value"), why="V = X W_V with W_V as given (d_model × d_v)."),),
    "scaled_scores": (
        Mistake("no-scale", scale=1.0, when=_self_scaled, why="Divide the scores by √d_k (the per-head key size)."),
        Mistake("full-d-k", scale=_full_dk, when=lambda p: _self_scaled(p) and p["num_heads"] > 1,
                why="Each head scales by √(d_k/h), its own key size, not by the full √d_k."),
        Mistake("transposed", compute=lambda p, t: np.swapaxes(t.scaled_scores, -1, -2),
                why="Rows are queries and columns keys: S = QKᵀ, not KQᵀ.")),
    "weights": (
        Mistake("wrong-axis", compute=lambda p, t: _self_by_columns(t),
                why="Softmax runs over the keys, along each row; you normalised each column (over the queries)."),
        Mistake("no-scale", scale=1.0, when=_self_scaled, why="Scale the scores by 1/√d_k before the softmax."),
        Mistake("full-d-k", scale=_full_dk, when=lambda p: _self_scaled(p) and p["num_heads"] > 1,
                why="Each head scales by √(d_k/h), its own key size, not by the full √d_k."),
        Mistake("one-head", compute=_one_head_weights, when=_several_heads,
                why="Each head sees only its own block of columns: q and k of size d_k/h, not the whole rows.")),
    # the heads concatenated (the output without W_O): a worked-step value the two-head problems ask
    "concat": (
        Mistake("no-scale", scale=1.0, when=_self_scaled, why="Your weights came from unscaled scores: divide by √d_k first."),
        Mistake("full-d-k", scale=_full_dk, when=lambda p: _self_scaled(p) and p["num_heads"] > 1,
                why="Each head scales by √(d_k/h), not by the full √d_k."),
        Mistake("one-head", num_heads=1, when=_several_heads,
                why="Each head attends with its own weights over its own block of V.")),
    "output": (
        Mistake("no-scale", scale=1.0, when=_self_scaled, why="Your weights came from unscaled scores: divide by √d_k first."),
        Mistake("no-output-projection", w_output=None, when=lambda p: p["w_output"] is not None,
                why="Multiply the concatenated heads by W_O."),
        Mistake("full-d-k", scale=_full_dk, when=lambda p: _self_scaled(p) and p["num_heads"] > 1,
                why="Each head scales by √(d_k/h), not by the full √d_k.")),
}

SELF_ATTENTION_ECF = {
    "weights": (Ecf("scaled-masked-softmax", lambda p, t: {"scores": Ref("scaled_scores"), "scale": 1.0,
                                                          "allowed": np.broadcast_to(t.allowed, t.scaled_scores.shape)
                                                          .astype(int)}),),
    # one head without W_O: O = αV from the student's weights and values; with W_O: their concatenation times W_O
    "output": (Ecf("matmul", lambda p, t: {"a": Ref("weights"), "b": Ref("value")},
                   when=lambda p: p.get("num_heads", 1) == 1 and p.get("w_output") is None),
               Ecf("matmul", lambda p, t: {"a": Ref("concat"), "b": p["w_output"]},
                   when=lambda p: p.get("w_output") is not None)),
}


SELF_ATTENTION = Topic(
    "self-attention", "Self-attention with projections X W_Q, X W_K, X W_V, one or several heads",
    (Param("x", "matrix (n×d_model): one row per token"), Param("w_query", "matrix (d_model×d_k)"),
     Param("w_key", "matrix (d_model×d_k)"), Param("w_value", "matrix (d_model×d_v)"),
     Param("num_heads", "int: the columns of Q, K, V split into this many blocks", 1),
     Param("w_output", "matrix (d_v×d_out), optional: output = concat(heads) W_O", None),
     Param("causal", "bool", False), Param("mask", "n×n of 0/1, 1 = may attend (optional)", None),
     Param("scale", "number (1/√(d_k/h))", None)),
    ("query", "key", "value", "scores", "scaled_scores", "weights", "heads", "output"),
    lambda p: engine.self_attention(p["x"], p["w_query"], p["w_key"], p["w_value"], num_heads=p["num_heads"],
                                    w_output=p["w_output"], causal=p["causal"], mask=p["mask"], scale=p["scale"]),
    self_attention_steps,
    mistakes=SELF_ATTENTION_MISTAKES,
    ecf=SELF_ATTENTION_ECF,
    conventions=lambda p: {"layout": "row vectors: Q = X W_Q (Vaswani et al. 2017)",
                           "heads": f"{p['num_heads']}: head i takes the i-th block of columns of Q, K and V",
                           "scale": "1/√(d_k/h)" if p["scale"] is None else str(p["scale"]),
                           "mask": "1 = may attend; masked weights are 0" if _given(p, "mask") else "none",
                           "causal": "token i attends tokens j ≤ i" if p["causal"] else "no causal mask"},
)
