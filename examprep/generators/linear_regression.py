"""Linear regression by hand: predictions, the mean squared error, its gradient and one step of
gradient descent — and the two conventions for the loss, MSE and ½·MSE.

Level 1: one feature, four points, L = MSE = (1/N) Σ (ŷ − y)².
Level 2: two features, four points, the loss stated as MSE or ½·MSE (the ½ cancels the 2).
Level 3: the same data under both conventions: their gradients differ by 2, and the learning rate
that makes a ½·MSE step equal an MSE step.
Calculator-free: integer data and w, b and a learning rate of 0.1 or 0.5 — every answer is a short
decimal.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.problem import EcfRule, Part, SolutionStep

_LOSS_TEX = {"mse": r"L = \frac{1}{N} \sum_n (\hat y_n - y_n)^2", "half-mse": r"L = \frac{1}{2N} \sum_n (\hat y_n - y_n)^2"}
@generator("linear-regression", title="Linear regression: loss, gradient, one gradient-descent step",
           syllabus="Linear regression: MSE, its gradient and gradient descent (½·MSE vs MSE)", version=3)
def linear_regression(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    N = 4
    d = 1 if difficulty == 1 else 2
    if d == 1:
        X = np.array(rng.sample([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0], N))
        w = float(rng.choice([-1.0, 1.0, 2.0] if calculator_free else [-1.0, -0.5, 0.5, 1.0, 1.5, 2.0]))
    else:
        X = rng.ints(-2, 2, (N, d))
        w = rng.ints(-1, 1, (d,)) if calculator_free else rng.decimals(-1, 1, 0.5, (d,))
    b = float(rng.integer(-1, 1))
    y = rng.ints(-3, 3, (N,))
    lr = float(rng.choice([0.1, 0.5] if calculator_free else [0.1, 0.05, 0.2]))
    loss = "mse" if difficulty != 2 else rng.choice(["mse", "half-mse"])
    params = {"X": jsonable(X), "y": jsonable(y), "w": w if d == 1 else jsonable(w), "b": b, "lr": lr, "loss": loss}
    known = solve.mistakes("linear-regression", params)
    t = known.trace()
    if not np.any(t.residuals) or np.count_nonzero(t.residuals) < 2 or abs(t.grad_b) < 1e-12:
        raise Degenerate("residuals too sparse, or ∂L/∂b = 0: the step shows little")
    if np.any(np.abs(np.atleast_1d(t.grad_w)) < 1e-12):
        raise Degenerate("a zero weight gradient")
    if np.any(np.abs(t.residuals) > 6):
        raise Degenerate("residuals too large to square by hand comfortably")
    scalar_w = d == 1
    val = (lambda v: float(v)) if scalar_w else jsonable
    wkind, wshape = ("number", None) if scalar_w else ("vector", (d,))
    conv = "½·MSE" if loss == "half-mse" else "MSE"
    answers = ("predictions", "loss", "grad_w", "grad_b", "w_new", "b_new")

    def mis(answer: str, fmt=float) -> tuple:
        return known.of(answer, fmt)

    def ecf(answer: str) -> EcfRule | None:
        return solve.ecf("linear-regression", answer, known.params, t, answers, jsonable)
    parts = [
        Part("predictions", r"The predictions $\hat y = X w + b$.", "vector", jsonable(t.predictions), shape=(N,), points=1,
             minutes=2, misconceptions=mis("predictions", jsonable), ecf_rule=ecf("predictions")),
        Part("loss", f"The loss $L$ ({conv}).", "number", float(t.loss), points=1, minutes=2,
             misconceptions=mis("loss"), ecf_rule=ecf("loss")),
        Part("grad_w", r"$\partial L / \partial w$.", wkind, val(t.grad_w), shape=wshape, points=2, minutes=3,
             misconceptions=mis("grad_w", val), ecf_rule=ecf("grad_w")),
        Part("grad_b", r"$\partial L / \partial b$.", "number", float(t.grad_b), points=1, minutes=1.5,
             misconceptions=mis("grad_b"), ecf_rule=ecf("grad_b")),
        Part("w_new", rf"$w$ after one gradient-descent step with learning rate $\eta = {lr}$.", wkind, val(t.w_new),
             shape=wshape, points=1, minutes=1, misconceptions=mis("w_new", val), ecf_rule=ecf("w_new")),
        Part("b_new", r"$b$ after the same step.", "number", float(t.b_new), points=1, minutes=0.5,
             misconceptions=mis("b_new"), ecf_rule=ecf("b_new")),
    ]
    s = solve.regression.linear_regression_steps(known.params, t)
    solution = (steps_from(s.predictions, "predictions") + steps_from(s.residuals, None) + steps_from(s.loss, "loss")
                + steps_from(s.gradient, "grad_w")
                + [SolutionStep("Bias gradient", [Math(r"\frac{\partial L}{\partial b} = \frac{" + ("2" if loss == "mse" else "1")
                                                       + r"}{N}\sum_n e_n"), Matrix("grad_b", float(t.grad_b))], "grad_b")]
                + steps_from(s.update, "w_new")
                + [SolutionStep("Bias step", [Math(r"b \leftarrow b - \eta \frac{\partial L}{\partial b}"),
                                              Matrix("b_new", float(t.b_new))], "b_new")])
    if difficulty == 3:
        half = known.trace(loss="half-mse")
        parts.append(Part("grad_w_half", r"$\partial L_{1/2} / \partial w$ for the other convention "
                          r"$L_{1/2} = \frac{1}{2N}\sum_n (\hat y_n - y_n)^2$.", wkind, val(t.grad_w_other_loss), shape=wshape,
                          points=1, minutes=1.5, misconceptions=mis("grad_w_other_loss", val),
                          ecf_rule=ecf("grad_w_other_loss")))
        parts.append(Part("lr_half", r"The learning rate for $L_{1/2}$ that makes its step equal to the MSE step with "
                          rf"$\eta = {lr}$.", "number", float(t.lr_other_loss), points=1, minutes=1,
                          misconceptions=mis("lr_other_loss"), ecf_rule=ecf("lr_other_loss")))
        hs = solve.regression.linear_regression_steps(known.params | {"loss": "half-mse"}, half)
        solution += steps_from(hs.gradient, "grad_w_half", prefix="½·MSE: ")
        solution.append(SolutionStep("Matching the steps", [
            Math(r"\eta_{1/2} \frac{\partial L_{1/2}}{\partial w} = \eta \frac{\partial L}{\partial w},\quad "
                 r"\frac{\partial L_{1/2}}{\partial w} = \frac12 \frac{\partial L}{\partial w} \Rightarrow \eta_{1/2} = 2\eta"),
            Matrix("η_1/2", 2 * lr)], "lr_half"))
    cols = ["x"] if d == 1 else ["x_1", "x_2"]
    rows = [[*(np.atleast_1d(xr).tolist()), float(yr)] for xr, yr in zip(X, y)]
    model = "w x" if d == 1 else "w^\\top x"
    statement = [Text(f"Fit $\\hat y = {model} + b$ to {N} points by gradient descent on the "
                      f"{'mean squared error' if loss == 'mse' else 'half mean squared error'} "
                      f"${_LOSS_TEX[loss]}$."),
                 Matrix("data", rows, row_labels=[f"n={i + 1}" for i in range(N)], col_labels=cols + ["y"]),
                 Text(f"Current parameters and learning rate $\\eta = {lr}$:"),
                 Matrix("w", params["w"]), Matrix("b", b)]
    return Draft(title="Linear regression: one gradient-descent step", params=params, statement=statement, parts=parts,
                 solution=solution,
                 conventions={"loss": {"mse": "MSE = (1/N) Σ (ŷ − y)² (torch.nn.MSELoss)",
                                       "half-mse": "½·MSE = (1/2N) Σ (ŷ − y)²"}[loss],
                              "step": "w ← w − η ∂L/∂w (plain gradient descent, full batch)"},
                 variant=loss)
