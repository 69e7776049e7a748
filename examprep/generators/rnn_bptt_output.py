"""Backpropagation through time from a stated loss: a one-unit RNN h_t = tanh(w_ih x_t + w_hh h_{t−1}),
an output layer y_t = ψ(w_y h_t + b_y) and a loss on every step, two steps. The gradient reaching h₁
has two paths — its own loss, and what step 2 sends back through tanh' — and every shared weight's
gradient is a sum over the steps.

Level 1: identity output y_t = w_y h_t, L = ½Σ(y_t − target_t)² (summed over the steps).
Level 2: sigmoid output with a bias, L = ½Σ(y_t − target_t)² averaged over the two steps.
Level 3: two classes, logits y_t = w_y h_t + b_y, cross-entropy averaged over the steps
(torch.nn.CrossEntropyLoss).
tanh, σ and exp need a calculator: no calculator-free variant.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, jsonable, steps_from
from examprep.problem import Part
from examprep.solve.contract import Step

_LOSS = {1: ("half-sse", "sum"), 2: ("half-sse", "mean"), 3: ("cross-entropy", "mean")}


@generator("rnn-bptt-output", title="Backpropagation through time from a stated loss: output layer, two steps",
           syllabus="RNN: backpropagation through time with an output layer and a loss on every step", version=1,
           calculator_free=False)
def rnn_bptt_output(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    n_out = 2 if difficulty == 3 else 1
    loss, reduction = _LOSS[difficulty]
    x = rng.decimals(-1, 1, 0.5, (2, 1), nonzero=True)
    w_ih = rng.decimals(-1, 1, 0.5, (1, 1), nonzero=True)
    w_hh = rng.decimals(-1, 1, 0.5, (1, 1), nonzero=True)
    w_y = rng.decimals(-2, 2, 0.5, (n_out, 1), nonzero=True)
    h0 = rng.decimals(-0.5, 0.5, 0.5, (1,), nonzero=True)       # h₀ ≠ 0: step 1 has a w_hh share
    params = {"cell": "rnn", "x": jsonable(x), "h0": jsonable(h0), "weight_ih": jsonable(w_ih),
              "weight_hh": jsonable(w_hh), "weight_y": jsonable(w_y), "loss": loss, "reduction": reduction}
    if difficulty == 3:
        if np.all(w_y == w_y[0]):
            raise Degenerate("equal logits for both classes")
        params["target"] = [int(v) for v in rng.ints(0, 1, (2,))]
    else:
        params["target"] = jsonable(rng.decimals(-1, 1, 0.5, (2, 1)))
    if difficulty >= 2:
        params["bias_y"] = jsonable(rng.decimals(-0.5, 0.5, 0.5, (n_out,)))
    if difficulty == 2:
        params["output_activation"] = "sigmoid"
    known = solve.mistakes("rnn-bptt-output", params)
    t = known.trace()
    if (np.any(np.abs(t.hidden) < 0.05) or np.any(np.abs(t.grad_h[0]) < 0.02) or np.any(np.abs(t.grad_w_y) < 0.005)
            or np.any(np.abs(t.grad_weight_hh) < 0.005) or np.any(np.abs(t.grad_hidden_own) < 0.005)):
        raise Degenerate("a state or gradient too close to 0 to show both paths")
    num = lambda v: float(np.ravel(v)[0])  # noqa: E731
    wy_form = num if n_out == 1 else (lambda v: jsonable(np.ravel(v)))
    wy_kind, wy_shape = ("number", None) if n_out == 1 else ("vector", (n_out,))
    first = lambda v: num(np.asarray(v)[0])  # noqa: E731   (∂L/∂h₁: row 1 of the T×H answer)
    parts = [
        Part("loss", "The loss $L$ over both steps.", "number", float(t.loss), points=2, minutes=4 + 2 * n_out,
             misconceptions=known.of("loss", float)),
        Part("grad_w_y", r"$\partial L / \partial w_y$" + (" (one entry per class)" if n_out > 1 else "") + ".", wy_kind,
             wy_form(t.grad_w_y), shape=wy_shape, points=2, minutes=3 * n_out, misconceptions=known.of("grad_w_y", wy_form),
             hint="w_y acts at both steps: add both steps' (∂L/∂y_t ⊙ ψ') h_t."),
        Part("grad_h1", r"$\partial L / \partial h_1$, the gradient that reaches $h_1$.", "number", first(t.grad_h),
             points=2, minutes=3, misconceptions=known.of("grad_h", first),
             hint="∂L/∂h₁ = (what its own loss sends: w_yᵀ(∂L/∂y₁ ⊙ ψ')) + (∂h₂/∂h₁) ∂L/∂h₂."),
        Part("grad_weight_hh", r"$\partial L / \partial w_{hh}$, summed over both steps.", "number",
             num(t.grad_weight_hh), points=2, minutes=3, misconceptions=known.of("grad_weight_hh", num),
             hint="Each step's share is ∂L/∂a_t · h_{t−1}, with ∂L/∂a_t = ∂L/∂h_t (1 − h_t²)."),
    ]
    steps = solve.bptt.bptt_output_steps(known.params, t)
    solution = steps_from(steps.forward, None) + steps_from(steps.output, None) + steps_from(steps.loss, "loss")
    layer = steps.output_layer        # a one-unit layer's n_out×1 gradient, shown as the vector the part asks for
    layer = Step(layer.title, layer.formula, {k: np.ravel(v) for k, v in layer.values.items()})
    solution += steps_from(steps.grad_output, None) + steps_from(layer, "grad_w_y")
    for st in steps.backward:
        solution += steps_from(st, "grad_h1" if "grad_h_1" in st.values else None)
    solution += steps_from(steps.weights, "grad_weight_hh")
    out = {1: r"y_t = w_y h_t", 2: r"y_t = \sigma(w_y h_t + b_y)", 3: r"y_t = w_y h_t + b_y"}[difficulty]
    said = {1: r"$L = \tfrac12 \sum_{t=1}^{2} (y_t - \hat y_t)^2$ (summed over the steps)",
            2: r"$L = \tfrac12 \cdot \tfrac12 \sum_{t=1}^{2} (y_t - \hat y_t)^2$ (½ squared error, averaged over the "
               "two steps)",
            3: r"the cross-entropy of $\mathrm{softmax}(y_t)$ against class $c_t$, averaged over the two steps "
               "(torch.nn.CrossEntropyLoss)"}[difficulty]
    logits = " (two logits)" if n_out > 1 else ""
    statement = [Text(rf"A one-unit RNN $h_t = \tanh(w_{{ih}} x_t + w_{{hh}} h_{{t-1}})$ with output layer ${out}${logits} "
                      f"runs over two inputs from $h_0$; the loss is {said}. The same weights act at both steps."),
                 Matrix("x", jsonable(x[:, 0])), Matrix("h_0", float(h0[0])), Matrix("w_ih", float(w_ih[0, 0])),
                 Matrix("w_hh", float(w_hh[0, 0])), Matrix("w_y", num(w_y) if n_out == 1 else jsonable(np.ravel(w_y)))]
    if difficulty >= 2:
        statement.append(Matrix("b_y", num(params["bias_y"]) if n_out == 1 else params["bias_y"]))
    statement.append(Matrix("c" if difficulty == 3 else r"\hat y",
                            params["target"] if difficulty == 3 else jsonable(np.ravel(params["target"]))))
    return Draft(title={1: "BPTT from a loss: a one-unit RNN", 2: "BPTT from a loss: a sigmoid output, averaged",
                        3: "BPTT from a loss: cross-entropy over the steps"}[difficulty],
                 params=params, statement=statement, parts=parts, solution=solution,
                 conventions=solve.get_topic("rnn-bptt-output").conventions(known.params))
