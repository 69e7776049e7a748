"""Backpropagation through time by hand: two steps of an RNN, GRU or LSTM, then the gradients of the
shared weights — summed over the steps, because the same weights act at every step.

Level 1: a one-unit RNN h_t = tanh(w_ih x_t + w_hh h_{t−1}) over two steps, a loss on h₂ only: ∂L/∂h₁
through the recurrence, ∂L/∂w_hh and ∂L/∂w_ih as sums of both steps' shares.
Level 2: a two-unit RNN with a loss at both steps: ∂L/∂h₁ = δ₁ + W_hhᵀ(δ₂' ⊙ (1 − h₂²)), ∂L/∂W_hh
and ∂L/∂b.
Level 3: a one-unit GRU (the lecture's blend) or LSTM over two steps, a loss on h₂: every gate block's
weight gradient, summed over time.
tanh and σ need a calculator: no calculator-free variant.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, nice, step_per_part, steps_from, jsonable
from examprep.problem import Part, EcfRule
from examprep.solve.contract import Step

_ROWS = {"rnn": ["h"], "gru": ["r", "z", "n"], "lstm": ["i", "f", "g", "o"]}


@generator("rnn-bptt", title="Backpropagation through time: two steps, gradients summed over time",
           syllabus="RNN/GRU/LSTM: backpropagation through time, shared weights", version=1, calculator_free=False)
def rnn_bptt(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    cell = "rnn" if difficulty < 3 else rng.choice(["gru", "lstm"])
    H = 2 if difficulty == 2 else 1
    G = len(_ROWS[cell])
    x = rng.decimals(-1, 1, 0.5, (2, 1), nonzero=True)
    w_ih = rng.decimals(-1, 1, 0.5, (G * H, 1), nonzero=True)
    w_hh = rng.decimals(-1, 1, 0.5, (G * H, H), nonzero=True)
    h0 = rng.decimals(-0.5, 0.5, 0.5, (H,), nonzero=difficulty == 1)     # h₀ ≠ 0: step 1 has a W_hh share
    if difficulty == 2:
        b = rng.decimals(-0.5, 0.5, 0.5, (H,))
        grad_hidden = rng.ints(-1, 1, (2, H), nonzero=True)
    else:
        b = None
        grad_hidden = rng.ints(-2, 2, (H,), nonzero=True).astype(float)
    params = {"cell": cell, "x": jsonable(x), "h0": jsonable(h0), "weight_ih": jsonable(w_ih), "weight_hh": jsonable(w_hh),
              "bias_ih": jsonable(b) if b is not None else None, "grad_hidden": jsonable(grad_hidden)}
    known = solve.mistakes("rnn-bptt", params)
    t = known.trace()
    gh = np.asarray(t.grad_h)
    if np.any(np.abs(t.hidden) < 0.05) or np.any(np.abs(gh[0]) < 0.02) or np.any(np.abs(t.grad_weight_hh) < 0.005):
        raise Degenerate("a state or gradient too close to 0 to show the recurrence")
    one = H == 1
    val = (lambda v: float(np.ravel(v)[0])) if one else jsonable
    kind, shape = ("number", None) if one else ("vector", (H,))
    row = lambda k: lambda v: val(np.asarray(v)[k])  # noqa: E731   (h_k, ∂L/∂h_k: row k of a T×H answer)
    rows = [f"{g}{k + 1}" if H > 1 else g for g in _ROWS[cell] for k in range(H)]
    wfmt, wkind, wshape = _weight_form(t.grad_weight_hh.shape)
    ifmt, ikind, ishape = _weight_form(t.grad_weight_ih.shape)
    # each forward step's mistakes are its cell's (solve's rnn-cell, gru-cell, lstm-cell tables), one cell step each
    topic = {"rnn": "rnn-cell", "gru": "gru-cell", "lstm": "lstm-cell"}[cell]
    states = [h0, t.hidden[0]]
    cells = [np.zeros(H), t.cell[0]] if cell == "lstm" else None
    step = [solve.mistakes(topic, _cell_params(cell, x[k], states[k], cells[k] if cells else None, w_ih, w_hh, b),
                           trace=cell_trace)        # the unrolled pass's own trace of that step: not computed again
            for k, cell_trace in enumerate(t.steps)]
    parts = [
        Part("h_1", "The first hidden state $h_1$.", kind, val(t.hidden[0]), shape=shape, points=1, minutes=1.5 * H * G,
             misconceptions=known.of("hidden", row(0)) + step[0].of("h_new", val)),
        Part("h_2", "The second hidden state $h_2$.", kind, val(t.hidden[1]), shape=shape, points=1, minutes=1.5 * H * G,
             misconceptions=known.of("hidden", row(1), skip={"reuse-h0"}) + step[1].of("h_new", val)
             + (known.get("hidden", "reuse-h0", row(1)),),
             ecf_rule=_next_state(cell, x, w_ih, w_hh, b) if H > 1 else None),
    ]
    parts.append(Part("grad_h1", r"$\partial L / \partial h_1$, the gradient that reaches $h_1$.", kind, val(gh[0]),
                      shape=shape, points=2, minutes=2.5 * H, misconceptions=known.of("grad_h", row(0)),
                      hint="∂L/∂h₁ = (its own loss's δ₁) + (∂h₂/∂h₁)ᵀ ∂L/∂h₂."))
    blocks = f" (one entry per gate block, rows {', '.join(_ROWS[cell])})" if one and G > 1 else ""
    parts.append(Part("grad_weight_hh", r"$\partial L / \partial W_{hh}$, summed over both steps" + blocks + ".", wkind,
                      wfmt(t.grad_weight_hh), shape=wshape, points=3, minutes=3 * G * H,
                      misconceptions=known.of("grad_weight_hh", wfmt),
                      hint="Each step's share is ∂L/∂(pre-activation)_t times h_{t−1}ᵀ; add the shares of both steps."))
    if difficulty == 2:
        parts.append(Part("grad_bias", r"$\partial L / \partial b$, summed over both steps.", "vector",
                          jsonable(t.grad_bias_ih), shape=(H,), points=1, minutes=1.5,
                          misconceptions=known.of("grad_bias_ih", jsonable)))
    else:
        parts.append(Part("grad_weight_ih", r"$\partial L / \partial W_{ih}$, summed over both steps" + blocks + ".",
                          ikind, ifmt(t.grad_weight_ih), shape=ishape, points=2, minutes=1.5 * G,
                          misconceptions=known.of("grad_weight_ih", ifmt)))
    steps = solve.bptt.bptt_steps(known.params, t)
    solution = []
    if cell == "rnn":
        for k, st in enumerate(steps.forward, 1):
            solution += step_per_part(st, {f"h_{k}": f"h_{k}"})
    else:                       # a gated cell: each step's gates, from the unrolled pass's own per-step traces
        named = solve.rnn.gru_steps if cell == "gru" else solve.rnn.lstm_steps
        for k, (cell_trace, cell_known) in enumerate(zip(t.steps, step), 1):
            solution += steps_from(named(cell_known.params, cell_trace), f"h_{k}", prefix=f"t = {k}: ")
    for st in steps.backward:
        solution += steps_from(st, "grad_h1" if "grad_h_1" in st.values else None)
    weights = steps.weights
    if one and G > 1:           # a one-unit cell's G×1 gradients, shown as the vectors the parts ask for
        weights = Step(weights.title, weights.formula, {k: np.ravel(v) for k, v in weights.values.items()})
    solution += step_per_part(weights, {"grad_weight_hh": "grad_weight_hh"} | (
        {} if difficulty == 2 else {"grad_weight_ih": "grad_weight_ih"}), titles={"grad_weight_ih": "The same for W_ih"})
    if difficulty == 2:
        solution += step_per_part(steps.biases, {"grad_bias_ih": "grad_bias"})
    what = {"rnn": r"$h_t = \tanh(W_{ih} x_t + W_{hh} h_{t-1}" + (" + b" if b is not None else "") + ")$",
            "gru": "a GRU in the lecture's convention, $h_t = (1 - z_t) \\odot h_{t-1} + z_t \\odot n_t$ (rows r, z, n "
                   "as torch.nn.GRUCell, reset after $W_{hn} h$, no biases)",
            "lstm": "an LSTM, $c_t = f_t c_{t-1} + i_t g_t$, $h_t = o_t \\tanh c_t$ (rows i, f, g, o as "
                    "torch.nn.LSTMCell, no biases, $c_0 = 0$)"}[cell]
    delta_text = nice(grad_hidden[0]) if one else str(jsonable(grad_hidden))
    loss = (r"Losses at both steps deliver $\delta_t = \partial L / \partial h_t$ from outside the recurrence (rows below)."
            if grad_hidden.ndim == 2 else
            rf"Only $h_2$ feeds the loss, with $\partial L / \partial h_2 = {delta_text}$.")
    statement = [Text(f"A recurrent layer, {what}, runs over two inputs from $h_0$. {loss} The same weights act at both "
                      "steps."),
                 Matrix("x", jsonable(x[:, 0])), Matrix("h_0", jsonable(h0) if H > 1 else float(h0[0])),
                 *([Matrix("w_ih", float(w_ih[0, 0])), Matrix("w_hh", float(w_hh[0, 0]))] if cell == "rnn" and one else
                   [Matrix("W_ih", jsonable(w_ih), row_labels=rows), Matrix("W_hh", jsonable(w_hh), row_labels=rows)])]
    if b is not None:
        statement.append(Matrix("b", jsonable(b)))
    if grad_hidden.ndim == 2:
        statement.append(Matrix("δ", jsonable(grad_hidden), row_labels=["t=1", "t=2"]))
    return Draft(title={1: "Backpropagation through time: a one-unit RNN", 2: "Backpropagation through time: two units, "
                        "two losses", 3: f"Backpropagation through time: a {cell.upper()}"}[difficulty],
                 params=params, statement=statement, parts=parts, solution=solution,
                 conventions={"cell": {"rnn": "Elman RNN, tanh (torch.nn.RNN)", "gru": "GRU, lecture blend, rows r, z, n",
                                       "lstm": "LSTM, rows i, f, g, o"}[cell],
                              "gradient": "weight gradients summed over the steps (shared weights)"})


def _weight_form(shape: tuple[int, ...]):
    """How a weight gradient is asked: a number (1×1), a vector (one entry per gate block of a one-unit
    cell), or a matrix."""
    if shape == (1, 1):
        return (lambda v: float(np.ravel(v)[0])), "number", None
    if shape[1] == 1:
        return (lambda v: jsonable(np.ravel(v))), "vector", (shape[0],)
    return jsonable, "matrix", tuple(shape)


def _cell_params(cell: str, x, h, c, w_ih, w_hh, b) -> dict:
    """One step of the problem's cell as its solve topic's parameters (rnn-cell, gru-cell or lstm-cell)."""
    p = {"x": jsonable(x), "h": jsonable(h), "weight_ih": jsonable(w_ih), "weight_hh": jsonable(w_hh)}
    if cell == "lstm":
        p["c"] = jsonable(c)
    if b is not None:
        p["bias_ih"] = jsonable(b)
    return p


def _next_state(cell, x, w_ih, w_hh, b) -> EcfRule | None:
    """h₂ from the student's own h₁: one cell step (an RNN's or a GRU's; an LSTM's needs c₁ too)."""
    if cell == "lstm":
        return None
    args = {"x": jsonable(x[1]), "h": {"$ref": "h_1"}, "weight_ih": jsonable(w_ih), "weight_hh": jsonable(w_hh)}
    if cell == "rnn":
        if b is not None:
            args["bias_ih"] = jsonable(b)
        return EcfRule("solve:rnn-cell", args, "h_new")
    return EcfRule("solve:gru-cell", args, "h_new")
