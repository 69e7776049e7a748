"""Counting: parameters of layers, LoRA's trainable parameters and the training memory it saves, compute
by the scaling laws and the training time it takes."""
from __future__ import annotations

import math
from typing import Any

from examprep.engine._core import Trace, boolean, choice, int_tuple, integer, matrix, number
from examprep.engine.network import network_shapes
from examprep.engine.norm import normalized_shape_of
from examprep.errors import ParamError

LAYERS = ("linear", "conv2d", "rnn", "lstm", "gru", "embedding", "batch-norm", "layer-norm", "multi-head-attention",
          "transformer-encoder-layer", "transformer-decoder-layer", "network")

# Sizes each layer needs (PyTorch's argument names) and those with a default.
_NEEDS = {
    "linear": ("in_features", "out_features"),
    "conv2d": ("in_channels", "out_channels", "kernel_size"),
    "rnn": ("input_size", "hidden_size"),
    "lstm": ("input_size", "hidden_size"),
    "gru": ("input_size", "hidden_size"),
    "embedding": ("num_embeddings", "embedding_dim"),
    "batch-norm": ("num_features",),
    "layer-norm": ("normalized_shape",),
    "multi-head-attention": ("d_model", "num_heads"),
    "transformer-encoder-layer": ("d_model", "num_heads"),
    "transformer-decoder-layer": ("d_model", "num_heads"),
    "network": ("input_shape", "layers"),           # network-shapes' graph or chain: its total parameters
}
_OPTIONAL = {"conv2d": {"groups": 1},
             "transformer-encoder-layer": {"dim_feedforward": 2048},
             "transformer-decoder-layer": {"dim_feedforward": 2048}}
GATES = {"rnn": 1, "lstm": 4, "gru": 3}
SIZE_NAMES = sorted({n for v in _NEEDS.values() for n in v} | {"groups", "dim_feedforward"})


def _mha(d: int, heads: int, bias: bool) -> dict[str, int]:
    if d % heads:
        raise ParamError(f"num_heads: must divide d_model ({d} is not divisible by {heads})")
    return {"in_proj_weight (W_Q, W_K, W_V)": 3 * d * d, "in_proj_bias": 3 * d * bias,
            "out_proj.weight (W_O)": d * d, "out_proj.bias": d * bias}


PROJECTION_BIASES = ("q_bias", "k_bias", "v_bias", "out_bias")


def _mha_per_projection(d: int, heads: int, flags: dict[str, bool]) -> dict[str, int]:
    """Multi-head attention with a bias flag per projection (GPT-2's fused qkv without one, say)."""
    full = _mha(d, heads, True)
    return {"in_proj_weight (W_Q, W_K, W_V)": full["in_proj_weight (W_Q, W_K, W_V)"],
            **{f"{x}_proj.bias": d * flags[f"{x}_bias"] for x in "qkv"},
            "out_proj.weight (W_O)": d * d, "out_proj.bias": d * flags["out_bias"]}


def param_count(layer: str, *, bias: bool = True, bidirectional: bool = False, num_layers: int = 1,
                framework: str = "pytorch", reset_after: bool = True, affine: bool = True, q_bias: bool | None = None,
                k_bias: bool | None = None, v_bias: bool | None = None, out_bias: bool | None = None,
                **sizes: Any) -> Trace:
    """Number of learnable parameters of a layer, as the framework's module counts them.

    layer and sizes use PyTorch's names (torch.nn.Linear(in_features, out_features),
    Conv2d(in_channels, out_channels, kernel_size, groups), RNN/LSTM/GRU(input_size, hidden_size),
    Embedding(num_embeddings, embedding_dim), BatchNorm2d(num_features), LayerNorm(normalized_shape: an int or a
    list such as [C, H, W], whose product D counts),
    MultiheadAttention(d_model, num_heads), TransformerEncoderLayer/DecoderLayer(d_model, num_heads,
    dim_feedforward=2048)); the count equals sum(p.numel() for p in module.parameters()).
    Recurrent layers with G gate blocks (RNN 1, LSTM 4: 3 gates + candidate, GRU 3: 2 gates +
    candidate): PyTorch has two bias vectors, G·H·(I + H) + 2·G·H per layer and direction;
    framework "keras" has one, G·H·(I + H) + G·H, except a Keras GRU with reset_after=True (its
    default) which keeps two. Layer l > 0 of a stack reads H·directions inputs.
    bias=False drops every bias (for Transformer layers also LayerNorm's, as PyTorch ≥ 2.1).
    Multi-head attention takes a bias flag per projection, q_bias, k_bias, v_bias and out_bias (each as
    ``bias`` where not given): GPT-2 small's attention counted with qkv without bias and out_proj with one
    (d = 768) has 3·768² + 768² + 768 = 2,360,064; Whisper's key projection has none.
    Normalisation layers: γ and β, 2C (batch-norm) or 2D (layer-norm; D only with bias=False); affine=False
    (BatchNorm's affine, LayerNorm's elementwise_affine) has none. Batch norm's running mean and variance
    are buffers, not parameters: 2C in every framework (Keras's summary lists 4C, 2C of them non-trainable).
    layer "network": input_shape and layers as network-shapes takes them (a chain or a graph with add and
    concat); the count is its total parameters, the breakdown per named layer.
    num_layers stacks identical layers (Transformer layers: nn.TransformerEncoder without a final norm).
    Returns count, breakdown (name → count), and gates for recurrent layers.
    Raises ParamError for an unknown layer, a missing or unknown size, sizes < 1, or num_heads not
    dividing d_model.
    """
    layer = choice("layer", layer, LAYERS)
    framework = choice("framework", framework, ("pytorch", "keras"))
    bias = boolean("bias", bias)
    bidirectional = boolean("bidirectional", bidirectional)
    reset_after = boolean("reset_after", reset_after)
    affine = boolean("affine", affine)
    num_layers = integer("num_layers", num_layers, 1)
    allowed = set(_NEEDS[layer]) | set(_OPTIONAL.get(layer, {}))
    for name in sizes:
        if name not in allowed:
            raise ParamError(f"{name}: not a size of layer {layer!r} (it takes {', '.join(sorted(allowed))})")
    for name in _NEEDS[layer]:
        if name not in sizes:
            raise ParamError(f"{name}: missing; layer {layer!r} needs {', '.join(_NEEDS[layer])}")
    vals = {**_OPTIONAL.get(layer, {}), **sizes}
    if layer in GATES:
        if not reset_after and not (layer == "gru" and framework == "keras"):
            raise ParamError("reset_after: applies to a Keras GRU only")
    elif bidirectional:
        raise ParamError("bidirectional: applies to rnn, lstm and gru only")
    flags = {n: v for n, v in (("q_bias", q_bias), ("k_bias", k_bias), ("v_bias", v_bias), ("out_bias", out_bias))
             if v is not None}
    if flags and layer != "multi-head-attention":
        raise ParamError(f"{next(iter(flags))}: a bias flag per projection applies to multi-head-attention only")
    flags = {n: boolean(n, flags.get(n, bias)) for n in PROJECTION_BIASES} if flags else {}
    if not affine and layer not in ("batch-norm", "layer-norm"):
        raise ParamError("affine: applies to batch-norm and layer-norm only")
    if layer == "batch-norm" and not bias:
        raise ParamError("bias: BatchNorm has no separate bias option; affine false drops γ and β together")
    elif framework == "keras" and layer.startswith("transformer"):
        raise ParamError("framework: Keras has no built-in Transformer layer; use \"pytorch\"")
    breakdown: dict[str, int] = {}
    trace = Trace()
    if layer == "network":
        if not bias:
            raise ParamError("bias: a network's layers give their own bias (each conv2d's and linear's \"bias\")")
        net = network_shapes(vals["input_shape"], vals["layers"], framework=framework)
        breakdown = dict(zip(net.layer_names, net.params))
    elif layer == "linear":
        i, o = integer("in_features", vals["in_features"], 1), integer("out_features", vals["out_features"], 1)
        breakdown = {"weight": o * i, "bias": o * bias}
    elif layer == "conv2d":
        ci, co = integer("in_channels", vals["in_channels"], 1), integer("out_channels", vals["out_channels"], 1)
        kh, kw = int_tuple("kernel_size", vals["kernel_size"], 2, minimum=1)
        groups = integer("groups", vals["groups"], 1)
        if ci % groups or co % groups:
            raise ParamError(f"groups: must divide in_channels and out_channels, got {groups} for {ci} and {co}")
        breakdown = {"weight": co * (ci // groups) * kh * kw, "bias": co * bias}
    elif layer in GATES:
        g = GATES[layer]
        i, h = integer("input_size", vals["input_size"], 1), integer("hidden_size", vals["hidden_size"], 1)
        dirs = 2 if bidirectional else 1
        two_biases = framework == "pytorch" or (layer == "gru" and reset_after)
        for lyr in range(num_layers):
            inp = i if lyr == 0 else h * dirs
            for dr in range(dirs):
                sfx = f"_l{lyr}" + ("_reverse" if dr else "")
                breakdown[f"weight_ih{sfx}"] = g * h * inp
                breakdown[f"weight_hh{sfx}"] = g * h * h
                if bias:
                    breakdown[f"bias_ih{sfx}"] = g * h
                    if two_biases:
                        breakdown[f"bias_hh{sfx}"] = g * h
        trace["gates"] = g
        num_layers = 1
    elif layer == "embedding":
        breakdown = {"weight": integer("num_embeddings", vals["num_embeddings"], 1)
                     * integer("embedding_dim", vals["embedding_dim"], 1)}
    elif layer == "batch-norm":
        c = integer("num_features", vals["num_features"], 1)
        breakdown = {"weight (γ)": c * affine, "bias (β)": c * affine}
    elif layer == "layer-norm":
        d = math.prod(normalized_shape_of(vals["normalized_shape"]))      # an int, or [C, H, W]: C·H·W values
        breakdown = {"weight (γ)": d * affine, "bias (β)": d * bias * affine}
    else:
        d, heads = integer("d_model", vals["d_model"], 1), integer("num_heads", vals["num_heads"], 1)
        if layer == "multi-head-attention":
            breakdown = _mha_per_projection(d, heads, flags) if flags else _mha(d, heads, bias)
        else:
            ff = integer("dim_feedforward", vals["dim_feedforward"], 1)
            attn = sum(_mha(d, heads, bias).values())
            breakdown = {"self_attn": attn}
            if layer == "transformer-decoder-layer":
                breakdown["multihead_attn (cross-attention)"] = attn
            breakdown.update({"linear1": d * ff + ff * bias, "linear2": ff * d + d * bias})
            for n in range(3 if layer == "transformer-decoder-layer" else 2):
                breakdown[f"norm{n + 1}"] = d + d * bias
    per_layer = sum(breakdown.values())
    trace.update(breakdown={k: v for k, v in breakdown.items() if v}, per_layer=per_layer,
                 num_layers=num_layers, count=per_layer * num_layers)
    return trace


def lora(d: int, k: int, r: int, *, num_matrices: int = 1, lora_B: Any = None, lora_A: Any = None,
         lora_alpha: Any = None) -> Trace:
    """Trainable parameters of LoRA (Hu et al. 2021, §4.1): W = W_0 + B A with B (d×r), A (r×k).

    trainable_params = num_matrices · r · (d + k); full_params = num_matrices · d · k (what full
    fine-tuning of the same matrices trains); fraction = trainable / full.
    Given the factors ``lora_B`` (d×r) and ``lora_A`` (r×k), named as PEFT's lora_B/lora_A weights,
    also the update delta_weight = scaling · B A, with scaling = lora_alpha / r (Hu et al. §4.1; PEFT's
    ``scaling``) where ``lora_alpha`` is given, else 1 (ΔW = BA as the paper first writes it).
    Raises ParamError for sizes < 1, one factor without the other or a factor of another shape.
    """
    d, k, r = integer("d", d, 1), integer("k", k, 1), integer("r", r, 1)
    m = integer("num_matrices", num_matrices, 1)
    trainable, full = m * r * (d + k), m * d * k
    out: dict[str, Any] = {}
    if (lora_B is None) != (lora_A is None):
        raise ParamError(f"{'lora_A' if lora_A is None else 'lora_B'}: give both factors (lora_B d×r and lora_A r×k), "
                         "or neither")
    if lora_B is not None:
        b, a = matrix("lora_B", lora_B, (d, r)), matrix("lora_A", lora_A, (r, k))
        scaling = 1.0 if lora_alpha is None else number("lora_alpha", lora_alpha) / r
        out = {"scaling": scaling, "delta_weight": scaling * (b @ a)}
    return Trace(per_matrix=r * (d + k), trainable_params=trainable, full_params=full,
                 fraction=trainable / full, saved_params=full - trainable, **out)


def scaling_law(*, params=None, tokens=None, compute=None, tokens_per_param: float = 20.0) -> Trace:
    """Training compute C = 6·N·D (Kaplan et al. 2020, §2.1) and the compute-optimal split.

    Give two of params N, tokens D and compute C (FLOPs) to get the third; or one of them alone for
    the compute-optimal model with D = tokens_per_param · N (Hoffmann et al. 2022, "Chinchilla":
    about 20 tokens per parameter): from C alone N = √(C / (6·tokens_per_param)).
    Returns params, tokens, compute (floats) and which ones were derived.
    Raises ParamError when none or all three are given, or a value is not positive.
    """
    given = {n: v for n, v in (("params", params), ("tokens", tokens), ("compute", compute)) if v is not None}
    vals = {}
    for name, v in given.items():
        vals[name] = number(name, v)
        if vals[name] <= 0:
            raise ParamError(f"{name}: expected a positive number, got {vals[name]:g}")
    tpp = number("tokens_per_param", tokens_per_param)
    if tpp <= 0:
        raise ParamError(f"tokens_per_param: expected a positive number, got {tpp:g}")
    if len(vals) == 3:
        raise ParamError("params, tokens, compute: give two of them (or one for the compute-optimal split), not all three")
    if not vals:
        raise ParamError("params, tokens, compute: give two of them, or compute alone for the compute-optimal split")
    if len(vals) == 1:
        if "compute" in vals:
            n = math.sqrt(vals["compute"] / (6.0 * tpp))
        elif "params" in vals:
            n = vals["params"]
        else:
            n = vals["tokens"] / tpp
        vals = {"params": n, "tokens": tpp * n, "compute": vals.get("compute", 6.0 * n * tpp * n)}
    elif "compute" not in vals:
        vals["compute"] = 6.0 * vals["params"] * vals["tokens"]
    elif "params" not in vals:
        vals["params"] = vals["compute"] / (6.0 * vals["tokens"])
    else:
        vals["tokens"] = vals["compute"] / (6.0 * vals["params"])
    derived = [n for n in ("params", "tokens", "compute") if n not in given]
    return Trace(params=vals["params"], tokens=vals["tokens"], compute=vals["compute"], derived=derived,
                 tokens_per_param_used=vals["tokens"] / vals["params"])


OPTIMIZERS = {"adam": 2, "sgd-momentum": 1, "sgd": 0}     # optimizer states per trained value


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
