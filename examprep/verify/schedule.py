"""Torch reference of learning-rate schedules: torch.optim.lr_scheduler's classes stepped after torch.optim's
optimizers, as a training loop calls them. The schedules torch lacks are LambdaLR with the factor their
sources write: Hugging Face transformers' get_cosine_schedule_with_warmup (its min-lr variant for eta_min;
src/transformers/optimization.py) and the Transformer's rate as the Annotated Transformer's rate()
(Vaswani et al. 2017, eq. 3)."""
from __future__ import annotations

import math

import numpy as np
import torch
from torch.optim import lr_scheduler as sched

from examprep.verify._torch import Reference, as_numpy, normal, pick, tensor

_CLASSES = {"sgd": torch.optim.SGD, "momentum": torch.optim.SGD, "nesterov": torch.optim.SGD,
            "rmsprop": torch.optim.RMSprop, "adagrad": torch.optim.Adagrad, "adam": torch.optim.Adam,
            "adamw": torch.optim.AdamW}
_STATE = {"velocity": "momentum_buffer", "square_avg": "square_avg", "sum": "sum", "exp_avg": "exp_avg",
          "exp_avg_sq": "exp_avg_sq"}


def _get(p: dict, name: str, default):
    return default if p.get(name) is None else p[name]


def _optimizer(p: dict, w: torch.Tensor) -> torch.optim.Optimizer:
    name = p.get("optimizer") or "sgd"
    lr = _get(p, "lr", 1.0)
    kw: dict = {}
    for key in ("eps", "weight_decay", "alpha"):
        if p.get(key) is not None:
            kw[key] = p[key]
    if p.get("betas") is not None:
        kw["betas"] = tuple(p["betas"])
    if name in ("momentum", "nesterov"):
        kw["momentum"] = _get(p, "momentum", 0.9)
        kw["nesterov"] = name == "nesterov"
    return _CLASSES[name]([w], lr=lr, **kw)


def _warmup_cosine(p: dict):
    """get_cosine_schedule_with_warmup's factor (num_cycles 0.5), with the min-lr variant's floor."""
    w, total = p["warmup_steps"], p["total_steps"]
    floor = _get(p, "eta_min", 0.0) / p["lr"]

    def factor(step: int) -> float:
        if step < w:
            return float(step) / float(max(1, w))
        progress = float(step - w) / float(max(1, total - w))
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * 0.5 * 2.0 * progress))) * (1 - floor) + floor
    return factor


def _transformer_rate(p: dict):
    """The Annotated Transformer's rate(step, model_size, factor=1, warmup) (step 0 read as 1), or the
    paper's step count from 1 for step_num "t+1"."""
    d, w = p["d_model"], p["warmup_steps"]

    def rate(step: int) -> float:
        step = step + 1 if _get(p, "step_num", "t+1") == "t+1" else (1 if step == 0 else step)
        return d ** (-0.5) * min(step ** (-0.5), step * w ** (-1.5))
    return rate


def _scheduler(p: dict, opt: torch.optim.Optimizer) -> sched.LRScheduler:
    name = p["scheduler"]
    if name == "step-lr":
        return sched.StepLR(opt, p["step_size"], gamma=_get(p, "gamma", 0.1))
    if name == "multi-step-lr":
        return sched.MultiStepLR(opt, p["milestones"], gamma=_get(p, "gamma", 0.1))
    if name == "exponential-lr":
        return sched.ExponentialLR(opt, p["gamma"])
    if name == "cosine-annealing-lr":
        return sched.CosineAnnealingLR(opt, p["T_max"], eta_min=_get(p, "eta_min", 0.0))
    if name == "linear-warmup-cosine":
        return sched.LambdaLR(opt, _warmup_cosine(p))
    if name == "inverse-sqrt-warmup":
        return sched.LambdaLR(opt, _transformer_rate(p))
    return sched.OneCycleLR(opt, p["max_lr"], total_steps=p["total_steps"], pct_start=float(_get(p, "pct_start", 0.3)),
                            anneal_strategy=_get(p, "anneal_strategy", "cos"),
                            cycle_momentum=_get(p, "cycle_momentum", True), base_momentum=_get(p, "base_momentum", 0.85),
                            max_momentum=_get(p, "max_momentum", 0.95), div_factor=_get(p, "div_factor", 25.0),
                            final_div_factor=_get(p, "final_div_factor", 1e4), three_phase=bool(p.get("three_phase")))


def ref_lr_schedule(p: dict) -> dict:
    with_grads = p.get("grads") is not None
    w = tensor(p["params"] if with_grads else [0.0], grad=True)
    opt = _optimizer(p, w)
    s = _scheduler(p, opt)
    cycled = p["scheduler"] == "one-cycle-lr" and _get(p, "cycle_momentum", True)
    grads = np.atleast_2d(np.asarray(p["grads"], dtype=float)) if with_grads else None
    lrs, moms, history = [], [], []
    for t in range(p["steps"]):
        group = opt.param_groups[0]
        lrs.append(group["lr"])
        if cycled:
            moms.append(group["betas"][0] if "betas" in group else group["momentum"])
        if with_grads:
            w.grad = tensor(grads[t])
            opt.step()
            history.append(as_numpy(w).copy())
        else:
            opt.step()            # no gradient: nothing moves, but torch wants the optimizer stepped first
        s.step()
    out = {"lrs": np.array(lrs), "last_lr": s.get_last_lr()[0]}
    if cycled:
        out["momentums"] = np.array(moms)
    if with_grads:
        out["params_per_step"] = np.array(history)
        out["params_new"] = history[-1]
    return out


def random_lr_schedule(rng: np.random.Generator) -> dict:
    """A random valid lr-schedule instance (a third with gradients to step)."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    name = pick(rng, ["step-lr", "multi-step-lr", "exponential-lr", "cosine-annealing-lr", "linear-warmup-cosine",
                      "inverse-sqrt-warmup", "one-cycle-lr"])
    steps = ri(1, 12)
    p: dict = {"scheduler": name, "steps": steps}
    lr = pick(rng, [0.1, 0.5, 1.0, 0.01])
    if name == "step-lr":
        p.update(lr=lr, step_size=ri(1, 4), gamma=pick(rng, [0.1, 0.5, 0.9]))
    elif name == "multi-step-lr":
        p.update(lr=lr, milestones=sorted({ri(1, 10) for _ in range(ri(1, 3))}), gamma=pick(rng, [0.1, 0.5]))
    elif name == "exponential-lr":
        p.update(lr=lr, gamma=pick(rng, [0.9, 0.5, 0.99]))
    elif name == "cosine-annealing-lr":
        p.update(lr=lr, T_max=ri(1, 8), eta_min=pick(rng, [0.0, lr / 10]))
    elif name == "linear-warmup-cosine":
        w = ri(1, 4)
        p.update(lr=lr, warmup_steps=w, total_steps=max(steps, w + ri(1, 8)), eta_min=pick(rng, [0.0, lr / 10]))
    elif name == "inverse-sqrt-warmup":
        p.update(d_model=pick(rng, [64, 512]), warmup_steps=ri(1, 6), step_num=pick(rng, ["t+1", "max(t,1)"]))
        if rng.random() < 0.5:
            p["lr"] = pick(rng, [1.0, 2.0])
    else:
        total = steps + ri(0, 6)
        pct = pick(rng, [0.3, 0.25, 0.5])
        if pct * total <= 1 or 2 * pct * total - 2 >= total - 1:
            pct = 0.5 if total >= 5 else 1.0
        p.update(max_lr=lr, total_steps=max(total, 5), pct_start=pct, anneal_strategy=pick(rng, ["cos", "linear"]),
                 three_phase=bool(rng.random() < 0.3) and pct < 0.5)
        if pct >= 1.0:
            p["pct_start"] = 0.5
    if rng.random() < 0.4:
        d = ri(1, 3)
        optimizers = ["momentum", "nesterov", "adam", "adamw"] if name == "one-cycle-lr" else \
            ["sgd", "momentum", "nesterov", "rmsprop", "adagrad", "adam", "adamw"]
        p.update(params=normal(rng, d), grads=normal(rng, steps, d), optimizer=pick(rng, optimizers))
        if rng.random() < 0.3:
            p["weight_decay"] = 0.1
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "lr-schedule": Reference(ref_lr_schedule, random_lr_schedule),
}
