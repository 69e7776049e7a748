"""Solve topic of learning-rate schedules: lr-schedule (torch.optim.lr_scheduler's rates, step by step, and
the parameters an optimizer reaches with them)."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.engine.schedule import scheduled_steps
from examprep.solve.contract import Mistake, Param, Refusal, Step, Topic
from examprep.solve.minimize import UPDATE

_RATE = {
    "step-lr": r"\eta_t = \eta_0\, \gamma^{\lfloor t / \text{step\_size} \rfloor}",
    "multi-step-lr": r"\eta_t = \eta_0\, \gamma^{k(t)},\ \ k(t) = \text{the number of milestones } m \le t",
    "exponential-lr": r"\eta_t = \eta_0\, \gamma^{t}",
    "cosine-annealing-lr": r"\eta_t = \eta_{\min} + \tfrac12 (\eta_0 - \eta_{\min}) \left(1 + \cos \frac{\pi t}{T_{\max}}\right)",
    "linear-warmup-cosine": r"\eta_t = \eta_0 \frac{t}{w}\ (t < w),\ \ \eta_{\min} + \tfrac12 (\eta_0 - \eta_{\min})"
                            r"\left(1 + \cos \frac{\pi (t - w)}{T - w}\right)\ (t \ge w)",
    "inverse-sqrt-warmup": r"\eta_t = \eta_0\, d_{\text{model}}^{-1/2} \min\left(s^{-1/2},\ s\, w^{-3/2}\right)",
    "one-cycle-lr": r"\eta: \frac{\eta_{\max}}{\text{div}} \to \eta_{\max} \text{ over } "
                    r"p\,T - 1 \text{ steps, then } \to \frac{\eta_{\max}}{\text{div} \cdot \text{final\_div}}",
}
_STATE = ("velocity", "square_avg", "sum", "exp_avg", "exp_avg_sq")
_NAMES = ("scheduler", "steps", "lr", "step_size", "gamma", "milestones", "T_max", "eta_min", "warmup_steps",
          "total_steps", "d_model", "step_num", "max_lr", "pct_start", "anneal_strategy", "div_factor",
          "final_div_factor", "three_phase", "cycle_momentum", "base_momentum", "max_momentum", "params", "grads",
          "optimizer", "momentum", "betas", "eps", "alpha", "weight_decay")


def compute(p: dict[str, Any]) -> Trace:
    return engine.lr_schedule(**{n: p[n] for n in _NAMES})


class ScheduleSteps(NamedTuple):
    rates: Step                    # the rate of every step (and OneCycleLR's momentum), and the last one
    steps: list[Step]              # with grads: one per optimizer step, the parameters after it
    state: Step | None             # with grads: the optimizer's state after the last step


def schedule_steps(p: dict[str, Any], t: Trace) -> ScheduleSteps:
    name = p["scheduler"]
    values = {"lrs": t.lrs, "last_lr": t.last_lr}
    if "momentums" in t:
        values["momentums"] = t.momentums
    rates = Step(f"The rates of steps t = 0 … {len(t.lrs) - 1} ({name}), and the rate after the last "
                 "scheduler.step()", _RATE[name], values)
    steps: list[Step] = []
    state = None
    if "params_new" in t:
        for k, (row, rate) in enumerate(zip(np.atleast_2d(t.params_per_step), t.lrs), 1):
            steps.append(Step(f"Step {k} ({p['optimizer']}) at the rate of step t = {k - 1}, η = {rate:.6g}",
                              UPDATE[p["optimizer"]].replace(r"\eta", r"\eta_{k-1}"), {f"params_{k}": row}))
        kept = {n: t[n] for n in _STATE if n in t}
        state = Step("The optimizer's state after the last step", r"\text{state}", kept) if kept else None
    return ScheduleSteps(rates, steps, state)


def _is(*names: str):
    return lambda p: p["scheduler"] in names


def _shifted(p: dict[str, Any], t: Trace) -> np.ndarray:
    """The rates one step early: step t at the rate of step t + 1."""
    return np.append(t.lrs[1:], t.last_lr)


def _optimizer_kw(p: dict[str, Any]) -> dict[str, Any]:
    return {k: p[k] for k in ("optimizer", "momentum", "betas", "eps", "alpha", "weight_decay")}


_EARLY = Mistake("scheduler-before-step", compute=_shifted,
                 why="torch steps the scheduler after the optimizer: step 0 uses the initial rate. Calling "
                     "scheduler.step() first skips it (PyTorch's warning), so every rate comes one step early.")
# the mistakes of a rate, whether of every step (lrs) or of the one after the last (last_lr)
_RATE_MISTAKES = (
    Mistake("decay-every-step", scheduler="exponential-lr", step_size=None, when=_is("step-lr"),
            why="StepLR multiplies the rate by γ once every step_size steps, γ^⌊t/step_size⌋, not at every step."),
    Mistake("milestone-late", milestones=lambda p: [int(m) + 1 for m in p["milestones"]], when=_is("multi-step-lr"),
            why="MultiStepLR multiplies by γ at the milestone itself: from step m on the rate is γ times smaller "
                "(t ≥ m, not t > m)."),
    Mistake("no-eta-min", eta_min=0.0, when=lambda p: p["scheduler"] in ("cosine-annealing-lr", "linear-warmup-cosine")
            and bool(p["eta_min"]),
            why="The cosine ends at eta_min, not at 0: η = η_min + ½(η₀ − η_min)(1 + cos(π t/T_max))."),
    Mistake("no-d-model-scale", d_model=1, when=_is("inverse-sqrt-warmup"),
            why="The Transformer's rate has d_model^−½ in front: d_model^−½ · min(step^−½, step · warmup^−³ᐟ²)."),
    Mistake("starts-at-max-lr", div_factor=1.0, when=_is("one-cycle-lr"),
            why="OneCycleLR starts at max_lr / div_factor (div_factor 25) and reaches max_lr only after pct_start "
                "of the steps."),
    Mistake("linear-anneal", anneal_strategy="linear", when=_is("one-cycle-lr"),
            why="OneCycleLR anneals along half a cosine by default (anneal_strategy 'cos'), not along a line."),
)


def _constant(p: dict[str, Any], t: Trace) -> Any:
    return scheduled_steps(p["params"], p["grads"], [float(t.lrs[0])] * len(t.lrs), **_optimizer_kw(p)).params_new


def _early_params(p: dict[str, Any], t: Trace) -> Any:
    return scheduled_steps(p["params"], p["grads"], list(_shifted(p, t)), **_optimizer_kw(p)).params_new


def _steps_with_grads(p: dict[str, Any]) -> bool:
    return p["grads"] is not None and p["scheduler"] != "one-cycle-lr"


LR_SCHEDULE_MISTAKES = {
    "lrs": (_EARLY,) + _RATE_MISTAKES,
    "last_lr": (Mistake("last-step-rate", compute=lambda p, t: float(t.lrs[-1]),
                        why="After T calls of scheduler.step() the rate is that of step T (counting from 0), the "
                            "next step's: not the rate of the last step taken."),) + _RATE_MISTAKES,
    "params_new": (
        Mistake("constant-lr", compute=_constant, when=_steps_with_grads,
                why="Each step uses the rate the scheduler set for it, η_t; the rate is not η₀ throughout."),
        Mistake("scheduler-before-step", compute=_early_params, when=_steps_with_grads,
                why="torch steps the scheduler after the optimizer: step 0 uses the initial rate. Calling "
                    "scheduler.step() first skips it (PyTorch's warning), so every rate comes one step early."),
    ),
}


def _conventions(p: dict[str, Any]) -> dict[str, str]:
    out = {"steps": "step t = 0, 1, …, T − 1 uses entry t of lrs; scheduler.step() after each optimizer.step(), as "
                    "torch.optim.lr_scheduler"}
    if p["scheduler"] == "inverse-sqrt-warmup":
        out["step_num"] = ("s = t + 1: training step t + 1 in Vaswani et al. (2017)" if p["step_num"] in (None, "t+1")
                           else "s = max(t, 1): the Annotated Transformer's LambdaLR")
    if p["scheduler"] == "linear-warmup-cosine":
        out["warmup"] = "η₀·t/warmup from 0 (Hugging Face get_cosine_schedule_with_warmup)"
    if p["grads"] is not None:
        out["optimizer"] = f"{p['optimizer']} exactly as torch.optim, each step at its scheduled rate"
    return out


LR_SCHEDULE = Topic(
    "lr-schedule", "Learning-rate schedules as torch.optim.lr_scheduler: the rate at each step, and the parameters "
                   "an optimizer reaches",
    (Param("scheduler", '"step-lr", "multi-step-lr", "exponential-lr", "cosine-annealing-lr", "linear-warmup-cosine", '
                        '"inverse-sqrt-warmup" or "one-cycle-lr"'),
     Param("steps", "T, the number of optimizer steps (at most 100,000)"),
     Param("lr", "η₀, the optimizer's initial rate (all but one-cycle-lr; inverse-sqrt-warmup: 1, the rate itself)",
           None),
     Param("step_size", "steps between decays (step-lr)", None),
     Param("gamma", "decay factor γ (step-lr, multi-step-lr: 0.1; exponential-lr: required)", None),
     Param("milestones", "list of steps at which the rate is multiplied by γ (multi-step-lr)", None),
     Param("T_max", "steps of the half cosine (cosine-annealing-lr)", None),
     Param("eta_min", "the rate the cosine ends at (cosine-annealing-lr, linear-warmup-cosine; 0)", None),
     Param("warmup_steps", "w (linear-warmup-cosine, inverse-sqrt-warmup)", None),
     Param("total_steps", "the schedule's length (linear-warmup-cosine, one-cycle-lr)", None),
     Param("d_model", "the model width (inverse-sqrt-warmup)", None),
     Param("step_num", '"t+1" (the paper\'s step count from 1) or "max(t,1)" (inverse-sqrt-warmup; "t+1")', None),
     Param("max_lr", "the peak rate (one-cycle-lr)", None),
     Param("pct_start", "fraction of total_steps spent rising (one-cycle-lr; 0.3)", None),
     Param("anneal_strategy", '"cos" or "linear" (one-cycle-lr; "cos")', None),
     Param("div_factor", "initial rate = max_lr / div_factor (one-cycle-lr; 25)", None),
     Param("final_div_factor", "final rate = initial rate / final_div_factor (one-cycle-lr; 1e4)", None),
     Param("three_phase", "bool: back to the initial rate before the final decay (one-cycle-lr; false)", None),
     Param("cycle_momentum", "bool: momentum (β₁ for Adam) cycled inversely to the rate (one-cycle-lr; true)", None),
     Param("base_momentum", "the momentum at the peak rate (one-cycle-lr; 0.85)", None),
     Param("max_momentum", "the momentum at the start and end (one-cycle-lr; 0.95)", None),
     Param("params", "vector (d): with grads, the parameters before the first step", None),
     Param("grads", "T×d: the gradient of each step (with params)", None),
     Param("optimizer", '"sgd", "momentum", "nesterov", "rmsprop", "adagrad", "adam" or "adamw" (with grads)', "sgd"),
     Param("momentum", "μ (momentum, nesterov; 0.9)", None), Param("betas", "[β₁, β₂] (adam, adamw)", None),
     Param("eps", "ε (as optimizer-step)", None), Param("alpha", "α (rmsprop; 0.99)", None),
     Param("weight_decay", "λ (as optimizer-step)", None)),
    ("lrs", "last_lr", "momentums", "params_per_step", "params_new"),
    compute,
    schedule_steps,
    mistakes=LR_SCHEDULE_MISTAKES,
    conventions=_conventions,
    answer_names=lambda p, t: [n for n in ("lrs", "last_lr", "momentums", "params_per_step", "params_new") if n in t],
    refuses=(Refusal("an option the scheduler does not have (torch's class has no such argument)",
                     {"scheduler": "exponential-lr", "steps": 3, "lr": 0.1, "gamma": 0.5, "step_size": 2}),
             Refusal("more steps than one-cycle-lr's total_steps (torch raises)",
                     {"scheduler": "one-cycle-lr", "steps": 11, "max_lr": 0.1, "total_steps": 10}),
             Refusal("cycle_momentum with an optimizer that has no momentum (torch would switch SGD's on)",
                     {"scheduler": "one-cycle-lr", "steps": 2, "max_lr": 0.1, "total_steps": 10, "params": [1.0],
                      "grads": [[1.0], [1.0]]})),
)
