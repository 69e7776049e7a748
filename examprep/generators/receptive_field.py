"""CNN sizes by hand: output sizes through a conv/pool stack, its receptive field, "same" padding.

Level 1: two conv layers (stride, padding) — output sizes and receptive field.
Level 2: conv → max-pool → conv — sizes, receptive field, and TensorFlow "same" padding amounts.
Level 3: adds dilation, and "same" padding of an even kernel with stride 2.
All answers are integers, so every variant is calculator-free.
"""
from __future__ import annotations

from examprep import engine, solve
from examprep.document import Math, Matrix, ReceptiveFieldFigure, Table, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from
from examprep.errors import ParamError
from examprep.problem import EXACT, Part, Problem, EcfRule, SolutionStep


def _layer(rng: Stream, kind: str, difficulty: int) -> dict:
    if kind == "pool":
        return {"type": "max-pool", "kernel_size": 2, "stride": 2, "padding": 0, "dilation": 1}
    k = rng.choice([3, 5] if difficulty == 1 else [3, 5, 7])
    s = rng.choice([1, 2]) if difficulty >= 1 else 1
    p = rng.integer(0, (k - 1) // 2)
    d = rng.choice([1, 2]) if difficulty == 3 else 1
    return {"type": "conv", "kernel_size": k, "stride": s, "padding": p, "dilation": d}


def _args(n: int, L: dict, **override) -> dict:
    """conv-output-size's parameters for layer L on n inputs."""
    return {"input_size": n, "kernel_size": L["kernel_size"], "stride": L["stride"], "padding": L["padding"],
            "dilation": L["dilation"], "op": "pool" if L["type"] == "max-pool" else "conv"} | override


def receptive_field_figure(input_size: int, layers: list[dict]):
    """The units one output of the last layer depends on, level by level (0 = the input).

    Unit u of a layer (kernel k, stride s, padding p, dilation d) reads units u·s − p + d·m,
    m = 0…k−1, of the level below (PyTorch's indexing); the chosen output is the middle one.
    Returns a document.ReceptiveFieldFigure, or None for a stack too large to draw.
    """
    sizes = [int(input_size)]
    for L in layers:
        op = "pool" if L.get("type") == "max-pool" else "conv"
        sizes.append(engine.conv_output_size(sizes[-1], L["kernel_size"], op=op, stride=L["stride"],
                                             padding=L["padding"], dilation=L["dilation"]).output_size)
    if min(sizes) < 1:
        return None
    needed = [{sizes[-1] // 2}]
    for L in reversed(layers):
        above = needed[0]
        below = {u * L["stride"] - L["padding"] + L["dilation"] * m for u in above for m in range(L["kernel_size"])}
        needed.insert(0, below)
    labels = [f"input ({sizes[0]})"] + [
        f"{'pool' if L.get('type') == 'max-pool' else 'conv'} k={L['kernel_size']} s={L['stride']}"
        + (f" p={L['padding']}" if L["padding"] else "") + (f" d={L['dilation']}" if L["dilation"] > 1 else "")
        + f" ({n})" for L, n in zip(layers, sizes[1:])]
    jumps, offsets, fields = [1], [0.0], [1]
    for L in layers:
        offsets.append(offsets[-1] - L["padding"] * jumps[-1])
        fields.append(fields[-1] + L["dilation"] * (L["kernel_size"] - 1) * jumps[-1])
        jumps.append(jumps[-1] * L["stride"])
    rf_layers = [{k: L[k] for k in ("kernel_size", "stride", "dilation")} for L in layers]
    rf = engine.receptive_field(rf_layers)
    return ReceptiveFieldFigure(sizes=sizes, needed=[sorted(s) for s in needed], jumps=jumps,
                                offsets=offsets, fields=fields, labels=labels,
                                receptive_field=rf.receptive_field)


def figures(problem: Problem) -> list:
    """The receptive-field diagram of the problem's conv/pool stack (none for a stack too large to draw)."""
    layers = problem.params.get("layers")
    fig = receptive_field_figure(problem.params["input_size"], layers) if isinstance(layers, list) else None
    return [fig] if fig is not None else []


def _refuse_before_the_engine(n0: int, layers: list[dict], same: tuple[int, int] | None, difficulty: int) -> None:
    """The draws the checks below refuse after the engine calls, refused before them (two in three
    draws fail one): a stack whose sizes are all exact quotients (num = n + 2p − d(k−1) − 1 divisible
    by s: the integers the engine's floor reads; a stack the engine refuses is refused there too), and
    a "same" layer with no padding or, at level 3, an even split (engine.conv.same_padding, the
    function the engine calls)."""
    n, exact = n0, True
    for L in layers:
        num = n + 2 * L["padding"] - L["dilation"] * (L["kernel_size"] - 1) - 1
        if num < 0:              # a kernel larger than the padded input: the engine refuses it below
            exact = False
            break
        exact = exact and num % L["stride"] == 0
        n = num // L["stride"] + 1
    if exact:
        raise Degenerate("no floor anywhere: the floor misconception would not show")
    if same is not None:
        _, before, after = engine.conv.same_padding(same[0], same[1], 2)
        if before == after and difficulty == 3:
            raise Degenerate("even split: the 'extra pad at the end' point does not show")
        if before + after == 0:
            raise Degenerate("no padding needed")


@generator("receptive-field", title="Conv/pool output sizes, receptive field, same padding",
           syllabus="CNNs: receptive field, same padding, max-pooling", version=1, figures=figures)
def receptive_field(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    kinds = ["conv", "conv"] if difficulty == 1 else ["conv", "pool", "conv"]
    layers = [_layer(rng, k, difficulty) for k in kinds]
    n0 = rng.integer(20, 64) if difficulty == 1 else rng.integer(28, 128)
    if difficulty >= 2:      # the "same" layer's draws: the next ones in the stream, whether drawn here or below
        n_same = rng.integer(15, 64)
        k_same = rng.choice([2, 4]) if difficulty == 3 else rng.choice([3, 5])
    _refuse_before_the_engine(n0, layers, (n_same, k_same) if difficulty >= 2 else None, difficulty)
    sizes = solve.mistakes("conv-output-size", _args(n0, layers[0]))     # each engine call once, cached
    _size = lambda n, L, **override: sizes.call(_args(n, L, **override))  # noqa: E731
    traces = []
    n = n0
    for L in layers:
        try:
            traces.append(_size(n, L))
        except ParamError:
            raise Degenerate("kernel larger than input") from None
        n = traces[-1].output_size
    sizes_out, quotients = [tr.output_size for tr in traces], [tr.quotient for tr in traces]
    if all(q == int(q) for q in quotients):
        raise Degenerate("no floor anywhere: the floor misconception would not show")
    rf_layers = [{k: L[k] for k in ("kernel_size", "stride", "dilation")} for L in layers]
    rf = engine.receptive_field(rf_layers)
    names = [f"layer {i + 1} ({L['type']})" for i, L in enumerate(layers)]
    rows = [[names[i], L["kernel_size"], L["stride"], L["padding"], L["dilation"]] for i, L in enumerate(layers)]
    statement = [Text(f"A 1-D input of length {n0} (or one side of a square {n0}×{n0} image) passes through these "
                      "layers in order. Padding is zeros on each side (−∞ for max-pooling); sizes round down "
                      "as in PyTorch."),
                 Table(["layer", "kernel", "stride", "padding", "dilation"], rows)]
    parts = []
    prev = n0
    for i, (L, size) in enumerate(zip(layers, sizes_out)):
        mis = sizes.at(**_args(prev, L)).of("output_size")
        parts.append(Part(f"size_{i + 1}", f"The output length after {names[i]}.", "integer", size, tolerance=EXACT,
                          points=1, minutes=1.5, misconceptions=mis,
                          ecf_rule=EcfRule("solve:conv-output-size",
                                        {"input_size": {"$ref": f"size_{i}"} if i else n0,
                                         "kernel_size": L["kernel_size"], "stride": L["stride"], "padding": L["padding"],
                                         "dilation": L["dilation"], "op": "pool" if L["type"] == "max-pool" else "conv"},
                                        "output_size")))
        prev = size
    rf_mis = solve.mistakes("receptive-field", {"layers": rf_layers}, rf).of("receptive_field")
    parts.append(Part("receptive_field", "The receptive field of one output of the last layer, in input positions.",
                      "integer", rf.receptive_field, tolerance=EXACT, points=2, minutes=3, misconceptions=tuple(rf_mis),
                      hint="r_l = r_{l−1} + (k_eff − 1)·j_{l−1} with r_0 = 1, j_l = j_{l−1}·s_l."))
    solution = []
    prev = n0
    for i, tr in enumerate(traces):
        steps = solve.conv.output_size_steps(solve.full_params("conv-output-size", _args(prev, layers[i])), tr)
        solution += steps_from(steps, f"size_{i + 1}", prefix=f"{names[i]}: ")
        prev = sizes_out[i]
    solution += steps_from(solve.conv.receptive_field_steps({"layers": rf_layers}, rf), "receptive_field")
    params = {"input_size": n0, "layers": layers}
    if difficulty >= 2:
        s_same = 2
        same_params = {"input_size": n_same, "kernel_size": k_same, "stride": s_same, "padding": "same"}
        same_known = sizes.at(**solve.full_params("conv-output-size", same_params))
        same = same_known.trace()
        if same.pad_before == same.pad_after and difficulty == 3:
            raise Degenerate("even split: the 'extra pad at the end' point does not show")
        total = same.pad_before + same.pad_after
        if total == 0:
            raise Degenerate("no padding needed")
        statement.append(Text(f"Separately: a convolution with kernel {k_same} and stride {s_same} uses \"same\" padding "
                              f"(TensorFlow's rule) on an input of length {n_same}."))
        parts.append(Part("same_output", "The output length of that \"same\" convolution.", "integer", same.output_size,
                          tolerance=EXACT, points=1, minutes=1, misconceptions=same_known.of("output_size")))
        parts.append(Part("pad_before", "The zeros it adds at the start.", "integer", same.pad_before, tolerance=EXACT,
                          points=1, minutes=1.5, misconceptions=same_known.of("pad_before")))
        parts.append(Part("pad_after", "The zeros it adds at the end.", "integer", same.pad_after, tolerance=EXACT, points=1,
                          minutes=1, misconceptions=same_known.of("pad_after")))
        same_steps = solve.conv.output_size_steps(solve.full_params("conv-output-size", same_params), same)
        solution += steps_from(same_steps.output_size, "same_output") + steps_from(same_steps.padding, "pad_before")
        solution.append(SolutionStep("Split the padding: the extra zero goes at the end", [
            Math(rf"P = {total},\ p_{{\text{{before}}}} = \lfloor P/2 \rfloor = {same.pad_before},\ "
                 rf"p_{{\text{{after}}}} = P - p_{{\text{{before}}}} = {same.pad_after}"),
            Matrix("pad_after", same.pad_after)], "pad_after"))
        params["same"] = {"input_size": n_same, "kernel_size": k_same, "stride": s_same}
    return Draft(title="Output sizes and receptive field", params=params, statement=statement, parts=parts,
                 solution=solution,
                 conventions={"sizes": "floor, as PyTorch", "same padding": "TensorFlow: ⌈n/s⌉, extra zero at the end",
                              "receptive field": "in input positions, rₗ = rₗ₋₁ + (k_eff − 1)·jₗ₋₁"})
