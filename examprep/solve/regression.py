"""Solve topics of regression: linear-regression and logistic-regression (loss, gradient and one
gradient-descent step)."""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine import ops, regression
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


def _n_points(p: dict[str, Any]) -> int:
    return len(p["y"])


def _is_mse(p: dict[str, Any]) -> bool:
    return p["loss"] == "mse"


def _other_loss(why_mse: str, why_half: str | None = None) -> tuple[Mistake, ...]:
    """The other squared-loss convention (MSE for ½·MSE and back). With two explanations, one entry
    per problem loss (each skipped where its loss is the problem's own), so the explanation can name
    both: ``why_mse`` in an MSE problem, ``why_half`` in a ½·MSE one."""
    if why_half is None:
        return (Mistake("other-convention", loss=lambda p: "mse" if p["loss"] == "half-mse" else "half-mse", why=why_mse),)
    return (Mistake("other-convention", loss="half-mse", why=why_mse),
            Mistake("other-convention", loss="mse", why=why_half))


LINEAR_REGRESSION_MISTAKES = {
    "predictions": (Mistake("no-bias", b=0.0, why="ŷ = X w + b: add the bias to every prediction."),),
    "loss": (Mistake("sum-not-mean", compute=lambda p, t: t.loss * _n_points(p),
                     why="The loss is a mean: divide the sum of squares by N."),
             *_other_loss("That is the ½·MSE; this problem's loss is the MSE.",
                          "That is the MSE; this problem's loss is the ½·MSE."),
             Mistake("rmse", compute=lambda p, t: np.sqrt(t.loss),
                     why="No square root: the MSE is the mean of the squared errors.")),
    "grad_w": (*_other_loss("With L = (1/N) Σ e² the derivative of e² brings a factor 2: ∂L/∂w = (2/N) Xᵀe; "
                            "with ½·MSE the ½ cancels it: (1/N) Xᵀe."),
               Mistake("sign-flip", compute=lambda p, t: -np.asarray(t.grad_w),
                       why="e = ŷ − y: the gradient is (·/N) Xᵀ(ŷ − y), not Xᵀ(y − ŷ)."),
               Mistake("no-1-over-n", compute=lambda p, t: np.asarray(t.grad_w) * _n_points(p),
                       why="The loss is a mean: keep the 1/N in the gradient.")),
    "grad_b": (*_other_loss("The factor is 2/N for MSE and 1/N for ½·MSE."),
               Mistake("sign-flip", compute=lambda p, t: -t.grad_b, why="∂L/∂b is the (scaled) mean of ŷ − y, not of y − ŷ."),
               Mistake("no-1-over-n", compute=lambda p, t: t.grad_b * _n_points(p), why="The loss is a mean: keep the 1/N.")),
    "w_new": (Mistake("ascent", lr=lambda p: -p["lr"], why="Gradient descent subtracts: w ← w − η ∂L/∂w."),
              *_other_loss("That step uses the gradient of the ½·MSE.", "That step uses the gradient of the MSE.")),
    "b_new": (Mistake("ascent", lr=lambda p: -p["lr"], why="Gradient descent subtracts: b ← b − η ∂L/∂b."),
              *_other_loss("That step uses the gradient of the ½·MSE.", "That step uses the gradient of the MSE.")),
    # the other loss (½·MSE for MSE): its gradient and the learning rate that takes the same step
    "grad_w_other_loss": (
        Mistake("same-as-mse", compute=lambda p, t: t.grad_w, when=_is_mse,
                why="Halving the loss halves its gradient: (1/N) Xᵀe instead of (2/N) Xᵀe."),
        Mistake("doubled", compute=lambda p, t: 2 * np.asarray(t.grad_w), when=_is_mse,
                why="The ½ halves the gradient; it does not double it.")),
    "lr_other_loss": (
        Mistake("halved", compute=lambda p, t: p["lr"] / 2, when=_is_mse,
                why="The ½·MSE gradient is half as large, so the learning rate must double, not halve."),
        Mistake("same", compute=lambda p, t: p["lr"], when=_is_mse,
                why="The gradients differ by a factor 2, so the same η gives a step half as long.")),
}


def _other(p: dict[str, Any]) -> str:
    return "half-mse" if p["loss"] == "mse" else "mse"


def _mse_args(p: dict[str, Any], with_x: bool = False, loss: str | None = None) -> dict[str, Any]:
    return ({"X": p["X"]} if with_x else {}) | {"predictions": Ref("predictions"), "target": p["y"],
                                                "loss": loss or p["loss"]}


LINEAR_REGRESSION_ECF = {
    "predictions": (Ecf("solve:linear-regression", lambda p, t: dict(p), "predictions"),),
    "loss": (Ecf("mse-loss", lambda p, t: _mse_args(p)),),
    "grad_w": (Ecf("mse-grad-w", lambda p, t: _mse_args(p, with_x=True)),),
    "grad_b": (Ecf("mse-grad-b", lambda p, t: _mse_args(p)),),
    "w_new": (Ecf("sgd-step", lambda p, t: {"param": p["w"], "grad": Ref("grad_w"), "lr": p["lr"]}),),
    "b_new": (Ecf("sgd-step", lambda p, t: {"param": p["b"], "grad": Ref("grad_b"), "lr": p["lr"]}),),
    "grad_w_other_loss": (Ecf("mse-grad-w", lambda p, t: _mse_args(p, with_x=True, loss=_other(p))),),
    "lr_other_loss": (Ecf("scale", lambda p, t: {"x": p["lr"], "factor": 2.0 if p["loss"] == "mse" else 0.5}),),
}


LINEAR_REGRESSION = Topic(
    "linear-regression", "Linear regression: loss, gradient and one gradient-descent step",
    (Param("X", "matrix (N×d), or vector (N) for one feature"), Param("y", "vector (N)"),
     Param("w", "vector (d), or a number for one feature"), Param("b", "number", 0.0),
     Param("lr", "learning rate"), Param("loss", '"mse" or "half-mse"', "mse")),
    ("predictions", "loss", "grad_w", "grad_b", "w_new", "b_new", "grad_w_other_loss", "lr_other_loss"),
    lambda p: engine.linear_regression(p["X"], p["y"], p["w"], p["b"], lr=p["lr"], loss=p["loss"]),
    linear_regression_steps,
    mistakes=LINEAR_REGRESSION_MISTAKES,
    ecf=LINEAR_REGRESSION_ECF,
    conventions=lambda p: {"loss": "mse = mean of squared errors (torch.nn.MSELoss)" if p["loss"] == "mse"
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


def _mean(p: dict[str, Any]) -> bool:
    return p["reduction"] == "mean"


def _features(p: dict[str, Any]) -> np.ndarray:
    """X as N×d (one feature: a column)."""
    X = np.asarray(p["X"], dtype=float)
    return X[:, None] if X.ndim == 1 else X


def _through_sigmoid(p: dict[str, Any], t: Trace) -> np.ndarray:
    """(p − y)·σ'(z): the logits' gradient of the squared error, the sigmoid's slope kept."""
    return ops.multiply(t.probs - np.asarray(p["y"], dtype=float), t.probs * (1 - t.probs))


def _negated(v: Any) -> Any:
    return -v if np.ndim(v) == 0 else (-np.asarray(v, dtype=float)).tolist()


LOGISTIC_REGRESSION_MISTAKES = {
    "probs": (Mistake("one-minus", w=lambda p: _negated(p["w"]), b=lambda p: -p["b"],
                      why="σ(z) = 1/(1 + e^(−z)): a positive logit gives p > 1/2."),),
    # log10 and the squared error on the mean loss, as the built-in problems ask it (the sum's loss, at
    # level 3, is asked for its reduction)
    "loss": (Mistake("other-reduction", reduction=_other_reduction, when=_several,
                     why="Reduce the per-example losses as stated: the mean divides the sum by N."),
             Mistake("log10", compute=lambda p, t: float(ops.scale(t.loss, 1 / math.log(10))), when=_mean,
                     why="Cross-entropy uses the natural logarithm, not log base 10."),
             Mistake("squared-error", compute=lambda p, t: float(regression.mse_loss(t.probs, p["y"])), when=_mean,
                     why="That is the mean squared error of p; the loss here is the binary cross-entropy "
                         "−[y ln p + (1 − y) ln(1 − p)].")),
    "grad_w": (Mistake("y-minus-p", compute=lambda p, t: -np.asarray(t.grad_w), why="∂L/∂z = p − y, not y − p."),
               Mistake("other-reduction", reduction=_other_reduction, when=_several,
                       why="The gradient of the mean carries the 1/N; the gradient of the sum does not."),
               Mistake("sigmoid-derivative", when=_mean,
                       compute=lambda p, t: ops.matmul(_features(p).T, _through_sigmoid(p, t)) / _n_points(p),
                       why="For BCE the sigmoid's derivative cancels: ∂L/∂z = (p − y)/N, with no factor p(1 − p).")),
    "grad_b": (Mistake("y-minus-p", compute=lambda p, t: -t.grad_b, why="∂L/∂z = p − y, not y − p."),
               Mistake("other-reduction", reduction=_other_reduction, when=_several,
                       why="The gradient of the mean carries the 1/N; the gradient of the sum does not."),
               Mistake("sigmoid-derivative", compute=lambda p, t: float(np.sum(_through_sigmoid(p, t)) / _n_points(p)),
                       when=_mean, why="For BCE the sigmoid's derivative cancels: ∂L/∂z = (p − y)/N.")),
    "w_new": (Mistake("ascent", compute=lambda p, t: np.asarray(p["w"], dtype=float) + p["lr"] * np.asarray(t.grad_w),
                      when=lambda p: p["lr"] is not None, why="Gradient descent subtracts: w ← w − η ∂L/∂w."),),
    "b_new": (Mistake("ascent", compute=lambda p, t: float(p["b"] + p["lr"] * t.grad_b),
                      when=lambda p: p["lr"] is not None, why="Gradient descent subtracts: b ← b − η ∂L/∂b."),),
    "lr_other_reduction": (
        Mistake("times-n", compute=lambda p, t: p["lr"] * _n_points(p), when=lambda p: p["lr"] is not None and _mean(p),
                why="The sum's gradient is N times larger, so its learning rate must be N times SMALLER."),
        Mistake("same", compute=lambda p, t: p["lr"], when=lambda p: p["lr"] is not None and _mean(p),
                why="The gradients differ by the factor N: the same η takes a step N times longer.")),
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
    ("logits", "probs", "loss", "grad_w", "grad_b", "w_new", "b_new", "lr_other_reduction"),
    lambda p: engine.logistic_regression(p["X"], p["y"], p["w"], p["b"], reduction=p["reduction"], lr=p["lr"]),
    logistic_regression_steps,
    mistakes=LOGISTIC_REGRESSION_MISTAKES,
    ecf=LOGISTIC_REGRESSION_ECF,
    conventions=lambda p: {"loss": "binary cross-entropy from the logits (torch.nn.BCEWithLogitsLoss), "
                                   + ("mean" if p["reduction"] == "mean" else "sum") + " over the examples"},
    answer_names=lambda p, t: [n for n in ("logits", "probs", "loss", "grad_w", "grad_b", "w_new", "b_new",
                                           "lr_other_reduction") if n in t],
)
