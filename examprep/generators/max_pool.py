"""Max-pooling by hand: the forward pass and the backward routing of the gradient, ties included.

Level 1: a 4×4 input, 2×2 windows with stride 2, one maximum per window.
Level 2: the same with tied maxima: PyTorch routes δ to the first maximum in row-major order; the
positions chosen are a part.
Level 3: 3×3 windows with stride 2 and TensorFlow's "same" padding on a 4×4 or 5×5 input: the output is
⌈n/s⌉, the padding P = max((o − 1)s + k − n, 0) goes ⌊P/2⌋ before and the rest after (padded cells are
−∞, never the maximum), and the windows overlap, so an input that is the maximum of two windows collects
the sum of their gradients.
Calculator-free: integer entries (every answer is an integer).
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Matrix, Text
from examprep.engine.conv import same_padding
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.problem import EXACT, Misconception, Part, SolutionStep


def _maxima_per_window(x: list) -> list[int]:
    """How many entries equal the maximum of each 2×2 window (stride 2) of a 4×4 input, row by row:
    the engine's ties_count (it does not depend on δ), for the checks of a draw before the engine
    call — compared exactly, as the engine compares (a quarter of the level-2 draws fail them)."""
    out = []
    for r in (0, 2):
        for c in (0, 2):
            window = x[r][c:c + 2] + x[r + 1][c:c + 2]
            out.append(window.count(max(window)))
    return out


@generator("max-pool", title="Max-pooling forward and backward (gradient routing, ties, \"same\" padding)",
           syllabus="CNNs: max-pooling forward and backward, \"same\" padding", version=2)
def max_pool(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    if difficulty == 3:
        return _same_padding(rng, calculator_free)
    stride = 2
    if difficulty == 1:
        x = np.array(rng.sample(range(-5, 12), 16), dtype=float).reshape(4, 4)
        if not calculator_free and rng.chance(1, 2):
            x = x / 2
    else:
        x = rng.ints(0, 3, (4, 4))
    tied = sum(count > 1 for count in _maxima_per_window(x.tolist()))
    if difficulty == 1 and tied:
        raise Degenerate("a tie at level 1")
    if difficulty == 2 and not 1 <= tied <= 3:
        raise Degenerate("level 2 wants one to three windows with ties")
    delta = rng.ints(-3, 3, (2, 2), nonzero=True)
    params = {"input": jsonable(x), "kernel_size": 2, "stride": stride, "grad_output": jsonable(delta)}
    known = solve.mistakes("max-pool", params)
    t = known.trace()
    out_mis = known.of("output", jsonable)
    grad_mis = known.of("grad_input", jsonable)
    parts = [Part("output", "The pooled output $y$.", "matrix", jsonable(t.output), shape=t.output.shape, points=1,
                  minutes=0.5 * t.output.size, misconceptions=tuple(out_mis),
                  ecf_rule=solve.ecf("max-pool", "output", known.params, t, ()))]
    steps = solve.pool.max_pool_steps(known.params, t)
    solution = steps_from(steps.maximum, "output")
    if difficulty == 2:
        parts.append(Part("indices", "For each window, the row-major index (0–15, row by row) of the input entry that "
                          "receives its gradient.", "matrix", jsonable(t.indices.astype(float)), shape=t.indices.shape,
                          tolerance=EXACT, points=1, minutes=1.5,
                          misconceptions=known.of("indices", lambda v: jsonable(np.asarray(v).astype(float)))))
        solution.append(SolutionStep("Which entry takes each window's gradient", [
            Text("Scan each window row by row; the first entry equal to the maximum is the one PyTorch records."),
            Matrix("indices", jsonable(t.indices.astype(float)))], "indices"))
    parts.append(Part("grad_input", r"$\partial L / \partial x$ (the input's shape).", "matrix", jsonable(t.grad_input),
                      shape=(4, 4), points=2, minutes=2,
                      misconceptions=tuple(grad_mis), ecf_rule=solve.ecf("max-pool", "grad_input", known.params, t, ()),
                      hint="Each δ goes to its window's maximum; every other entry gets 0."))
    solution += steps_from(steps.route, "grad_input")
    statement = [Text(f"Max-pooling with 2×2 windows and stride {stride}, no padding. Ties: the first maximum in row-major "
                      "order is the one that receives the gradient, as in PyTorch. Backpropagation has delivered "
                      "$\\delta = \\partial L / \\partial y$."),
                 Matrix("x", jsonable(x)), Matrix("δ", jsonable(delta))]
    return Draft(title="Max-pooling forward and backward", params=params, statement=statement, parts=parts,
                 solution=solution,
                 conventions={"window": f"2×2, stride {stride}, no padding",
                              "ties": "the first maximum in row-major order takes δ (PyTorch)",
                              "overlap": "windows do not overlap"})


def _side_pair(known: solve.Mistakes, before: int, after: int) -> tuple[Misconception, ...]:
    """The table's "same"-padding mistakes as one spatial side's [before, after] pair, which the padding part
    asks: each id's pad_before and pad_after (per dimension, rows first), the right amount where an id leaves
    one side as it is."""
    sides = {side: {m.id: m for m in known.of(side)} for side in ("pad_before", "pad_after")}
    ids = dict.fromkeys([*sides["pad_before"], *sides["pad_after"]])
    return tuple(Misconception(i, [int(sides["pad_before"][i].value[0]) if i in sides["pad_before"] else before,
                                   int(sides["pad_after"][i].value[0]) if i in sides["pad_after"] else after],
                               (sides["pad_before"].get(i) or sides["pad_after"][i]).explanation) for i in ids)


def _check_shared_maxima(x: list, delta: list) -> None:
    """Refuse a level-3 draw before the engine call (a fifth of them) where no input is the maximum of
    two 3×3 windows (stride 2, "same" padding), or where the windows' δ cancel at a shared maximum.
    The engine's rule on its indices and grad_input, in plain Python: the padding is −∞ (never a
    maximum), the inputs are distinct (one maximum a window), and δ's integer sums are exact."""
    n = len(x)
    o, before, _ = same_padding(n, 3, 2)
    takes: dict[int, list[float]] = {}
    for a in range(o):
        rows = range(max(0, 2 * a - before), min(n, 2 * a - before + 3))
        for b in range(o):
            cols = range(max(0, 2 * b - before), min(n, 2 * b - before + 3))
            _, r, c = max((x[r][c], r, c) for r in rows for c in cols)
            takes.setdefault(r * n + c, []).append(delta[a][b])
    shared = [sum(d) for d in takes.values() if len(d) > 1]
    if not shared:
        raise Degenerate("no input is the maximum of two windows: nothing adds up")
    if 0 in shared:
        raise Degenerate("the windows' δ cancel at their shared maximum: the sum would not show")


def _same_padding(rng: Stream, calculator_free: bool) -> Draft:
    n = rng.choice([4, 5])
    x = np.array(rng.sample(range(-9, 16), n * n), dtype=float).reshape(n, n)     # distinct: no ties
    if not calculator_free and rng.chance(1, 2):
        x = x / 2
    o = -(-n // 2)                                   # ⌈n/s⌉ cells per side: the shape δ is drawn in
    delta = rng.ints(-3, 3, (o, o), nonzero=True)
    _check_shared_maxima(x.tolist(), delta.tolist())
    params = {"input": jsonable(x), "kernel_size": 3, "stride": 2, "padding": "same", "grad_output": jsonable(delta)}
    known = solve.mistakes("max-pool", params)
    t = known.trace()
    before, after = int(t.pad_before[0]), int(t.pad_after[0])       # the padding per side, [rows, columns] alike
    pads = [before, after]
    pad_mis = _side_pair(known, before, after)
    out_mis, grad_mis = known.of("output", jsonable), known.of("grad_input", jsonable)
    parts = [
        Part("padding", "The padding of each spatial side, as [before, after] (the same for rows and columns).", "vector",
             pads, shape=(2,), tolerance=EXACT, points=1, minutes=1.5, misconceptions=tuple(pad_mis),
             hint="o = ⌈n/s⌉, P = max((o − 1)s + k − n, 0), before = ⌊P/2⌋, after = P − before."),
        Part("output", "The pooled output $y$.", "matrix", jsonable(t.output), shape=t.output.shape, points=2,
             minutes=0.6 * t.output.size + 1, misconceptions=tuple(out_mis),
             ecf_rule=solve.ecf("max-pool", "output", known.params, t, ()),
             hint="Each window's maximum; padded cells (−∞) never win."),
        Part("grad_input", r"$\partial L / \partial x$ (the input's shape).", "matrix", jsonable(t.grad_input), shape=(n, n),
             points=3, minutes=3, misconceptions=tuple(grad_mis),
             ecf_rule=solve.ecf("max-pool", "grad_input", known.params, t, ()),
             hint="Each δ goes to its window's maximum; an input that wins two overlapping windows collects both δ."),
    ]
    steps = solve.pool.max_pool_steps(known.params, t)
    pad = steps_from(steps.padding, "padding")[0]       # its values per dimension [h, w]; the part asks one side's pair
    pad = SolutionStep(pad.title, pad.blocks + [Matrix("padding", pads)], pad.part)
    solution = ([pad] + steps_from(steps.maximum, "output")
                + steps_from(steps.route, "grad_input")
                + [SolutionStep("Overlapping windows add", [Text(
                    "3×3 windows with stride 2 overlap by one row or column, so one input can be the maximum of two "
                    "windows: its gradient is the sum of their δ (PyTorch and TensorFlow accumulate).")])])
    statement = [Text("Max-pooling with 3×3 windows, stride 2 and TensorFlow's \"same\" padding (tf.nn.max_pool2d, "
                      "padding='SAME'): the output has ⌈n/s⌉ cells per side, the total padding P = max((o − 1)s + k − n, 0) "
                      "is split ⌊P/2⌋ before and the rest after, and padded cells count as −∞. Backpropagation has "
                      "delivered $\\delta = \\partial L / \\partial y$."),
                 Matrix("x", jsonable(x)), Matrix("δ", jsonable(delta))]
    return Draft(title="Max-pooling with TensorFlow's \"same\" padding", params=params, statement=statement, parts=parts,
                 solution=solution, conventions={"window": "3×3, stride 2", "padding": "\"same\" (TensorFlow): ⌈n/s⌉, "
                                                 "the extra cell at the end, padded cells −∞",
                                                 "overlap": "gradients add"})
