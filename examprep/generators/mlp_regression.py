"""Backpropagation by hand through a sigmoid network with a squared-error loss, and one gradient-descent
step — the most-copied backprop example (Mazur's step-by-step walk-through; Rumelhart et al. 1986).

a = W1 x + b1, h = σ(a), z = W2 h + b2, o = σ(z), L = ½ Σ (t − o)²; weights out × in as torch.nn.Linear.
Level 1: 2 inputs, 2 hidden units, 1 output: the forward pass, δ = ∂L/∂z = (o − t)·o(1 − o), ∂L/∂W2 and
the updated W2.
Level 2: the same network all the way back: ∂L/∂a = W2ᵀδ ⊙ h(1 − h), ∂L/∂W1, and both updated weights.
Level 3: 2 outputs (as in Mazur's example): ∂L/∂h = W2ᵀδ with the weights BEFORE the update, and every
update.
The sigmoids need a calculator: no calculator-free variant.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, step_per_part, steps_from, jsonable
from examprep.problem import Part

_HALVES = (-1.0, -0.5, 0.5, 1.0)


def _singular(w: list) -> bool:
    """A 2×2 matrix of halves is singular: its determinant (a sum of quarters, exact in plain Python) is 0 —
    exactly where np.linalg.matrix_rank gives rank < 2 (its SVD's ~30 µs, on every draw)."""
    (a, b), (c, d) = w
    return a * d - b * c == 0


@generator("mlp-regression", title="Backprop through a sigmoid network with ½·SSE, one update",
           syllabus="Forward/backward propagation: a small sigmoid MLP, squared error, gradient descent", version=1,
           calculator_free=False)
def mlp_regression(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    n_out = 2 if difficulty == 3 else 1
    x = rng.decimals(-1, 1, 0.5, (2,), nonzero=True)
    w1 = np.array([rng.choice(_HALVES) for _ in range(4)]).reshape(2, 2)
    b1 = rng.decimals(-0.5, 0.5, 0.5, (2,))
    w2 = np.array([rng.choice(_HALVES) for _ in range(2 * n_out)]).reshape(n_out, 2)
    b2 = rng.decimals(-0.5, 0.5, 0.5, (n_out,))
    target = np.array([rng.choice([0.0, 1.0]) for _ in range(n_out)])
    lr = float(rng.choice([0.5, 1.0]))
    if _singular(w1.tolist()) or (n_out == 2 and _singular(w2.tolist())):
        raise Degenerate("a singular weight matrix hides which unit is which")
    params = {"x": jsonable(x), "target": jsonable(target) if n_out > 1 else float(target[0]), "w1": jsonable(w1),
              "b1": jsonable(b1), "w2": jsonable(w2), "b2": jsonable(b2), "activation": "sigmoid",
              "output_activation": "sigmoid", "loss": "half-sse", "lr": lr}
    known = solve.mistakes("mlp-regression", params)
    t = known.trace()
    if np.any(np.abs(t.grad_output_pre) < 0.02) or (difficulty > 1 and np.any(np.abs(t.grad_hidden_pre) < 0.01)):
        raise Degenerate("a nearly vanishing gradient: the update would barely show")
    one = n_out == 1
    out = (lambda v: float(np.ravel(v)[0])) if one else jsonable
    okind, oshape = ("number", None) if one else ("vector", (2,))
    asked = {n: n for n in ("hidden", "output", "loss", "grad_output_pre", "grad_w2", "grad_hidden_pre", "grad_w1", "w1_new",
                            "w2_new") + (("grad_hidden",) if difficulty == 3 else ())}
    delta = t.grad_output_pre
    parts = [
        Part("hidden", r"The hidden activations $h = \sigma(W_1 x + b_1)$.", "vector", jsonable(t.hidden), shape=(2,),
             points=2, minutes=3, misconceptions=known.of("hidden", jsonable),
             hint="a = W₁x + b₁ row by row, then σ(a) = 1/(1 + e^(−a))."),
        Part("output", r"The output $o = \sigma(W_2 h + b_2)$." if one else r"The outputs $o = \sigma(W_2 h + b_2)$.",
             okind, out(t.output), shape=oshape, points=2, minutes=2 * n_out,
             misconceptions=known.of("output", out)),
        Part("loss", r"The loss $L = \frac12 \sum (t - o)^2$.", "number", float(t.loss), points=1, minutes=1,
             misconceptions=known.of("loss", float)),
        Part("grad_output_pre", r"$\delta = \partial L / \partial z$ at the output pre-activation.", okind, out(delta),
             shape=oshape, points=2, minutes=2 * n_out, misconceptions=known.of("grad_output_pre", out),
             hint="∂L/∂o = o − t, then multiply by σ'(z) = o(1 − o)."),
        Part("grad_w2", r"$\partial L / \partial W_2$ (W₂'s shape, " + f"{n_out}×2).", "matrix", jsonable(t.grad_w2),
             shape=(n_out, 2), points=2, minutes=2 * n_out,
             misconceptions=known.of("grad_w2", jsonable),
             hint="∂L/∂W₂[j, k] = δ_j · h_k."),
    ]
    steps = solve.dense.mlp_regression_steps(known.params, t)
    solution = (steps_from(steps.hidden, "hidden") + steps_from(steps.output, "output") + steps_from(steps.loss, "loss")
                + steps_from(steps.grad_output_pre, "grad_output_pre")
                + step_per_part(steps.second_layer, {"grad_w2": "grad_w2"}))
    update_parts = {"w2_new": "w2_new"}
    if difficulty >= 2:
        if difficulty == 3:
            parts.append(Part("grad_hidden", r"$\partial L / \partial h = W_2^\top \delta$.", "vector", jsonable(t.grad_hidden),
                              shape=(2,), points=2, minutes=2,
                              misconceptions=known.of("grad_hidden", jsonable),
                              ecf_rule=solve.ecf("mlp-regression", "grad_hidden", known.params, t, asked)))
            solution += steps_from(steps.grad_hidden, "grad_hidden")
        else:
            solution += steps_from(steps.grad_hidden, None)
        parts.append(Part("grad_hidden_pre", r"$\partial L / \partial a$ at the hidden pre-activations.", "vector",
                          jsonable(t.grad_hidden_pre), shape=(2,), points=2, minutes=2.5,
                          misconceptions=known.of("grad_hidden_pre", jsonable),
                          ecf_rule=solve.ecf("mlp-regression", "grad_hidden_pre", known.params, t, asked),
                          hint="∂L/∂a = (W₂ᵀ δ) ⊙ h(1 − h)."))
        parts.append(Part("grad_w1", r"$\partial L / \partial W_1$ (2×2).", "matrix", jsonable(t.grad_w1), shape=(2, 2),
                          points=2, minutes=2.5,
                          misconceptions=known.of("grad_w1", jsonable)))
        solution += steps_from(steps.grad_hidden_pre, "grad_hidden_pre") + step_per_part(steps.first_layer,
                                                                                        {"grad_w1": "grad_w1"})
        parts.append(Part("w1_new", rf"$W_1$ after one gradient-descent step with $\eta = {lr:g}$.", "matrix",
                          jsonable(t.w1_new), shape=(2, 2), points=1, minutes=1, misconceptions=known.of("w1_new", jsonable),
                          ecf_rule=solve.ecf("mlp-regression", "w1_new", known.params, t, asked)))
        update_parts = {"w1_new": "w1_new", "w2_new": "w2_new"}
    parts.append(Part("w2_new", rf"$W_2$ after one gradient-descent step with $\eta = {lr:g}$.", "matrix",
                      jsonable(t.w2_new), shape=(n_out, 2), points=1, minutes=1, misconceptions=known.of("w2_new", jsonable),
                      ecf_rule=solve.ecf("mlp-regression", "w2_new", known.params, t, asked)))
    solution += step_per_part(steps.update, update_parts, titles={"w2_new": "The same step for W₂"})
    statement = [Text("A network with 2 inputs, 2 sigmoid hidden units and " + ("one sigmoid output" if one else
                                                                                 "2 sigmoid outputs")
                      + r": $a = W_1 x + b_1$, $h = \sigma(a)$, $z = W_2 h + b_2$, $o = \sigma(z)$, with the loss "
                        r"$L = \frac12 \sum (t - o)^2$. Weights are out × in (torch.nn.Linear)."),
                 Math(r"\sigma(u) = \frac{1}{1 + e^{-u}},\quad \sigma'(u) = \sigma(u)\,(1 - \sigma(u))"),
                 Matrix("x", jsonable(x)), Matrix("W_1", jsonable(w1)), Matrix("b_1", jsonable(b1)), Matrix("W_2", jsonable(w2)),
                 Matrix("b_2", jsonable(b2)), Matrix("t", jsonable(target) if not one else float(target[0])),
                 Text(f"Learning rate η = {lr:g}.")]
    return Draft(title={1: "Backprop through a sigmoid network: the output layer", 2: "Backprop through a sigmoid "
                        "network, all the way back", 3: "Backprop step by step: two outputs"}[difficulty],
                 params=params, statement=statement, parts=parts, solution=solution,
                 conventions={"loss": "½ Σ (t − o)² (so ∂L/∂o = o − t)", "layout": "W x with W out × in (torch.nn.Linear)",
                              "update": "every weight from the gradients of the same forward pass"})
