"""Solve topic of regression: linear-regression (loss, gradient and one gradient-descent step)."""
from __future__ import annotations

from typing import Any, NamedTuple

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Param, Step, Topic


class LinearRegressionSteps(NamedTuple):
    predictions: Step
    residuals: Step
    loss: Step
    gradient: Step                 # grad_w and grad_b
    update: Step                   # w_new and b_new


def linear_regression_steps(p: dict[str, Any], t: Trace) -> LinearRegressionSteps:
    return LinearRegressionSteps(
        Step("Predictions", r"\hat y = X w + b", {"predictions": t.predictions}),
        Step("Residuals", r"e = \hat y - y", {"residuals": t.residuals}),
        Step("Loss", r"L = \frac{1}{N}\sum e_n^2" if p["loss"] == "mse" else r"L = \frac{1}{2N}\sum e_n^2", {"loss": t.loss}),
        Step("Gradient", (r"\frac{\partial L}{\partial w} = \frac{2}{N} X^\top e,\ "
                          r"\frac{\partial L}{\partial b} = \frac{2}{N}\sum e_n"
                          if p["loss"] == "mse" else
                          r"\frac{\partial L}{\partial w} = \frac{1}{N} X^\top e,\ "
                          r"\frac{\partial L}{\partial b} = \frac{1}{N}\sum e_n"),
             {"grad_w": t.grad_w, "grad_b": t.grad_b}),
        Step("Gradient-descent step", r"w \leftarrow w - \eta \frac{\partial L}{\partial w},\ "
                                      r"b \leftarrow b - \eta \frac{\partial L}{\partial b}",
             {"w_new": t.w_new, "b_new": t.b_new}),
    )


LINEAR_REGRESSION = Topic(
    "linear-regression", "Linear regression: loss, gradient and one gradient-descent step",
    (Param("X", "matrix (N×d), or vector (N) for one feature"), Param("y", "vector (N)"),
     Param("w", "vector (d), or a number for one feature"), Param("b", "number", 0.0),
     Param("lr", "learning rate"), Param("loss", '"mse" or "half-mse"', "mse")),
    ("predictions", "loss", "grad_w", "grad_b", "w_new", "b_new"),
    lambda p: engine.linear_regression(p["X"], p["y"], p["w"], p["b"], lr=p["lr"], loss=p["loss"]),
    linear_regression_steps,
    lambda p: {"loss": "mse = mean of squared errors (torch.nn.MSELoss)" if p["loss"] == "mse"
               else "half-mse = ½ · mean of squared errors"},
)
