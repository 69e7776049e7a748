"""Learning-rate schedules by hand, as torch.optim.lr_scheduler steps them (scheduler.step() after each
optimizer.step()): the rate of each epoch, the rate the scheduler holds afterwards, and SGD with momentum
stepping at the scheduled rates.

Level 1: StepLR, MultiStepLR or ExponentialLR with γ = 0.5 or 0.1: the rates of six epochs and the rate
after the sixth scheduler.step().
Level 2: CosineAnnealingLR (with eta_min) or a linear warm-up followed by a cosine (Hugging Face's
get_cosine_schedule_with_warmup): the rate of every step.
Level 3: three steps of SGD with momentum (torch.optim.SGD, μ = 0.9) under StepLR: the rates and the
parameters after step 3.
Calculator-free: the cosines are those of π/3 and 2π/3 (T_max or the cosine's length 2 or 3 steps): ±½.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, jsonable, steps_from
from examprep.problem import Part

_LOOP = ("for epoch in range(T): train(...) (optimizer.step() inside), then scheduler.step() — so epoch t uses the "
         "rate the scheduler holds after t calls of scheduler.step(), starting with the optimizer's lr.")


@generator("lr-schedule", title="Learning-rate schedules: StepLR, MultiStepLR, ExponentialLR, cosine, warm-up",
           syllabus="Optimisation: learning-rate schedules (torch.optim.lr_scheduler), step decay, cosine annealing, "
                    "warm-up", version=1)
def lr_schedule(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    if difficulty == 1:
        return _decay(rng)
    if difficulty == 2:
        return _cosine(rng, calculator_free)
    return _stepping(rng)


def _rates_part(t, known, prompt: str, points: float, minutes: float) -> Part:
    n = len(t.lrs)
    return Part("lrs", prompt, "vector", jsonable(t.lrs), shape=(n,), points=points, minutes=minutes,
                misconceptions=known.of("lrs", jsonable),
                hint="Step 0 uses the initial rate; scheduler.step() after each step sets the next one.")


def _decay(rng: Stream) -> Draft:
    name = rng.choice(["step-lr", "multi-step-lr", "exponential-lr"])
    lr = float(rng.choice([0.1, 0.2, 0.4, 0.8]))
    gamma = float(rng.choice([0.5, 0.1]))
    params: dict = {"scheduler": name, "steps": 6, "lr": lr, "gamma": gamma}
    if name == "step-lr":
        params["step_size"] = rng.integer(2, 3)
        made = f"StepLR(optimizer, step_size={params['step_size']}, gamma={gamma:g})"
    elif name == "multi-step-lr":
        first = rng.integer(1, 3)
        params["milestones"] = [first, rng.integer(first + 1, 5)]
        made = f"MultiStepLR(optimizer, milestones={params['milestones']}, gamma={gamma:g})"
    else:
        gamma = 0.5
        params["gamma"] = gamma
        made = "ExponentialLR(optimizer, gamma=0.5)"
    known = solve.mistakes("lr-schedule", params)
    t = known.trace()
    steps = solve.schedule.schedule_steps(known.params, t)
    parts = [
        _rates_part(t, known, "The learning rate of each epoch t = 0, 1, …, 5.", 2, 3),
        Part("last_lr", "The rate scheduler.get_last_lr() returns after the sixth scheduler.step().", "number",
             float(t.last_lr), points=1, minutes=1, misconceptions=known.of("last_lr")),
    ]
    statement = [Text(f"An optimizer starts with lr = {lr:g} and the scheduler {made} (torch.optim.lr_scheduler). "
                      f"Six epochs of training: {_LOOP}")]
    return Draft(title="A learning-rate schedule, epoch by epoch", params=params, statement=statement, parts=parts,
                 solution=steps_from(steps.rates, "lrs") + steps_from(steps.rates, "last_lr", prefix="Last rate: "),
                 conventions={"steps": "scheduler.step() after optimizer.step(), as torch.optim.lr_scheduler"},
                 variant=name)


def _cosine(rng: Stream, calculator_free: bool) -> Draft:
    lr = float(rng.choice([0.1, 0.2, 0.4]))
    eta_min = float(rng.choice([0.0, lr / 10]))
    if rng.chance(1, 2):
        t_max = rng.choice([2, 3] if calculator_free else [3, 4, 6])
        params = {"scheduler": "cosine-annealing-lr", "steps": t_max + 1, "lr": lr, "T_max": t_max, "eta_min": eta_min}
        made = f"CosineAnnealingLR(optimizer, T_max={t_max}, eta_min={eta_min:g})"
        rule = Math(r"\eta_t = \eta_{\min} + \tfrac12 (\eta_0 - \eta_{\min})\left(1 + \cos\frac{\pi t}{T_{\max}}\right)")
    else:
        warmup = rng.integer(2, 3)
        total = warmup + (rng.choice([2, 3]) if calculator_free else rng.choice([4, 5]))
        params = {"scheduler": "linear-warmup-cosine", "steps": total, "lr": lr, "warmup_steps": warmup,
                  "total_steps": total, "eta_min": eta_min}
        made = (f"a linear warm-up over {warmup} steps from 0, then a cosine from lr down to {eta_min:g} at step {total} "
                "(Hugging Face's get_cosine_schedule_with_warmup, with its minimum)")
        rule = Math(r"\eta_t = \eta_0 \frac{t}{w}\ (t < w),\quad \eta_{\min} + \tfrac12 (\eta_0 - \eta_{\min})"
                    r"\left(1 + \cos \frac{\pi (t - w)}{T - w}\right)\ (t \ge w)")
    known = solve.mistakes("lr-schedule", params)
    t = known.trace()
    n = params["steps"]
    steps = solve.schedule.schedule_steps(known.params, t)
    parts = [_rates_part(t, known, f"The learning rate of each step t = 0, 1, …, {n - 1}.", 3, 1 + 0.7 * n)]
    statement = [Text(f"An optimizer starts with lr = {lr:g} under {made}, stepped once per step: {_LOOP}"), rule]
    return Draft(title="Cosine annealing, step by step", params=params, statement=statement, parts=parts,
                 solution=steps_from(steps.rates, "lrs"),
                 conventions={"steps": "scheduler.step() after optimizer.step(), as torch.optim.lr_scheduler"},
                 variant=params["scheduler"])


def _stepping(rng: Stream) -> Draft:
    p0 = rng.decimals(-2, 2, 0.5, (2,), nonzero=True)
    g = rng.decimals(-2, 2, 0.5, (3, 2), nonzero=True)
    lr = float(rng.choice([0.1, 0.2]))
    gamma = float(rng.choice([0.5, 0.1]))
    step_size = rng.integer(1, 2)
    params = {"scheduler": "step-lr", "steps": 3, "lr": lr, "step_size": step_size, "gamma": gamma,
              "params": jsonable(p0), "grads": jsonable(g), "optimizer": "momentum", "momentum": 0.9}
    known = solve.mistakes("lr-schedule", params)
    t = known.trace()
    if np.allclose(t.params_new, p0, atol=0.02):
        raise Degenerate("the steps cancel: nothing to see")
    steps = solve.schedule.schedule_steps(known.params, t)
    parts = [
        _rates_part(t, known, "The learning rate of each of the three steps.", 1, 1.5),
        Part("params_new", "The parameters after the third step.", "vector", jsonable(t.params_new), shape=(2,), points=3,
             minutes=5, misconceptions=known.of("params_new", jsonable),
             hint="v ← 0.9 v + g (v = g at the first step), then p ← p − η_t v with the step's own rate."),
    ]
    statement = [Text(f"SGD with momentum, torch.optim.SGD(params, lr={lr:g}, momentum=0.9) — v ← μv + g (v₁ = g₁), "
                      f"p ← p − η v — under StepLR(optimizer, step_size={step_size}, gamma={gamma:g}). Three steps "
                      f"with the gradients below: {_LOOP}"),
                 Matrix("p_0", jsonable(p0)), Matrix("g", jsonable(g), row_labels=["step 1", "step 2", "step 3"])]
    solution = steps_from(steps.rates, "lrs") + steps_from(steps.steps, "params_new", prefix="Momentum: ")
    solution += steps_from(steps.state, "params_new")
    return Draft(title="SGD with momentum under StepLR", params=params, statement=statement, parts=parts,
                 solution=solution, conventions={"momentum": "v ← μv + g, p ← p − η_t v (torch.optim.SGD, dampening 0)",
                                                 "steps": "scheduler.step() after optimizer.step()"},
                 variant="momentum")
