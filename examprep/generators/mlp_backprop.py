"""Backpropagation through a two-layer network by hand: dense → activation → dense → softmax +
cross-entropy, with every intermediate value and gradient as a part.

Level 1: 2 inputs, 2 hidden ReLU units, 2 classes.
Level 2: 2 inputs, 2 hidden units (ReLU or sigmoid), 3 classes.
Level 3: 2 inputs, 3 hidden units (tanh, sigmoid or leaky ReLU), 3 classes.
Each later part has an ECF rule on the earlier ones, so a grader carries a student's error forward.
The softmax needs a calculator: there is no calculator-free variant.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.values import allclose
from examprep.problem import Part, SolutionStep

_ACT_TEXT = {"relu": r"\mathrm{ReLU}", "sigmoid": r"\sigma", "tanh": r"\tanh", "leaky-relu": r"\mathrm{LeakyReLU}_{0.01}"}


@generator("mlp-backprop", title="Backprop through a two-layer network", calculator_free=False,
           syllabus="Backprop: forward/backward pass of a small net with softmax + cross-entropy", version=3)
def mlp_backprop(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    n_in, H, C = {1: (2, 2, 2), 2: (2, 2, 3), 3: (2, 3, 3)}[difficulty]
    act = {1: "relu", 2: rng.choice(["relu", "sigmoid"]), 3: rng.choice(["tanh", "sigmoid", "leaky-relu"])}[difficulty]
    x = rng.ints(-2, 2, (n_in,), nonzero=True)
    w1 = rng.ints(-1, 1, (H, n_in), nonzero=True) if difficulty == 1 else rng.decimals(-1, 1, 0.5, (H, n_in))
    # a half-integer bias keeps integer pre-activations off ReLU's kink at 0
    b1 = np.array([rng.choice([-0.5, 0.5]) for _ in range(H)]) if difficulty == 1 else rng.decimals(-0.5, 0.5, 0.5, (H,))
    w2 = rng.decimals(-1, 1, 0.5, (C, H), nonzero=True)
    b2 = np.zeros(C) if difficulty == 1 else rng.decimals(-0.5, 0.5, 0.5, (C,))
    target = rng.integer(0, C - 1)
    params = {"x": jsonable(x), "target": target, "w1": jsonable(w1), "b1": jsonable(b1), "activation": act,
              "w2": jsonable(w2), "b2": jsonable(b2)}
    # the hidden pre-activations' checks before the engine call (half of the draws fail them): W1 x + b1 of
    # halves and small integers is exact in plain Python, the engine's value to the bit
    pre = [sum(w * v for w, v in zip(row, params["x"])) + b for row, b in zip(params["w1"], params["b1"])]
    if act in ("relu", "leaky-relu") and (all(v <= 0 for v in pre) or 0 in pre):
        raise Degenerate("no active hidden unit, or a pre-activation at the kink")
    if act == "relu" and difficulty > 1 and all(v > 0 for v in pre):
        raise Degenerate("every ReLU active: the activation's gate shows nothing")
    known = solve.mistakes("mlp-backprop", params)
    t = known.trace()
    a = t.hidden_pre
    if act in ("relu", "leaky-relu") and (np.all(a <= 0) or np.any(a == 0)):
        raise Degenerate("no active hidden unit, or a pre-activation at the kink")
    if act == "relu" and difficulty > 1 and np.all(a > 0):
        raise Degenerate("every ReLU active: the activation's gate shows nothing")
    if np.ptp(t.logits) == 0 or not np.any(t.grad_w1) or t.probs.max() > 0.9:
        raise Degenerate("uniform or saturated logits (tiny gradients), or a zero first-layer gradient")
    for g in (t.grad_w1, t.grad_w2):
        if allclose(np.ravel(g.T), np.ravel(g)):
            raise Degenerate("a weight gradient reads the same transposed: the transposition mistake would not show")
    if act == "leaky-relu" and np.all(a > 0):
        raise Degenerate("leaky ReLU all positive: its slope α never shows")
    vec = lambda name: jsonable(t[name])  # noqa: E731
    spec = [
        ("hidden_pre", r"The hidden pre-activations $a = W_1 x + b_1$.", (H,), 1, 2),
        ("hidden", rf"The hidden activations $h = {_ACT_TEXT[act]}(a)$.", (H,), 1, 1.5),
        ("logits", r"The logits $z = W_2 h + b_2$.", (C,), 1, 2),
        ("probs", r"The softmax probabilities $p$.", (C,), 2, 3),
        ("loss", r"The cross-entropy loss $L = -\log p_y$ (natural log).", None, 1, 1),
        ("grad_logits", r"$\partial L / \partial z$.", (C,), 1, 1.5),
        ("grad_w2", r"$\partial L / \partial W_2$.", (C, H), 2, 2.5),
        ("grad_b2", r"$\partial L / \partial b_2$.", (C,), 1, 0.5),
        ("grad_hidden", r"$\partial L / \partial h$.", (H,), 2, 2),
        ("grad_hidden_pre", r"$\partial L / \partial a$.", (H,), 2, 2),
        ("grad_w1", r"$\partial L / \partial W_1$.", (H, n_in), 2, 2.5),
        ("grad_b1", r"$\partial L / \partial b_1$.", (H,), 1, 0.5),
        ("grad_x", r"$\partial L / \partial x$.", (n_in,), 1, 2),
    ]
    asked = [pid for pid, *_ in spec]
    parts = []
    for pid, prompt, shape, pts, minutes in spec:
        kind = "number" if shape is None else ("matrix" if len(shape) == 2 else "vector")
        value = float(t[pid]) if shape is None else vec(pid)
        parts.append(Part(pid, prompt, kind, value, shape=shape, points=pts, minutes=minutes,
                          misconceptions=known.of(pid, jsonable),
                          ecf_rule=solve.ecf("mlp-backprop", pid, known.params, t, asked, jsonable)))
    s = solve.dense.mlp_steps(params, t)
    solution = (steps_from(s.hidden_pre, "hidden_pre") + steps_from(s.hidden, "hidden") + steps_from(s.logits, "logits")
                + steps_from(s.probs, "probs") + steps_from(s.loss, "loss") + steps_from(s.grad_logits, "grad_logits")
                + steps_from(s.second_layer, "grad_w2")
                + [SolutionStep("Second-layer bias", [Math(r"\frac{\partial L}{\partial b_2} = \frac{\partial L}{\partial z}"),
                                                      Matrix("grad_b2", vec("grad_b2"))], "grad_b2")]
                + steps_from(s.grad_hidden, "grad_hidden") + steps_from(s.grad_hidden_pre, "grad_hidden_pre")
                + steps_from(s.first_layer, "grad_w1")
                + [SolutionStep("First-layer bias", [Math(r"\frac{\partial L}{\partial b_1} = \frac{\partial L}{\partial a}"),
                                                     Matrix("grad_b1", vec("grad_b1"))], "grad_b1")]
                + steps_from(s.grad_x, "grad_x"))
    act_name = {"relu": "ReLU", "sigmoid": "the sigmoid σ", "tanh": "tanh",
                "leaky-relu": "leaky ReLU with slope 0.01 for negative inputs"}[act]
    statement = [Text(f"A network with {n_in} inputs, {H} hidden units ({act_name}) and {C} classes: "
                      rf"$a = W_1 x + b_1$, $h = {_ACT_TEXT[act]}(a)$, $z = W_2 h + b_2$, $p = \mathrm{{softmax}}(z)$, "
                      r"$L = -\log p_y$. Weights are out×in (torch.nn.Linear)."),
                 Matrix("x", jsonable(x)), Matrix("W_1", jsonable(w1)), Matrix("b_1", jsonable(b1)),
                 Matrix("W_2", jsonable(w2)), Matrix("b_2", jsonable(b2)),
                 Text(f"The true class is y = {target} (0-based). Work forward, then backward through every layer.")]
    return Draft(title="Backprop through a two-layer network", params=params, statement=statement, parts=parts,
                 solution=solution,
                 conventions={"activation": act + (" (ReLU'(0) = 0)" if act == "relu" else ""),
                              "loss": "softmax + cross-entropy, natural log, one example",
                              "layout": "weights out×in (torch.nn.Linear)", "classes": "0-based"},
                 variant=act)
