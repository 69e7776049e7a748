"""A convolution by hand: forward (cross-correlation, as PyTorch) and backward, ∂L/∂input and
∂L/∂kernel.

Level 1: 1-D, input of length 5, kernel of 3, no padding; the loss L = ½ Σ y_i², so δ = y and the
gradients build on the student's own output.
Level 2: 2-D, a 4×4 input and a 2×2 kernel with stride 2 (non-overlapping windows), δ given.
Level 3: 2-D, a 4×4 input, a 3×3 kernel, zero padding 1 and stride 2 (overlapping windows), a bias,
δ given — the input gradient adds where windows overlap and drops the padding.
Calculator-free: integer entries throughout (every answer is an integer).
"""
from __future__ import annotations

import numpy as np

from examprep import engine, solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.problem import Part, SolutionStep


@generator("conv2d", title="Convolution forward and backward",
           syllabus="CNNs: convolution forward pass and backward (∂L/∂input, ∂L/∂kernel)", version=1)
def conv2d(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    halves = not calculator_free and difficulty >= 2
    if difficulty == 1:
        x = rng.ints(-2, 3, (5,))
        k = rng.ints(-1, 2, (3,), nonzero=True)
        stride, padding, bias = 1, 0, 0.0
    elif difficulty == 2:
        x = rng.ints(-2, 3, (4, 4))
        k = rng.decimals(-1, 1, 0.5, (2, 2), nonzero=True) if halves else rng.ints(-1, 2, (2, 2), nonzero=True)
        stride, padding, bias = 2, 0, 0.0
    else:
        x = rng.ints(-2, 2, (4, 4))
        k = rng.ints(-1, 1, (3, 3))
        stride, padding, bias = 2, 1, float(rng.integer(-1, 1))
    if np.array_equal(k, np.flip(k)):
        raise Degenerate("a symmetric kernel hides the flip")
    fwd = engine.conv2d(x, k, stride=stride, padding=padding, bias=bias)
    y = fwd.output
    if difficulty == 1:
        delta = y.copy()                                  # L = ½ Σ y²
    else:
        delta = rng.ints(-1, 2, y.shape, nonzero=True)
    if np.count_nonzero(y) < 2 or not np.any(delta):
        raise Degenerate("a mostly zero output")
    params = {"input": jsonable(x), "kernel": jsonable(k), "stride": stride, "padding": padding, "bias": bias,
              "grad_output": jsonable(delta)}
    known = solve.mistakes("conv2d", params)
    t = known.trace()
    if np.array_equal(t.grad_kernel, np.flip(t.grad_kernel)) or not np.any(t.grad_input):
        raise Degenerate("a symmetric kernel gradient or a zero input gradient")
    steps = solve.conv.conv2d_steps(known.params, t)

    asked = ("output", "grad_kernel", "grad_bias", "grad_input")       # each part's id is its answer's name
    rule = lambda answer: solve.ecf("conv2d", answer, known.params, t, asked)  # noqa: E731
    kind = "vector" if difficulty == 1 else "matrix"
    parts = [Part("output", "The output $y$" + (" (one value per window)." if difficulty == 1 else "."), kind, jsonable(y),
                  shape=y.shape, points=2, minutes=1.0 * y.size, misconceptions=known.of("output", jsonable),
                  ecf_rule=rule("output"))]
    parts.append(Part("grad_kernel", r"$\partial L / \partial K$ (the kernel's shape).", kind, jsonable(t.grad_kernel),
                      shape=t.grad_kernel.shape, points=2, minutes=0.8 * y.size * k.size / 2,
                      misconceptions=known.of("grad_kernel", jsonable), ecf_rule=rule("grad_kernel"),
                      hint="Entry (u, v) sums δ times the input value that tap (u, v) of the kernel saw in each window."))
    if bias:
        parts.append(Part("grad_bias", r"$\partial L / \partial b$.", "number", float(t.grad_bias), points=1, minutes=1,
                          misconceptions=known.of("grad_bias", float), ecf_rule=rule("grad_bias")))
    parts.append(Part("grad_input", r"$\partial L / \partial x$ (the input's shape).", kind, jsonable(t.grad_input),
                      shape=t.grad_input.shape, points=3, minutes=0.5 * x.size,
                      misconceptions=known.of("grad_input", jsonable), ecf_rule=rule("grad_input"),
                      hint="Scatter each δ[i, j]·K back onto the window it came from; overlapping windows add."))
    solution = steps_from(steps.pad, None) if padding else []
    solution += steps_from(steps.slide, "output")
    if difficulty == 1:
        solution.append(SolutionStep("Upstream gradient of L = ½ Σ y²",
                                     [Math(r"\delta_i = \frac{\partial L}{\partial y_i} = y_i"),
                                                                          Matrix("δ", jsonable(delta))]))
    solution += steps_from(steps.grad_kernel, "grad_kernel")
    if bias:
        solution += steps_from(steps.grad_bias, "grad_bias")
    solution += steps_from(steps.grad_input, "grad_input")
    solution.append(SolutionStep("Another view", [Text(
        "With stride 1 and no padding, ∂L/∂K is the cross-correlation of the input with δ, and ∂L/∂x is the "
        "full convolution of δ with K (δ zero-padded, K flipped) — the flip appears in the backward pass, not the forward."
        if difficulty == 1 else
        "∂L/∂K has the kernel's shape and ∂L/∂x the input's: each gradient has the shape of what it differentiates.")]))

    if difficulty == 1:
        statement = [Text("A 1-D convolution layer (cross-correlation as torch.nn.functional.conv1d: no kernel flip), "
                          "stride 1, no padding, no bias. The loss is $L = \\frac12 \\sum_i y_i^2$."),
                     Matrix("x", jsonable(x)), Matrix("K", jsonable(k))]
    else:
        statement = [Text("A 2-D convolution layer with one channel (cross-correlation as torch.nn.functional.conv2d: "
                          f"no kernel flip), stride {stride}"
                          + (f", zero padding {padding} on every side" if padding else ", no padding")
                          + (f", bias b = {bias:g}" if bias else ", no bias") + ". Backpropagation has delivered "
                          "$\\delta = \\partial L / \\partial y$."),
                     Matrix("x", jsonable(x)), Matrix("K", jsonable(k)), Matrix("δ", jsonable(delta))]
    return Draft(title="Convolution forward and backward" + (" (1-D)" if difficulty == 1 else ""), params=params,
                 statement=statement, parts=parts, solution=solution,
                 conventions={"operation": "cross-correlation, no kernel flip (PyTorch)",
                              "padding": f"{padding} zero{'s' if padding > 1 else ''} on each side" if padding else "none",
                              "stride": str(stride)})
