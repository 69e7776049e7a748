"""Solve topic of optimisation: optimizer-step (torch.optim's updates, one or several steps)."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Mistake, Param, Refusal, Step, Topic

_UPDATE = {
    "sgd": r"p \leftarrow p - \eta\, g",
    "momentum": r"v \leftarrow \mu v + g\ (v_1 = g),\ \ p \leftarrow p - \eta\, v",
    "nesterov": r"v \leftarrow \mu v + g,\ \ p \leftarrow p - \eta\, (g + \mu v)",
    "rmsprop": r"s \leftarrow \alpha s + (1 - \alpha) g^2,\ \ p \leftarrow p - \eta\, \frac{g}{\sqrt{s} + \epsilon}",
    "adagrad": r"s \leftarrow s + g^2,\ \ p \leftarrow p - \eta\, \frac{g}{\sqrt{s} + \epsilon}",
    "adam": r"m \leftarrow \beta_1 m + (1 - \beta_1) g,\ v \leftarrow \beta_2 v + (1 - \beta_2) g^2,\ "
            r"p \leftarrow p - \eta\, \frac{m / (1 - \beta_1^t)}{\sqrt{v / (1 - \beta_2^t)} + \epsilon}",
    "adamw": r"p \leftarrow p - \eta \lambda p,\ \text{then Adam's step}",
    "adamax": r"m \leftarrow \beta_1 m + (1 - \beta_1) g,\ u \leftarrow \max(\beta_2 u, |g| + \epsilon),\ "
              r"p \leftarrow p - \frac{\eta}{1 - \beta_1^t} \frac{m}{u}",
    "adadelta": r"s \leftarrow \rho s + (1 - \rho) g^2,\ \Delta = \frac{\sqrt{a + \epsilon}}{\sqrt{s + \epsilon}} g,\ "
                r"a \leftarrow \rho a + (1 - \rho) \Delta^2,\ p \leftarrow p - \eta \Delta",
}
_STATE = {"momentum": ("velocity",), "nesterov": ("velocity",), "rmsprop": ("square_avg",), "adagrad": ("sum",),
          "adam": ("exp_avg", "exp_avg_sq"), "adamw": ("exp_avg", "exp_avg_sq")}
# the state answers a problem from a given state (or of an optimizer added with it) reports, torch's names
_GIVEN_STATE = {"momentum": ("momentum_buffer",), "nesterov": ("momentum_buffer",),
                "rmsprop": ("step", "square_avg", "grad_avg", "momentum_buffer"), "adagrad": ("step", "sum"),
                "adam": ("step", "exp_avg", "exp_avg_sq"), "adamw": ("step", "exp_avg", "exp_avg_sq"),
                "adamax": ("step", "exp_avg", "exp_inf"), "adadelta": ("step", "square_avg", "acc_delta")}


class OptimizerSteps(NamedTuple):
    steps: list[Step]              # one per gradient step: the parameters after it
    state: Step | None             # the optimizer's state after the last step


def _extended(p: dict[str, Any]) -> bool:
    """A problem of issue 38's additions: from a given state, AdaMax or AdaDelta, centered or momentum
    RMSprop, or a convention sources differ on (the others' steps are as before)."""
    return (p.get("state") is not None or p["optimizer"] in ("adamax", "adadelta") or bool(p.get("centered"))
            or (p["optimizer"] == "rmsprop" and bool(p.get("momentum"))) or p.get("initial_accumulator_value") is not None
            or p.get("velocity_convention", "torch") != "torch" or p.get("eps_placement", "outside") != "outside")


_V_HAT = r"v / (1 - \beta_2^t)"


def _formula(p: dict[str, Any]) -> str:
    name = p["optimizer"]
    if not _extended(p):
        return _UPDATE[name]
    root = (lambda x: rf"\sqrt{{{x} + \epsilon}}") if p.get("eps_placement") == "inside" else (
        lambda x: rf"(\sqrt{{{x}}} + \epsilon)")
    if name == "momentum" and p.get("velocity_convention") == "lr-inside":
        return r"v \leftarrow \mu v - \eta\, g,\ \ p \leftarrow p + v"
    if name == "momentum" and "momentum_buffer" in (p.get("state") or {}):
        return r"v \leftarrow \mu v + (1 - \text{dampening})\, g,\ \ p \leftarrow p - \eta\, v" if p.get(
            "dampening") else r"v \leftarrow \mu v + g,\ \ p \leftarrow p - \eta\, v"
    if name == "rmsprop":
        s_ = r"s - \bar g^2" if p.get("centered") else "s"
        out = r"s \leftarrow \alpha s + (1 - \alpha) g^2,\ "
        out += r"\bar g \leftarrow \alpha \bar g + (1 - \alpha) g,\ " if p.get("centered") else ""
        if p.get("momentum"):
            return out + rf"b \leftarrow \mu b + g / {root(s_)},\ p \leftarrow p - \eta\, b"
        return out + rf"p \leftarrow p - \eta\, g / {root(s_)}"
    if name == "adagrad":
        return rf"s \leftarrow s + g^2,\ \ p \leftarrow p - \eta\, g / {root('s')}"
    if name in ("adam", "adamw"):
        head = r"p \leftarrow p - \eta \lambda p,\ " if name == "adamw" else ""
        return head + (r"m \leftarrow \beta_1 m + (1 - \beta_1) g,\ v \leftarrow \beta_2 v + (1 - \beta_2) g^2,\ "
                       r"p \leftarrow p - \eta\, \frac{m / (1 - \beta_1^t)}{" + (
                           root(_V_HAT) if p.get("eps_placement") == "inside" else rf"\sqrt{{{_V_HAT}}} + \epsilon")
                       + "}")
    return _UPDATE[name]


def optimizer_steps(p: dict[str, Any], t: Trace) -> OptimizerSteps:
    name = p["optimizer"]
    decay = p["weight_decay"] not in (None, 0, 0.0) and name != "adamw"
    formula = (r"g \leftarrow g + \lambda p,\ \ " if decay else "") + _formula(p)
    rows = np.atleast_2d(t.params_per_step)
    if not _extended(p):
        steps = [Step(f"Step {k}" + (" (bias corrections 1 − β₁ᵗ, 1 − β₂ᵗ)" if name in ("adam", "adamw") else ""),
                      formula, {f"params_{k}": row}) for k, row in enumerate(rows, 1)]
        state = {n: t[n] for n in _STATE.get(name, ()) if n in t}
        return OptimizerSteps(steps, Step("The optimizer's state after the last step", r"\text{state}", state)
                              if state else None)
    counted = name in ("adam", "adamw", "adamax")           # the step count enters the update
    taken = int((p.get("state") or {}).get("step", 0))
    if not p.get("state"):
        given = None
    elif counted:
        given = Step(f"The given state: {taken} step(s) already taken (torch's step), so the next update is "
                     f"t = step + 1 = {taken + 1}", r"t = \text{step} + 1", dict(p["state"]))
    else:
        given = Step("The given state (torch's keys), where this optimizer goes on from", "", dict(p["state"]))
    last = {k: t[k] for k in ("bias_correction1", "bias_correction2", "exp_avg_hat", "exp_avg_sq_hat", "delta") if k in t}
    steps = ([given] if given else []) + [
        Step((f"Step t = {taken + k}" + " (bias correction 1 − β₁ᵗ" + (", 1 − β₂ᵗ)" if name != "adamax" else ")"))
             if counted else f"Step {k}", formula,
             (({"t": taken + k} if counted else {}) | last if k == len(rows) else {}) | {f"params_{k}": row})
        for k, row in enumerate(rows, 1)]
    state = {n: t[n] for n in _GIVEN_STATE.get(name, ()) if n in t}
    return OptimizerSteps(steps, Step("The optimizer's state after the last step (torch's keys)", r"\text{state}",
                                      state) if state else None)


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
    return (p["optimizer"] == "momentum" and not p["dampening"] and not p["weight_decay"] and p.get("state") is None
            and p.get("velocity_convention", "torch") == "torch")


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


def _given(p: dict[str, Any]) -> dict[str, Any]:
    return p.get("state") or {}


def _counted(p: dict[str, Any]) -> bool:
    """Bias-corrected, from a state with steps already taken: t = step + 1 is the point."""
    return (p["optimizer"] in ("adam", "adamw", "adamax") and p["bias_correction"]
            and int(_given(p).get("step", 0)) >= 1)


def _step_minus_one(p: dict[str, Any]) -> dict[str, Any]:
    return {**_given(p), "step": int(_given(p)["step"]) - 1}


def _eps_matters(p: dict[str, Any]) -> bool:
    """ε placed either way changes the answer visibly (a given ε ≥ 1e-4)."""
    return (p["optimizer"] in ("rmsprop", "adagrad", "adam", "adamw") and p["eps"] is not None
            and p["eps"] >= 1e-4 and _extended(p))


def _lr_inside(p: dict[str, Any]) -> bool:
    return p["optimizer"] == "momentum" and p.get("velocity_convention") == "lr-inside"


def _torch_velocity_given(p: dict[str, Any]) -> bool:
    return (p["optimizer"] == "momentum" and p.get("velocity_convention", "torch") == "torch"
            and "momentum_buffer" in _given(p))


def _one_step(p: dict[str, Any]) -> bool:
    return _steps(p) == 1


def _adamax_no_abs(p: dict[str, Any], t: Trace) -> np.ndarray:
    """u ← max(β₂u, g + ε): the signed gradient (one step from the given state)."""
    b2 = 0.999 if p["betas"] is None else p["betas"][1]
    g = np.asarray(p["grads"], dtype=float) + (p["weight_decay"] or 0.0) * np.asarray(p["params"], dtype=float)
    u0 = np.broadcast_to(np.asarray(_given(p).get("exp_inf", 0.0), dtype=float), g.shape)
    return np.maximum(b2 * u0, g + (1e-8 if p["eps"] is None else p["eps"]))


def _adadelta_old_square(p: dict[str, Any], t: Trace) -> np.ndarray:
    """acc_delta with Δ from the square_avg before this step's update (one step from the given state)."""
    r = 0.9 if p["rho"] is None else p["rho"]
    e = 1e-6 if p["eps"] is None else p["eps"]
    g = np.asarray(p["grads"], dtype=float) + (p["weight_decay"] or 0.0) * np.asarray(p["params"], dtype=float)
    s0 = np.broadcast_to(np.asarray(_given(p).get("square_avg", 0.0), dtype=float), g.shape)
    a0 = np.broadcast_to(np.asarray(_given(p).get("acc_delta", 0.0), dtype=float), g.shape)
    delta = np.sqrt(a0 + e) / np.sqrt(s0 + e) * g
    return r * a0 + (1 - r) * delta * delta


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
        Mistake("ascent", compute=_ascent, when=_plain_momentum, why="Descent subtracts: p ← p − η v."),
        Mistake("t-is-step", state=_step_minus_one, when=_counted,
                why="torch's step counts the steps already taken: this update is t = step + 1, and its bias "
                    "correction uses β^(step + 1)."),
        Mistake("no-bias-correction", bias_correction=False, when=lambda p: p["optimizer"] == "adamax",
                why="AdaMax divides the step by 1 − β₁ᵗ (Kingma & Ba 2015, Algorithm 2)."),
        Mistake("fresh-state", state=None, when=lambda p: p.get("state") is not None,
                why="The optimizer has already taken steps: start from the given state, not from zeros."),
        Mistake("eps-inside", eps_placement="inside", when=lambda p: _eps_matters(p) and p["eps_placement"] == "outside",
                why="torch.optim adds ε outside the square root: √s + ε."),
        Mistake("eps-outside", eps_placement="outside", when=lambda p: _eps_matters(p) and p["eps_placement"] == "inside",
                why="This convention puts ε inside the square root: √(s + ε)."),
        Mistake("uncentered", centered=False, when=lambda p: p["optimizer"] == "rmsprop" and bool(p["centered"]),
                why="Centered RMSprop divides by √(s − ḡ²), the gradient's variance, not √s."),
        Mistake("torch-velocity", velocity_convention="torch", when=_lr_inside,
                why="Here the velocity holds the step itself: v ← μv − lr·g and p ← p + v."),
        Mistake("lr-inside", velocity_convention="lr-inside", when=_torch_velocity_given,
                why="torch.optim's buffer holds no lr: v ← μv + g, then p ← p − lr·v.")),
    "velocity": (
        Mistake("dampened", dampening=lambda p: 0.9 if p["momentum"] is None else p["momentum"],
                when=lambda p: p["optimizer"] == "momentum" and _steps(p) > 1,
                why="PyTorch's momentum adds the whole gradient: v ← μv + g, not μv + (1 − μ)g."),
        Mistake("no-momentum", compute=lambda p, t: np.asarray(p["grads"], dtype=float)[-1],
                when=lambda p: _momentum_several(p) and _steps(p) == 2,
                why="The velocity keeps μ times the last one: v₂ = μ v₁ + g₂."),
        Mistake("fresh-state", state=None, when=lambda p: p.get("state") is not None,
                why="The velocity goes on from the given buffer: v ← μ v + g."),
        Mistake("lr-inside", velocity_convention="lr-inside", when=_torch_velocity_given,
                why="torch.optim's buffer holds no lr: v ← μv + g.")),
    "step": (
        Mistake("not-advanced", compute=lambda p, t: t.step - _steps(p), when=lambda p: p.get("state") is not None,
                why="step counts the steps taken, this one included: it goes up by one per update."),),
    "exp_inf": (
        Mistake("no-abs", compute=_adamax_no_abs, when=lambda p: p["optimizer"] == "adamax" and _one_step(p),
                why="u is an infinity norm: max(β₂u, |g| + ε), with the gradient's absolute value."),
        Mistake("fresh-state", state=None, when=lambda p: p["optimizer"] == "adamax" and p.get("state") is not None,
                why="u goes on from the given exp_inf.")),
    "acc_delta": (
        Mistake("old-square-avg", compute=_adadelta_old_square,
                when=lambda p: p["optimizer"] == "adadelta" and _one_step(p),
                why="Δ divides by the square_avg of THIS step, updated with g² first."),
        Mistake("fresh-state", state=None, when=lambda p: p["optimizer"] == "adadelta" and p.get("state") is not None,
                why="acc_delta goes on from the given one.")),
    "exp_avg": (
        Mistake("corrected", compute=lambda p, t: t.exp_avg_hat,
                when=lambda p: _adam(p) and p["bias_correction"] and _steps(p) == 2,
                why="That is m̂₂ = m₂/(1 − β₁²); the stored moment m₂ is not corrected."),
        Mistake("corrected", compute=lambda p, t: t.exp_avg_hat,
                when=lambda p: _adam(p) and p["bias_correction"] and _steps(p) != 2,
                why="That is m̂ = m/(1 − β₁ᵗ); the stored moment m is not corrected."),
        Mistake("betas-swapped", betas=_betas_swapped, when=_default_beta1,
                why="β₁ = 0.9 weights the OLD moment: m ← 0.9 m + 0.1 g."),
        Mistake("fresh-state", state=None, when=lambda p: p["optimizer"] == "adamax" and p.get("state") is not None,
                why="m goes on from the given exp_avg.")),
}


OPTIMIZER_STEP_MISTAKES["momentum_buffer"] = OPTIMIZER_STEP_MISTAKES["velocity"]     # torch's name of the velocity

_ANSWERS = ("params_per_step", "params_new", "velocity", "momentum_buffer", "square_avg", "grad_avg", "sum", "exp_avg",
            "exp_avg_sq", "exp_inf", "acc_delta", "step")


def _conventions(p: dict[str, Any]) -> dict[str, str]:
    out = {"optimizer": p["optimizer"] + " exactly as torch.optim",
           "eps": "added outside the square root, after the bias correction (torch.optim)"}
    if p.get("eps_placement") == "inside":
        out["eps"] = "inside the square root: √(s + ε) (d2l; TensorFlow's ApplyRMSProp)"
    if p["optimizer"] == "adadelta":
        out["eps"] = "inside both square roots, √(a + ε)/√(s + ε) (Zeiler 2012; torch.optim.Adadelta)"
    if p["optimizer"] == "adamax":
        out["eps"] = "added to |g| inside the max, u ← max(β₂u, |g| + ε) (torch.optim.Adamax)"
    if _lr_inside(p):
        out["velocity"] = "lr inside the velocity: v ← μv − lr·g, p ← p + v (CS231n, Keras)"
    elif p["optimizer"] in ("momentum", "nesterov"):
        out["velocity"] = "torch.optim's momentum_buffer: v ← μv + g, p ← p − lr·v"
    if p.get("state") is not None:
        out["step"] = "torch's count of the steps already taken: the next update is t = step + 1"
    return out


OPTIMIZER_STEP = Topic(
    "optimizer-step", "Optimizer updates as torch.optim: SGD, momentum, Nesterov, RMSprop (centered, momentum), "
                      "Adagrad, AdaDelta, Adam, AdamW, AdaMax, from zero or a given state",
    (Param("optimizer", '"sgd", "momentum", "nesterov", "rmsprop", "adagrad", "adadelta", "adam", "adamw" or "adamax"'),
     Param("params", "vector (d)"), Param("grads", "vector (d): one step; T×d: the gradient at each of T steps"),
     Param("lr", "learning rate"),
     Param("momentum", "μ (momentum, nesterov: 0.9; rmsprop: 0)", None),
     Param("betas", "[β₁, β₂] (adam, adamw, adamax; [0.9, 0.999])", None),
     Param("eps", "ε (1e-8; adagrad 1e-10, adadelta 1e-6): outside the square root unless eps_placement", None),
     Param("alpha", "α (rmsprop; 0.99)", None),
     Param("weight_decay", "λ (0; adamw 0.01): added to the gradient, except AdamW's decoupled decay", None),
     Param("dampening", "momentum's dampening (momentum, nesterov; 0, as torch.optim.SGD)", None),
     Param("bias_correction", "bool (adam, adamw, adamax): divide by 1 − βᵗ, as torch.optim", True),
     Param("state", "the state before these steps, torch's keys (momentum_buffer, sum, square_avg, grad_avg, exp_avg, "
                    "exp_avg_sq, exp_inf, acc_delta; step: steps already taken, so t = step + 1); a key left out "
                    "starts as in a fresh optimizer", None),
     Param("initial_accumulator_value", "Adagrad's starting sum (0, as torch.optim.Adagrad)", None),
     Param("centered", "bool (rmsprop): divide by √(s − ḡ²), ḡ the average gradient (grad_avg)", False),
     Param("rho", "ρ (adadelta; 0.9)", None),
     Param("velocity_convention", '"torch" (v ← μv + g, p ← p − lr·v) or "lr-inside" (momentum: v ← μv − lr·g, '
                                  'p ← p + v; CS231n, Keras)', "torch"),
     Param("eps_placement", '"outside" (√s + ε, torch.optim) or "inside" (√(s + ε): d2l, TF\'s ApplyRMSProp; '
                            'rmsprop, adagrad, adam, adamw)', "outside")),
    _ANSWERS,
    lambda p: engine.optimizer_step(p["optimizer"], p["params"], p["grads"], lr=p["lr"], momentum=p["momentum"],
                                    betas=p["betas"], eps=p["eps"], alpha=p["alpha"], weight_decay=p["weight_decay"],
                                    dampening=p["dampening"], bias_correction=p["bias_correction"], state=p["state"],
                                    initial_accumulator_value=p["initial_accumulator_value"], centered=p["centered"],
                                    rho=p["rho"], velocity_convention=p["velocity_convention"],
                                    eps_placement=p["eps_placement"]),
    optimizer_steps,
    mistakes=OPTIMIZER_STEP_MISTAKES,
    conventions=_conventions,
    answer_names=lambda p, t: [n for n in _ANSWERS if n in t],
    refuses=(Refusal("a state key the optimizer does not keep (torch.optim has no such state)",
                     {"optimizer": "adamax", "params": [1.0], "grads": [0.5], "lr": 0.1, "state": {"exp_avg_sq": [1.0]}}),
             Refusal("a negative step count, or a momentum_buffer for RMSprop without momentum",
                     {"optimizer": "adam", "params": [1.0], "grads": [0.5], "lr": 0.1, "state": {"step": -1}}),
             Refusal("centered RMSprop's square_avg below grad_avg² (a negative variance)",
                     {"optimizer": "rmsprop", "params": [1.0], "grads": [0.5], "lr": 0.1, "centered": True,
                      "state": {"square_avg": [0.1], "grad_avg": [1.0]}}),
             Refusal("a convention the optimizer does not have (lr-inside velocity for Adam; ε inside for AdaMax)",
                     {"optimizer": "adam", "params": [1.0], "grads": [0.5], "lr": 0.1, "velocity_convention": "lr-inside"})),
)
