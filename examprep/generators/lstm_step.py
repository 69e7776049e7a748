"""One LSTM step by hand: the gates i, f, o, the candidate g, the cell state c' and the hidden state h'.

Level 1: one input, one hidden unit, no biases.
Level 2: two hidden units, one input, a bias vector (b_hh = 0).
Level 3: as level 2, and the gradient along the cell state: ∂c'/∂c = f (element-wise) and
∂L/∂c = f ⊙ ∂L/∂c' — the additive path that lets LSTMs carry gradients over long sequences.
Rows of the weights are stacked [i; f; g; o] as torch.nn.LSTMCell (3 gates + the candidate).
Calculator-free: x = 1, W_hh = 0 and input weights ln a, so σ(ln a) = a/(1 + a),
tanh(ln a) = (a² − 1)/(a² + 1), c' is a fraction and h' = o·(e^{2c'} − 1)/(e^{2c'} + 1).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.exact import exp_term, frac
from examprep.problem import Part, SolutionStep

_GATES = ("i", "f", "g", "o")


def _tanh_of_fraction(q: Fraction) -> str:
    if q == 0:
        return "0"
    e = exp_term(2 * q)
    return f"({e} - 1)/({e} + 1)"


def _gates_alike(x: list, h: list, w_ih: list, w_hh: list, b_ih: list) -> bool:
    """The engine-based refusals below that its pre-activations decide (pre_i = pre_f, or pre_g = 0 so
    g = tanh 0 = 0), before the engine call: on halves every pre-activation W_ih x + b_ih + W_hh h is a
    sum of quarters, exact in plain Python — the engine's to the bit (a quarter of the draws fail it)."""
    pre = [sum(w * v for w, v in zip(ri, x)) + b + sum(w * v for w, v in zip(rh, h)) for ri, rh, b in zip(w_ih, w_hh, b_ih)]
    H = len(h)
    return any(pre[k] == pre[H + k] or pre[2 * H + k] == 0 for k in range(H))


@generator("lstm-step", title="One LSTM step by hand", syllabus="LSTM: gates i, f, o, candidate g, cell and hidden state",
           version=2)
def lstm_step(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    H, n_in = (1, 1) if difficulty == 1 else (2, 1)
    exact: dict = {}
    if calculator_free:
        # ln-weights: gate a-values for i, f, o in 1..4 (σ = a/(1+a)), candidate c in 2..3 with a sign
        draws = [rng.sample([1, 2, 3, 4], 3) for _ in range(H)]       # distinct gates per unit
        a = {k: [d[n] for d in draws] for n, k in enumerate(("i", "f", "o"))}
        cs = [rng.choice([2, 3]) * rng.choice([1, -1]) for _ in range(H)]
        x = np.array([1.0])
        h = rng.ints(-1, 1, (H,))
        c = np.array([float(Fraction(rng.choice([1, -1]), rng.choice([1, 2]))) for _ in range(H)])
        col = lambda v: np.log(np.abs(v)) * np.sign(v)  # noqa: E731
        rows = {"i": col(np.array(a["i"], float)), "f": col(np.array(a["f"], float)),
                "g": col(np.array(cs, float)), "o": col(np.array(a["o"], float))}
        w_ih = np.concatenate([rows[k] for k in _GATES])[:, None]
        w_hh = np.zeros((4 * H, H))
        b_ih = np.zeros(4 * H)
        ln = lambda v: "0" if abs(v) == 1 and v > 0 else ("" if v > 0 else "-") + f"ln {abs(v)}"  # noqa: E731
        shown_ih = [[ln(v)] for k in _GATES for v in (a[k] if k != "g" else cs)]
        sig = {k: [Fraction(v, 1 + v) for v in a[k]] for k in ("i", "f", "o")}
        gq = [Fraction(abs(v) ** 2 - 1, abs(v) ** 2 + 1) * (1 if v > 0 else -1) for v in cs]
        cq = [Fraction(cv).limit_denominator(4) for cv in c]
        cn = [sig["f"][k] * cq[k] + sig["i"][k] * gq[k] for k in range(H)]
        exact = {"i": [frac(v) for v in sig["i"]], "f": [frac(v) for v in sig["f"]], "g": [frac(v) for v in gq],
                 "o": [frac(v) for v in sig["o"]], "c_new": [frac(v) for v in cn],
                 "h_new": [(f"{frac(sig['o'][k])}*{_tanh_of_fraction(cn[k])}" if cn[k] != 0 else "0") for k in range(H)]}
    else:
        x = rng.decimals(-1, 1, 0.5, (n_in,), nonzero=True)
        h = rng.decimals(-1, 1, 0.5, (H,))
        c = rng.decimals(-1, 1, 0.5, (H,), nonzero=True)
        w_ih = rng.decimals(-1, 1, 0.5, (4 * H, n_in))
        w_hh = rng.decimals(-1, 1, 0.5, (4 * H, H))
        b_ih = np.zeros(4 * H) if difficulty == 1 else rng.decimals(-0.5, 0.5, 0.5, (4 * H,))
        if _gates_alike(x.tolist(), h.tolist(), w_ih.tolist(), w_hh.tolist(), b_ih.tolist()):
            raise Degenerate("i = f, or a zero candidate: the draw is refused before the engine call")
        shown_ih = jsonable(w_ih)
    b_hh = np.zeros(4 * H)
    params = {"x": jsonable(x), "h": jsonable(h), "c": jsonable(c), "weight_ih": jsonable(w_ih), "weight_hh": jsonable(w_hh),
              "bias_ih": jsonable(b_ih), "bias_hh": jsonable(b_hh)}
    known = solve.mistakes("lstm-cell", params)
    t = known.trace()
    pre = {k: t[f"pre_{k}"] for k in _GATES}
    if np.any(np.abs(pre["i"] - pre["f"]) < 1e-12):
        raise Degenerate("i = f: a student who mixes up the input and forget rows would not notice")
    if np.any(np.abs(t.c_new - c) < 1e-12) or np.any(t.g == 0):
        raise Degenerate("the cell state did not change, or a zero candidate")
    scalar = H == 1
    val = (lambda v: float(np.ravel(v)[0])) if scalar else jsonable
    ex = (lambda k: exact[k][0] if scalar else exact[k]) if exact else (lambda k: None)
    kind, shape = ("number", None) if scalar else ("vector", (H,))
    asked = ("i", "f", "g", "o", "c_new", "h_new")
    ecf = lambda answer: solve.ecf("lstm-cell", answer, params, t, asked, val)  # noqa: E731
    gate_text = {"i": "input gate", "f": "forget gate", "o": "output gate"}
    parts = [Part(k, f"The {gate_text[k]} ${k}$.", kind, val(t[k]), shape=shape, points=1, minutes=1.5 * H,
                  exact=ex(k), misconceptions=known.of(k, val), ecf_rule=ecf(k)) for k in ("i", "f", "o")]
    parts.insert(2, Part("g", "The candidate $g$.", kind, val(t.g), shape=shape, points=1, minutes=1.5 * H, exact=ex("g"),
                         misconceptions=known.of("g", val), ecf_rule=ecf("g")))
    parts.append(Part("c_new", "The new cell state $c' = f \\odot c + i \\odot g$.", kind, val(t.c_new), shape=shape,
                      points=2, minutes=2 * H, exact=ex("c_new"), misconceptions=known.of("c_new", val), ecf_rule=ecf("c_new")))
    parts.append(Part("h_new", "The new hidden state $h' = o \\odot \\tanh(c')$.", kind, val(t.h_new), shape=shape,
                      points=2, minutes=1.5 * H, exact=ex("h_new"), misconceptions=known.of("h_new", val),
                      ecf_rule=ecf("h_new")))
    steps = solve.rnn.lstm_steps(params, t)
    solution = steps_from(steps.pre_activations, None)
    for k in ("i", "f"):
        solution.append(SolutionStep(f"{gate_text[k].capitalize()}", [Math(rf"{k} = \sigma(\text{{pre}}_{k})"),
                                                                       Matrix(k, val(t[k]))], k))
    solution += steps_from(steps.candidate, "g")
    solution.append(SolutionStep("Output gate", [Math(r"o = \sigma(\text{pre}_o)"), Matrix("o", val(t.o))], "o"))
    solution += steps_from(steps.cell, "c_new") + steps_from(steps.hidden, "h_new")
    if difficulty == 3:
        delta_c = rng.ints(-2, 2, (H,), nonzero=True)
        back = known.at(grad_c_new=jsonable(delta_c))      # the backward step along the cell state
        bt = back.trace()
        both = asked + ("cell_gradient", "grad_c")
        parts.append(Part("cell_gradient", r"The local derivative $\partial c'_k / \partial c_k$ for each unit.", "vector",
                          jsonable(bt.cell_gradient), shape=(H,), points=1, minutes=1, exact=ex("f"),
                          misconceptions=back.of("cell_gradient", jsonable),
                          ecf_rule=solve.ecf("lstm-cell", "cell_gradient", back.params, bt, both, jsonable)))
        shown_dc = "[" + ", ".join(f"{v:g}" for v in delta_c) + "]"
        parts.append(Part("grad_c", rf"Given $\partial L / \partial c' = {shown_dc}$ (and no gradient through $h'$), "
                          r"$\partial L / \partial c$.", "vector", jsonable(bt.grad_c), shape=(H,), points=1, minutes=1,
                          exact=[frac(Fraction(e) * int(d)) for e, d in zip(sig["f"], delta_c)] if calculator_free else None,
                          misconceptions=back.of("grad_c", jsonable),
                          ecf_rule=solve.ecf("lstm-cell", "grad_c", back.params, bt, both, jsonable)))
        solution.append(SolutionStep("Gradient along the cell state", [
            Math(r"\frac{\partial c'}{\partial c} = \mathrm{diag}(f),\quad "
                 r"\frac{\partial L}{\partial c} = f \odot \frac{\partial L}{\partial c'}"),
            Matrix("∂c'/∂c", jsonable(bt.cell_gradient))], "cell_gradient"))
        solution.append(SolutionStep("Backwards one step", [Matrix("∂L/∂c", jsonable(bt.grad_c)), Text(
            "No weight matrix and no squashing slope on this path: with f near 1 the cell carries the gradient across "
            "many steps almost unchanged (the constant error carousel), unlike a vanilla RNN's product of w·tanh'.")],
            "grad_c"))
    if calculator_free:
        solution.append(SolutionStep("Exact values", [
            Text(r"With $x = 1$ and $W_{hh} = 0$ each pre-activation is $\pm\ln a$: $\sigma(\ln a) = \frac{a}{1 + a}$, "
                 r"$\tanh(\ln a) = \frac{a^2 - 1}{a^2 + 1}$, $\tanh q = \frac{e^{2q} - 1}{e^{2q} + 1}$."),
            Matrix("exact", [[k, ", ".join(v) if isinstance(v, list) else v] for k, v in exact.items()])]))
    labels = [f"{k}{j + 1}" if H > 1 else k for k in _GATES for j in range(H)]
    statement = [Text("One LSTM step (torch.nn.LSTMCell): $i = \\sigma(\\cdot)$, $f = \\sigma(\\cdot)$, $g = \\tanh(\\cdot)$, "
                      "$o = \\sigma(\\cdot)$ of $W_{ih} x + b_{ih} + W_{hh} h + b_{hh}$ (row blocks [i; f; g; o]); "
                      "$c' = f \\odot c + i \\odot g$, $h' = o \\odot \\tanh(c')$."),
                 Matrix("x", params["x"])]
    if calculator_free:
        statement += [Matrix("c", params["c"]), Matrix("W_ih", shown_ih, row_labels=labels),
                      Text("$W_{hh} = 0$, so the previous hidden state $h$ does not enter this step.")]
    else:
        statement += [Matrix("h", params["h"]), Matrix("c", params["c"]), Matrix("W_ih", shown_ih, row_labels=labels),
                      Matrix("W_hh", params["weight_hh"], row_labels=labels)]
    if difficulty >= 2 and not calculator_free:
        statement.append(Matrix("b_ih", params["bias_ih"], col_labels=labels))
        statement.append(Text("$b_{hh} = 0$."))
    else:
        statement.append(Text("All biases are zero."))
    return Draft(title="One LSTM step", params=params, statement=statement, parts=parts, solution=solution,
                 conventions={"layout": "rows [i; f; g; o] as torch.nn.LSTMCell: 3 gates (σ) + candidate g (tanh)",
                              "cell": "c' = f⊙c + i⊙g, h' = o⊙tanh(c')"})
