"""Logistic regression by hand: probabilities, the binary cross-entropy, its gradient and a
gradient-descent step — and the mean against the sum over the examples.

Level 1: one feature, two examples: p = σ(wx + b), the mean BCE, ∂L/∂w and ∂L/∂b (σ and the log
cancel: ∂L/∂z = (p − y)/N).
Level 2: two features, three examples, and one gradient-descent step on w and b.
Level 3: four examples under both reductions: the sum's loss and gradient are N times the mean's, so
its learning rate must be η/N for the same step.
Calculator-free: the weights are multiples of ln 2, so every logit is k·ln 2 and σ(k ln 2) =
2^k/(1 + 2^k) is a fraction; the loss is then ln of a fraction and the gradients are fractions.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, step_per_part, steps_from, jsonable
from examprep.exact import frac
from examprep.problem import Part, SolutionStep

LN2 = math.log(2)


def _ln2(a: int) -> str:
    """a·ln 2 as typed."""
    return {0: "0", 1: "ln(2)", -1: "-ln(2)"}.get(a, f"{a}*ln(2)")


def _minus(base: str, f: Fraction) -> str:
    """base − f as typed ("ln(2) - 3/20", "-ln(2) + 1/4")."""
    if f == 0:
        return base
    if base == "0":
        return frac(-f)
    return f"{base} - {frac(f)}" if f > 0 else f"{base} + {frac(-f)}"


class _Exact:
    """Exact answers where every logit is k·ln 2 (k an integer)."""

    def __init__(self, X: np.ndarray, y: np.ndarray, a: list[int], c: int):
        self.X, self.y = X, y
        self.k = [int(round(v)) for v in X @ np.array(a, dtype=float) + c]
        self.p = [Fraction(2) ** k / (1 + Fraction(2) ** k) for k in self.k]

    def loss(self, n_div: int) -> str:
        prod = Fraction(1)
        for p, y in zip(self.p, self.y):
            prod *= 1 / (p if y == 1 else 1 - p)
        if prod == 1:
            return "0"
        log = f"ln({frac(prod)})"
        return log if n_div == 1 else f"{log}/{n_div}"

    def grad_w(self, n_div: int) -> list[str]:
        return [frac(sum((p - int(y)) * int(x[j]) for p, y, x in zip(self.p, self.y, self.X)) / n_div)
                for j in range(self.X.shape[1])]

    def grad_w_fractions(self, n_div: int) -> list[Fraction]:
        return [sum((p - int(y)) * int(x[j]) for p, y, x in zip(self.p, self.y, self.X)) / n_div
                for j in range(self.X.shape[1])]

    def grad_b(self, n_div: int) -> Fraction:
        return sum(p - int(y) for p, y in zip(self.p, self.y)) / n_div


@generator("logistic-regression", title="Logistic regression: BCE, its gradient, one step",
           syllabus="Logistic regression: binary cross-entropy, gradient, gradient descent (mean vs sum)", version=1)
def logistic_regression(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    n, d = {1: (2, 1), 2: (3, 2), 3: (4, 1)}[difficulty]
    X = rng.ints(-2, 2, (n, d))
    y = np.array([rng.integer(0, 1) for _ in range(n)], dtype=float)
    if len(set(y)) < 2 or len({tuple(r) for r in X}) < n:
        raise Degenerate("one class only, or repeated examples")
    if calculator_free:
        a = [rng.choice([-1, 1]) for _ in range(d)]
        c = rng.integer(-1, 1)
        w, b = np.array(a, dtype=float) * LN2, c * LN2
        shown_w, shown_b = [_ln2(v).replace("(2)", " 2") for v in a], _ln2(c).replace("(2)", " 2")
    else:
        w, b = rng.decimals(-1, 1, 0.5, (d,), nonzero=True), float(rng.choice([-1, -0.5, 0, 0.5, 1]))
        shown_w, shown_b = jsonable(w), b
    lr = float(rng.choice([0.5, 1.0] if calculator_free else [0.1, 0.5]))
    one = d == 1
    params = {"X": jsonable(X[:, 0]) if one else jsonable(X), "y": jsonable(y), "w": float(w[0]) if one else jsonable(w), "b": b,
              "reduction": "mean", "lr": lr if difficulty == 2 else None}
    known = solve.mistakes("logistic-regression", params)
    t = known.trace()
    if calculator_free and max(abs(v) for v in np.round(t.logits / LN2)) > 3:
        raise Degenerate("a logit beyond 3 ln 2: fractions too long")
    if np.any(np.abs(t.grad_logits) < 1e-12) or abs(t.grad_b) < 1e-12 or np.any(np.abs(np.atleast_1d(t.grad_w)) < 1e-12):
        raise Degenerate("a zero gradient")
    ex = _Exact(X, y, a, c) if calculator_free else None
    val = (lambda v: float(np.ravel(v)[0])) if one else jsonable
    wkind, wshape = ("number", None) if one else ("vector", (d,))
    asked = {"probs": "probs", "loss": "loss", "grad_w": "grad_w", "grad_b": "grad_b", "w_new": "w_new", "b_new": "b_new"}
    parts = [
        Part("probs", r"The probabilities $p_n = \sigma(z_n)$, $z_n = " + ("w x_n" if one else r"w^\top x_n") + " + b$.",
             "vector", jsonable(t.probs), shape=(n,), points=2, minutes=1.5 * n, exact=[frac(p) for p in ex.p] if ex else None,
             misconceptions=known.of("probs", jsonable),
             hint="σ(z) = 1/(1 + e^(−z))."),
        Part("loss", "The loss $L$ (binary cross-entropy, mean over the examples, natural log).", "number", float(t.loss),
             points=2, minutes=2.5, exact=ex.loss(n) if ex else None,
             misconceptions=known.of("loss", float),
             ecf_rule=solve.ecf("logistic-regression", "loss", known.params, t, asked)),
        Part("grad_w", r"$\partial L / \partial w$.", wkind, val(t.grad_w), shape=wshape, points=2, minutes=2.5,
             exact=(ex.grad_w(n)[0] if one else ex.grad_w(n)) if ex else None,
             misconceptions=known.of("grad_w", val),
             ecf_rule=solve.ecf("logistic-regression", "grad_w", known.params, t, asked),
             hint="∂L/∂z_n = (p_n − y_n)/N, then ∂L/∂w = Σ_n x_n ∂L/∂z_n."),
        Part("grad_b", r"$\partial L / \partial b$.", "number", float(t.grad_b), points=1, minutes=1,
             exact=frac(ex.grad_b(n)) if ex else None,
             misconceptions=known.of("grad_b", float),
             ecf_rule=solve.ecf("logistic-regression", "grad_b", known.params, t, asked)),
    ]
    steps = solve.regression.logistic_regression_steps(known.params, t)
    solution = (steps_from((steps.logits, steps.probs), "probs") + steps_from(steps.loss, "loss")
                + step_per_part(steps.gradient, {"grad_logits": "grad_w", "grad_w": "grad_w", "grad_b": "grad_b"},
                                titles={"grad_b": "The bias gradient"}))
    if difficulty == 2:
        gw, gb = (ex.grad_w_fractions(n), ex.grad_b(n)) if ex else (None, None)
        lr_f = Fraction(str(lr))
        parts += [
            Part("w_new", rf"$w$ after one gradient-descent step with $\eta = {lr:g}$.", wkind, val(t.w_new), shape=wshape,
                 points=1, minutes=1, exact=((lambda e: e[0] if one else e)([_minus(_ln2(av), lr_f * g)
                                                                             for av, g in zip(a, gw)]) if ex else None),
                 misconceptions=known.of("w_new", val),
                 ecf_rule=solve.ecf("logistic-regression", "w_new", known.params, t, asked)),
            Part("b_new", r"$b$ after the same step.", "number", float(t.b_new), points=1, minutes=0.5,
                 exact=_minus(_ln2(c), lr_f * gb) if ex else None,
                 misconceptions=known.of("b_new", float),
                 ecf_rule=solve.ecf("logistic-regression", "b_new", known.params, t, asked)),
        ]
        solution += step_per_part(steps.update, {"w_new": "w_new", "b_new": "b_new"}, titles={"b_new": "The bias step"})
    if difficulty == 3:
        total = known.at(reduction="sum")
        st = total.trace()
        sum_asked = {"probs": "probs", "loss": "loss_sum", "grad_w": "grad_w_sum"}
        parts += [
            Part("loss_sum", "The loss with reduction='sum' (the sum over the examples instead of the mean).", "number",
                 float(st.loss), points=1, minutes=1, exact=ex.loss(1) if ex else None,
                 misconceptions=total.of("loss", float),
                 ecf_rule=solve.ecf("logistic-regression", "loss", total.params, st, sum_asked)),
            Part("grad_w_sum", r"$\partial L_{sum} / \partial w$.", wkind, val(st.grad_w), shape=wshape, points=1,
                 minutes=1, exact=(ex.grad_w(1)[0] if one else ex.grad_w(1)) if ex else None,
                 misconceptions=total.of("grad_w", val),
                 ecf_rule=solve.ecf("logistic-regression", "grad_w", total.params, st, sum_asked)),
            Part("lr_sum", rf"The learning rate for the sum that gives the same step as the mean with $\eta = {lr:g}$.",
                 "number", lr / n, points=1, minutes=1, exact=frac(Fraction(str(lr)) / n) if ex else None,
                 misconceptions=known.at(lr=lr).of("lr_other_reduction", float)),
        ]
        ss = solve.regression.logistic_regression_steps(total.params, st)
        solution += steps_from(ss.loss, "loss_sum", prefix="Sum: ") + step_per_part(
            ss.gradient, {"grad_w": "grad_w_sum"}, prefix="Sum: ")
        solution.append(SolutionStep("Matching the steps", [
            Math(r"\eta_{sum} \frac{\partial L_{sum}}{\partial w} = \eta \frac{\partial L}{\partial w},\quad "
                 r"L_{sum} = N L \Rightarrow \eta_{sum} = \eta / N"), Matrix("η_sum", lr / n)], "lr_sum"))
    if ex is not None:
        solution.append(SolutionStep("Exact values", [
            Text("Each logit is k·ln 2, so σ(k ln 2) = 2^k/(1 + 2^k) and ln p is the log of a fraction."),
            Matrix("exact", [[q.id, q.exact if isinstance(q.exact, str) else ", ".join(q.exact)]
                             for q in parts if q.exact is not None])]))
    cols = ["x"] if one else [f"x_{j + 1}" for j in range(d)]
    rows = [[*map(float, X[i]), float(y[i])] for i in range(n)]
    model = "w x" if one else "w^\\top x"
    statement = [Text(f"A logistic regression $p = \\sigma({model} + b)$ on {n} examples with "
                      "labels $y \\in \\{0, 1\\}$, trained with the binary cross-entropy "
                      r"$L = -\frac{1}{N} \sum_n \left[y_n \ln p_n + (1 - y_n) \ln(1 - p_n)\right]$ (the mean, "
                      "torch.nn.BCEWithLogitsLoss)."),
                 Matrix("data", rows, row_labels=[f"n={i + 1}" for i in range(n)], col_labels=cols + ["y"]),
                 Matrix("w", shown_w[0] if one and not calculator_free else shown_w),
                 Matrix("b", [shown_b] if isinstance(shown_b, str) else shown_b)]
    return Draft(title={1: "Logistic regression: loss and gradient", 2: "Logistic regression: one gradient-descent step",
                        3: "Logistic regression: mean against sum"}[difficulty], params=params, statement=statement,
                 parts=parts, solution=solution,
                 conventions={"loss": "binary cross-entropy, natural log, mean over the examples",
                              "gradient": "∂L/∂z = (p − y)/N: the sigmoid's derivative cancels"})
