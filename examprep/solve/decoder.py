"""Solve topics of the Transformer decoder: cross-attention, causal-mask, teacher-forcing."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine import ops
from examprep.engine._core import Trace, integer
from examprep.errors import ParamError
from examprep.solve.attention import _by_columns
from examprep.solve.contract import Ecf, Mistake, Param, Ref, Step, Topic
from examprep.values import allclose


# ------------------------------------------------------------------------------- cross-attention

class CrossAttentionSteps(NamedTuple):
    query: Step
    key: Step
    value: Step
    scores: Step
    scale: Step
    mask: Step | None
    softmax: Step
    output: Step


def cross_attention_steps(p: dict[str, Any], t: Trace) -> CrossAttentionSteps:
    w = (lambda n: rf"{n}") if p["layout"] == "x-w" else (lambda n: rf"{n}^\top")
    return CrossAttentionSteps(
        Step("Queries from the decoder", rf"Q = X_{{\text{{dec}}}} {w('W_Q')}", {"query": t.query}),
        Step("Keys from the encoder output", rf"K = Z {w('W_K')}", {"key": t.key}),
        Step("Values from the encoder output", rf"V = Z {w('W_V')}", {"value": t.value}),
        Step("Scores: one row per decoder position, one column per encoder position", r"s_{ij} = q_i \cdot k_j",
             {"scores": t.scores}),
        Step("Scale", r"s_{ij} / \sqrt{d_k}" if p["scale"] is None else r"c \cdot s_{ij}",
             {"scale": t.scale, "scaled_scores": t.scaled_scores}),
        Step("Mask: −∞ where a query may not attend (padding)", r"s_{ij} = -\infty \text{ where } M_{ij} = 0",
             {"allowed": t.allowed, "masked_scores": t.masked_scores}) if p["mask"] is not None else None,
        Step("Softmax over the encoder positions (each row)", r"\alpha_{ij} = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}}",
             {"weights": t.weights}),
        Step("Weighted sum of the encoder values", r"o_i = \sum_j \alpha_{ij} v_j", {"output": t.output}))


def _swapped_roles(p: dict[str, Any]) -> Trace:
    """Cross-attention with the decoder and encoder swapped (queries from the encoder), no mask."""
    return engine.cross_attention(p["encoder_output"], p["decoder_states"], p["w_query"], p["w_key"], p["w_value"],
                                  scale=p["scale"], layout=p["layout"])


def _unless_same_entries(value: Any, right: Any) -> Any:
    """``value``, or None where its entries read row by row are those of ``right``."""
    same = np.size(value) == np.size(right) and allclose(np.ravel(value), np.ravel(right))
    return None if same else value


CROSS_ATTENTION_MISTAKES = {
    "query": (Mistake("swapped-roles", decoder_states=lambda p: p["encoder_output"],
                      encoder_output=lambda p: p["decoder_states"], mask=None,
                      why="The queries come from the decoder states X, not from the encoder output Z."),),
    "key": (Mistake("swapped-roles", decoder_states=lambda p: p["encoder_output"],
                    encoder_output=lambda p: p["decoder_states"], mask=None,
                    why="The keys come from the encoder output Z, not from the decoder."),),
    "value": (Mistake("swapped-roles", decoder_states=lambda p: p["encoder_output"],
                      encoder_output=lambda p: p["decoder_states"], mask=None,
                      why="The values come from the encoder output Z."),),
    # a wrong-shape score matrix whose entries, read row by row, are the right ones cannot be told from the answer
    # typed flat, so it diagnoses nothing: left out
    "scores": (Mistake("transposed", compute=lambda p, t: _unless_same_entries(t.scores.T, t.scores),
                       why="Rows are queries (decoder), columns keys: QKᵀ, not KQᵀ."),
               Mistake("swapped-roles", compute=lambda p, t: _unless_same_entries(_swapped_roles(p).scores, t.scores),
                       why="Queries from the decoder, keys from the encoder.")),
    "weights": (Mistake("no-scale", scale=1.0, when=lambda p: p["scale"] is None,
                        why="Divide the scores by √d_k before the softmax."),
                Mistake("wrong-axis", compute=lambda p, t: _by_columns(t),
                        why="Each decoder position's weights (a row) sum to 1 over the encoder positions."),
                # declared where a (padding) mask is part of the problem: the mask a student may take for a causal one
                Mistake("causal-in-cross", when=lambda p: p["mask"] is not None,
                        compute=lambda p, t: engine.attention(t.query, t.key, t.value, mask=p["mask"], causal=True,
                                                              scale=p["scale"]).weights,
                        why="Cross-attention has no causal mask: every decoder position may read the whole source."),
                Mistake("padding-attended", mask=None, why="The padding position is masked: its weight is 0.")),
    "output": (Mistake("swapped-roles", decoder_states=lambda p: p["encoder_output"],
                       encoder_output=lambda p: p["decoder_states"], mask=None,
                       why="Queries come from the decoder and keys/values from the encoder: one output row per decoder "
                           "position."),
               Mistake("wrong-axis", compute=lambda p, t: ops.matmul(_by_columns(t), t.value),
                       why="Normalise each row (over the encoder positions)."),
               Mistake("padding-attended", mask=None, why="The padding position gets weight 0.")),
}

CROSS_ATTENTION_ECF = {
    "scores": (Ecf("matmul-bt", lambda p, t: {"a": Ref("query"), "b": Ref("key")}),),
    "weights": (Ecf("scaled-masked-softmax", lambda p, t: {"scores": Ref("scores"), "scale": t.scale, "allowed": t.allowed}),),
    "output": (Ecf("matmul", lambda p, t: {"a": Ref("weights"), "b": Ref("value")}),),
}


CROSS_ATTENTION = Topic(
    "cross-attention", "Cross-attention: queries from the decoder, keys and values from the encoder",
    (Param("decoder_states", "matrix (n×d_dec)"), Param("encoder_output", "matrix (m×d_enc)"),
     Param("w_query", "matrix (d_dec×d_k; d_k×d_dec with layout linear)"),
     Param("w_key", "matrix (d_enc×d_k; d_k×d_enc with layout linear)"),
     Param("w_value", "matrix (d_enc×d_v; d_v×d_enc with layout linear)"),
     Param("mask", "n×m of 0/1, 1 = may attend (optional)", None),
     Param("scale", "number (1/√d_k)", None),
     Param("layout", '"x-w": Q = X W_Q (Vaswani et al.); or "linear": Q = X W_Qᵀ (torch.nn.Linear)', "x-w")),
    ("query", "key", "value", "scores", "scaled_scores", "weights", "output"),
    lambda p: engine.cross_attention(p["decoder_states"], p["encoder_output"], p["w_query"], p["w_key"], p["w_value"],
                                     mask=p["mask"], scale=p["scale"], layout=p["layout"]),
    cross_attention_steps,
    mistakes=CROSS_ATTENTION_MISTAKES,
    ecf=CROSS_ATTENTION_ECF,
    conventions=lambda p: {"roles": "queries from the decoder, keys and values from the encoder output",
               "layout": {"x-w": "Q = X W_Q, W_Q is d_model×d_k (Vaswani et al. 2017)",
                          "linear": "Q = X W_Qᵀ, W_Q is d_k×d_model (torch.nn.Linear)"}.get(p["layout"], ""),
               "scale": "1/√d_k" if p["scale"] is None else str(p["scale"]),
               "mask": "1 = may attend; masked weights are 0" if p["mask"] is not None else "none"},
)


# ----------------------------------------------------------------------------------- causal-mask

_ALIGN = {"top-left": r"j \le i", "bottom-right": r"j \le i + (m - n)"}


class CausalMaskSteps(NamedTuple):
    mask: Step                     # allowed and masked_count
    masked_scores: Step
    weights: Step
    visible: Step                  # the keys one query may attend


def causal_mask_steps(p: dict[str, Any], t: Trace) -> CausalMaskSteps:
    row = _row(p, t)
    return CausalMaskSteps(
        Step("Causal mask: query i may attend key j only if " + ("j ≤ i" if p["alignment"] == "top-left" else "j ≤ i + m − n"),
             rf"M_{{ij}} = 1 \text{{ if }} {_ALIGN.get(p['alignment'], '')} \text{{ else }} 0",
             {"allowed": t.allowed, "masked_count": t.masked_count}),
        Step("Masked scores: −∞ where the mask is 0", r"s_{ij} = -\infty \text{ where } M_{ij} = 0",
             {"masked_scores": t.masked_scores}),
        Step("Softmax of each row: e^(−∞) = 0, so masked weights are 0 and each row sums to 1",
             r"\alpha_{ij} = \frac{e^{s_{ij}}}{\sum_{j' : M_{ij'} = 1} e^{s_{ij'}}}", {"weights": t.weights}),
        Step(f"Keys query {row + 1} may attend: the ones in row {row + 1} of the mask", r"\sum_j M_{ij}",
             {"visible": t.visible}))


def _row(p: dict[str, Any], t: Trace) -> int:
    """The 0-based row of the query ``position`` names (1-based; default the last query)."""
    return len(t.allowed) - 1 if p.get("position") is None else p["position"] - 1


def _causal(p: dict[str, Any]) -> Trace:
    """The causal softmax, and how many keys the query at ``position`` may attend (its row of the mask)."""
    t = engine.causal_softmax(p["scores"], alignment=p["alignment"], scale=p["scale"])
    if p.get("position") is not None:
        position = integer("position", p["position"], 1)
        if position > len(t.allowed):
            raise ParamError(f"position: expected a query row 1 … {len(t.allowed)}, got {position}")
    return Trace(t, visible=int(t.allowed[_row(p, t)].sum()))


def _square(p: dict[str, Any]) -> bool:
    s = np.atleast_2d(np.asarray(p["scores"], dtype=float))
    return s.shape[0] == s.shape[1]


def _plain_softmax(p: dict[str, Any]) -> Any:
    return engine.softmax(ops.scale(p["scores"], p["scale"])).probs


CAUSAL_MASK_MISTAKES = {
    "allowed": (
        Mistake("transposed", compute=lambda p, t: t.allowed.T, when=_square,
                why="That hides the past and shows the future: query i may attend keys j ≤ i."),
        Mistake("strict", compute=lambda p, t: t.allowed - np.eye(*t.allowed.shape, k=t.allowed.shape[1] - t.allowed.shape[0],
                                                                   dtype=int),
                why="A position may attend to itself: the diagonal stays allowed (j ≤ i)."),
        Mistake("top-left", alignment="top-left",
                why="That is the top-left alignment (torch's is_causal): the new queries are the last positions, so they "
                    "align with the last keys.")),
    "masked_count": (
        Mistake("counted-allowed", compute=lambda p, t: t.allowed_count,
                why="That counts the allowed entries (on and below the diagonal)."),
        Mistake("counted-diagonal", compute=lambda p, t: t.masked_count + t.allowed.shape[0],
                why="The diagonal is allowed: a token attends to itself.")),
    "weights": (
        Mistake("no-mask", compute=lambda p, t: _plain_softmax(p),
                why="The masked scores are −∞ before the softmax: their weights are 0."),
        Mistake("mask-after-softmax", compute=lambda p, t: _plain_softmax(p) * t.allowed,
                why="Zeroing after the softmax leaves rows that do not sum to 1; mask the scores with −∞ first."),
        Mistake("top-left", alignment="top-left",
                why="The new tokens come last: query i sees keys j ≤ i + (m − n), not j ≤ i."),
        Mistake("transposed-mask", when=lambda p: p["alignment"] == "top-left",
                compute=lambda p, t: engine.masked_softmax(ops.scale(p["scores"], p["scale"]), t.allowed.T.astype(bool)),
                why="You masked the past instead of the future.")),
    # a decoder's self-attention in training (square scores): itself and the mask forgotten; with a cache (n < m
    # keys): the other alignment
    "visible": (
        Mistake("excluded-itself", compute=lambda p, t: t.visible - 1, when=_square,
                why="Position t also attends to itself: positions 1 … t."),
        Mistake("no-mask", compute=lambda p, t: t.allowed.shape[1], when=_square,
                why="The causal mask hides the later positions."),
        Mistake("bottom-right", alignment="bottom-right", when=lambda p: not _square(p),
                why="That is the bottom-right count; top-left aligns query i with key i."),
        Mistake("top-left", alignment="top-left", when=lambda p: not _square(p),
                why="The new tokens come last: query i sees keys j ≤ i + (m − n), not j ≤ i.")),
}


def _mask_params(p: dict[str, Any], t: Trace) -> dict[str, Any]:
    """The mask's own parameters (the query a part asks about changes no mask)."""
    return {k: v for k, v in p.items() if k != "position"}



CAUSAL_MASK_ECF = {
    "allowed": (Ecf("solve:causal-mask", _mask_params, "allowed"),),
    "masked_count": (Ecf("solve:causal-mask", _mask_params, "masked_count"),),
    "weights": (Ecf("scaled-masked-softmax", lambda p, t: {"scores": np.asarray(p["scores"], dtype=float),
                                                           "scale": p["scale"], "allowed": Ref("allowed")}),),
}


CAUSAL_MASK = Topic(
    "causal-mask", "Causal mask: masked scores and weights of a decoder's self-attention",
    (Param("scores", "matrix (n×m): rows queries, columns keys"),
     Param("alignment", '"top-left": j ≤ i (torch is_causal); or "bottom-right": j ≤ i + m − n (KV cache)', "top-left"),
     Param("scale", "number applied before the mask", 1.0),
     Param("position", "int (optional): the query row (1-based) whose visible keys are counted; default the last", None)),
    ("allowed", "masked_scores", "weights", "masked_count", "visible"),
    _causal,
    causal_mask_steps,
    mistakes=CAUSAL_MASK_MISTAKES,
    ecf=CAUSAL_MASK_ECF,
    conventions=lambda p: {"alignment": {"top-left": "top-left: j ≤ i (torch's is_causal)",
                             "bottom-right": "bottom-right: j ≤ i + m − n (causal_lower_right; decoding with a cache)"}
               .get(p["alignment"], ""),
               "mask": "−∞ before the softmax; masked weights are 0"},
)


# ------------------------------------------------------------------------------- teacher-forcing

class TeacherForcingSteps(NamedTuple):
    decoder_input: Step
    labels: Step


def teacher_forcing_steps(p: dict[str, Any], t: Trace) -> TeacherForcingSteps:
    return TeacherForcingSteps(
        Step("Shift the target right by one and start with the start token",
             r"\text{input} = [\text{bos}, y_1, \text{…}, y_{T-1}]" if p["eos"] is None
             else r"\text{input} = [\text{bos}, y_1, \text{…}, y_T]", {"decoder_input": t.decoder_input}),
        Step("Position t is trained to predict the next target token",
             r"\text{labels} = [y_1, \text{…}, y_T]" if p["eos"] is None else r"\text{labels} = [y_1, \text{…}, y_T, \text{eos}]",
             {"labels": t.labels}))


END = "[EOS]"          # the end token a left shift puts last where the problem names none


TEACHER_FORCING_MISTAKES = {
    "decoder_input": (
        Mistake("no-shift", compute=lambda p, t: list(p["tokens"]),
                why="Fed unshifted, position t would see the very token it must predict."),
        Mistake("left-shift", compute=lambda p, t: [*p["tokens"][1:], END if p["eos"] is None else p["eos"]],
                when=lambda p: p["eos"] is not None or all(isinstance(x, str) for x in p["tokens"]),   # END is a word
                why="The input is shifted right: it starts with the start token.")),
    "labels": (
        Mistake("input-as-labels", compute=lambda p, t: list(t.decoder_input),
                why="The labels are the targets themselves: position t is trained to predict y_t, not to repeat its input."),
        Mistake("no-eos", compute=lambda p, t: list(p["tokens"]), when=lambda p: p["eos"] is not None,
                why="With an end token the labels end with it: the model learns when to stop.")),
}


TEACHER_FORCING = Topic(
    "teacher-forcing", "Teacher forcing: the right-shifted decoder input and the labels",
    (Param("tokens", "list of target tokens (strings or ids)"), Param("bos", "start token", "<go>"),
     Param("eos", "end token appended to the labels (optional)", None)),
    ("decoder_input", "labels"),
    lambda p: engine.teacher_forcing(p["tokens"], bos=p["bos"], eos=p["eos"]),
    teacher_forcing_steps,
    lambda p: {"shift": "right by one position (Vaswani et al. 2017, §3.1)",
               "eos": "none" if p["eos"] is None else f"{p['eos']} appended to the labels"},
    mistakes=TEACHER_FORCING_MISTAKES,
)
