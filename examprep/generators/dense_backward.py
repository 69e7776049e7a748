"""A dense layer by hand: y = W x + b forward, then ∂L/∂W, ∂L/∂b and ∂L/∂x.

Level 1: square W (2×2), the upstream gradient δ = ∂L/∂y given.
Level 2: W of 3×2 and the loss L = ½‖y − t‖², so δ = y − t is a part (later parts use it).
Level 3: a batch of two examples, Y = X Wᵀ + b: the weight and bias gradients sum over the batch.
Layout as torch.nn.Linear: W is out×in. Calculator-free: integer entries, so every answer is an integer.
"""
from __future__ import annotations

import numpy as np

from examprep import engine, solve
from examprep.engine import ops
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.values import allclose
from examprep.problem import Misconception, Part, EcfRule, SolutionStep


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
        delta = ops.subtract(engine.dense(x, W, b).output, target)          # δ = y − t
    else:
        delta = rng.ints(-2, 2, (2, n_out) if batch else (n_out,), nonzero=True)
    if not np.any(delta) or np.count_nonzero(delta) < 2:
        raise Degenerate("δ too sparse: the gradients show little")
    params = {"x": jsonable(x), "weight": jsonable(W), "bias": jsonable(b), "grad_output": jsonable(delta)}
    known = solve.mistakes("dense", params)
    t = known.trace()
    square = n_in == n_out
    if allclose(np.ravel(t.grad_weight.T), np.ravel(t.grad_weight)):
        raise Degenerate("∂L/∂W reads the same transposed: the transposition mistake would not show")

    # mistaken methods, each through the engine: solve's table for the output, this problem's own after it
    no_bias = known.trace(bias=None)
    out_mis = list(known.of("output", jsonable))
    gw_mis = [Misconception("outer-transposed", jsonable(t.grad_weight.T),
                            "∂L/∂W has W's shape out×in: it is δ xᵀ ("
                            + ("δᵀX summed over the batch" if batch else "row i is δ_i xᵀ")
                            + "), not x δᵀ.")]
    gb_mis = [Misconception("ones", jsonable(np.ones_like(t.grad_bias)),
                            "∂y/∂b = 1 is only the local derivative; by the chain rule ∂L/∂b = δ · 1 = δ.")]
    gx_mis = []
    if square:
        gx_mis.append(Misconception("forward-instead", jsonable(no_bias.output),
                                    "W x is the forward pass; the gradient goes backwards through Wᵀ: ∂L/∂x = Wᵀδ."))
    if square:
        gx_mis.append(Misconception("no-transpose", jsonable(engine.dense(delta, W.T, None).output),
                                    "Backwards through y = W x the gradient is Wᵀ δ (each x_j collects Σ_i W_ij δ_i), not W δ."))
    else:
        gx_mis.append(Misconception("sum-of-weights", jsonable(W.sum(axis=0)),
                                    "You summed W's columns without weighting them by δ: ∂L/∂x_j = Σ_i W_ij δ_i."))
    if batch:
        gw_mis.append(Misconception("mean-over-batch", jsonable(t.grad_weight / 2),
                                    "L sums the examples' losses: the gradients add over the batch, no 1/N."))
        gw_mis.append(Misconception("first-example-only", jsonable(engine.dense(x[0], W, b, delta[0]).grad_weight),
                                    "Every example contributes: ∂L/∂W = Σ_n δ_n x_nᵀ = δᵀX."))
        gb_mis.append(Misconception("mean-over-batch", jsonable(t.grad_bias / 2),
                                    "L sums the examples' losses: ∂L/∂b = Σ_n δ_n, no 1/N."))
    elif square:
        gb_mis.append(Misconception("times-x", jsonable(ops.multiply(delta, x)), "b is added, not multiplied by x: ∂L/∂b = δ."))

    kind = "matrix" if batch else "vector"
    pts = lambda n: n * (2 if batch else 1)  # noqa: E731
    shape_y = (2, n_out) if batch else (n_out,)
    grad_ref = {"$ref": "delta"} if difficulty == 2 else jsonable(delta)
    dense_args = {"x": jsonable(x), "weight": jsonable(W), "bias": jsonable(b)}
    parts = [Part("output", r"The output $Y = X W^\top + b$ (one row per example)." if batch else r"The output $y = W x + b$.",
                  kind, jsonable(t.output), shape=shape_y, points=pts(1), minutes=pts(2), misconceptions=tuple(out_mis),
                  ecf_rule=EcfRule("solve:dense", dense_args, "output"))]
    if difficulty == 2:
        parts.append(Part("delta", r"The upstream gradient $\delta = \partial L / \partial y$.", "vector", jsonable(delta),
                          shape=(n_out,), points=1, minutes=1.5,
                          misconceptions=(Misconception("t-minus-y", jsonable(-delta),
                                                        "∂/∂y of ½‖y − t‖² is y − t, not t − y."),
                                          Misconception("squared", jsonable(delta**2),
                                                        "Differentiate ½(y − t)²: the ½ cancels the 2 and the result is y − t.")),
                          ecf_rule=EcfRule("subtract", {"a": {"$ref": "output"}, "b": jsonable(target)})))
    grad_rule = lambda out: EcfRule("solve:dense", dense_args | {"grad_output": grad_ref}, out)  # noqa: E731
    parts += [
        Part("grad_weight", r"$\partial L / \partial W$" + (" (summed over the batch)." if batch else "."), "matrix",
             jsonable(t.grad_weight), shape=(n_out, n_in), points=2, minutes=3, misconceptions=tuple(gw_mis),
             ecf_rule=grad_rule("grad_weight"), hint="Same shape as W: entry (i, j) is Σ over examples of δ_i x_j."),
        Part("grad_bias", r"$\partial L / \partial b$" + (" (summed over the batch)." if batch else "."), "vector",
             jsonable(t.grad_bias), shape=(n_out,), points=1, minutes=1, misconceptions=tuple(gb_mis),
             ecf_rule=grad_rule("grad_bias")),
        Part("grad_input", r"$\partial L / \partial X$ (one row per example)." if batch else r"$\partial L / \partial x$.",
             kind, jsonable(t.grad_input), shape=(2, n_in) if batch else (n_in,), points=2, minutes=pts(2),
             misconceptions=tuple(gx_mis), ecf_rule=grad_rule("grad_input"),
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
                 params=params | ({"target": jsonable(target)} if target is not None else {}),
                 statement=statement, parts=parts, solution=solution,
                 conventions={"layout": "W is out×in (torch.nn.Linear)" + ("; Y = X Wᵀ + b, rows are examples" if batch else ""),
                              "loss": "½‖y − t‖²" if difficulty == 2 else ("summed over the batch" if batch else "given δ")})
