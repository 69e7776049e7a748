"""One GRU step by hand: reset and update gates, the candidate, the new hidden state.

Level 1: scalar input and state, no biases. Level 2: two-dimensional state and input, with biases.
Level 3: as level 2, and the new state in PyTorch's convention too (h' = (1 − z)⊙n + z⊙h).
The lecture's convention is the default: h' = (1 − z)⊙h + z⊙n, reset applied after W_hn h + b_hn.
Calculator-free: weights ln a, so σ(ln a) = a/(1 + a) and tanh(ln c) = (c² − 1)/(c² + 1) are exact.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from examprep import solve
from examprep.document import Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.exact import frac
from examprep.problem import Part, SolutionStep


def _update_half(x: list, h: list, w_ih: list, w_hh: list, b_ih: list, b_hh: list) -> bool:
    """The engine-based refusal below (an update gate z = σ(0) = 1/2) before the engine call: on halves
    pre_z = W_iz x + b_iz + W_hz h + b_hz is a sum of quarters, exact in plain Python — the engine's to
    the bit, and z is within 1e-12 of 1/2 only where it is 0 (a fifth of the draws)."""
    H = len(h)
    return any(sum(w * v for w, v in zip(w_ih[k], x)) + b_ih[k] + sum(w * v for w, v in zip(w_hh[k], h)) + b_hh[k] == 0
               for k in range(H, 2 * H))


@generator("gru-step", title="One GRU step by hand", syllabus="RNN/GRU: gates and forward step", version=1)
def gru_step(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    exact: dict = {}
    if calculator_free:
        n_in = H = 1
        a, b, c = rng.integer(1, 4), rng.integer(2, 4), rng.integer(2, 3)
        h0 = Fraction(rng.choice([1, -1]), rng.choice([2, 4]))
        x = np.array([1.0])
        h = np.array([float(h0)])
        w_ih = np.log(np.array([[a], [b], [c]], dtype=float))
        w_hh = np.zeros((3, 1))
        b_ih = b_hh = np.zeros(3)
        shown_ih = [[f"ln {a}" if a > 1 else "0"], [f"ln {b}" if b > 1 else "0"], [f"ln {c}"]]
        shown_hh = jsonable(w_hh)
        r_, z_, n_ = Fraction(a, 1 + a), Fraction(b, 1 + b), Fraction(c * c - 1, c * c + 1)
        exact = {"r": frac(r_), "z": frac(z_), "n": frac(n_), "h_new": frac((1 - z_) * h0 + z_ * n_),
                 "h_new_pytorch": frac((1 - z_) * n_ + z_ * h0)}
    else:
        n_in, H = (1, 1) if difficulty == 1 else (2, 2)
        x = rng.decimals(-1, 1, 0.5, (n_in,), nonzero=True)
        h = rng.decimals(-1, 1, 0.5, (H,))
        w_ih = rng.decimals(-1, 1, 0.5, (3 * H, n_in))
        w_hh = rng.decimals(-1, 1, 0.5, (3 * H, H))
        if difficulty == 1:
            b_ih = b_hh = np.zeros(3 * H)
        else:
            b_ih = rng.decimals(-0.5, 0.5, 0.5, (3 * H,))
            b_hh = rng.decimals(-0.5, 0.5, 0.5, (3 * H,))
        shown_ih, shown_hh = jsonable(w_ih), jsonable(w_hh)
        if _update_half(x.tolist(), h.tolist(), w_ih.tolist(), w_hh.tolist(), b_ih.tolist(), b_hh.tolist()):
            raise Degenerate("z = 1/2 makes both blends equal")
    if not np.any(h):
        raise Degenerate("h = 0 hides the blend and the reset")
    params = {"x": jsonable(x), "h": jsonable(h), "weight_ih": jsonable(w_ih), "weight_hh": jsonable(w_hh),
              "bias_ih": jsonable(b_ih), "bias_hh": jsonable(b_hh), "convention": "lecture", "reset": "after"}
    known = solve.mistakes("gru-cell", params)         # every engine call below goes through it, once each
    g = known.trace()
    if np.any(np.abs(g.z - 0.5) < 1e-12):
        raise Degenerate("z = 1/2 makes both blends equal")
    pt = known.trace(convention="pytorch")
    scalar = H == 1
    kind = "number" if scalar else "vector"
    val = (lambda v: float(np.asarray(v).ravel()[0])) if scalar else jsonable
    shape = None if scalar else (H,)
    gates = ["r", "z", "n"]
    row_labels = [f"{gname}{i + 1}" if H > 1 else gname for gname in gates for i in range(H)]
    statement = [Text("One step of a GRU in the lecture's convention: "
                      r"$r = \sigma(W_{ir} x + b_{ir} + W_{hr} h + b_{hr})$, "
                      r"$z = \sigma(W_{iz} x + b_{iz} + W_{hz} h + b_{hz})$, "
                      r"$n = \tanh(W_{in} x + b_{in} + r \odot (W_{hn} h + b_{hn}))$, $h' = (1 - z) \odot h + z \odot n$. "
                      "Weight rows are stacked [r; z; n] as in torch.nn.GRUCell."),
                 Matrix("x", params["x"]), Matrix("h", params["h"]),
                 Matrix("W_ih", shown_ih, row_labels=row_labels), Matrix("W_hh", shown_hh, row_labels=row_labels)]
    if difficulty >= 2 and not calculator_free:
        statement += [Matrix("b_ih", params["bias_ih"]), Matrix("b_hh", params["bias_hh"])]
    else:
        statement.append(Text("All biases are zero."))
    asked = ("r", "z", "n", "h_new")
    parts = [
        Part("r", "The reset gate $r$.", kind, val(g.r), shape=shape, points=1, minutes=2.0 * H, exact=exact.get("r"),
             misconceptions=known.of("r", val)),
        Part("z", "The update gate $z$.", kind, val(g.z), shape=shape, points=1, minutes=2.0 * H, exact=exact.get("z"),
             misconceptions=known.of("z", val)),
        Part("n", "The candidate state $n$.", kind, val(g.n), shape=shape, points=2, minutes=3.0 * H, exact=exact.get("n"),
             misconceptions=known.of("n", val), ecf_rule=solve.ecf("gru-cell", "n", params, g, asked)),
        Part("h_new", "The new hidden state $h'$ (lecture convention).", kind, val(g.h_new), shape=shape, points=2,
             minutes=2.0 * H, exact=exact.get("h_new"), misconceptions=known.of("h_new", val),
             ecf_rule=solve.ecf("gru-cell", "h_new", params, g, asked)),
    ]
    steps = solve.rnn.gru_steps(params, g)
    solution = (steps_from(steps.reset, "r") + steps_from(steps.update, "z") + steps_from(steps.candidate, "n")
                + steps_from(steps.blend, "h_new"))
    if difficulty == 3:
        pytorch = params | {"convention": "pytorch"}
        parts.append(Part("h_new_pytorch", "The new hidden state in PyTorch's convention, $h' = (1 - z) \\odot n + z \\odot h$.",
                          kind, val(pt.h_new), shape=shape, points=1, minutes=1.5 * H, exact=exact.get("h_new_pytorch"),
                          misconceptions=(known.at(convention="pytorch").get("h_new", "lecture-blend", val),),
                          ecf_rule=solve.ecf("gru-cell", "h_new", pytorch, pt, asked)))
        solution += steps_from(solve.rnn.gru_steps(pytorch, pt).blend, "h_new_pytorch", prefix="PyTorch: ")
    if calculator_free:
        solution.append(SolutionStep("Exact values", [
            Text(r"$\sigma(\ln a) = \frac{a}{1 + a}$ and $\tanh(\ln c) = \frac{c^2 - 1}{c^2 + 1}$."),
            Matrix("exact", [[k, v] for k, v in exact.items() if k != "h_new_pytorch" or difficulty == 3])]))
    return Draft(title="One GRU step", params=params, statement=statement, parts=parts, solution=solution,
                 conventions={"blend": "lecture: h' = (1 − z)⊙h + z⊙n", "reset": "after: r⊙(W_hn h + b_hn)",
                              "layout": "rows [r; z; n] as torch.nn.GRUCell"})
