"""Inverted dropout by hand (torch.nn.Dropout), forward and backward with a given mask.

Level 1: a vector, p = 0.5: the kept values doubled, the dropped ones 0; the gradient flows only
through the kept units, scaled the same.
Level 2: a 2×4 activation with p = 0.2, 0.25 or 0.4: training output, evaluation output (the
identity: nothing dropped, nothing scaled), and the gradient.
Level 3: the scale 1/(1 − p), the training output and gradient, and the original dropout of
Srivastava et al. (2014) for comparison: unscaled while training, multiplied by 1 − p at test time.
p is the probability of DROPPING a unit (PyTorch's). Calculator-free: p = 0.25, 0.5 or 0.75 and
integer activations, every answer an exact fraction.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from examprep import solve
from examprep.document import Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.exact import frac
from examprep.problem import Part, SolutionStep


def _exact(values: np.ndarray, factor: Fraction) -> list | str | None:
    """values · factor as exact text (None where every entry is a whole number or a half)."""
    out = [frac(Fraction(str(float(v))) * factor) for v in np.ravel(values)]
    if all(Fraction(o).denominator in (1, 2) for o in out):
        return None
    arr = np.array(out, dtype=object).reshape(np.shape(values))
    return arr.tolist() if np.ndim(values) else out[0]


@generator("dropout", title="Inverted dropout forward and backward", syllabus="Regularisation: dropout (train vs eval)",
           version=1)
def dropout(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    shape = (6,) if difficulty == 1 else (2, 4)
    if difficulty == 1:
        p = 0.5
    else:
        p = rng.choice([0.25, 0.5, 0.75] if calculator_free else [0.2, 0.25, 0.4])
    x = rng.ints(-3, 4, shape, nonzero=True) if calculator_free else rng.decimals(-2, 3, 0.5, shape, nonzero=True)
    mask = np.array([rng.chance(1, 2) if p == 0.5 else rng.integer(1, 100) > 100 * p for _ in range(int(np.prod(shape)))],
                    dtype=float).reshape(shape)
    delta = rng.ints(-2, 3, shape, nonzero=True)
    if mask.all() or not mask.any() or mask.sum() < 2:
        raise Degenerate("nothing dropped, or nearly everything")
    params = {"x": jsonable(x), "mask": jsonable(mask), "p": p, "grad_output": jsonable(delta)}
    known = solve.mistakes("dropout", params)
    t = known.trace()
    scale = Fraction(1) / (1 - Fraction(str(p)))
    cf = calculator_free
    out_mis = known.of("output", jsonable)
    grad_mis = known.of("grad_input", jsonable)
    kind = "vector" if difficulty == 1 else "matrix"
    parts: list[Part] = []
    solution: list[SolutionStep] = []
    steps = solve.dropout.dropout_steps(known.params, t)
    if difficulty == 3:
        parts.append(Part("scale", "The factor $s$ that multiplies the kept values in training.", "number", float(t.scale),
                          points=1, minutes=0.5, exact=frac(scale) if cf else None,
                          misconceptions=known.of("scale", float)))
        solution += steps_from(steps.scale, "scale")
    parts.append(Part("output", "The output $y$ in training mode.", kind, jsonable(t.output), shape=shape, points=2,
                      minutes=0.3 * x.size + 1, exact=_exact(x * mask, scale) if cf else None,
                      misconceptions=out_mis, hint="y = x ⊙ m / (1 − p): 0 where the mask is 0."))
    solution += steps_from(steps.scale if difficulty < 3 else None, "output") + steps_from(steps.output, "output")
    if difficulty >= 2:
        ev = known.at(training=False)
        et = ev.trace()
        parts.append(Part("output_eval", "The output for the same $x$ in evaluation mode (model.eval()).", kind,
                          jsonable(et.output), shape=shape, points=1, minutes=1,
                          misconceptions=ev.of("output", jsonable)))
        es = solve.dropout.dropout_steps(ev.params, et)
        solution += steps_from((es.scale, es.output), "output_eval")
    parts.append(Part("grad_input", r"$\partial L / \partial x$ in training mode, given $\delta = \partial L / \partial y$.",
                      kind, jsonable(t.grad_input), shape=shape, points=2, minutes=0.2 * x.size + 1,
                      exact=_exact(delta * mask, scale) if cf else None, misconceptions=grad_mis,
                      hint="The same mask and the same scale as the forward pass: δ ⊙ m / (1 − p)."))
    solution += steps_from(steps.grad_input, "grad_input")
    if difficulty == 3:
        orig = known.at(inverted=False, training=False)
        ot = orig.trace()
        parts.append(Part("output_original_eval", "The original dropout (Srivastava et al. 2014) keeps the kept values "
                          "unscaled in training instead: its output for the same $x$ at test time.", kind,
                          jsonable(ot.output), shape=shape, points=1, minutes=1.5,
                          exact=_exact(x, 1 - Fraction(str(p))) if cf else None,
                          misconceptions=orig.of("output", jsonable)))
        os_ = solve.dropout.dropout_steps(orig.params, ot)
        solution += steps_from((os_.scale, os_.output), "output_original_eval", prefix="Original dropout: ")
    if cf and any(q.exact for q in parts):
        solution.append(SolutionStep("Exact values", [Matrix(q.id, q.exact) for q in parts if q.exact]))
    statement = [Text(f"A dropout layer (torch.nn.Dropout(p={p:g}): p is the probability of dropping a unit; inverted "
                      "dropout, as PyTorch) in training mode drew the mask m below (1 = kept, 0 = dropped). "
                      r"Backpropagation has delivered $\delta = \partial L / \partial y$."),
                 Matrix("x", jsonable(x)), Matrix("m", jsonable(mask)), Matrix("δ", jsonable(delta))]
    return Draft(title={1: "Dropout: one training step", 2: "Dropout in training and evaluation",
                        3: "Dropout: inverted against the original"}[difficulty], params=params, statement=statement,
                 parts=parts, solution=solution,
                 conventions={"p": "the probability of dropping a unit (torch.nn.Dropout)",
                              "scaling": "inverted: kept values ÷ (1 − p) in training, identity in evaluation"})
