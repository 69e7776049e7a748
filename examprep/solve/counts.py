"""Solve topics of counting: param-count, lora, scaling-law, lora-memory and training-time."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import REQUIRED, Ecf, Mistake, Param, Ref, Refusal, Step, Topic, stated_params


def _given(p: dict[str, Any], name: str) -> bool:
    return p.get(name) is not None


# ----------------------------------------------------------------------------------- param-count

class ParamCountSteps(NamedTuple):
    gates: Step | None             # recurrent layers: the gate blocks
    per_tensor: Step
    total: Step


def param_count_steps(p: dict[str, Any], t: Trace) -> ParamCountSteps:
    return ParamCountSteps(
        Step("Gate blocks", r"G", {"gates": t.gates}) if "gates" in t else None,
        Step("Parameters per tensor", r"\text{numel}", dict(t.breakdown)),
        Step("Total", r"\sum \text{numel}" + (r" \times \text{num\_layers}" if t.num_layers > 1 else ""), {"count": t["count"]}))


def _param_count(p: dict[str, Any]) -> Trace:
    return engine.param_count(p["layer"], bias=p["bias"], bidirectional=p["bidirectional"],
                              num_layers=p["num_layers"], framework=p["framework"], reset_after=p["reset_after"],
                              affine=p["affine"], **{n: p[n] for n in engine.counts.SIZE_NAMES if p.get(n) is not None},
                              **{n: p[n] for n in engine.counts.PROJECTION_BIASES if p.get(n) is not None})


def _is(*layers: str, framework: str | None = None) -> Any:
    return lambda p: p["layer"] in layers and (framework is None or p["framework"] == framework)


_RECURRENT = ("rnn", "lstm", "gru")


def _keras_count(p: dict[str, Any]) -> int:
    """The count with Keras's one bias vector per block (a GRU with reset_after=False)."""
    return _param_count({**p, "framework": "keras", "reset_after": False if p["layer"] == "gru" else p["reset_after"]})["count"]


def _spans_area(p: dict[str, Any]) -> bool:
    """A kernel wider than 1×1. A 1×1 conv's weights are its C_out×C_in matrix, a linear layer's, which
    a problem shows as such (conv2d-channels): forgetting C_in is no slip one makes there."""
    k = p["kernel_size"]
    return any(v > 1 for v in (k if isinstance(k, (list, tuple)) else [k]))


def _per_projection(p: dict[str, Any]) -> bool:
    return p["layer"] == "multi-head-attention" and any(p.get(n) is not None for n in engine.counts.PROJECTION_BIASES)


def _some_unbiased(p: dict[str, Any], value: bool = True) -> bool:
    """Some projection's bias flag (as given, else ``bias``) is not ``value``: true for ``value`` true when
    one projection lacks a bias."""
    return any((p[n] if p.get(n) is not None else p["bias"]) != value for n in engine.counts.PROJECTION_BIASES)


def _normalises_several_axes(p: dict[str, Any]) -> bool:
    shape = p.get("normalized_shape")
    return p["layer"] == "layer-norm" and p["affine"] and isinstance(shape, (list, tuple)) and len(shape) > 1


# Per layer kind: one id may have two explanations (no-bias), each limited by `when` to its own layers.
PARAM_COUNT_MISTAKES = {
    "count": (
        Mistake("no-bias", bias=False, when=_is("linear"), why="The bias adds one parameter per output."),
        Mistake("bias-per-input", in_features=lambda p: p["out_features"], out_features=lambda p: p["in_features"],
                when=_is("linear"), why="There is one bias per output (out_features), not per input."),
        Mistake("no-in-channels", in_channels=1, when=lambda p: _is("conv2d")(p) and _spans_area(p),
                why="Each filter spans all c_in input channels: k·k·c_in weights per filter."),
        Mistake("kernel-1d", kernel_size=lambda p: [p["kernel_size"], 1],
                when=lambda p: _is("conv2d")(p) and isinstance(p["kernel_size"], int) and p["kernel_size"] > 1,
                why="A k×k kernel has k² weights per channel, not k."),
        Mistake("no-bias", bias=False, when=_is("conv2d"), why="One bias per output channel."),
        Mistake("with-bias", compute=lambda p, t: _param_count(
                    {**{k: v for k, v in p.items() if k not in engine.counts.SIZE_NAMES}, "layer": "linear", "bias": True,
                     "in_features": p["num_embeddings"], "out_features": p["embedding_dim"]})["count"],
                when=_is("embedding"), why="An embedding is a lookup table: no bias, just num_embeddings × embedding_dim."),
        Mistake("one-bias", compute=lambda p, t: _keras_count(p), when=_is(*_RECURRENT, framework="pytorch"),
                why="PyTorch keeps two bias vectors per block (b_ih and b_hh), not one."),
        Mistake("no-bias", bias=False, when=_is(*_RECURRENT, framework="pytorch"), why="Each block has biases too."),
        Mistake("no-recurrent-weights", compute=lambda p, t: t["count"] - t.gates * p["hidden_size"] ** 2,
                when=_is(*_RECURRENT, framework="pytorch"),
                why="Each block also has recurrent weights W_hh (H×H) on the previous state."),
        Mistake("gru-blocks", layer="gru", when=_is("lstm", framework="pytorch"),
                why="That is the GRU count; this LSTM has 4 block(s)."),
        Mistake("lstm-blocks", layer="lstm", when=_is("gru", framework="pytorch"),
                why="That is the LSTM count; this GRU has 3 block(s)."),
        Mistake("gru-blocks", layer="gru", when=_is("rnn", framework="pytorch"),
                why="That is the GRU count; this RNN has 1 block(s)."),
        Mistake("two-biases", framework="pytorch", reset_after=True, when=_is(*_RECURRENT, framework="keras"),
                why="Keras keeps one bias vector per block (here), PyTorch two."),
        Mistake("no-bias", framework="pytorch", reset_after=True, bias=False, when=_is(*_RECURRENT, framework="keras"),
                why="Keras still has one bias per unit and block."),
        Mistake("no-output-projection", compute=lambda p, t: sum(v for k, v in t.breakdown.items()
                                                                 if not k.startswith("out_proj")),
                when=_is("multi-head-attention"), why="Multi-head attention also has the output projection W_O (d×d + d)."),
        Mistake("full-size-heads", compute=lambda p, t: _param_count({**p, "num_heads": 1})["count"] * p["num_heads"],
                when=lambda p: _is("multi-head-attention")(p) and p["num_heads"] > 1,
                why="Each head projects to d_k = d/h, so the heads together still use d×d per projection."),
        Mistake("no-bias", bias=False, when=lambda p: _is("multi-head-attention")(p) and not _per_projection(p),
                why="Each of the four projections has a bias of length d."),
        Mistake("all-biases", compute=lambda p, t: _param_count({**p, **dict.fromkeys(engine.counts.PROJECTION_BIASES),
                                                                  "bias": True})["count"],
                when=lambda p: _per_projection(p) and _some_unbiased(p),
                why="Only the projections with a bias have one: count d biases for each of those, none for the others."),
        Mistake("no-bias", compute=lambda p, t: _param_count({**p, **dict.fromkeys(engine.counts.PROJECTION_BIASES),
                                                               "bias": False})["count"],
                when=lambda p: _per_projection(p) and not _some_unbiased(p, False),
                why="The projections with a bias add d parameters each."),
        Mistake("no-layer-norms", compute=lambda p, t: t["count"] - sum(v for k, v in t.breakdown.items()
                                                                         if k.startswith("norm")),
                when=_is("transformer-encoder-layer", "transformer-decoder-layer"),
                why="Each layer norm has γ and β: 2·d_model parameters."),
        Mistake("no-bias", bias=False, when=_is("transformer-encoder-layer", "transformer-decoder-layer"),
                why="The linear layers and layer norms have biases."),
        Mistake("no-cross-attention", layer="transformer-encoder-layer", when=_is("transformer-decoder-layer"),
                why="A decoder layer has a second attention sublayer: cross-attention over the encoder output."),
        Mistake("decoder-count", layer="transformer-decoder-layer", when=_is("transformer-encoder-layer"),
                why="That is a decoder layer; an encoder layer has no cross-attention."),
        # LayerNorm([C, H, W]) (issue 38): one γ and β per normalised VALUE, not per channel or per last-axis entry
        Mistake("per-channel", normalized_shape=lambda p: p["normalized_shape"][0], when=_normalises_several_axes,
                why="LayerNorm(normalized_shape) has a γ and a β for every value of the normalised shape "
                    "(C·H·W each), not one per channel as BatchNorm and GroupNorm have."),
        Mistake("last-axis-only", normalized_shape=lambda p: p["normalized_shape"][-1], when=_normalises_several_axes,
                why="normalized_shape [C, H, W] normalises (and scales) over all three axes: γ and β have C·H·W "
                    "entries each, not W."),
    ),
    "gates": (   # a worked-step value the recurrent problems ask (the gate blocks)
        Mistake("gates-only", compute=lambda p, t: t.gates - 1, when=_is("lstm"),
                why="Besides its 3 gates (i, f, o) the LSTM has the candidate g: 4 blocks."),
        Mistake("gru-count", layer="gru", when=_is("lstm"), why="3 blocks is the GRU; the LSTM has 4 (i, f, g, o)."),
        Mistake("gates-only", compute=lambda p, t: t.gates - 1, when=_is("gru"),
                why="Besides its 2 gates (r, z) the GRU has the candidate n: 3 blocks."),
        Mistake("lstm-count", layer="lstm", when=_is("gru"), why="4 blocks is the LSTM; the GRU has 3 (r, z, n)."),
        Mistake("lstm-count", layer="lstm", when=_is("rnn"),
                why="A vanilla RNN has no gates: one block, h' = tanh(W_ih x + W_hh h + b)."),
        Mistake("two-blocks", compute=lambda p, t: 2, when=_is("rnn"),
                why="W_ih and W_hh together form one block: one pre-activation per unit."),
    ),
}


_SIZE_TEXT = {"normalized_shape": "int or list of ints (LayerNorm's shape, e.g. [C, H, W]: C·H·W values)",
              "input_shape": "network: [C, H, W] or [F], as network-shapes",
              "layers": "network: its layers as network-shapes takes them (a chain, or a graph with add and concat)"}

PARAM_COUNT_ECF = {"count": (Ecf("solve:param-count", lambda p, t: stated_params("param-count", p), "count"),)}


PARAM_COUNT = Topic(
    "param-count", "Number of learnable parameters of a layer",
    (Param("layer", " | ".join(engine.counts.LAYERS)),
     Param("bias", "bool", True), Param("bidirectional", "bool (recurrent)", False),
     Param("num_layers", "int", 1), Param("framework", '"pytorch" or "keras"', "pytorch"),
     Param("reset_after", "bool (Keras GRU only: two bias vectors when true)", True),
     Param("affine", "bool (batch-norm, layer-norm: γ and β)", True))
    + tuple(Param(n, f"bool (multi-head-attention: the {w} projection's bias; default: bias)", None)
            for n, w in zip(engine.counts.PROJECTION_BIASES, ("query", "key", "value", "output")))
    + tuple(Param(n, _SIZE_TEXT.get(n, "int (a size, by PyTorch's argument name)"), None) for n in engine.counts.SIZE_NAMES),
    ("count",),
    _param_count,
    param_count_steps,
    mistakes=PARAM_COUNT_MISTAKES,
    ecf=PARAM_COUNT_ECF,
    conventions=lambda p: {"framework": p["framework"] + (" (two bias vectors per gate block)" if p["framework"] == "pytorch"
                                              else " (one bias vector per gate block; GRU reset_after keeps two)")},
    refuses=(Refusal('framework "keras" for a Transformer layer (Keras has none built in)',
                     {"layer": "transformer-encoder-layer", "d_model": 4, "num_heads": 2, "dim_feedforward": 8,
                      "framework": "keras"}),),
)


# ------------------------------------------------------------------------------------------ lora

class LoraSteps(NamedTuple):
    per_matrix: Step
    trainable_params: Step
    full_params: Step
    fraction: Step
    delta_weight: Step | None          # where the factors are given


def lora_steps(p: dict[str, Any], t: Trace) -> LoraSteps:
    return LoraSteps(
        Step("Per adapted matrix: B (d×r) and A (r×k)", r"r(d + k)", {"per_matrix": t.per_matrix}),
        Step("Trainable parameters", r"\text{num\_matrices} \cdot r (d + k)", {"trainable_params": t.trainable_params}),
        Step("Full fine-tuning of the same matrices", r"\text{num\_matrices} \cdot d k", {"full_params": t.full_params}),
        Step("Fraction trained", r"\frac{r(d+k)}{dk}", {"fraction": t.fraction, "saved_params": t.saved_params}),
        Step("The update: B (d×r) times A (r×k), scaled by α/r" if p["lora_alpha"] is not None else
             "The update: B (d×r) times A (r×k), a d×k matrix of rank at most r",
             r"\Delta W = \frac{\alpha}{r} B A" if p["lora_alpha"] is not None else r"\Delta W = B A",
             {"scaling": t.scaling, "delta_weight": t.delta_weight}) if p["lora_B"] is not None else None)


LORA_MISTAKES = {
    "trainable_params": (
        Mistake("product-not-sum", why="B is d×r and A is r×k: r(d + k) parameters, not r·d·k.",
                compute=lambda p, t: p["d"] * p["k"] * p["r"] * p["num_matrices"]),
        Mistake("only-b", why="Both factors are trained: B (d×r) and A (r×k).",
                compute=lambda p, t: engine.param_count("linear", in_features=p["r"], out_features=p["d"],
                                                        bias=False)["count"] * p["num_matrices"]),
        Mistake("one-matrix", num_matrices=1,
                why="That is one adapted matrix's r(d + k); each of the adapted matrices has its own B and A."),
        Mistake("full-matrix", compute=lambda p, t: t.full_params, when=lambda p: p["r"] > 1,   # r = 1: product-not-sum's d·k
                why="That is the full d×k matrix's d·k; LoRA trains only its factors B (d×r) and A (r×k): r(d + k).")),
    "full_params": (
        Mistake("one-matrix", num_matrices=1, why="Full fine-tuning trains every adapted matrix, not one."),
        Mistake("sum-not-product", why="A d×k matrix has d·k entries, not d + k.",
                compute=lambda p, t: (p["d"] + p["k"]) * p["num_matrices"]),),
    "fraction": (
        Mistake("r-over-d", why="r/d ignores the second factor: the fraction is r(d + k)/(d k).",
                compute=lambda p, t: p["r"] / p["d"]),
        Mistake("inverted", why="That is full / trainable; the fraction is trainable / full.",
                compute=lambda p, t: t.full_params / t.trainable_params)),
    "delta_weight": (
        Mistake("inner-product", compute=lambda p, t: t.scaling * float(np.asarray(p["lora_A"], dtype=float)[0]
                                                                        @ np.asarray(p["lora_B"], dtype=float)[:, 0]),
                when=lambda p: p["r"] == 1 and p["d"] == p["k"],
                why="With r = 1, B A is the outer product b aᵀ (a d×k matrix), not the inner product aᵀb."),
        Mistake("transposed", compute=lambda p, t: t.delta_weight.T, when=lambda p: p["d"] == p["k"],
                why="Row i of B A is B's row i times A: (B A)_ij = Σ_r B_ir A_rj, not (B A)ᵀ."),
        Mistake("no-scaling", compute=lambda p, t: t.delta_weight / t.scaling,
                when=lambda p: p["lora_alpha"] is not None and p["lora_alpha"] != p["r"],
                why="The update is scaled by α/r (Hu et al. 2021, §4.1): ΔW = (α/r)·B A.")),
}

LORA_ECF = {
    "trainable_params": (Ecf("solve:lora", lambda p, t: p, "trainable_params"),),
    "full_params": (Ecf("solve:lora", lambda p, t: p, "full_params"),),
    "fraction": (Ecf("divide", lambda p, t: {"a": Ref("trainable_params"), "b": Ref("full_params")}),),
}


LORA = Topic(
    "lora", "LoRA trainable parameters",
    (Param("d", "int (out features)"), Param("k", "int (in features)"), Param("r", "int (rank)"),
     Param("num_matrices", "int", 1),
     Param("lora_B", "matrix d×r (optional, with lora_A): B, PEFT's lora_B weight", None),
     Param("lora_A", "matrix r×k (optional, with lora_B): A, PEFT's lora_A weight", None),
     Param("lora_alpha", "number α (optional): the update scaled by α/r, PEFT's lora_alpha; none: scaling 1", None)),
    ("trainable_params", "full_params", "fraction", "delta_weight"),
    lambda p: engine.lora(p["d"], p["k"], p["r"], num_matrices=p["num_matrices"], lora_B=p["lora_B"], lora_A=p["lora_A"],
                          lora_alpha=p["lora_alpha"]),
    lora_steps,
    lambda p: {"update": "W = W₀ + BA with B (d×r), A (r×k) (Hu et al. 2021)",
               **({"scaling": "ΔW = (α/r)·B A (Hu et al. 2021 §4.1; PEFT's scaling)" if p["lora_alpha"] is not None
                   else "ΔW = B A (scaling 1)"} if p["lora_B"] is not None else {})},
    answer_names=lambda p, t: ("trainable_params", "full_params", "fraction")
    + (("delta_weight",) if p["lora_B"] is not None else ()),
    mistakes=LORA_MISTAKES,
    ecf=LORA_ECF,
)


# ----------------------------------------------------------------------------------- scaling-law

class ScalingLawSteps(NamedTuple):
    optimal: Step | None           # one of N, D, C given: the compute-optimal split
    compute: Step


def scaling_law_steps(p: dict[str, Any], t: Trace) -> ScalingLawSteps:
    alone = len([n for n in ("params", "tokens", "compute") if _given(p, n)]) == 1
    return ScalingLawSteps(
        Step("Compute-optimal split (Chinchilla)", r"D = 20 N,\ C = 6 N D = 120 N^2 \Rightarrow N = \sqrt{C / 120}"
             if p["tokens_per_param"] == 20 else r"D = t N,\ N = \sqrt{C / (6 t)}",
             {"params": t.params, "tokens": t.tokens}) if alone else None,
        Step("Training compute", r"C = 6 N D", {"params": t.params, "tokens": t.tokens, "compute": t.compute}))


def _only_compute(p: dict[str, Any]) -> bool:
    """Only the budget C given: N and D are the compute-optimal split."""
    return _given(p, "compute") and not _given(p, "params") and not _given(p, "tokens")


def _chinchilla(p: dict[str, Any]) -> bool:
    return _only_compute(p) and p["tokens_per_param"] == 20


def _twenty_per_param(p: dict[str, Any]) -> bool:
    """D = 20N: the tokens asked, found from N by Chinchilla's ratio (not from a given C as C/(6N))."""
    return (p["tokens_per_param"] == 20 and not _given(p, "tokens")
            and not (_given(p, "params") and _given(p, "compute")))


SCALING_MISTAKES = {
    "compute": (
        Mistake("forward-only", why="2ND counts the forward pass only; the backward pass costs about twice as much: C = 6ND.",
                compute=lambda p, t: t.compute / 3, when=lambda p: not _given(p, "compute")),
        Mistake("no-factor", why="Each parameter costs about 6 FLOPs per token in training: C = 6ND.",
                compute=lambda p, t: t.compute / 6, when=lambda p: not _given(p, "compute"))),
    "params": (
        Mistake("forgot-tokens-per-param", tokens_per_param=1.0, when=_chinchilla,
                why="With D = 20N, C = 6·N·20N = 120N², so N = √(C/120), not √(C/6)."),
        # C = 2ND·… ⇒ N = √(C/40) = √(3C/120): the engine with 3C (not a keyword convention: `compute` is Mistake's own)
        Mistake("forward-only", when=_only_compute, why="Training compute is 6ND, not 2ND: N = √(C/120).",
                compute=lambda p, t: engine.scaling_law(compute=3 * p["compute"],
                                                        tokens_per_param=p["tokens_per_param"]).params),
        Mistake("no-square-root", why="C/120 is N²; take the square root.", when=_chinchilla,
                compute=lambda p, t: p["compute"] / 120)),
    "tokens": (
        Mistake("divided", why="D = 20N: twenty tokens per parameter, not N/20.",
                compute=lambda p, t: t.params / 20, when=_twenty_per_param),),
    "tokens_per_param_used": (   # a worked-step value: D/N, against the compute-optimal ratio
        Mistake("inverted", why="That is N/D; tokens per parameter is D/N.",
                compute=lambda p, t: 1 / t.tokens_per_param_used),),
}


def _given_inputs(p: dict[str, Any]) -> dict[str, Any]:
    """The problem's inputs as it gives them: N, D and C where given, the ratio where not Chinchilla's 20."""
    return ({k: p[k] for k in ("params", "tokens", "compute") if _given(p, k)}
            | ({} if p["tokens_per_param"] == 20 else {"tokens_per_param": p["tokens_per_param"]}))


SCALING_ECF = {
    "params": (Ecf("solve:scaling-law", lambda p, t: _given_inputs(p), "params"),),
    # N is asked where only the budget C is given: D = t·N then carries a student's N forward
    "tokens": (Ecf("scale", lambda p, t: {"x": Ref("params"), "factor": float(p["tokens_per_param"])}),),
    "compute": (Ecf("solve:scaling-law", lambda p, t: _given_inputs(p), "compute"),),
    # D/N of the student's own D and N where the problem asks them, else of the values it gives
    "tokens_per_param_used": (Ecf("divide", lambda p, t: {"a": t.tokens if _given(p, "tokens") else Ref("tokens"),
                                                         "b": t.params if _given(p, "params") else Ref("params")}),
                              Ecf("divide", lambda p, t: {"a": t.tokens, "b": t.params})),
}


SCALING_LAW = Topic(
    "scaling-law", "Training compute C = 6ND and the compute-optimal split",
    (Param("params", "N (parameters)", None), Param("tokens", "D (training tokens)", None),
     Param("compute", "C (FLOPs)", None), Param("tokens_per_param", "number", 20)),
    ("params", "tokens", "compute"),
    lambda p: engine.scaling_law(params=p["params"], tokens=p["tokens"], compute=p["compute"],
                                 tokens_per_param=p["tokens_per_param"]),
    scaling_law_steps,
    lambda p: {"compute": "C = 6·N·D FLOPs (Kaplan et al. 2020)",
               "optimal": f"{p['tokens_per_param']} tokens per parameter (Hoffmann et al. 2022)"},
    refuses=(Refusal("all three of params, tokens and compute", {"params": 1, "tokens": 2, "compute": 12}),),
    mistakes=SCALING_MISTAKES,
    ecf=SCALING_ECF,
)


# ----------------------------------------------------------------------------------- lora-memory

class LoraMemorySteps(NamedTuple):
    trained: Step
    per_param: Step                # values and bytes kept per trained parameter
    memory: Step
    saved: Step


def lora_memory_steps(p: dict[str, Any], t: Trace) -> LoraMemorySteps:
    return LoraMemorySteps(
        Step("Trained parameters: LoRA's B (d×r) and A (r×k) against the full matrices",
             r"\text{num\_matrices} \cdot r(d + k)\ \text{vs}\ \text{num\_matrices} \cdot d k",
             {"trainable_params": t.trainable_params, "full_params": t.full_params, "fraction": t.fraction}),
        Step("Values kept per trained parameter: its gradient and the optimizer's states",
             r"1 + \text{states},\ \text{bytes} = (1 + \text{states}) \cdot \text{bytes per value}",
             {"values_per_param": t.values_per_param, "bytes_per_param": t.bytes_per_param}),
        Step("Training memory of each", r"\text{params} \times \text{bytes per parameter}",
             {"full_training_bytes": t.full_training_bytes, "lora_training_bytes": t.lora_training_bytes}),
        Step("Saved",
             r"(d k - r(d + k)) \cdot \text{num\_matrices} \cdot \text{bytes per parameter},"
             r"\ 1\ \text{MiB} = 2^{20}\ \text{bytes}",
             {"saved_bytes": t.saved_bytes, "saved_mib": t.saved_mib}))


def _adam(p: dict[str, Any]) -> bool:
    return p["optimizer"] == "adam"


LORA_MEMORY_MISTAKES = {
    **LORA_MISTAKES,                 # the parameter counts it shares with lora
    "bytes_per_param": (
        Mistake("no-optimizer-states", optimizer="sgd", when=_adam,
                why="Adam also keeps two moments (m and v) per parameter."),
        Mistake("no-optimizer-states", optimizer="sgd", when=lambda p: p["optimizer"] == "sgd-momentum",
                why="SGD with momentum also keeps a momentum buffer per parameter."),
        Mistake("no-gradient", optimizer="sgd-momentum", when=_adam,
                why="Besides Adam's two moments, each trained parameter has a gradient.")),
    "saved_mib": (
        Mistake("no-optimizer-states", optimizer="sgd", when=_adam,
                why="You counted the gradients only; Adam's two moments are saved too."),
        Mistake("decimal-megabytes", why="1 MiB = 2²⁰ = 1,048,576 bytes, not 10⁶.", compute=lambda p, t: t.saved_bytes / 1e6),
        Mistake("lora-memory-not-saving", why="That is what LoRA still needs; the saving is full − LoRA.",
                compute=lambda p, t: t.lora_training_bytes / 2 ** 20)),
}

LORA_MEMORY_ECF = {
    **{a: (Ecf("solve:lora-memory", lambda p, t: p, a),) for a in ("trainable_params", "full_params", "bytes_per_param")},
    "fraction": LORA_ECF["fraction"],
    # (full − LoRA) parameters × the student's bytes per parameter, from their own counts where asked
    "saved_mib": (Ecf("difference-times", lambda p, t: {"a": Ref("full_params"), "b": Ref("trainable_params"),
                                                        "factor": Ref("bytes_per_param"), "divisor": 2 ** 20}),
                  Ecf("solve:lora-memory", lambda p, t: p, "saved_mib")),
}


LORA_MEMORY = Topic(
    "lora-memory", "Training memory LoRA saves on gradients and optimizer states",
    (Param("d", "int (out features)"), Param("k", "int (in features)"), Param("r", "int (rank)"),
     Param("num_matrices", "int", 1), Param("bytes_per_value", "int (4 for float32, 2 for bf16)", 4),
     Param("optimizer", '"adam" (2 states), "sgd-momentum" (1) or "sgd" (0)', "adam")),
    ("trainable_params", "full_params", "fraction", "bytes_per_param", "full_training_bytes", "lora_training_bytes",
     "saved_bytes", "saved_mib"),
    lambda p: engine.lora_memory(p["d"], p["k"], p["r"], num_matrices=p["num_matrices"],
                                 bytes_per_value=p["bytes_per_value"], optimizer=p["optimizer"]),
    lora_memory_steps,
    lambda p: {"counted": "gradients and optimizer states of the trained values; frozen weights and activations "
                          "are the same for both and not counted",
               "optimizer": f"{p['optimizer']}", "bytes_per_value": str(p["bytes_per_value"])},
    mistakes=LORA_MEMORY_MISTAKES,
    ecf=LORA_MEMORY_ECF,
)


# --------------------------------------------------------------------------------- training-time

class TrainingTimeSteps(NamedTuple):
    compute: Step | None           # from params and tokens
    throughput: Step
    time: Step                     # seconds, hours, days


def training_time_steps(p: dict[str, Any], t: Trace) -> TrainingTimeSteps:
    return TrainingTimeSteps(
        None if p["compute"] is not None else Step("Training compute", r"C = 6 N D", {"compute": t.compute}),
        Step("Sustained throughput of the cluster", r"\text{GPUs} \times \text{peak} \times \text{utilisation}",
             {"throughput": t.throughput}),
        Step("Time", r"t = C / \text{throughput},\ 1\ \text{day} = 86400\ \text{s}",
             {"seconds": t.seconds, "hours": t.hours, "days": t.days}))


def _time_mistakes(unit: str) -> tuple[Mistake, ...]:
    """The known mistakes of the training time in ``unit`` (a trace field: seconds or days)."""
    def forward_only(p: dict[str, Any], t: Trace) -> float:      # C = 2ND: the time of a third of the compute
        return engine.training_time(compute=t.compute / 3, num_gpus=p["num_gpus"], peak_flops=p["peak_flops"],
                                    utilization=p["utilization"])[unit]

    return (Mistake("ignored-utilization", utilization=1.0,
                    why="The accelerators sustain only a fraction of their peak (the utilisation): divide by it too."),
            Mistake("forward-only", why="Training costs C = 6ND, not 2ND (forward only).", compute=forward_only,
                    when=lambda p: not _given(p, "compute")),
            Mistake("one-accelerator", num_gpus=1, why="The work is shared by all the accelerators: divide by their number."))


TRAINING_TIME_MISTAKES = {
    "compute": SCALING_MISTAKES["compute"],          # C = 6ND from N and D, as scaling-law computes it
    "throughput": (Mistake("ignored-utilization", utilization=1.0,
                           why="The sustained throughput is the peak times the utilisation."),),
    "seconds": _time_mistakes("seconds"),
    "days": _time_mistakes("days") + (Mistake("hours-not-days", why="That is hours; a day has 86,400 s.",
                                              compute=lambda p, t: t.hours),),
}


def _cluster(p: dict[str, Any]) -> dict[str, Any]:
    return {k: p[k] for k in ("num_gpus", "peak_flops", "utilization")}


def _given_time(p: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in p.items() if v is not None}


TRAINING_TIME_ECF = {
    "throughput": (Ecf("solve:training-time", lambda p, t: _given_time(p), "throughput"),),
    # the time of the student's own compute where the problem asks it (C = 6ND), else of the compute given
    **{unit: (Ecf("solve:training-time", lambda p, t: {"compute": Ref("compute")} | _cluster(p), unit),
              Ecf("solve:training-time", lambda p, t: _given_time(p), unit)) for unit in ("seconds", "days")},
}


TRAINING_TIME = Topic(
    "training-time", "Training time from a compute budget",
    (Param("peak_flops", "FLOP/s of one accelerator", REQUIRED), Param("compute", "C (FLOPs)", None),
     Param("params", "N (parameters; with tokens, C = 6ND)", None), Param("tokens", "D (training tokens)", None),
     Param("num_gpus", "int", 1), Param("utilization", "fraction of peak achieved (MFU), in (0, 1]", 1.0)),
    ("compute", "throughput", "seconds", "days"),
    lambda p: engine.training_time(compute=p["compute"], params=p["params"], tokens=p["tokens"], num_gpus=p["num_gpus"],
                                   peak_flops=p["peak_flops"], utilization=p["utilization"]),
    training_time_steps,
    lambda p: {"compute": "C = 6·N·D FLOPs (Kaplan et al. 2020)", "utilization": str(p["utilization"])},
    mistakes=TRAINING_TIME_MISTAKES,
    ecf=TRAINING_TIME_ECF,
)
