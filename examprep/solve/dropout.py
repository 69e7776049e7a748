"""Solve topic of dropout: inverted dropout with a given mask, forward and backward."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Mistake, Param, Step, Topic


class DropoutSteps(NamedTuple):
    scale: Step
    output: Step
    grad_input: Step | None        # with grad_output


def dropout_steps(p: dict[str, Any], t: Trace) -> DropoutSteps:
    if not p["training"]:
        return DropoutSteps(
            Step("Evaluation mode: nothing is dropped" + (" and nothing scaled (the scaling happened in training)"
                                                          if p["inverted"] else ", values scaled by 1 − p"),
                 r"s = 1" if p["inverted"] else r"s = 1 - p", {"scale": t.scale}),
            Step("Output", r"y = s\, x", {"output": t.output}),
            Step("Gradient", r"\frac{\partial L}{\partial x} = s\, \delta", {"grad_input": t.grad_input})
            if "grad_input" in t else None)
    return DropoutSteps(
        Step("Scale of the kept values (inverted dropout: the expected output stays x)" if p["inverted"]
             else "Original dropout: kept values unscaled while training", r"s = \frac{1}{1 - p}" if p["inverted"] else "s = 1",
             {"scale": t.scale}),
        Step("Drop where the mask is 0, scale the rest", r"y = x \odot m \cdot s", {"output": t.output}),
        Step("The gradient flows only through the kept units, scaled the same",
             r"\frac{\partial L}{\partial x} = \delta \odot m \cdot s",
             {"grad_input": t.grad_input}) if "grad_input" in t else None)


def _kept(p: dict[str, Any]) -> bool:
    return bool(p["training"]) and 0 < p["p"] < 1


def _inverted_in_training(p: dict[str, Any]) -> bool:
    return _kept(p) and bool(p["inverted"])


def _at_eval(p: dict[str, Any]) -> bool:
    return not p["training"] and 0 < p["p"] < 1


def _other_mask(p: dict[str, Any]) -> list:
    """The mask read the other way round (0 = kept)."""
    return (1 - np.asarray(p["mask"], dtype=float)).tolist()


DROPOUT_MISTAKES = {
    "scale": (Mistake("p-as-keep", compute=lambda p, t: 1 / p["p"], when=_inverted_in_training,
                      why="p is the probability of DROPPING: divide by the keep probability 1 − p, not by p."),
              Mistake("times-keep", compute=lambda p, t: 1 - p["p"], when=_inverted_in_training,
                      why="Inverted dropout divides by 1 − p during training; multiplying by 1 − p is the original "
                          "dropout's test-time rule."),
              Mistake("no-scaling", inverted=False, when=_kept,
                      why="PyTorch scales the kept values by 1/(1 − p) so the expected output stays x.")),
    "output": (Mistake("no-scaling", inverted=False, when=_kept,
                       why="PyTorch's dropout is inverted: kept values are divided by 1 − p during training, so "
                           "evaluation needs no scaling."),
               Mistake("p-as-keep", p=lambda p: 1 - p["p"], when=lambda p: _kept(p) and p["p"] != 0.5,
                       why="p is the probability of DROPPING a unit: divide by 1 − p, the probability of keeping it."),
               Mistake("dropout-at-eval", training=True, when=lambda p: _at_eval(p) and p["inverted"],
                       why="In evaluation mode dropout is the identity: nothing is dropped or scaled."),
               Mistake("mask-inverted", mask=_other_mask, when=_kept, why="The mask keeps where it is 1: a 0 drops the unit."),
               Mistake("scaled-at-eval", inverted=False, when=_at_eval,
                       why="Inverted dropout already scaled in training: evaluation is the identity, no factor 1 − p."),
               Mistake("identity", inverted=True, when=_at_eval,
                       why="That is inverted dropout's test time; the original multiplies by 1 − p at test time."),
               Mistake("divided", compute=lambda p, t: np.asarray(p["x"], dtype=float) / (1 - p["p"]),
                       when=lambda p: _at_eval(p) and not p["inverted"],
                       why="At test time the original dropout MULTIPLIES by the keep probability 1 − p.")),
    "grad_input": (Mistake("no-scaling", inverted=False, when=lambda p: _kept(p) and p["grad_output"] is not None,
                           why="The backward pass scales by the same 1/(1 − p) as the forward pass."),
                   Mistake("not-masked", compute=lambda p, t: np.asarray(p["grad_output"], dtype=float) * t.scale,
                           when=lambda p: _kept(p) and p["grad_output"] is not None,
                           why="A dropped unit passes no gradient back: multiply δ by the mask too."),
                   Mistake("mask-inverted", mask=_other_mask, when=lambda p: _kept(p) and p["grad_output"] is not None,
                           why="δ flows back through the kept units (mask 1).")),
}


DROPOUT = Topic(
    "dropout", "Inverted dropout with a given mask, forward and backward",
    (Param("x", "number, vector or matrix"), Param("mask", "x's shape: 1 = kept, 0 = dropped"),
     Param("p", "probability of dropping a unit"), Param("grad_output", "∂L/∂output (optional)", None),
     Param("training", "bool: false is evaluation mode (the identity)", True),
     Param("inverted", "bool: true scales by 1/(1 − p) in training (PyTorch); false is the original dropout", True)),
    ("scale", "output", "grad_input"),
    lambda p: engine.dropout(p["x"], p["mask"], p=p["p"], grad_output=p["grad_output"], training=p["training"],
                             inverted=p["inverted"]),
    dropout_steps,
    mistakes=DROPOUT_MISTAKES,
    conventions=lambda p: {"p": "the probability of dropping a unit (torch.nn.Dropout)",
                           "scaling": "inverted: kept values ÷ (1 − p) in training, identity in evaluation (PyTorch)"
                           if p["inverted"] else "original: unscaled in training, × (1 − p) in evaluation"},
    answer_names=lambda p, t: [n for n in ("scale", "output", "grad_input") if n in t],
)
