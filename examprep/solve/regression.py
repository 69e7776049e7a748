"""Solve topics of regression: linear-regression and logistic-regression (loss, gradient and one
gradient-descent step)."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Ecf, Mistake, Param, Ref, Step, Topic


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


# --------------------------------------------------------------------------- logistic-regression

class LogisticRegressionSteps(NamedTuple):
    logits: Step
    probs: Step
    loss: Step
    gradient: Step                 # grad_logits, grad_w, grad_b
    update: Step | None            # with lr


def logistic_regression_steps(p: dict[str, Any], t: Trace) -> LogisticRegressionSteps:
    mean = p["reduction"] == "mean"
    red = r"\frac{1}{N}\sum_n" if mean else r"\sum_n"
    return LogisticRegressionSteps(
        Step("Logits", r"z = X w + b", {"logits": t.logits}),
        Step("Probabilities", r"p = \sigma(z) = \frac{1}{1 + e^{-z}}", {"probs": t.probs}),
        Step("Binary cross-entropy (" + ("mean" if mean else "sum") + " over the examples)",
             rf"L = -{red} \left[y_n \log p_n + (1 - y_n) \log(1 - p_n)\right]", {"losses": t.losses, "loss": t.loss}),
        Step("Gradient: σ and the log cancel, leaving p − y" + (" (÷ N for the mean)" if mean else ""),
             (r"\frac{\partial L}{\partial z} = \frac{p - y}{N}" if mean else r"\frac{\partial L}{\partial z} = p - y")
             + r",\ \ \frac{\partial L}{\partial w} = X^\top \frac{\partial L}{\partial z},\ \ "
               r"\frac{\partial L}{\partial b} = \sum \frac{\partial L}{\partial z}",
             {"grad_logits": t.grad_logits, "grad_w": t.grad_w, "grad_b": t.grad_b}),
        Step("Gradient-descent step", r"w \leftarrow w - \eta \frac{\partial L}{\partial w},\ "
                                      r"b \leftarrow b - \eta \frac{\partial L}{\partial b}",
             {"w_new": t.w_new, "b_new": t.b_new}) if "w_new" in t else None)


def _other_reduction(p: dict[str, Any]) -> str:
    return "sum" if p["reduction"] == "mean" else "mean"


def _several(p: dict[str, Any]) -> bool:
    return np.shape(p["X"])[0] > 1


LOGISTIC_REGRESSION_MISTAKES = {
    "loss": (Mistake("other-reduction", reduction=_other_reduction, when=_several,
                     why="Reduce the per-example losses as stated: the mean divides the sum by N."),),
    "grad_w": (Mistake("y-minus-p", compute=lambda p, t: -np.asarray(t.grad_w), why="∂L/∂z = p − y, not y − p."),
               Mistake("other-reduction", reduction=_other_reduction, when=_several,
                       why="The gradient of the mean carries the 1/N; the gradient of the sum does not.")),
    "grad_b": (Mistake("y-minus-p", compute=lambda p, t: -t.grad_b, why="∂L/∂z = p − y, not y − p."),
               Mistake("other-reduction", reduction=_other_reduction, when=_several,
                       why="The gradient of the mean carries the 1/N; the gradient of the sum does not.")),
    "w_new": (Mistake("ascent", compute=lambda p, t: np.asarray(p["w"], dtype=float) + p["lr"] * np.asarray(t.grad_w),
                      when=lambda p: p["lr"] is not None, why="Gradient descent subtracts: w ← w − η ∂L/∂w."),),
}


def _bce_args(p: dict[str, Any], with_x: bool = False) -> dict[str, Any]:
    args = {"probs": Ref("probs"), "target": np.asarray(p["y"], dtype=float), "reduction": p["reduction"]}
    return {"X": np.asarray(p["X"], dtype=float), **args} if with_x else args


LOGISTIC_REGRESSION_ECF = {
    "loss": (Ecf("bce-from-probs", lambda p, t: _bce_args(p)),),
    "grad_w": (Ecf("bce-grad-w", lambda p, t: _bce_args(p, with_x=True)),),
    "grad_b": (Ecf("bce-grad-b", lambda p, t: _bce_args(p)),),
    "w_new": (Ecf("sgd-step", lambda p, t: {"param": np.asarray(p["w"], dtype=float), "grad": Ref("grad_w"),
                                            "lr": p["lr"]}),),
    "b_new": (Ecf("sgd-step", lambda p, t: {"param": float(p["b"]), "grad": Ref("grad_b"), "lr": p["lr"]}),),
}


LOGISTIC_REGRESSION = Topic(
    "logistic-regression", "Logistic regression: binary cross-entropy, its gradient and one gradient-descent step",
    (Param("X", "matrix (N×d), or vector (N) for one feature"), Param("y", "vector (N) of 0/1 labels"),
     Param("w", "vector (d), or a number for one feature"), Param("b", "number", 0.0),
     Param("reduction", '"mean" or "sum"', "mean"), Param("lr", "learning rate (optional): one step", None)),
    ("logits", "probs", "loss", "grad_w", "grad_b", "w_new", "b_new"),
    lambda p: engine.logistic_regression(p["X"], p["y"], p["w"], p["b"], reduction=p["reduction"], lr=p["lr"]),
    logistic_regression_steps,
    mistakes=LOGISTIC_REGRESSION_MISTAKES,
    ecf=LOGISTIC_REGRESSION_ECF,
    conventions=lambda p: {"loss": "binary cross-entropy from the logits (torch.nn.BCEWithLogitsLoss), "
                                   + ("mean" if p["reduction"] == "mean" else "sum") + " over the examples"},
    answer_names=lambda p, t: [n for n in ("logits", "probs", "loss", "grad_w", "grad_b", "w_new", "b_new") if n in t],
)
