"""A network's shape and parameter table by hand — the most frequent exam question on CNNs: the
output shape and the number of parameters of every layer, and the total.

Level 1: a LeNet-like stack: conv (no padding) → ReLU → 2×2 max-pool → flatten → linear.
Level 2: two conv blocks with padding, a batch norm, two pools, flatten and two linear layers.
Level 3: TensorFlow "same" padding with stride 2 (output ⌈n/s⌉), a depthwise-separable block (a
depthwise 3×3 conv, groups = C, then a 1×1 conv), batch norms, a 3×3 "same" max-pool with stride 2
and global average pooling before the classifier.
Every answer is an integer (calculator-free at every level; the calculator-free variant keeps the
channel counts small). The statement is the table an exam prints, with the cells to fill lettered.
"""
from __future__ import annotations

from typing import Any

from examprep import solve
from examprep.document import Math, Table, Text
from examprep.errors import ExamprepError
from examprep.generators.framework import Degenerate, Draft, Stream, generator, step_per_part, steps_from
from examprep.problem import EXACT, Part, EcfRule, SolutionStep

_ACTIVATIONS = ("relu", "sigmoid", "tanh", "dropout")


def _shape(s: list[int]) -> str:
    return "×".join(map(str, s))


def _ident(name: str) -> str:
    """A layer's name as a part id: "conv2d 1" → conv2d_1, "max-pool" → max_pool."""
    return name.replace(" ", "_").replace("-", "_")


def _shape_part(layer: dict[str, Any]) -> str:
    """The id of the part that asks a layer's output shape."""
    return _ident(layer["name"]) + "_shape"


def _answers(problem: Any) -> dict[str, tuple[str, str]]:
    """Each shape part's answer: its layer's entry of network-shapes' output_shapes (read from the
    Problem's layers, as the parts were made)."""
    return {_shape_part(L): ("network-shapes", "output_shapes") for L in problem.params.get("layers", ())
            if isinstance(L, dict) and "name" in L and _asks(L)[0]}


def _config(layer: dict[str, Any]) -> str:
    kind = layer["type"]
    if kind == "conv2d":
        k = layer["kernel_size"]
        pad = layer.get("padding", 0)
        pad_text = 'padding "same" (TensorFlow)' if pad == "same" else f"padding {pad}"
        groups = layer.get("groups", 1)
        what = (f"{layer['out_channels']} filters {k}×{k}" if groups == 1
                else f"depthwise {k}×{k} (groups {groups}), {layer['out_channels']} filters")
        return f"{what}, stride {layer.get('stride', 1)}, {pad_text}"
    if kind in ("max-pool", "avg-pool"):
        k = layer["kernel_size"]
        pad = layer.get("padding", 0)
        return (f"{k}×{k}, stride {layer.get('stride', k)}"
                + (', padding "same" (TensorFlow)' if pad == "same" else f", padding {pad}" if pad else ""))
    if kind == "linear":
        return f"{layer['out_features']} outputs"
    if kind == "dropout":
        return f"p = {layer.get('p', 0.5)}"
    return {"global-avg-pool": "average over H×W", "batch-norm": "per channel (γ, β)", "flatten": "to a vector"}.get(kind, "")


def _draw(rng: Stream, difficulty: int, calculator_free: bool) -> tuple[list[int], list[dict[str, Any]]]:
    small = calculator_free
    if difficulty == 1:
        shape = rng.choice([[1, 28, 28], [3, 32, 32], [3, 28, 28], [1, 32, 32]])
        k = rng.choice([3, 5])
        layers = [{"type": "conv2d", "out_channels": rng.choice([4, 6, 8] if small else [6, 8, 10, 16]), "kernel_size": k},
                  {"type": "relu"}, {"type": "max-pool", "kernel_size": 2}, {"type": "flatten"},
                  {"type": "linear", "out_features": 10}]
        return shape, layers
    if difficulty == 2:
        shape = rng.choice([[3, 32, 32], [3, 28, 28], [1, 28, 28]])
        k1 = rng.choice([3, 5])
        k2 = rng.choice([3, 5])
        c1 = rng.choice([4, 6, 8] if small else [6, 8, 16])
        c2 = rng.choice([8, 12, 16] if small else [16, 20, 32])
        second = ({"type": "conv2d", "out_channels": c2, "kernel_size": k2} if rng.chance(1, 2) else
                  {"type": "conv2d", "out_channels": c2, "kernel_size": 3, "stride": 2, "padding": 1})
        layers = [{"type": "conv2d", "out_channels": c1, "kernel_size": k1, "padding": k1 // 2},
                  {"type": "batch-norm"}, {"type": "relu"}, {"type": "max-pool", "kernel_size": 2},
                  second, {"type": "relu"}, {"type": "max-pool", "kernel_size": 2}, {"type": "flatten"},
                  {"type": "linear", "out_features": rng.choice([32, 64] if small else [64, 100, 120])}, {"type": "relu"},
                  {"type": "linear", "out_features": 10}]
        return shape, layers
    n = rng.choice([27, 29, 31, 32, 33])
    shape = [3, n, n]
    c1 = rng.choice([8, 16] if small else [16, 32])
    c2 = 2 * c1
    layers = [{"type": "conv2d", "out_channels": c1, "kernel_size": 3, "stride": 2, "padding": "same"},
              {"type": "batch-norm"}, {"type": "relu"},
              {"type": "conv2d", "out_channels": c1, "kernel_size": 3, "padding": 1, "groups": c1},
              {"type": "conv2d", "out_channels": c2, "kernel_size": 1},
              {"type": "batch-norm"}, {"type": "relu"},
              {"type": "max-pool", "kernel_size": 3, "stride": 2, "padding": "same"},
              {"type": "global-avg-pool"}, {"type": "flatten"}, {"type": "dropout", "p": 0.5},
              {"type": "linear", "out_features": 10}]
    return shape, layers


def _asks(layer: dict[str, Any]) -> tuple[bool, bool]:
    """(shape asked, parameters asked) for a layer's row; the others are printed."""
    kind = layer["type"]
    return {"conv2d": (True, True), "max-pool": (True, True), "avg-pool": (True, True),
            "global-avg-pool": (True, False), "batch-norm": (False, True), "flatten": (True, False),
            "linear": (False, True)}.get(kind, (False, False))


def _arithmetic(layer: dict[str, Any], before: list[int], after: list[int], count: int) -> tuple[str, str]:
    """The substituted formulas a worked table shows for one layer: its output size and its parameters
    (the values are the engine's; this only writes the sums out)."""
    kind = layer["type"]
    size = ""
    if kind in ("conv2d", "max-pool", "avg-pool"):
        n, k = before[1], layer["kernel_size"]
        s = layer.get("stride", 1 if kind == "conv2d" else k)
        pad = layer.get("padding", 0)
        size = (f"o = ⌈{n}/{s}⌉ = {after[1]}" if pad == "same" else
                f"o = ⌊({n} + 2·{pad} − {k})/{s}⌋ + 1 = {after[1]}")
    elif kind == "flatten":
        size = "F = " + "·".join(map(str, before)) + f" = {after[0]}"
    elif kind == "global-avg-pool":
        size = f"{before[0]}×1×1: one mean per channel"
    if kind == "conv2d":
        per = before[0] // layer.get("groups", 1)
        k = layer["kernel_size"]
        weights = f"{layer['out_channels']}·{per}·{k}·{k}"
        params = f"{weights} + {layer['out_channels']} = {count}" if layer.get("bias", True) else f"{weights} = {count}"
    elif kind == "linear":
        params = f"{before[0]}·{layer['out_features']} + {layer['out_features']} = {count}"
    elif kind == "batch-norm":
        params = f"2·{before[0]} = {count} (γ and β)"
    else:
        params = f"{count}: nothing to learn" if kind in _POOL_KINDS else ""
    return size, params


_POOL_KINDS = ("max-pool", "avg-pool", "global-avg-pool")


@generator("network-shapes", title="A network's output shapes and parameters, layer by layer",
           syllabus="CNNs: output shape and parameter count of every layer (the fill-in table)", version=1,
           answers=_answers)
def network_shapes(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    input_shape, layers = _draw(rng, difficulty, calculator_free)
    kinds = [L["type"] for L in layers]
    seen: dict[str, int] = {}
    for L in layers:                # "conv2d 1", "conv2d 2", but "flatten" where a network has one
        seen[L["type"]] = seen.get(L["type"], 0) + 1
        L["name"] = L["type"] if kinds.count(L["type"]) == 1 else f"{L['type']} {seen[L['type']]}"
    params = {"input_shape": input_shape, "layers": layers, "framework": "pytorch"}
    known = solve.mistakes("network-shapes", params)
    try:
        t = known.trace()
    except ExamprepError as err:          # a drawn stack whose output would be empty
        raise Degenerate(str(err)) from None
    shapes, counts, names = t.output_shapes, t.params, t.layer_names
    parts: list[Part] = []
    rows = [["input", "", _shape(input_shape), ""]]
    param_parts: list[str] = []
    last_shape_part: str | None = None        # the part that asks the shape reaching the next layer
    letter = iter("abcdefghijklmnopqrstuvwxyz")
    part_of: dict[int, dict[str, str]] = {}
    for i, (layer, name) in enumerate(zip(layers, names)):
        ask_shape, ask_params = _asks(layer)
        prev = {"$ref": last_shape_part} if last_shape_part else None
        cells = [name, _config(layer)]
        part_of[i] = {}
        if ask_shape:
            pid = _shape_part(layer)
            mis = known.of("output_shapes", lambda v, i=i: list(v[i]))
            parts.append(Part(pid, f"Output shape of {name}, as " + ("[F]." if len(shapes[i]) == 1 else "[C, H, W]."),
                              "vector", list(shapes[i]), tolerance=EXACT, shape=(len(shapes[i]),), points=1,
                              minutes=1.5 if layer["type"] == "conv2d" else 1.0, misconceptions=mis,
                              ecf_rule=EcfRule("layer-output-shape", {"input_shape": prev, "layer": layer}) if prev else None,
                              hint="o = ⌊(n + 2p − k)/s⌋ + 1 per spatial size; \"same\" gives ⌈n/s⌉; channels: "
                                   "the conv's filters, unchanged by pooling."))
            cells.append(f"({next(letter)})")
            part_of[i]["output_shape"] = pid
        else:
            cells.append("unchanged" if layer["type"] in _ACTIVATIONS + ("batch-norm",) else _shape(shapes[i]))
        if ask_params:
            pid = _ident(name) + "_params"
            kind = layer["type"]
            parts.append(Part(pid, f"Number of parameters of {name}.", "integer", int(counts[i]), tolerance=EXACT,
                              points=0.5 if kind in ("max-pool", "avg-pool") else 1,
                              minutes=0.5 if kind in ("max-pool", "avg-pool") else 1.5 if kind == "conv2d" else 1.0,
                              misconceptions=known.of("params", lambda v, i=i: int(v[i])),
                              ecf_rule=EcfRule("solve:network-shapes", {"input_shape": prev, "layers": [layer]},
                                            "total_params") if prev else None,
                              hint="Weights and biases: conv C_out·(C_in/groups)·k·k + C_out; linear F_in·F_out + F_out; "
                                   "batch norm 2C (γ, β); pooling and activations none."))
            cells.append(f"({next(letter)})")
            param_parts.append(pid)
            part_of[i]["params"] = pid
        else:
            cells.append(str(counts[i]))
        rows.append(cells)
        if ask_shape:
            last_shape_part = part_of[i]["output_shape"]
        elif shapes[i] != ([input_shape] + shapes)[i]:
            last_shape_part = None          # a printed new shape (a linear layer's): nothing to carry forward
    if len(set(map(tuple, shapes))) < 3:
        raise Degenerate("too few distinct shapes")
    parts.append(Part("total_params", "The total number of parameters of the network.", "integer", int(t.total_params),
                      tolerance=EXACT, points=1, minutes=1, misconceptions=known.of("total_params", int),
                      ecf_rule=EcfRule("total", {"values": [{"$ref": pid} for pid in param_parts]}),
                      hint="Add the parameters of every layer."))
    rows.append(["total", "", "", f"({next(letter)})"])
    steps = solve.network.network_steps(known.params, t)
    solution = []
    for i, st in enumerate(steps.layers):
        asked = part_of[i]
        if not asked:
            solution += steps_from(st, None)
            continue
        order = {k: asked[k] for k in ("output_shape", "params") if k in asked}
        size, count = _arithmetic(layers[i], ([input_shape] + shapes)[i], shapes[i], counts[i])
        worked = {"output_shape": size, "params": count}
        for piece in step_per_part(st, order, titles={"params": f"{names[i]}: parameters"}):
            what = next(k for k, pid in order.items() if pid == piece.part)
            extra = [Text(worked[what])] if worked[what] else []
            if what == "output_shape" and "params" not in order and count:
                extra.append(Text(count))
            head = 1 if piece.blocks and isinstance(piece.blocks[0], Math) else 0    # the formula, then the sums
            solution.append(SolutionStep(piece.title, piece.blocks[:head] + extra + piece.blocks[head:], piece.part))
    (total,) = steps_from(steps.totals, "total_params")
    addends = " + ".join(str(c) for c in counts if c)
    solution.append(SolutionStep(total.title, total.blocks[:1] + [Text(f"{addends} = {t.total_params}")] + total.blocks[1:],
                                 total.part))
    intro = ("Fill in the table for this network (PyTorch layers; shapes are channels first, [C, H, W], for one example). "
             "Parameters are the trainable weights and biases. A conv's padding p adds p on both sides"
             + ('; "same" padding is TensorFlow\'s: the output size is ⌈n/s⌉.' if difficulty == 3 else "."))
    statement = [Text(intro), Table(["layer", "configuration", "output shape", "parameters"], rows)]
    conventions = {"layout": "channels first, one example: [C, H, W] (PyTorch)",
                   "parameters": "trainable weights and biases (sum(p.numel() for p in model.parameters()))",
                   "padding": "p on both sides" + ('; "same" as TensorFlow: ⌈n/s⌉' if difficulty == 3 else ""),
                   "pooling": "stride = kernel size unless given; no parameters"}
    titles = {1: "Shapes and parameters of a small CNN", 2: "Shapes and parameters of a two-block CNN",
              3: "Shapes and parameters: \"same\" padding and a depthwise-separable block"}
    return Draft(title=titles[difficulty], params=params, statement=statement, parts=parts, solution=solution,
                 conventions=conventions)
