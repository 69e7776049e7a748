"""A vanilla (Elman) RNN by hand: h' = tanh(W_ih x + b_ih + W_hh h + b_hh), as torch.nn.RNNCell.

Level 1: one input, one hidden unit, no biases: the pre-activation and h'.
Level 2: two inputs and two hidden units with PyTorch's two bias vectors.
Level 3: two time steps from h₀ (the second step uses the student's h₁), and the Jacobian
∂h₂/∂h₁ = diag(1 − h₂²) W_hh that backprop through time multiplies at every step.
Calculator-free: integer weights, so every pre-activation a is an integer and
tanh a = (e^{2a} − 1)/(e^{2a} + 1); at level 3 the cell uses ReLU (exact integers).
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.values import allclose
from examprep.exact import exp_term
from examprep.problem import Part, EcfRule, SolutionStep


def tanh_exact(a: float) -> str:
    """tanh of an integer a as typed: (e^{2a} − 1)/(e^{2a} + 1)."""
    a = int(round(a))
    if a == 0:
        return "0"
    e = exp_term(2 * a)
    return f"({e} - 1)/({e} + 1)"


@generator("rnn-step", title="A vanilla RNN step by hand", syllabus="RNN: the recurrence h_t = tanh(W x_t + U h_{t−1} + b)",
           version=1)
def rnn_step(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    if difficulty == 3:
        return _two_steps(rng, calculator_free)
    H = n_in = 1 if difficulty == 1 else 2
    if calculator_free:
        x, h = rng.ints(-1, 2, (n_in,), nonzero=True), rng.ints(-1, 1, (H,), nonzero=True)
        w_ih, w_hh = rng.ints(-1, 1, (H, n_in), nonzero=True), rng.ints(-1, 1, (H, H))
    else:
        x, h = rng.decimals(-1, 2, 0.5, (n_in,), nonzero=True), rng.decimals(-1, 1, 0.5, (H,), nonzero=True)
        w_ih, w_hh = rng.decimals(-1, 1, 0.5, (H, n_in), nonzero=True), rng.decimals(-1, 1, 0.5, (H, H))
    if difficulty == 1:
        b_ih = b_hh = np.zeros(H)
    else:
        b_ih, b_hh = rng.ints(-1, 1, (H,)), rng.ints(-1, 1, (H,))
        if not np.any(b_hh):
            raise Degenerate("b_hh = 0 hides the second bias")
    if not np.any(w_hh @ h):
        raise Degenerate("W_hh h = 0: the recurrence shows nothing")
    params = {"x": jsonable(x), "h": jsonable(h), "weight_ih": jsonable(w_ih), "weight_hh": jsonable(w_hh),
              "bias_ih": jsonable(b_ih), "bias_hh": jsonable(b_hh), "nonlinearity": "tanh"}
    known = solve.mistakes("rnn-cell", params)
    t = known.trace()
    if np.any(np.abs(t.pre_activation) > 3):
        raise Degenerate("a saturated unit")
    scalar = H == 1
    val = (lambda v: float(np.ravel(v)[0])) if scalar else jsonable
    kind, shape = ("number", None) if scalar else ("vector", (H,))
    exact_h = [tanh_exact(a) for a in t.pre_activation] if calculator_free else None
    ex = (exact_h[0] if scalar else exact_h) if exact_h else None
    parts = [
        Part("pre_activation", "The pre-activation $a = W_{ih} x + b_{ih} + W_{hh} h + b_{hh}$.", kind,
             val(t.pre_activation), shape=shape, points=1, minutes=2 * H, misconceptions=known.of("pre_activation", val)),
        Part("h_new", "The new hidden state $h' = \\tanh(a)$.", kind, val(t.h_new), shape=shape, points=1, minutes=1 * H,
             exact=ex, misconceptions=known.of("h_new", val),
             ecf_rule=solve.ecf("rnn-cell", "h_new", params, t, ("pre_activation", "h_new"))),
    ]
    steps = solve.rnn.rnn_steps(params, t)
    solution = (steps_from((steps.input_part, steps.hidden_part), None) + steps_from(steps.pre_activation, "pre_activation")
                + steps_from(steps.h_new, "h_new"))
    if calculator_free:
        solution.append(SolutionStep("Exact value", [Math(r"\tanh a = \frac{e^{2a} - 1}{e^{2a} + 1}"),
                                                     Matrix("h' (exact)", ex)], None))
    statement = [Text("A vanilla RNN cell (torch.nn.RNNCell): $h' = \\tanh(W_{ih} x + b_{ih} + W_{hh} h + b_{hh})$"
                      + (", no biases." if difficulty == 1 else ", with PyTorch's two bias vectors.")),
                 Matrix("x", params["x"]), Matrix("h", params["h"]),
                 Matrix("W_ih", params["weight_ih"]), Matrix("W_hh", params["weight_hh"])]
    if difficulty == 2:
        statement += [Matrix("b_ih", params["bias_ih"]), Matrix("b_hh", params["bias_hh"])]
    return Draft(title="One step of a vanilla RNN", params=params, statement=statement, parts=parts, solution=solution,
                 conventions={"cell": "h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (torch.nn.RNNCell)",
                              "layout": "weights out×in (H×I, H×H)"})


def _two_steps(rng: Stream, calculator_free: bool) -> Draft:
    H, n_in = 2, 1
    nl = "relu" if calculator_free else "tanh"
    xs = rng.ints(-1, 2, (2, n_in), nonzero=True) if calculator_free else rng.decimals(-1, 1, 0.5, (2, n_in), nonzero=True)
    h0 = rng.ints(-1, 1, (H,)) if calculator_free else rng.decimals(-0.5, 0.5, 0.5, (H,))
    w_ih = rng.ints(-1, 1, (H, n_in), nonzero=True) if calculator_free else rng.decimals(-1, 1, 0.5, (H, n_in), nonzero=True)
    w_hh = rng.ints(-1, 1, (H, H), nonzero=True) if calculator_free else rng.decimals(-1, 1, 0.5, (H, H), nonzero=True)
    b = rng.ints(-1, 1, (H,))
    params = {"x": jsonable(xs), "h0": jsonable(h0), "weight_ih": jsonable(w_ih), "weight_hh": jsonable(w_hh),
              "bias_ih": jsonable(b), "nonlinearity": nl}
    unroll = solve.mistakes("rnn-unroll", params)
    u = unroll.trace()
    h1, h2 = u.hidden
    J2 = u.jacobians[1]
    if np.any(u.pre_activations == 0) or allclose(J2, J2.T) or not np.any(h1) or np.array_equal(h1, h0):
        raise Degenerate("a kink, a symmetric Jacobian or a trivial first step")
    if nl == "relu" and (np.all(u.pre_activations[1] > 0) or np.all(u.pre_activations[1] < 0)):
        raise Degenerate("ReLU mask all on or all off at step 2: the diag(φ') factor shows nothing")
    cell = lambda h, x: {"x": jsonable(x), "h": h, "weight_ih": jsonable(w_ih), "weight_hh": jsonable(w_hh),  # noqa: E731
                         "bias_ih": jsonable(b), "bias_hh": [0.0] * H, "nonlinearity": nl}
    step1 = solve.mistakes("rnn-cell", cell(jsonable(h0), xs[0]))      # each step's mistakes, as one rnn-cell step
    step2 = solve.mistakes("rnn-cell", cell(jsonable(h1), xs[1]))
    last = solve.mistakes("rnn-unroll", params | {"x": jsonable(xs[1:]), "h0": jsonable(h1)})
    parts = [
        Part("h_1", "The hidden state $h_1$ after the first input.", "vector", jsonable(h1), shape=(H,), points=2, minutes=3,
             misconceptions=step1.of("h_new", jsonable, skip={"no-tanh"}),
             ecf_rule=EcfRule("solve:rnn-cell", cell(jsonable(h0), xs[0]), "h_new")),
        Part("h_2", "The hidden state $h_2$ after the second input.", "vector", jsonable(h2), shape=(H,), points=2, minutes=3,
             misconceptions=(unroll.get("hidden", "reuse-h0", lambda v: jsonable(np.asarray(v)[1])),)
             + step2.of("h_new", jsonable, skip={"no-tanh"}),
             ecf_rule=EcfRule("solve:rnn-cell", cell({"$ref": "h_1"}, xs[1]), "h_new")),
        # ∂h₂/∂h₁: the Jacobian of the second step alone, rnn-unroll's over that one step from h₁
        Part("jacobian", r"The Jacobian $\partial h_2 / \partial h_1$ (2×2, rows: components of $h_2$).", "matrix",
             jsonable(J2), shape=(H, H), points=3, minutes=4, misconceptions=last.of("jacobian", jsonable),
             ecf_rule=solve.ecf("rnn-unroll", "jacobian", last.params, last.trace(), {"hidden": "h_2"}, jsonable)),
    ]
    steps = solve.rnn.unroll_steps(unroll.params, u)
    solution = (steps_from(steps.time_steps[0], "h_1") + steps_from(steps.time_steps[1], "h_2")
                + steps_from(steps.jacobians[0], None) + steps_from(steps.jacobians[1], "jacobian"))
    solution.append(SolutionStep("Backprop through time", [
        Math(r"\frac{\partial h_T}{\partial h_0} = \frac{\partial h_T}{\partial h_{T-1}} \cdots "
             r"\frac{\partial h_1}{\partial h_0},\quad "
             r"\frac{\partial h_t}{\partial h_{t-1}} = \mathrm{diag}(\phi'(a_t))\, W_{hh}"),
        Text("Every step multiplies the gradient by another such Jacobian: with |φ'| ≤ 1 and small W_hh the product "
             "shrinks with the length of the sequence (vanishing gradients); with large W_hh it can grow (exploding).")]))
    phi = r"\mathrm{ReLU}" if nl == "relu" else r"\tanh"
    statement = [Text("A vanilla RNN with one input and two hidden units, "
                      f"$h_t = {phi}(W_{{ih}} x_t + b_{{ih}} + W_{{hh}} h_{{t-1}})$ "
                      "($b_{hh} = 0$; weights out×in), run over two time steps from $h_0$."),
                 Matrix("x_1, x_2", jsonable(xs[:, 0])), Matrix("h_0", jsonable(h0)), Matrix("W_ih", jsonable(w_ih)),
                 Matrix("W_hh", jsonable(w_hh)), Matrix("b_ih", jsonable(b))]
    return Draft(title="Two RNN steps and the Jacobian of backprop through time", params=params, statement=statement,
                 parts=parts, solution=solution,
                 conventions={"cell": f"h_t = {nl}(W_ih x_t + b_ih + W_hh h_(t−1)), b_hh = 0",
                              "jacobian": "∂h_t/∂h_(t−1) = diag(φ'(a_t)) W_hh, rows are the outputs"
                              + ("; ReLU'(0) = 0" if nl == "relu" else "")})
