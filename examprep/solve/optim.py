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


def _steps(p: dict[str, Any]) -> int:
    return np.shape(p["grads"])[0] if np.ndim(p["grads"]) == 2 else 1


def _momentum_several(p: dict[str, Any]) -> bool:
    return p["optimizer"] in ("momentum", "nesterov") and _steps(p) > 1


def _decayed(p: dict[str, Any]) -> bool:
    """A weight decay given (AdamW decays by 0.01 without one)."""
    return p["weight_decay"] not in (None, 0, 0.0) or p["optimizer"] == "adamw"


def _plain_momentum(p: dict[str, Any]) -> bool:
    return p["optimizer"] == "momentum" and not p["dampening"] and not p["weight_decay"]


def _ascent(p: dict[str, Any], t: Trace) -> np.ndarray:
    """SGD with momentum stepping UP the gradient, p ← p + lr·v at every step (torch.optim refuses a
    negative lr: the steps are added here, v ← μv + g as the engine's)."""
    mu = 0.9 if p["momentum"] is None else p["momentum"]
    up, v = np.asarray(p["params"], dtype=float), None
    for g in np.atleast_2d(np.asarray(p["grads"], dtype=float)):
        v = g.copy() if v is None else mu * v + g
        up = up + v * p["lr"]
    return up


def _sgd(p: dict[str, Any], t: Trace) -> np.ndarray:
    """Plain gradient descent, p ← p − lr·g at every step, from the same gradients."""
    out = np.asarray(p["params"], dtype=float)
    for g in np.atleast_2d(np.asarray(p["grads"], dtype=float)):
        out = out - p["lr"] * g
    return out


def _default_rmsprop(p: dict[str, Any]) -> bool:
    return p["optimizer"] == "rmsprop" and p["alpha"] in (None, 0.99)


def _default_beta1(p: dict[str, Any]) -> bool:
    return _adam(p) and (p["betas"] is None or p["betas"][0] == 0.9)


def _betas_swapped(p: dict[str, Any]) -> list[float]:
    b1, b2 = (0.9, 0.999) if p["betas"] is None else p["betas"]
    return [round(1 - b1, 12), b2]


OPTIMIZER_STEP_MISTAKES = {
    "params_new": (
        Mistake("decoupled", optimizer="adamw", when=lambda p: p["optimizer"] == "adam" and _decayed(p),
                why="That is AdamW. Adam's weight_decay adds λp to the gradient first: g' = g + λp, which Adam then "
                    "normalises."),
        Mistake("no-decay", weight_decay=0.0, when=lambda p: p["optimizer"] == "adam" and _decayed(p),
                why="Adam's weight_decay adds λp to the gradient."),
        Mistake("no-bias-correction", bias_correction=False, when=_adam,
                why="Adam divides m and v by 1 − β₁ᵗ and 1 − β₂ᵗ: without it the first steps are far smaller than lr."),
        Mistake("l2-not-decoupled", optimizer="adam", when=lambda p: p["optimizer"] == "adamw",
                why="AdamW decays the weights directly (p ← p − lr·λ·p); adding λp to the gradient is Adam with L2."),
        Mistake("dampened", dampening=lambda p: 0.9 if p["momentum"] is None else p["momentum"],
                when=lambda p: p["optimizer"] == "momentum" and _steps(p) > 1,
                why="PyTorch's momentum adds the whole gradient, v ← μv + g, not (1 − μ)g."),
        Mistake("plain-momentum", optimizer="momentum", when=lambda p: p["optimizer"] == "nesterov",
                why="Nesterov steps along g + μv, looking ahead, not along v."),
        Mistake("plain-sgd", optimizer="sgd", momentum=None, dampening=None, when=_momentum_several,
                why="With momentum the velocity accumulates the past gradients: p moves by lr·v, not lr·g."),
        Mistake("no-decay", alpha=0.0, when=_default_rmsprop,
                why="s is a decaying average: s ← α s + (1 − α) g², so s₁ = 0.01 g₁²."),
        Mistake("plain-sgd", compute=_sgd, when=lambda p: p["optimizer"] == "rmsprop",
                why="RMSprop divides the gradient by √s + ε."),
        Mistake("no-decay", weight_decay=0.0, when=lambda p: p["optimizer"] == "adamw",
                why="AdamW first shrinks the weights: p ← p − ηλp."),
        Mistake("ascent", compute=_ascent, when=_plain_momentum, why="Descent subtracts: p ← p − η v.")),
    "velocity": (
        Mistake("dampened", dampening=lambda p: 0.9 if p["momentum"] is None else p["momentum"],
                when=lambda p: p["optimizer"] == "momentum" and _steps(p) > 1,
                why="PyTorch's momentum adds the whole gradient: v ← μv + g, not μv + (1 − μ)g."),
        Mistake("no-momentum", compute=lambda p, t: np.asarray(p["grads"], dtype=float)[-1],
                when=lambda p: _momentum_several(p) and _steps(p) == 2,
                why="The velocity keeps μ times the last one: v₂ = μ v₁ + g₂.")),
    "exp_avg": (
        Mistake("corrected", compute=lambda p, t: t.exp_avg_hat,
                when=lambda p: _adam(p) and p["bias_correction"] and _steps(p) == 2,
                why="That is m̂₂ = m₂/(1 − β₁²); the stored moment m₂ is not corrected."),
        Mistake("corrected", compute=lambda p, t: t.exp_avg_hat,
                when=lambda p: _adam(p) and p["bias_correction"] and _steps(p) != 2,
                why="That is m̂ = m/(1 − β₁ᵗ); the stored moment m is not corrected."),
        Mistake("betas-swapped", betas=_betas_swapped, when=_default_beta1,
                why="β₁ = 0.9 weights the OLD moment: m ← 0.9 m + 0.1 g.")),
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
