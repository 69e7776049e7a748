"""Max-pooling by hand: the forward pass and the backward routing of the gradient, ties included.

Level 1: a 4×4 input, 2×2 windows with stride 2, one maximum per window.
Level 2: the same with tied maxima: PyTorch routes δ to the first maximum in row-major order; the
positions chosen are a part.
Level 3: overlapping windows (2×2, stride 1) on a 4×4 input with ties: an input that is the maximum
of several windows collects the sum of their gradients.
Calculator-free: integer entries (every answer is an integer).
"""
from __future__ import annotations

import numpy as np

from examprep import engine, solve
from examprep.document import Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.problem import EXACT, Misconception, Part, EcfRule, SolutionStep


@generator("max-pool", title="Max-pooling forward and backward (gradient routing, ties)",
           syllabus="CNNs: max-pooling forward and backward", version=1)
def max_pool(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    stride = 1 if difficulty == 3 else 2
    if difficulty == 1:
        x = np.array(rng.sample(range(-5, 12), 16), dtype=float).reshape(4, 4)
        if not calculator_free and rng.chance(1, 2):
            x = x / 2
    else:
        x = rng.ints(0, 3, (4, 4))
    fwd = engine.max_pool_backward(x, 2, np.zeros((4 // stride - (stride == 1), 4 // stride - (stride == 1))),
                                   stride=stride)
    ties = fwd.ties_count
    if difficulty == 1 and np.any(ties > 1):
        raise Degenerate("a tie at level 1")
    if difficulty == 2 and not (1 <= np.count_nonzero(ties > 1) <= 3):
        raise Degenerate("level 2 wants one to three windows with ties")
    delta = rng.ints(-3, 3, fwd.output.shape, nonzero=True)
    if difficulty == 3:
        if np.count_nonzero(ties > 1) < 2 or np.all(ties > 1):
            raise Degenerate("level 3 wants some windows with ties")
    t = engine.max_pool_backward(x, 2, delta, stride=stride, ties="first")
    if difficulty == 3 and len(set(t.indices.ravel().tolist())) == t.indices.size:
        raise Degenerate("no input is the maximum of two windows: nothing adds up")
    params = {"input": jsonable(x), "kernel_size": 2, "stride": stride, "grad_output": jsonable(delta)}
    # the other rules for tied maxima: engine.max_pool_backward's named ties conventions (t is "first", PyTorch's)
    by_rule = {rule: engine.max_pool_backward(x, 2, delta, stride=stride, ties=rule)
               for rule in (("split", "all", "last") if np.any(ties > 1) else ())}

    avg_kernel = np.full((2, 2), 0.25)
    avg = engine.conv2d(x, avg_kernel, stride=stride, grad_output=delta)
    out_mis = [Misconception("average", jsonable(avg.output), "Max-pooling keeps each window's largest value, not its mean.")]
    if stride == 2:
        out_mis.append(Misconception("stride-1", jsonable(engine.max_pool(x, 2, stride=1).output),
                                     "The windows do not overlap: stride 2 moves them 2 positions at a time."))
    grad_mis = [Misconception("average-spread", jsonable(avg.grad_input),
                              "That is average-pooling's backward pass; max-pooling sends all of δ to the maximum."),
                Misconception("ones", jsonable(engine.max_pool_backward(x, 2, np.ones_like(delta), stride=stride).grad_input),
                              "The maximum receives the upstream gradient δ, not 1.")]
    if np.any(ties > 1):
        for rule, text in (("split", "PyTorch does not share δ between tied maxima: the first in row-major order "
                                     "takes all of it."),
                           ("all", "Only one of the tied maxima receives δ (the first in row-major order), not each of them."),
                           ("last", "Ties go to the first maximum in row-major order (PyTorch), not the last.")):
            grad_mis.append(Misconception(f"ties-{rule}", jsonable(by_rule[rule].grad_input), text))
    parts = [Part("output", "The pooled output $y$.", "matrix", jsonable(t.output), shape=t.output.shape, points=1,
                  minutes=0.5 * t.output.size, misconceptions=tuple(out_mis),
                  ecf_rule=EcfRule("solve:max-pool", {k: v for k, v in params.items() if k != "grad_output"}, "output"))]
    steps = solve.pool.max_pool_steps(solve.full_params("max-pool", params), t)
    solution = steps_from(steps.maximum, "output")
    if difficulty == 2:
        last = by_rule["last"]
        parts.append(Part("indices", "For each window, the row-major index (0–15, row by row) of the input entry that "
                          "receives its gradient.", "matrix", jsonable(t.indices.astype(float)), shape=t.indices.shape,
                          tolerance=EXACT, points=1, minutes=1.5,
                          misconceptions=(Misconception("ties-last", jsonable(last.indices.astype(float)),
                                                        "Ties go to the first maximum in row-major order, not the last."),)))
        solution.append(SolutionStep("Which entry takes each window's gradient", [
            Text("Scan each window row by row; the first entry equal to the maximum is the one PyTorch records."),
            Matrix("indices", jsonable(t.indices.astype(float)))], "indices"))
    parts.append(Part("grad_input", r"$\partial L / \partial x$ (the input's shape).", "matrix", jsonable(t.grad_input),
                      shape=(4, 4), points=3 if difficulty == 3 else 2, minutes=3 if difficulty == 3 else 2,
                      misconceptions=tuple(grad_mis), ecf_rule=EcfRule("solve:max-pool", params, "grad_input"),
                      hint="Each δ goes to its window's maximum; every other entry gets 0"
                           + ("; an entry that wins several windows collects their sum." if difficulty == 3 else ".")))
    solution += steps_from(steps.route, "grad_input")
    if difficulty == 3:
        solution.append(SolutionStep("Overlapping windows add", [Text(
            "With stride 1 the windows overlap, so one input can be the maximum of several windows: its gradient is "
            "the sum of those windows' δ (PyTorch accumulates, it does not overwrite).")]))
    statement = [Text(f"Max-pooling with 2×2 windows and stride {stride}, no padding"
                      + (" (the windows overlap)" if stride == 1 else "") + ". Ties: the first maximum in row-major "
                      "order is the one that receives the gradient, as in PyTorch. Backpropagation has delivered "
                      "$\\delta = \\partial L / \\partial y$."),
                 Matrix("x", jsonable(x)), Matrix("δ", jsonable(delta))]
    return Draft(title="Max-pooling forward and backward", params=params, statement=statement, parts=parts,
                 solution=solution,
                 conventions={"window": f"2×2, stride {stride}, no padding",
                              "ties": "the first maximum in row-major order takes δ (PyTorch)",
                              "overlap": "gradients add" if stride == 1 else "windows do not overlap"})
