"""Learning-rate schedules of `examprep train` (--lr-schedule), as a function of the step being
taken, s = 1, 2, …, S (S = --steps), W = --warmup:

    noam      factor · d_model^-0.5 · min(s^-0.5, s · W^-1.5)        Vaswani et al. 2017, §5.3
    constant  lr · s/W for s ≤ W, then lr
    linear    lr · s/W for s ≤ W, then lr · (1 − p)
    cosine    lr · s/W for s ≤ W, then lr · ½(1 + cos πp),  p = (s − W − 1)/(S − W)

The warm-up reaches the peak `lr` at step W; the decay starts from the peak at step W + 1 and
would reach 0 at step S + 1, so the last step still learns. These are torch's own schedulers
chained the usual way: SequentialLR([LinearLR(start_factor=1/W, total_iters=W − 1),
CosineAnnealingLR(T_max=S − W) or LinearLR(1, 0, total_iters=S − W)], milestones=[W]), with the
optimizer stepped before the scheduler (tests/train/test_controls.py holds them to it). No warm-up
(W = 0) starts the decay at the peak. Torch-free, so the CLI can check a schedule before torch loads.
"""
from __future__ import annotations

import math
from typing import Optional

SCHEDULES = ("noam", "cosine", "linear", "constant")
DECAYING = ("cosine", "linear")            # these need --steps: they decay over the whole run
DEFAULT_PEAK_LR = 1e-3                     # --lr of cosine, linear and constant when not given


def noam_lr(step: int, d_model: int, warmup: int, factor: float) -> float:
    """The paper's schedule: linear warm-up for `warmup` steps, then decay as 1/√step."""
    step = max(step, 1)
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def lr_at(step: int, *, schedule: str, warmup: int, d_model: int = 0, lr_factor: float = 0.0,
          lr: Optional[float] = None, steps: Optional[int] = None) -> float:
    """The learning rate of step `step` (1-based) under --lr-schedule `schedule`."""
    if schedule == "noam":
        return noam_lr(step, d_model, warmup, lr_factor)
    peak = DEFAULT_PEAK_LR if lr is None else lr
    if step <= warmup:
        return peak * step / warmup
    if schedule == "constant":
        return peak
    if steps is None:
        raise ValueError(f"the {schedule} schedule needs the run's total steps")
    progress = min(max((step - warmup - 1) / max(steps - warmup, 1), 0.0), 1.0)
    if schedule == "linear":
        return peak * (1.0 - progress)
    if schedule == "cosine":
        return peak * 0.5 * (1.0 + math.cos(math.pi * progress))
    raise ValueError(f"unknown learning-rate schedule {schedule!r}")
