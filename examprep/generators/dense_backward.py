"""A dense layer by hand: y = W x + b forward, then ∂L/∂W, ∂L/∂b and ∂L/∂x.

Level 1: square W (2×2), the upstream gradient δ = ∂L/∂y given.
Level 2: W of 3×2 and the loss L = ½‖y − t‖², so δ = y − t is a part (later parts use it).
Level 3: a batch of two examples, Y = X Wᵀ + b: the weight and bias gradients sum over the batch.
Layout as torch.nn.Linear: W is out×in. Calculator-free: integer entries, so every answer is an integer.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.values import allclose
from examprep.problem import Part, SolutionStep


@generator("dense-backward", title="Dense layer: forward pass and gradients",
           syllabus="Backprop: forward/backward pass of a dense layer y = Wx + b", version=2)
def dense_backward(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    batch = difficulty == 3
    n_in, n_out = (2, 3) if difficulty == 2 else (2, 2)
    W = (rng.decimals(-1, 1, 0.5, (n_out, n_in), nonzero=True) if difficulty == 2 and not calculator_free
         else rng.ints(-2, 2, (n_out, n_in), nonzero=True))
    b = rng.ints(-2, 2, (n_out,))
    x = rng.ints(-2, 2, (2, n_in) if batch else (n_in,), nonzero=True)
    if n_out == n_in and allclose(W, W.T):
        raise Degenerate("a symmetric W hides the transpose")
    target = None
    if difficulty == 2:
        target = rng.ints(-2, 2, (n_out,))
        params = {"x": jsonable(x), "weight": jsonable(W), "bias": jsonable(b), "target": jsonable(target)}
    else:
        params = {"x": jsonable(x), "weight": jsonable(W), "bias": jsonable(b),
                  "grad_output": jsonable(rng.ints(-2, 2, (2, n_out) if batch else (n_out,), nonzero=True))}
    known = solve.mistakes("dense", params)
    t = known.trace()
    delta = t.grad_output if difficulty == 2 else np.asarray(params["grad_output"])     # δ = y − t, or given
    if not np.any(delta) or np.count_nonzero(delta) < 2:
        raise Degenerate("δ too sparse: the gradients show little")
    if allclose(np.ravel(t.grad_weight.T), np.ravel(t.grad_weight)):
        raise Degenerate("∂L/∂W reads the same transposed: the transposition mistake would not show")
    asked = {"output": "output", "grad_output": "delta"}

    def mis(answer: str) -> tuple:
        return known.of(answer, jsonable)

    def ecf(answer: str):
        return solve.ecf("dense", answer, known.params, t, asked, jsonable)

    kind = "matrix" if batch else "vector"
    pts = lambda n: n * (2 if batch else 1)  # noqa: E731
    shape_y = (2, n_out) if batch else (n_out,)
    parts = [Part("output", r"The output $Y = X W^\top + b$ (one row per example)." if batch else r"The output $y = W x + b$.",
                  kind, jsonable(t.output), shape=shape_y, points=pts(1), minutes=pts(2), misconceptions=mis("output"),
                  ecf_rule=ecf("output"))]
    if difficulty == 2:
        parts.append(Part("delta", r"The upstream gradient $\delta = \partial L / \partial y$.", "vector", jsonable(delta),
                          shape=(n_out,), points=1, minutes=1.5,
                          misconceptions=mis("grad_output"), ecf_rule=ecf("grad_output")))
    parts += [
        Part("grad_weight", r"$\partial L / \partial W$" + (" (summed over the batch)." if batch else "."), "matrix",
             jsonable(t.grad_weight), shape=(n_out, n_in), points=2, minutes=3, misconceptions=mis("grad_weight"),
             ecf_rule=ecf("grad_weight"), hint="Same shape as W: entry (i, j) is Σ over examples of δ_i x_j."),
        Part("grad_bias", r"$\partial L / \partial b$" + (" (summed over the batch)." if batch else "."), "vector",
             jsonable(t.grad_bias), shape=(n_out,), points=1, minutes=1, misconceptions=mis("grad_bias"),
             ecf_rule=ecf("grad_bias")),
        Part("grad_input", r"$\partial L / \partial X$ (one row per example)." if batch else r"$\partial L / \partial x$.",
             kind, jsonable(t.grad_input), shape=(2, n_in) if batch else (n_in,), points=2, minutes=pts(2),
             misconceptions=mis("grad_input"), ecf_rule=ecf("grad_input"),
             hint="Backwards through W: multiply by Wᵀ."),
    ]
    steps = solve.dense.dense_steps(known.params, t)
    solution = steps_from(steps.forward, "output")
    if difficulty == 2:
        solution.append(SolutionStep("Upstream gradient of L = ½ Σ (y_i − t_i)²", [
            Math(r"\delta = \frac{\partial L}{\partial y} = y - t"), Matrix("t", jsonable(target)), Matrix("δ", jsonable(delta))],
            "delta"))
    solution += (steps_from(steps.grad_weight, "grad_weight") + steps_from(steps.grad_bias, "grad_bias")
                 + steps_from(steps.grad_input, "grad_input"))
    solution.append(SolutionStep("Check the shapes", [Text(
        f"∂L/∂W is {n_out}×{n_in} like W, ∂L/∂b has {n_out} entries like b, and ∂L/∂{'X' if batch else 'x'} has the shape of "
        f"{'X' if batch else 'x'}: a gradient always has the shape of what it differentiates.")]))

    if batch:
        statement = [Text(f"A dense layer (torch.nn.Linear, W is {n_out}×{n_in}) applied to a batch of two examples, one per "
                          "row of X: $Y = X W^\\top + b$. The loss $L$ is a sum over the examples, and backpropagation "
                          "has delivered $\\delta = \\partial L / \\partial Y$ (one row per example)."),
                     Matrix("X", jsonable(x), row_labels=["n=1", "n=2"]), Matrix("W", jsonable(W)), Matrix("b", jsonable(b)),
                     Matrix("δ", jsonable(delta), row_labels=["n=1", "n=2"])]
    else:
        statement = [Text(f"A dense layer $y = W x + b$ with W of shape {n_out}×{n_in} (out×in, as torch.nn.Linear)."),
                     Matrix("x", jsonable(x)), Matrix("W", jsonable(W)), Matrix("b", jsonable(b))]
        if difficulty == 2:
            statement += [Text(r"The loss is $L = \frac12 \sum_i (y_i - t_i)^2$ with target"), Matrix("t", jsonable(target))]
        else:
            statement += [Text(r"Backpropagation has delivered the upstream gradient $\delta = \partial L / \partial y$:"),
                          Matrix("δ", jsonable(delta))]
    return Draft(title="Dense layer forward and backward" + (" on a batch" if batch else ""),
                 params={"x": jsonable(x), "weight": jsonable(W), "bias": jsonable(b), "grad_output": jsonable(delta)}
                 | ({"target": jsonable(target)} if target is not None else {}),
                 statement=statement, parts=parts, solution=solution,
                 conventions={"layout": "W is out×in (torch.nn.Linear)" + ("; Y = X Wᵀ + b, rows are examples" if batch else ""),
                              "loss": "½‖y − t‖²" if difficulty == 2 else ("summed over the batch" if batch else "given δ")})
