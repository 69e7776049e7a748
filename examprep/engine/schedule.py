"""Learning-rate schedules as torch.optim.lr_scheduler computes them, and the parameters an optimizer
reaches when each of its steps uses the scheduled rate."""
from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any

import numpy as np

from examprep.engine._core import Trace, array, boolean, choice, integer, number, vector
from examprep.engine.optim import initial_state, optimizer_settings, optimizer_update
from examprep.errors import ParamError, ShapeError

SCHEDULERS = ("step-lr", "multi-step-lr", "exponential-lr", "cosine-annealing-lr", "linear-warmup-cosine",
              "inverse-sqrt-warmup", "one-cycle-lr")
MAX_STEPS = 100_000

# the options each scheduler has (any other given is refused, naming the schedulers that have it)
_OPTIONS = {
    "step-lr": ("lr", "step_size", "gamma"),
    "multi-step-lr": ("lr", "milestones", "gamma"),
    "exponential-lr": ("lr", "gamma"),
    "cosine-annealing-lr": ("lr", "T_max", "eta_min"),
    "linear-warmup-cosine": ("lr", "warmup_steps", "total_steps", "eta_min"),
    "inverse-sqrt-warmup": ("lr", "d_model", "warmup_steps", "step_num"),
    "one-cycle-lr": ("max_lr", "total_steps", "pct_start", "anneal_strategy", "div_factor", "final_div_factor",
                     "three_phase", "cycle_momentum", "base_momentum", "max_momentum"),
}
_REQUIRED = {
    "step-lr": ("lr", "step_size"), "multi-step-lr": ("lr", "milestones"), "exponential-lr": ("lr", "gamma"),
    "cosine-annealing-lr": ("lr", "T_max"), "linear-warmup-cosine": ("lr", "warmup_steps", "total_steps"),
    "inverse-sqrt-warmup": ("d_model", "warmup_steps"), "one-cycle-lr": ("max_lr", "total_steps"),
}


def _anneal(strategy: str, start: float, end: float, pct: float) -> float:
    """OneCycleLR's interpolation from start (pct 0) to end (pct 1): half a cosine, or a line."""
    if strategy == "cos":
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
    return (end - start) * pct + start


def _one_cycle(o: dict[str, Any], t: int) -> tuple[float, float]:
    """OneCycleLR's (rate, momentum) at scheduler step t, phase by phase as torch's get_lr."""
    n, pct = o["total_steps"], o["pct_start"]
    lr0 = o["max_lr"] / o["div_factor"]
    lows = {"initial": lr0, "max": o["max_lr"], "min": lr0 / o["final_div_factor"]}
    m_hi, m_lo = o["max_momentum"], o["base_momentum"]
    if o["three_phase"]:
        phases = [(pct * n - 1, "initial", "max", m_hi, m_lo), (2 * pct * n - 2, "max", "initial", m_lo, m_hi),
                  (n - 1, "initial", "min", m_hi, m_hi)]
    else:
        phases = [(pct * n - 1, "initial", "max", m_hi, m_lo), (n - 1, "max", "min", m_lo, m_hi)]
    start = 0.0
    for i, (end, a, b, ma, mb) in enumerate(phases):
        if t <= end or i == len(phases) - 1:
            frac = (t - start) / (end - start)
            return (_anneal(o["anneal_strategy"], lows[a], lows[b], frac),
                    _anneal(o["anneal_strategy"], ma, mb, frac))
        start = end
    raise AssertionError("unreachable: the last phase always answers")


def scheduled_lr(scheduler: str, o: dict[str, Any], t: int) -> float:
    """The rate of scheduler step t (0, 1, …) in closed form; ``o`` holds the checked options."""
    if scheduler == "step-lr":
        return o["lr"] * o["gamma"] ** (t // o["step_size"])
    if scheduler == "multi-step-lr":
        return o["lr"] * o["gamma"] ** bisect_right(o["milestones"], t)
    if scheduler == "exponential-lr":
        return o["lr"] * o["gamma"] ** t
    if scheduler == "cosine-annealing-lr":
        return o["eta_min"] + (o["lr"] - o["eta_min"]) * (1 + math.cos(math.pi * t / o["T_max"])) / 2
    if scheduler == "linear-warmup-cosine":
        w = o["warmup_steps"]
        if t < w:
            return o["lr"] * t / w
        progress = (t - w) / (o["total_steps"] - w)
        return o["eta_min"] + (o["lr"] - o["eta_min"]) * 0.5 * (1 + math.cos(math.pi * progress))
    if scheduler == "inverse-sqrt-warmup":
        s = t + 1 if o["step_num"] == "t+1" else max(t, 1)
        return o["lr"] * o["d_model"] ** -0.5 * min(s ** -0.5, s * o["warmup_steps"] ** -1.5)
    return _one_cycle(o, t)[0]


def _options(scheduler: str, steps: int, given: dict[str, Any]) -> dict[str, Any]:
    """The scheduler's options checked and completed with torch's defaults."""
    for name, value in given.items():
        if value is not None and name not in _OPTIONS[scheduler]:
            owners = [s for s in SCHEDULERS if name in _OPTIONS[s]]
            hint = (" (one-cycle-lr starts at max_lr / div_factor: give max_lr)" if name == "lr" else
                    f" (it applies to {', '.join(owners)})")
            raise ParamError(f"{name}: scheduler {scheduler!r} has no {name}{hint}")
    for name in _REQUIRED[scheduler]:
        if given.get(name) is None:
            raise ParamError(f"{name}: missing; scheduler {scheduler!r} needs it")
    o: dict[str, Any] = {}
    if "lr" in _OPTIONS[scheduler]:
        o["lr"] = number("lr", 1.0 if given["lr"] is None else given["lr"])
        if o["lr"] < 0:
            raise ParamError(f"lr: expected a learning rate ≥ 0, got {o['lr']:g}")
    if "gamma" in _OPTIONS[scheduler]:
        o["gamma"] = number("gamma", 0.1 if given["gamma"] is None else given["gamma"])
        if o["gamma"] <= 0:
            raise ParamError(f"gamma: expected a decay factor > 0, got {o['gamma']:g}")
    if scheduler == "step-lr":
        o["step_size"] = integer("step_size", given["step_size"], 1)
    if scheduler == "multi-step-lr":
        ms = given["milestones"]
        if not isinstance(ms, (list, tuple)) or not ms:
            raise ParamError(f"milestones: expected a list of steps, got {ms!r}")
        o["milestones"] = sorted(integer("milestones", m, 1) for m in ms)
    if scheduler == "cosine-annealing-lr":
        o["T_max"] = integer("T_max", given["T_max"], 1)
    if "eta_min" in _OPTIONS[scheduler]:
        o["eta_min"] = number("eta_min", 0.0 if given["eta_min"] is None else given["eta_min"])
        if o["eta_min"] < 0:
            raise ParamError(f"eta_min: expected a rate ≥ 0, got {o['eta_min']:g}")
    if "warmup_steps" in _OPTIONS[scheduler]:
        o["warmup_steps"] = integer("warmup_steps", given["warmup_steps"], 1)
    if scheduler == "linear-warmup-cosine":
        o["total_steps"] = integer("total_steps", given["total_steps"], 1)
        if o["total_steps"] <= o["warmup_steps"]:
            raise ParamError(f"total_steps: expected more than warmup_steps = {o['warmup_steps']}, "
                             f"got {o['total_steps']}")
        if steps > o["total_steps"]:
            raise ParamError(f"steps: the schedule ends at total_steps = {o['total_steps']}, got {steps} steps")
    if scheduler == "inverse-sqrt-warmup":
        o["d_model"] = integer("d_model", given["d_model"], 1)
        o["step_num"] = choice("step_num", "t+1" if given["step_num"] is None else given["step_num"],
                               ("t+1", "max(t,1)"))
    if scheduler == "one-cycle-lr":
        o.update(_one_cycle_options(steps, given))
    return o


def _one_cycle_options(steps: int, given: dict[str, Any]) -> dict[str, Any]:
    def num(name: str, default: float) -> float:
        return number(name, default if given[name] is None else given[name])

    o = {"max_lr": num("max_lr", 0.0), "total_steps": integer("total_steps", given["total_steps"], 1),
         "pct_start": num("pct_start", 0.3), "div_factor": num("div_factor", 25.0),
         "final_div_factor": num("final_div_factor", 1e4), "base_momentum": num("base_momentum", 0.85),
         "max_momentum": num("max_momentum", 0.95),
         "anneal_strategy": choice("anneal_strategy", "cos" if given["anneal_strategy"] is None
                                   else given["anneal_strategy"], ("cos", "linear")),
         "three_phase": boolean("three_phase", bool(given["three_phase"])),
         "cycle_momentum": boolean("cycle_momentum", True if given["cycle_momentum"] is None
                                   else given["cycle_momentum"])}
    if o["max_lr"] < 0:
        raise ParamError(f"max_lr: expected a learning rate ≥ 0, got {o['max_lr']:g}")
    for name in ("div_factor", "final_div_factor"):
        if o[name] <= 0:
            raise ParamError(f"{name}: expected a number > 0, got {o[name]:g}")
    n, pct = o["total_steps"], o["pct_start"]
    if not 0 <= pct <= 1:
        raise ParamError(f"pct_start: expected a fraction in [0, 1], got {pct:g}")
    # each phase must last: torch divides by its length (pct_start·total_steps − 1 for the first)
    ends = [pct * n - 1, 2 * pct * n - 2, n - 1] if o["three_phase"] else [pct * n - 1, n - 1]
    if any(b - a <= 0 for a, b in zip([0.0] + ends, ends)):
        raise ParamError(f"pct_start: pct_start·total_steps = {pct * n:g} leaves a phase of no length (the warm-up "
                         f"ends at step pct_start·total_steps − 1, the cycle at total_steps − 1 = {n - 1})")
    if steps > n:
        raise ParamError(f"steps: OneCycleLR runs total_steps = {n} steps, got {steps} (torch refuses more)")
    return o


def lr_schedule(scheduler: str, steps, *, lr=None, step_size=None, gamma=None, milestones=None, T_max=None,
                eta_min=None, warmup_steps=None, total_steps=None, d_model=None, step_num=None, max_lr=None,
                pct_start=None, anneal_strategy=None, div_factor=None, final_div_factor=None, three_phase=None,
                cycle_momentum=None, base_momentum=None, max_momentum=None, params=None, grads=None,
                optimizer: str = "sgd", momentum=None, betas=None, eps=None, alpha=None, weight_decay=None) -> Trace:
    """The learning rate of each of ``steps`` optimizer steps under a scheduler, as torch.optim.lr_scheduler
    (scheduler.step() after each optimizer.step()); with params and grads, the parameters after each step.

    The rate of step t = 0, 1, …, T − 1 (training step t + 1), with η₀ = lr:
      step-lr              η₀ γ^⌊t / step_size⌋                       (StepLR; gamma 0.1)
      multi-step-lr        η₀ γ^(number of milestones ≤ t)             (MultiStepLR; gamma 0.1)
      exponential-lr       η₀ γ^t                                      (ExponentialLR)
      cosine-annealing-lr  η_min + ½(η₀ − η_min)(1 + cos(π t / T_max))  (CosineAnnealingLR; eta_min 0; past
                                                                       T_max the cosine rises again, as torch's)
      linear-warmup-cosine η₀ t / warmup for t < warmup, then η_min + ½(η₀ − η_min)(1 + cos(π (t − warmup) /
                           (total_steps − warmup)))  (Hugging Face transformers' get_cosine_schedule_with_warmup;
                           eta_min as its min-lr variant)
      inverse-sqrt-warmup  η₀ d_model^−½ min(s^−½, s · warmup^−³ᐟ²) with s = t + 1 (step_num "t+1": the
                           Transformer's step_num counted from 1, Vaswani et al. 2017 eq. 3) or s = max(t, 1)
                           ("max(t,1)": the Annotated Transformer's LambdaLR); lr defaults to 1 (the rate itself)
      one-cycle-lr         OneCycleLR: from max_lr/div_factor up to max_lr over pct_start of total_steps, then down
                           to max_lr/(div_factor·final_div_factor) (three_phase: back to the start first); cosine or
                           linear anneal; with cycle_momentum the momentum (β₁ for Adam) moves the other way
                           between max_momentum and base_momentum.
    Shapes: params (d,), grads (T, d): the gradient of step t is row t (T = steps).
    optimizer and its options as engine.optim.optimizer_step (lr comes from the schedule).
    Returns lrs (T,), last_lr (the rate after T scheduler steps: get_last_lr(), the rate of step T),
    momentums (T,) for one-cycle-lr with cycle_momentum, and with grads params_per_step (T, d), params_new
    and the optimizer's state after the last step.
    Raises ParamError naming an option the scheduler lacks, a missing one or one out of range.
    """
    scheduler = choice("scheduler", scheduler, SCHEDULERS)
    T = integer("steps", steps, 1)
    if T > MAX_STEPS:
        raise ParamError(f"steps: at most {MAX_STEPS:,} steps, got {T:,}")
    given = {"lr": lr, "step_size": step_size, "gamma": gamma, "milestones": milestones, "T_max": T_max,
             "eta_min": eta_min, "warmup_steps": warmup_steps, "total_steps": total_steps, "d_model": d_model,
             "step_num": step_num, "max_lr": max_lr, "pct_start": pct_start, "anneal_strategy": anneal_strategy,
             "div_factor": div_factor, "final_div_factor": final_div_factor, "three_phase": three_phase,
             "cycle_momentum": cycle_momentum, "base_momentum": base_momentum, "max_momentum": max_momentum}
    o = _options(scheduler, T, given)
    cycled = scheduler == "one-cycle-lr" and o["cycle_momentum"]
    if cycled:
        pairs = [_one_cycle(o, t) for t in range(T + 1)]
        rates, moms = [r for r, _ in pairs], [m for _, m in pairs]
    else:
        rates, moms = [scheduled_lr(scheduler, o, t) for t in range(T + 1)], []
    trace = Trace(lrs=np.array(rates[:T]), last_lr=rates[T])
    if cycled:
        trace["momentums"] = np.array(moms[:T])
    if (params is None) != (grads is None):
        raise ParamError(f"{'grads' if grads is None else 'params'}: give params and grads together (the "
                         "parameters after the steps), or neither (the rates alone)")
    if params is None:
        for name, value in (("momentum", momentum), ("betas", betas), ("eps", eps), ("alpha", alpha),
                            ("weight_decay", weight_decay)):
            if value is not None:
                raise ParamError(f"{name}: an optimizer option needs params and grads to step")
        return trace
    trace.update(scheduled_steps(params, grads, rates[:T], moms[:T] if cycled else None, optimizer=optimizer,
                                 momentum=momentum, betas=betas, eps=eps, alpha=alpha, weight_decay=weight_decay))
    return trace


def scheduled_steps(params, grads, rates: list[float], momentums: list[float] | None = None, *, optimizer: str = "sgd",
                    momentum=None, betas=None, eps=None, alpha=None, weight_decay=None) -> Trace:
    """len(rates) optimizer steps (engine.optim's updates), step t at rate rates[t] and, where OneCycleLR cycles
    it, momentum (β₁ for adam, adamw) momentums[t]. Shapes: params (d,), grads (T, d).
    Returns params_per_step (T, d), params_new and the optimizer's state after the last step."""
    moms, T = momentums, len(rates)
    p = vector("params", params).copy()
    g_all = array("grads", grads, (1, 2))
    if g_all.ndim == 1:
        g_all = g_all[None, :]
    if g_all.shape != (T, p.shape[0]):
        raise ShapeError(f"grads: expected {T}×{p.shape[0]} (one row of {p.shape[0]} per step), got "
                         f"{'×'.join(map(str, g_all.shape))}")
    s = optimizer_settings(optimizer, lr=rates[0], momentum=momentum, betas=betas, eps=eps, alpha=alpha,
                           weight_decay=weight_decay)
    if moms is not None:
        if s.optimizer not in ("momentum", "nesterov", "adam", "adamw"):
            raise ParamError(f"cycle_momentum: OneCycleLR cycles the momentum (β₁ for Adam), which {optimizer!r} "
                             "has none of here (torch would switch momentum on); set cycle_momentum false or use "
                             "'momentum', 'nesterov', 'adam' or 'adamw'")
        if momentum is not None:
            raise ParamError("momentum: OneCycleLR with cycle_momentum sets the momentum each step (from "
                             "max_momentum to base_momentum and back); give those, or set cycle_momentum false")
    state = initial_state(s, p)
    history = []
    for t in range(T):
        st = s._replace(lr=rates[t])
        if moms is not None:
            st = st._replace(**({"momentum": moms[t]} if s.optimizer in ("momentum", "nesterov") else {"beta1": moms[t]}))
        p, state, _ = optimizer_update(st, p, g_all[t], state, t + 1)
        history.append(p.copy())
    return Trace(params_per_step=np.array(history), params_new=p, **state)
