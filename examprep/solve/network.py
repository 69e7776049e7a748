"""Solve topic of network tables: network-shapes (each layer's output shape, parameters and MACs)."""
from __future__ import annotations

from typing import Any, NamedTuple

from examprep import engine
from examprep.engine._core import Trace
from examprep.engine.network import layer_output_shape
from examprep.errors import ExamprepError
from examprep.solve.contract import Mistake, Param, Refusal, Step, Topic


def _shape(s: list[int]) -> str:
    return "×".join(map(str, s))


class NetworkSteps(NamedTuple):
    layers: list[Step]             # one per layer: its output shape, parameters and MACs
    totals: Step
    flops: Step                    # FLOPs by the flops_convention
    memory: Step                   # activation memory: per layer, the forward total, training


_RULE = {"conv2d": r"o = \left\lfloor \frac{n + 2p - d(k-1) - 1}{s} \right\rfloor + 1,\ \ "
                   r"\text{params} = C_{out} \cdot \tfrac{C_{in}}{g} k_h k_w + C_{out}",
         "max-pool": r"o = \left\lfloor \frac{n + 2p - k}{s} \right\rfloor + 1,\ \ \text{params} = 0",
         "avg-pool": r"o = \left\lfloor \frac{n + 2p - k}{s} \right\rfloor + 1,\ \ \text{params} = 0",
         "global-avg-pool": r"C \times 1 \times 1", "batch-norm": r"\text{params} = 2C\ (\gamma, \beta)",
         "flatten": r"F = C \cdot H \cdot W", "linear": r"\text{params} = F_{in} F_{out} + F_{out}",
         "add": r"\text{the common shape of its inputs (a sum; no parameters)}",
         "locally-connected": r"o = \left\lfloor \frac{n - k}{s} \right\rfloor + 1,\ \ "
                              r"\text{params} = o_h o_w (C_{out} C_{in} k_h k_w + C_{out})\ \text{(unshared)}",
         "concat": r"C = \textstyle\sum_i C_i \text{ (joined along the channels; no parameters)}"}
_FLOPS = {"macs": r"\text{FLOPs} = \text{MACs}", "2macs": r"\text{FLOPs} = 2 \cdot \text{MACs}",
          "macs+bias": r"\text{mult-adds} = \text{MACs} + \text{bias adds (torchinfo; batch norm } 2C)"}


def network_steps(p: dict[str, Any], t: Trace) -> NetworkSteps:
    steps = []
    for name, layer, read, shape, params, macs in zip(t.layer_names, p["layers"], t.input_shapes, t.output_shapes,
                                                      t.params, t.macs):
        prev = " + ".join(_shape(s) for s in read) if layer.get("type") == "add" else " ⊕ ".join(map(_shape, read))
        formula = _RULE.get(layer.get("type"), r"\text{shape unchanged, no parameters}")
        if isinstance(layer, dict) and layer.get("padding") == "same":
            same = r"o = \left\lceil \frac{n}{s} \right\rceil \text{ (TensorFlow's same)},\ \ "
            formula = same + formula.split(r",\ \ ")[-1]
        if layer.get("type") == "conv2d" and "connection_table" in layer:
            formula = r"\text{params} = \textstyle\sum_o |\text{table}_o| \, k_h k_w + C_{out}\ \text{(partial connections)}"
        if layer.get("type") == "batch-norm" and p["framework"] == "keras":
            formula = r"\text{params} = 4C\ (\gamma, \beta, \text{moving mean and variance})"
        steps.append(Step(f"{name}: {prev} → {_shape(shape)}", formula,
                          {"output_shape": shape, "params": params, "macs": macs}))
    memory = Step(f"Activation memory ({p['dtype']}: {t.bytes_per_value} bytes a value, batch {p['batch_size']})",
                  r"\text{count} = N \prod \text{shape},\ \text{bytes} = \text{count} \cdot b"
                  + (r",\ \text{the input counted too}" if p["count_input"] else "")
                  + r",\ \text{training (CS231n)} = 2 \times \text{forward}",
                  {"activation_count": t.activation_count, "activation_bytes": t.activation_bytes,
                   "total_activation_count": t.total_activation_count,
                   "total_activation_bytes": t.total_activation_bytes,
                   "training_activation_bytes": t.training_activation_bytes})
    return NetworkSteps(steps, Step("Totals", r"\sum \text{params},\ \ \sum \text{MACs}",
                                    {"total_params": t.total_params, "total_macs": t.total_macs}),
                        Step(f"FLOPs ({p['flops_convention']})", _FLOPS[p["flops_convention"]],
                             {"flops": t.flops, "total_flops": t.total_flops}), memory)


def _has(kind: str, key: str | None = None):
    def test(p: dict[str, Any]) -> bool:
        return any(isinstance(L, dict) and L.get("type") == kind and (key is None or L.get(key, 0) not in (0, "valid"))
                   for L in p["layers"])
    return test


def _without_bias(p: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(L, bias=False) if isinstance(L, dict) and L.get("type") in ("conv2d", "linear") else L for L in p["layers"]]


def _padded_conv(p: dict[str, Any]) -> bool:
    return any(isinstance(L, dict) and L.get("type") == "conv2d" and isinstance(L.get("padding", 0), int)
               and L.get("padding", 0) > 0 for L in p["layers"])


def _with_bias(p: dict[str, Any]) -> bool:
    return any(isinstance(L, dict) and L.get("type") in ("conv2d", "linear") and L.get("bias", True) for L in p["layers"])


_SHAPE_KEEPERS = ("relu", "sigmoid", "tanh", "dropout", "batch-norm")
_POOLS = ("max-pool", "avg-pool", "global-avg-pool")


def _pool_before_flatten(layers: list[Any]) -> int | None:
    """The index of the pooling layer whose output the first flatten reads (activations, dropout and
    batch norm in between keep the shape), or None."""
    for i, L in enumerate(layers):
        if isinstance(L, dict) and L.get("type") == "flatten":
            j = i - 1
            while j >= 0 and isinstance(layers[j], dict) and layers[j].get("type") in _SHAPE_KEEPERS:
                j -= 1
            return j if j >= 0 and isinstance(layers[j], dict) and layers[j].get("type") in _POOLS else None
    return None


def _unpooled_flatten(p: dict[str, Any]) -> list[Any]:
    """The layers with the pooling before the flatten made a no-op (a ReLU keeps the shape): the flatten
    then reads the shape from before the pooling."""
    j = _pool_before_flatten(p["layers"])
    return [_keep_place(L, {"type": "relu"}) if i == j else L for i, L in enumerate(p["layers"])]


def _keep_place(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` in ``old``'s place in a graph: its name and inputs kept."""
    return new | {k: old[k] for k in ("name", "inputs") if k in old}


def _plain_pools(p: dict[str, Any]) -> bool:
    return any(isinstance(L, dict) and L.get("type") in ("max-pool", "avg-pool") for L in p["layers"]) and not any(
        isinstance(L, dict) and L.get("type") in ("max-pool", "avg-pool") and (L.get("ceil_mode") or L.get("dilation", 1) != 1)
        for L in p["layers"])


def _pools_weighted(p: dict[str, Any], t: Trace) -> Trace:
    """The network with each k×k pooling layer counted as a k×k filter per channel (a depthwise conv
    without bias, k²·C weights): the same shapes, parameters where pooling has none."""
    layers = []
    for i, L in enumerate(p["layers"]):
        if isinstance(L, dict) and L.get("type") in ("max-pool", "avg-pool"):
            c = t.input_shapes[i][0][0]
            L = _keep_place(L, {"type": "conv2d", "out_channels": c, "kernel_size": L["kernel_size"],
                                "stride": L.get("stride", L["kernel_size"]), "padding": L.get("padding", 0), "groups": c,
                                "bias": False})
        layers.append(L)
    return engine.network_shapes(p["input_shape"], layers, framework=p["framework"])


def _grouped(p: dict[str, Any]) -> bool:
    return any(isinstance(L, dict) and L.get("type") == "conv2d" and L.get("groups", 1) != 1 for L in p["layers"])


def _ungrouped(p: dict[str, Any]) -> list[Any]:
    return [{k: v for k, v in L.items() if k != "groups"} if isinstance(L, dict) and L.get("type") == "conv2d" else L
            for L in p["layers"]]


_POOL_WHY = "Pooling has nothing to learn: a maximum or an average has no weights and no bias (0 parameters)."
_FLATTEN_WHY = ("Flatten the shape that reaches the flatten layer, after the pooling: F = C·H·W of the pooled "
                "output, not of the layer before it.")


def _chain(p: dict[str, Any]) -> bool:
    return not any(isinstance(L, dict) and "inputs" in L for L in p["layers"])


def _flatten_after_pool(p: dict[str, Any]) -> bool:
    return _chain(p) and _pool_before_flatten(p["layers"]) is not None


_PARAM_MISTAKES = (
    Mistake("no-bias", layers=_without_bias, when=_with_bias,
            why="Each conv filter and each linear output has a bias: add C_out (or F_out) to its weights."),
    Mistake("no-input-channels", count_input_channels=False, when=_has("conv2d"),
            why="A conv filter spans every input channel: C_out·C_in·k_h·k_w weights, not C_out·k_h·k_w."),
    Mistake("keras-batch-norm", framework="keras", when=_has("batch-norm"),
            why="PyTorch's BatchNorm has 2C parameters (γ, β); the running mean and variance are buffers. Keras's "
                "summary counts them too (4C)."),
    Mistake("padding-once", padding_sides=1, when=_padded_conv,
            why="Padding p adds p on BOTH sides of each dimension: n + 2p."),
    Mistake("flatten-before-pool", layers=_unpooled_flatten, when=_flatten_after_pool, why=_FLATTEN_WHY),
    Mistake("groups-ignored", layers=_ungrouped, when=_grouped,
            why="A grouped (depthwise) conv's filter sees only its group's C_in/groups channels: "
                "C_out·(C_in/groups)·k_h·k_w weights."),
)

def _each_layer(mistaken: Any) -> Any:
    """A mistake made at each layer from its right input: ``mistaken(layer, shape before it)`` gives the
    layer as the student reads it (its shape through the engine's layer rule), the shape the student
    writes, or None where the mistake is none there. The shapes are those of each layer alone (the right
    ones elsewhere, and where the engine refuses the mistaken layer); no mistake where no layer makes it."""
    def compute(p: dict[str, Any], t: Trace) -> Any:
        out, made = [], False
        for i, L in enumerate(p["layers"]):
            before = t.input_shapes[i][0]          # the (first) shape the layer reads
            found = mistaken(L, before) if isinstance(L, dict) else None
            if found == "merge":                   # add and concat: from all their inputs
                found = _merge_mistake(L, t.input_shapes[i])
            if isinstance(found, dict):
                try:
                    found = layer_output_shape(before, found)
                except ExamprepError:          # the mistaken layer does not fit this input: no shape to name
                    found = None
            made = made or found is not None
            out.append(list(found) if found is not None else list(t.output_shapes[i]))
        return out if made else None
    return compute


def _merge_mistake(L: dict[str, Any], inputs: list[list[int]]) -> list[int] | None:
    """concat read as a sum (the first input's channels), add read as a concat (the channels summed)."""
    if L.get("type") == "concat":
        return list(inputs[0])
    if L.get("type") == "add":
        return [sum(s[0] for s in inputs)] + list(inputs[0][1:])
    return None


def _conv(L: dict[str, Any]) -> bool:
    return L.get("type") == "conv2d"


def _pool(L: dict[str, Any]) -> bool:
    return L.get("type") in ("max-pool", "avg-pool")


_LAYER_SHAPE_MISTAKES = (
    Mistake("channels-from-input", compute=_each_layer(
                lambda L, n: dict(L, out_channels=n[0], groups=1) if _conv(L) else None),
            why="A conv layer outputs one channel per filter: C_out, not the input's channels."),
    Mistake("same-ignores-stride", compute=_each_layer(
                lambda L, n: dict(L, stride=1) if _conv(L) and L.get("padding") == "same" else None),
            why='"Same" padding keeps the size only with stride 1; with stride s the output is ⌈n/s⌉.'),
    Mistake("pool-stride-1", compute=_each_layer(lambda L, n: dict(L, stride=1) if _pool(L) and "stride" not in L else None),
            why="A pooling layer's stride defaults to its kernel size (PyTorch): the windows do not overlap."),
    Mistake("valid-padding", compute=_each_layer(
                lambda L, n: dict(L, padding=0) if (_conv(L) or _pool(L)) and L.get("padding") == "same" else None),
            why='"Same" pads the input so that the output is ⌈n/s⌉; you used no padding.'),
    Mistake("no-plus-one", compute=_each_layer(
                lambda L, n: dict(L, kernel_size=L["kernel_size"] + 1) if _conv(L) and L.get("padding") != "same"
                and isinstance(L.get("kernel_size"), int) else None),
            why="o = ⌊(n + 2p − k)/s⌋ + 1: the first window counts too (the +1)."),
    Mistake("flattened", compute=_each_layer(lambda L, n: [n[0]] if L.get("type") == "global-avg-pool" else None),
            why="Global average pooling (AdaptiveAvgPool2d(1)) keeps the axes: C×1×1; only flatten makes it [C]."),
    Mistake("no-channels", compute=_each_layer(
                lambda L, n: [int(n[1]) * int(n[2])] if L.get("type") == "flatten" and len(n) == 3 else None),
            why="Flatten keeps every channel: F = C·H·W, not H·W."),
    Mistake("concat-as-add", compute=_each_layer(lambda L, n: "merge" if L.get("type") == "concat" else None),
            why="Concatenation stacks its inputs' channels (C = ΣC_i, as DenseNet and Inception do); only a "
                "residual add keeps one input's shape."),
    Mistake("add-as-concat", compute=_each_layer(lambda L, n: "merge" if L.get("type") == "add" else None),
            why="A residual add sums its inputs element by element: the shape stays that of each input."),
)


def _convention(name: str, value: str) -> Any:
    return lambda p: p[name] == value


def _biased(p: dict[str, Any]) -> bool:
    return p["flops_convention"] == "macs+bias" and (_with_bias(p) or _has("batch-norm")(p))


_FLOPS_MISTAKES = {
    answer: (Mistake("one-flop-per-mac", flops_convention="macs", when=_convention("flops_convention", "2macs"),
                     why="A multiply–accumulate is two floating-point operations (a multiply and an add): 2·MACs."),
             Mistake("no-bias-adds", flops_convention="macs", when=_biased,
                     why="torchinfo's mult-adds count each bias once per output position (and batch norm's γ, β) "
                         "on top of the MACs."))
    for answer in ("flops", "total_flops")}

_INPUT_WHY = ("The CS231n count includes the input image: it is in memory during the forward pass (and "
              "the first layer needs it for its backward).")
_MEMORY_MISTAKES = {
    "total_activation_count": (
        Mistake("no-input", count_input=False, when=lambda p: p["count_input"], why=_INPUT_WHY),
        Mistake("one-example", batch_size=1, when=lambda p: p["batch_size"] > 1,
                why="Every example of the batch has its own activations: × batch size.")),
    "total_activation_bytes": (
        Mistake("no-input", count_input=False, when=lambda p: p["count_input"], why=_INPUT_WHY),
        Mistake("values-not-bytes", compute=lambda p, t: t.total_activation_count, when=lambda p: True,
                why="Multiply the number of values by the bytes of one value (float32: 4)."),
        Mistake("one-example", batch_size=1, when=lambda p: p["batch_size"] > 1,
                why="Every example of the batch has its own activations: × batch size.")),
    "training_activation_bytes": (
        Mistake("forward-only", compute=lambda p, t: t.total_activation_bytes,
                why="Training keeps every output for the backward pass and a gradient of each: about 2× the forward "
                    "memory (CS231n)."),
        Mistake("values-not-bytes", compute=lambda p, t: 2 * t.total_activation_count,
                why="Multiply the number of values by the bytes of one value (float32: 4).")),
}

NETWORK_MISTAKES = {
    "output_shapes": (Mistake("padding-once", padding_sides=1, when=_padded_conv,
                              why="Padding p adds p on BOTH sides of each dimension: n + 2p."),
                      Mistake("flatten-before-pool", layers=_unpooled_flatten, when=_flatten_after_pool,
                              why=_FLATTEN_WHY)) + _LAYER_SHAPE_MISTAKES,
    "params": _PARAM_MISTAKES + (
        Mistake("pool-params", compute=lambda p, t: _pools_weighted(p, t).params, when=_plain_pools, why=_POOL_WHY),),
    "total_params": _PARAM_MISTAKES + (
        Mistake("pool-params", compute=lambda p, t: _pools_weighted(p, t).total_params, when=_plain_pools,
                why=_POOL_WHY),),
    **_FLOPS_MISTAKES,
    **_MEMORY_MISTAKES,
}


def _compute(p: dict[str, Any]) -> Trace:
    # the mistaken methods (count_input_channels, padding_sides) are engine conventions, not contract parameters
    extra = {k: p[k] for k in ("count_input_channels", "padding_sides") if k in p}
    return engine.network_shapes(p["input_shape"], p["layers"], framework=p["framework"],
                                 flops_convention=p["flops_convention"], dtype=p["dtype"], batch_size=p["batch_size"],
                                 count_input=p["count_input"], training_convention=p["training_convention"], **extra)


NETWORK_SHAPES = Topic(
    "network-shapes", "A network's layer-by-layer output shapes, parameters and multiply–accumulates",
    (Param("input_shape", "[C, H, W] (one example, channels first), or [F] for an MLP"),
     Param("layers", 'list of {"type": conv2d | max-pool | avg-pool | global-avg-pool | batch-norm | relu | sigmoid | tanh | '
                     'dropout | flatten | linear | add | concat | locally-connected, and its options by PyTorch\'s '
                     'names (conv2d\'s "connection_table": the input channels of each output map); a graph: "name" '
                     'and "inputs" (names of earlier layers or "input"; without it, the layer before)}'),
     Param("framework", '"pytorch", or "keras" (BatchNorm counted 4C, as Keras\'s summary)', "pytorch"),
     Param("flops_convention", '"macs" (FLOPs = MACs), "2macs", or "macs+bias" (torchinfo\'s mult-adds)', "macs"),
     Param("dtype", '"float32" (4 bytes a value), "float16", "bfloat16" (2), "float64" (8) or "int8" (1)', "float32"),
     Param("batch_size", "int (examples whose activations are kept)", 1),
     Param("count_input", "bool (the input counted in the activation total, as CS231n)", True),
     Param("training_convention", '"cs231n": every output kept for backward plus its gradient (2× forward)',
           "cs231n")),
    ("output_shapes", "params", "total_params", "macs", "total_macs", "flops", "total_flops", "activation_count",
     "activation_bytes", "total_activation_count", "total_activation_bytes", "training_activation_bytes"),
    _compute,
    network_steps,
    mistakes=NETWORK_MISTAKES,
    shape_lists=("output_shapes",),
    conventions=lambda p: {"layout": "channels first, one example (PyTorch): [C, H, W]",
                           "padding": "p on both sides; \"same\" as TensorFlow (output ⌈n/s⌉)",
                           "parameters": "trainable, as sum(p.numel() for p in module.parameters())"
                           if p["framework"] == "pytorch" else "Keras's summary total (BatchNorm 4C)",
                           "macs": "conv: output elements × C_in/groups·k_h·k_w; linear: F_in·F_out; others 0",
                           "flops": {"macs": "FLOPs = MACs", "2macs": "FLOPs = 2·MACs",
                                     "macs+bias": "torchinfo's mult-adds: MACs + bias adds (batch norm 2C)"}
                           [p["flops_convention"]],
                           "activations": f"every layer's output, {p['dtype']}, batch {p['batch_size']}"
                           + (", the input counted" if p["count_input"] else "")
                           + "; training 2× (outputs kept for backward and their gradients, CS231n)"},
    refuses=(Refusal("a layer whose output would be empty (a kernel larger than its padded input)",
                     {"input_shape": [1, 2, 2], "layers": [{"type": "conv2d", "out_channels": 1, "kernel_size": 3}]}),),
)
