"""Softmax + cross-entropy by hand: probabilities, loss and ∂L/∂logits.

Level 1: one example, three classes, and the symbolic derivation ∂L/∂z_i = p_i − y_i.
Level 2: a batch of two with a stated reduction (mean or sum) — the 1/N in the gradient.
Level 3: label smoothing ε (PyTorch's convention: the target gets 1 − ε + ε/C, others ε/C).
Calculator-free: logits ln a_i, so p_i = a_i / Σ a and every answer is exact.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.exact import frac
from examprep.problem import EXACT, Misconception, Part, SolutionStep


def _ln(a: int) -> str:
    return "0" if a == 1 else f"ln {a}"


@generator("softmax-cross-entropy", title="Softmax + cross-entropy and its gradient",
           syllabus="Softmax + cross-entropy: forward and gradient", version=1)
def softmax_cross_entropy(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    batch = difficulty == 2
    smoothing = difficulty == 3
    C = 4 if smoothing else 3
    N = 2 if batch else 1
    eps = rng.choice([0.1, 0.2]) if smoothing else 0.0
    reduction = rng.choice(["mean", "sum"]) if batch else "mean"
    if calculator_free:
        a = rng.ints(1, 4, (N, C))
        logits = np.log(a)
        shown = [[_ln(int(v)) for v in row] for row in a]
    else:
        logits = rng.ints(-1, 2, (N, C)) if difficulty == 1 else rng.ints(-2, 2, (N, C))
        shown = jsonable(logits)
    for row in logits:
        if np.ptp(row) == 0:
            raise Degenerate("all logits equal")
    targets = [rng.integer(0, C - 1) for _ in range(N)]
    z = logits if batch else logits[0]
    t = targets if batch else targets[0]
    params = {"logits": jsonable(z), "target": t, "reduction": reduction, "label_smoothing": eps}
    known = solve.mistakes("cross-entropy", params)
    ce = known.trace()
    q = ce.target_dist
    exact = {}
    if calculator_free:
        S = a.sum(axis=1)
        exact["probs"] = [[frac(Fraction(int(v), int(s))) for v in row] for row, s in zip(a, S)]
        ratios = [Fraction(int(s), int(row[tt])) for row, s, tt in zip(a, S, targets)]
        if not smoothing:
            logs = [f"ln({frac(r)})" if r.denominator != 1 else f"ln {r.numerator}" for r in ratios]
            loss_exact = " + ".join(logs)
            if batch and reduction == "mean":
                loss_exact = f"({loss_exact})/2"
            exact["loss"] = loss_exact
        eps_f = Fraction(eps).limit_denominator(100)
        qs = [[eps_f / C + (1 - eps_f if j == tt else 0) for j in range(C)] for tt in targets]
        if smoothing:
            probs0 = [Fraction(int(v), int(S[0])) for v in a[0]]
            exact["loss"] = "-(" + " + ".join(f"{frac(qq)}*ln({frac(pp)})" for qq, pp in zip(qs[0], probs0)) + ")"
        div = N if (batch and reduction == "mean") else 1
        exact["grad"] = [[frac((Fraction(int(v), int(s)) - qq) / div) for v, qq in zip(row, qrow)]
                         for row, s, qrow in zip(a, S, qs)]
        if not batch:
            exact = {k: (v[0] if isinstance(v, list) else v) for k, v in exact.items()}

    shape = (N, C) if batch else (C,)
    kind = "matrix" if batch else "vector"
    what = "each row" if batch else "the logits"
    statement = [Text(("A batch of two examples" if batch else "One example") + f" with {C} classes. "
                      + ("Logits (rows are examples):" if batch else "Logits:")),
                 Matrix("z", shown, row_labels=["n=1", "n=2"] if batch else None)]
    tgt_text = (f"Target classes (0-based): {targets[0]} and {targets[1]}." if batch
                else f"The target class is {targets[0]} (0-based index).")
    statement.append(Text(tgt_text + (f" The loss is the {reduction} over the batch." if batch else "")
                          + (f" Label smoothing ε = {eps}: the target class gets 1 − ε + ε/C, every other class ε/C."
                             if smoothing else "")))
    parts = [
        Part("probs", f"The softmax probabilities $p$ of {what}.", kind, jsonable(ce.probs), shape=shape, points=2,
             minutes=2.0 * N, exact=exact.get("probs"),
             misconceptions=known.of("probs", jsonable),
             hint="p_i = e^{z_i} / Σ_j e^{z_j}; subtracting the largest logit first keeps numbers small."),
    ]
    asked = ("probs", "target_dist") if smoothing else ("probs",)
    if smoothing:
        parts.append(Part("target_dist", "The smoothed target distribution $q$.", "vector", jsonable(q), shape=(C,),
                          points=1, minutes=1.5, misconceptions=known.of("target_dist", jsonable)))
    parts.append(Part(
        "loss", f"The loss $L$ ({'the ' + reduction + ' over the batch' if batch else 'natural log'}).", "number",
        float(ce.loss), points=2, minutes=2.0 * N, exact=exact.get("loss"), misconceptions=known.of("loss", float),
        ecf_rule=solve.ecf("cross-entropy", "loss", known.params, ce, asked),
        hint="L = −Σ_i q_i log p_i; with a one-hot target that is −log p_target."))
    parts.append(Part(
        "grad_logits", r"The gradient $\partial L / \partial z$" + (" (one row per example)." if batch else "."),
        kind, jsonable(ce.grad_logits), shape=shape, points=3, minutes=2.0 * N, exact=exact.get("grad"),
        misconceptions=known.of("grad_logits", jsonable),
        ecf_rule=solve.ecf("cross-entropy", "grad_logits", known.params, ce, asked),
        hint="For softmax followed by cross-entropy, ∂L/∂z_i = p_i − y_i" + (" (divided by N for the mean)." if batch else ".")))
    if difficulty == 1:
        parts.append(Part(
            "derivation", r"Derive $\partial L / \partial z_i$ for $L = -\sum_k y_k \log p_k$, $p = \mathrm{softmax}(z)$, "
            r"one-hot $y$. Answer in terms of $p_i$ and $y_i$.", "expression", "p_i - y_i", tolerance=EXACT, points=2,
            minutes=4, exact="p_i - y_i", variables=("p_i", "y_i"),
            misconceptions=(Misconception("y-minus-p", "y_i - p_i", "Sign flipped: ∂L/∂z_i = p_i − y_i."),
                            Misconception("sigmoid-derivative", "p_i*(1 - p_i)",
                                          "p_i(1 − p_i) is ∂p_i/∂z_i only; the sum over k of the chain rule gives p_i − y_i."),
                            Misconception("p-only", "p_i", "The target term −y_i remains after the sum over k.")),
            hint="Use ∂p_k/∂z_i = p_k(δ_ki − p_i) and Σ_k y_k = 1."))
    steps = solve.softmax.cross_entropy_steps(known.params, ce)
    solution = steps_from(steps.probs, "probs") + steps_from(steps.target_dist, "target_dist")
    solution += steps_from((steps.log_probs, steps.losses, steps.reduce), "loss")
    solution += steps_from(steps.gradient, "grad_logits")
    if difficulty == 1:
        solution.append(SolutionStep("Derivation", [
            Math(r"\frac{\partial p_k}{\partial z_i} = p_k(\delta_{ki} - p_i)"),
            Math(r"\frac{\partial L}{\partial z_i} = -\sum_k \frac{y_k}{p_k}\, p_k(\delta_{ki} - p_i) "
                 r"= -y_i + p_i \sum_k y_k = p_i - y_i"),
        ], "derivation"))
    if calculator_free:
        solution.append(SolutionStep("Exact values",
                                     [Text("With $z_i = \\ln a_i$, $e^{z_i} = a_i$ and $p_i = a_i / \\sum_j a_j$."),
                                      Matrix("p (exact)", exact["probs"]),
                                      Matrix("∂L/∂z (exact)", exact["grad"])], None))
    return Draft(title="Softmax + cross-entropy" + (" on a batch" if batch else "")
                 + (" with label smoothing" if smoothing else ""),
                 params=params | {"calculator_free_logits": shown if calculator_free else None},
                 statement=statement, parts=parts, solution=solution,
                 conventions={"log": "natural logarithm", "reduction": reduction if batch else "single example",
                              "label_smoothing": f"ε = {eps}, PyTorch's convention" if smoothing else "none",
                              "classes": "0-based indices"})
