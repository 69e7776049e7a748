"""Solve topic of optimisation: optimizer-step (torch.optim's updates, one or several steps)."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Mistake, Param, Step, Topic

_UPDATE = {
    "sgd": r"p \leftarrow p - \eta\, g",
    "momentum": r"v \leftarrow \mu v + g\ (v_1 = g),\ \ p \leftarrow p - \eta\, v",
    "nesterov": r"v \leftarrow \mu v + g,\ \ p \leftarrow p - \eta\, (g + \mu v)",
    "rmsprop": r"s \leftarrow \alpha s + (1 - \alpha) g^2,\ \ p \leftarrow p - \eta\, \frac{g}{\sqrt{s} + \epsilon}",
    "adagrad": r"s \leftarrow s + g^2,\ \ p \leftarrow p - \eta\, \frac{g}{\sqrt{s} + \epsilon}",
    "adam": r"m \leftarrow \beta_1 m + (1 - \beta_1) g,\ v \leftarrow \beta_2 v + (1 - \beta_2) g^2,\ "
            r"p \leftarrow p - \eta\, \frac{m / (1 - \beta_1^t)}{\sqrt{v / (1 - \beta_2^t)} + \epsilon}",
    "adamw": r"p \leftarrow p - \eta \lambda p,\ \text{then Adam's step}",
}
_STATE = {"momentum": ("velocity",), "nesterov": ("velocity",), "rmsprop": ("square_avg",), "adagrad": ("sum",),
          "adam": ("exp_avg", "exp_avg_sq"), "adamw": ("exp_avg", "exp_avg_sq")}


class OptimizerSteps(NamedTuple):
    steps: list[Step]              # one per gradient step: the parameters after it
    state: Step | None             # the optimizer's state after the last step


def optimizer_steps(p: dict[str, Any], t: Trace) -> OptimizerSteps:
    name = p["optimizer"]
    decay = p["weight_decay"] not in (None, 0, 0.0) and name != "adamw"
    formula = (r"g \leftarrow g + \lambda p,\ \ " if decay else "") + _UPDATE[name]
    rows = np.atleast_2d(t.params_per_step)
    steps = [Step(f"Step {k}" + (" (bias corrections 1 − β₁ᵗ, 1 − β₂ᵗ)" if name in ("adam", "adamw") else ""), formula,
                  {f"params_{k}": row}) for k, row in enumerate(rows, 1)]
    state = {n: t[n] for n in _STATE.get(name, ()) if n in t}
    return OptimizerSteps(steps, Step("The optimizer's state after the last step", r"\text{state}", state) if state else None)


def _adam(p: dict[str, Any]) -> bool:
    return p["optimizer"] in ("adam", "adamw")


OPTIMIZER_STEP_MISTAKES = {
    "params_new": (
        Mistake("no-bias-correction", bias_correction=False, when=_adam,
                why="Adam divides m and v by 1 − β₁ᵗ and 1 − β₂ᵗ: without it the first steps are far smaller than lr."),
        Mistake("l2-not-decoupled", optimizer="adam", when=lambda p: p["optimizer"] == "adamw",
                why="AdamW decays the weights directly (p ← p − lr·λ·p); adding λp to the gradient is Adam with L2."),
        Mistake("dampened", dampening=lambda p: 0.9 if p["momentum"] is None else p["momentum"],
                when=lambda p: p["optimizer"] == "momentum" and np.ndim(p["grads"]) == 2 and np.shape(p["grads"])[0] > 1,
                why="PyTorch's momentum adds the whole gradient, v ← μv + g, not (1 − μ)g."),
        Mistake("plain-momentum", optimizer="momentum", when=lambda p: p["optimizer"] == "nesterov",
                why="Nesterov steps along g + μv, looking ahead, not along v."),
        Mistake("plain-sgd", optimizer="sgd", momentum=None, dampening=None,
                when=lambda p: p["optimizer"] in ("momentum", "nesterov") and np.ndim(p["grads"]) == 2
                and np.shape(p["grads"])[0] > 1,
                why="With momentum the velocity accumulates the past gradients: p moves by lr·v, not lr·g.")),
}


OPTIMIZER_STEP = Topic(
    "optimizer-step", "Optimizer updates as torch.optim: SGD, momentum, Nesterov, RMSprop, Adagrad, Adam, AdamW",
    (Param("optimizer", '"sgd", "momentum", "nesterov", "rmsprop", "adagrad", "adam" or "adamw"'),
     Param("params", "vector (d)"), Param("grads", "vector (d): one step; T×d: the gradient at each of T steps"),
     Param("lr", "learning rate"),
     Param("momentum", "μ (momentum, nesterov; 0.9)", None), Param("betas", "[β₁, β₂] (adam, adamw; [0.9, 0.999])", None),
     Param("eps", "ε outside the square root (1e-8; adagrad 1e-10)", None),
     Param("alpha", "α (rmsprop; 0.99)", None),
     Param("weight_decay", "λ (0; adamw 0.01): added to the gradient, except AdamW's decoupled decay", None),
     Param("dampening", "momentum's dampening (momentum, nesterov; 0, as torch.optim.SGD)", None),
     Param("bias_correction", "bool (adam, adamw): divide by 1 − βᵗ, as torch.optim", True)),
    ("params_per_step", "params_new", "velocity", "square_avg", "sum", "exp_avg", "exp_avg_sq"),
    lambda p: engine.optimizer_step(p["optimizer"], p["params"], p["grads"], lr=p["lr"], momentum=p["momentum"],
                                    betas=p["betas"], eps=p["eps"], alpha=p["alpha"], weight_decay=p["weight_decay"],
                                    dampening=p["dampening"], bias_correction=p["bias_correction"]),
    optimizer_steps,
    mistakes=OPTIMIZER_STEP_MISTAKES,
    conventions=lambda p: {"optimizer": p["optimizer"] + " exactly as torch.optim",
                           "eps": "added outside the square root, after the bias correction (torch.optim)"},
    answer_names=lambda p, t: [n for n in ("params_per_step", "params_new", "velocity", "square_avg", "sum", "exp_avg",
                                           "exp_avg_sq") if n in t],
)
