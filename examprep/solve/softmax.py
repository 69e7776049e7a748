"""Solve topics of softmax and cross-entropy: softmax, cross-entropy."""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Ecf, Mistake, Param, Ref, Step, Topic


class SoftmaxSteps(NamedTuple):
    shift: Step
    exponentiate: Step
    normalise: Step


def softmax_steps(p: dict[str, Any], t: Trace) -> SoftmaxSteps:
    return SoftmaxSteps(
        Step("Subtract the maximum (stability; the result is unchanged)", r"z_i - \max_j z_j", {"shifted": t.shifted}),
        Step("Exponentiate", r"e^{z_i - \max_j z_j}", {"exp": t.exp}),
        Step("Normalise", r"p_i = \frac{e^{z_i - \max z}}{\sum_j e^{z_j - \max z}}", {"sum": t.sum, "probs": t.probs}),
    )


# No generator asks this topic (mlp-backprop's and cross-entropy's probabilities have tables of their
# own): its mistakes are the two a hand computation of p makes most, as those tables word them.
SOFTMAX_MISTAKES = {
    "probs": (Mistake("exp-only", compute=lambda p, t: engine.softmax(p["logits"], normalize=False).probs,
                      why="You exponentiated but did not divide by the sum of the exponentials."),
              Mistake("sigmoid-each", compute=lambda p, t: engine.activation("sigmoid", p["logits"]).output,
                      why="Softmax couples the classes: p_i = e^{z_i} / Σ_j e^{z_j}, not σ(z_i) per class.")),
}


SOFTMAX = Topic(
    "softmax", "Softmax over the last axis",
    (Param("logits", "vector (C) or matrix (N×C)"),),
    ("probs",),
    lambda p: engine.softmax(p["logits"]),
    softmax_steps,
    lambda p: {"axis": "softmax over the last axis (classes)"},
    mistakes=SOFTMAX_MISTAKES,
)


class CrossEntropySteps(NamedTuple):
    probs: Step
    log_probs: Step
    target_dist: Step | None       # with label smoothing
    losses: Step
    reduce: Step | None            # a batch with reduction "mean" or "sum"
    gradient: Step


def cross_entropy_steps(p: dict[str, Any], t: Trace) -> CrossEntropySteps:
    eps = p["label_smoothing"]
    red = p["reduction"]
    batch = np.ndim(p["logits"]) == 2
    if eps:
        target = Step("Smoothed target distribution", r"q = (1 - \varepsilon)\,y + \varepsilon / C",
                      {"target_dist": t.target_dist})
        losses = Step("Loss per example", r"\ell = -\sum_i q_i \log p_i", {"losses": t.losses})
    else:
        target = None
        losses = Step("Loss per example: minus the log-probability of the target", r"\ell = -\log p_y",
                      {"losses": t.losses})
    reduce = (Step(f"Reduce over the batch ({red})",
                   r"L = \frac{1}{N}\sum_n \ell_n" if red == "mean" else r"L = \sum_n \ell_n", {"loss": t.loss})
              if batch and red != "none" else None)
    q = "q" if eps else "y"
    div = r"\frac{1}{N}" if red == "mean" and batch else ""
    return CrossEntropySteps(
        Step("Softmax of the logits", r"p_i = \frac{e^{z_i}}{\sum_j e^{z_j}}", {"probs": t.probs}),
        Step("Log-probabilities", r"\log p_i = z_i - \log \sum_j e^{z_j}", {"log_probs": t.log_probs}),
        target, losses, reduce,
        Step("Gradient with respect to the logits", rf"\frac{{\partial L}}{{\partial z}} = {div}(p - {q})",
             {"grad_logits": t.grad_logits}),
    )


def _batch(p: dict[str, Any]) -> bool:
    return np.ndim(p["logits"]) == 2


def _mean_over(p: dict[str, Any]) -> int:
    """N for a batch's mean (the divisor the gradient carries), else 1."""
    return len(p["logits"]) if _batch(p) and p["reduction"] == "mean" else 1


def _smoothed(p: dict[str, Any]) -> bool:
    return p["label_smoothing"] > 0


def _other_smoothing(p: dict[str, Any], t: Trace) -> np.ndarray:
    """The other label-smoothing convention: 1 − ε on the target, ε/(C − 1) on every other class."""
    eps, C = p["label_smoothing"], np.shape(p["logits"])[-1]
    if _batch(p):
        return np.array([np.where(np.arange(C) == y, 1 - eps, eps / (C - 1)) for y in p["target"]])
    return np.where(np.arange(C) == p["target"], 1 - eps, eps / (C - 1))


def _reduced(p: dict[str, Any], red: str) -> bool:
    return _batch(p) and p["reduction"] == red


CROSS_ENTROPY_MISTAKES = {
    "target_dist": (Mistake("eps-over-c-minus-1", compute=_other_smoothing,
                            when=lambda p: _smoothed(p) and np.shape(p["logits"])[-1] > 1,
                            why="That is the other smoothing convention (1 − ε on the target, ε/(C−1) elsewhere); "
                                "this problem follows PyTorch: ε/C to every class."),),
    "probs": (Mistake("exp-only", compute=lambda p, t: engine.softmax(p["logits"], normalize=False).probs,
                      why="You exponentiated but did not divide by the sum of the exponentials."),),
    "loss": (Mistake("log10", compute=lambda p, t: t.loss / math.log(10),
                     why="Cross-entropy uses the natural logarithm, not log base 10."),
             Mistake("double-softmax", why="You applied softmax to the probabilities again before the loss: the loss "
                                           "takes log of p directly.",
                     compute=lambda p, t: engine.cross_entropy(t.probs, p["target"], reduction=p["reduction"],
                                                               label_smoothing=p["label_smoothing"]).loss),
             Mistake("wrong-reduction", compute=lambda p, t: float(t.losses.sum()), when=lambda p: _reduced(p, "mean"),
                     why="The problem asks for the mean over the batch."),
             Mistake("wrong-reduction", compute=lambda p, t: float(t.losses.mean()), when=lambda p: _reduced(p, "sum"),
                     why="The problem asks for the sum over the batch."),
             Mistake("no-smoothing", label_smoothing=0.0,
                     why="You ignored label smoothing: the loss is −Σ q_i log p_i with the smoothed q.")),
    "grad_logits": (Mistake("y-minus-p", compute=lambda p, t: -t.grad_logits, why="Sign flipped: ∂L/∂z = p − y, not y − p."),
                    Mistake("p-only", compute=lambda p, t: t.probs / _mean_over(p),
                            why="You forgot to subtract the one-hot target y."),
                    Mistake("missing-1-over-n", compute=lambda p, t: t.grad_logits * len(p["logits"]),
                            when=lambda p: _batch(p) and p["reduction"] == "mean",
                            why="With the mean over the batch each row of the gradient carries 1/N."),
                    Mistake("extra-1-over-n", compute=lambda p, t: t.grad_logits / len(p["logits"]),
                            when=lambda p: _batch(p) and p["reduction"] == "sum",
                            why="With the sum over the batch there is no 1/N."),
                    Mistake("no-smoothing", label_smoothing=0.0,
                            why="With label smoothing the gradient is p − q, with the smoothed q, not p − y.")),
}


# the gradient from the student's own probabilities: (p − q)/N, as the built-in generator grades it
# the loss from the student's own probabilities (and smoothed target, where a part asks it)
CROSS_ENTROPY_ECF = {
    "loss": (Ecf("cross-entropy-from-probs", lambda p, t: {"probs": Ref("probs"), "target_dist": Ref("target_dist"),
                                                           "reduction": p["reduction"]}, when=_smoothed),
             Ecf("cross-entropy-from-probs", lambda p, t: {"probs": Ref("probs"), "target_dist": t.target_dist,
                                                           "reduction": p["reduction"]})),
    "grad_logits": (Ecf("minus-target", lambda p, t: {"probs": Ref("probs"), "target_dist": Ref("target_dist"),
                                                      "divide_by": _mean_over(p)}, when=_smoothed),
                    Ecf("minus-target", lambda p, t: {"probs": Ref("probs"), "target_dist": t.target_dist,
                                                      "divide_by": _mean_over(p)})),
}


CROSS_ENTROPY = Topic(
    "cross-entropy", "Softmax + cross-entropy loss and its gradient",
    (Param("logits", "vector (C) or matrix (N×C)"),
     Param("target", "class index (C logits) or list of N indices"),
     Param("reduction", '"mean", "sum" or "none"', "mean"),
     Param("label_smoothing", "ε in [0, 1]", 0.0)),
    ("loss", "probs", "grad_logits", "target_dist"),
    lambda p: engine.cross_entropy(p["logits"], p["target"], reduction=p["reduction"],
                                   label_smoothing=p["label_smoothing"]),
    cross_entropy_steps,
    mistakes=CROSS_ENTROPY_MISTAKES,
    ecf=CROSS_ENTROPY_ECF,
    conventions=lambda p: {"reduction": {"mean": "mean over the batch (PyTorch's default)", "sum": "sum over the batch",
                             "none": "one loss per example"}.get(p["reduction"], p["reduction"]),
               "label_smoothing": f"ε = {p['label_smoothing']}: target gets 1−ε+ε/C, others ε/C (PyTorch)"},
)
