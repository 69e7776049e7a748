"""The trainer's number formats and compiling: which --precision a device takes, the fp16 gradient
scaler, a note when bf16 is slower than fp32 on this CPU, and how many graphs torch.compile has
built (a step that built one is timed as compiling, not training)."""
from __future__ import annotations

import math
import time
from typing import Optional

import torch

from examprep.checkpoints.errors import DeviceError

PROBE_SIZE, PROBE_ROUNDS = 256, 3      # the bf16 probe: three 256×256 matmuls each way, about a millisecond


def check_precision_device(precision: str, device: torch.device) -> None:
    """fp16 needs a GPU: CPU autocast in float16 has no fast kernels and torch's loss scaling is
    made for CUDA; refused in one line."""
    if precision == "fp16" and device.type != "cuda":
        raise DeviceError("--precision fp16 needs a CUDA GPU (with torch.amp.GradScaler); on the CPU use fp32 or bf16")


def make_scaler(precision: str, device: torch.device) -> Optional[torch.amp.GradScaler]:
    """torch.amp.GradScaler for fp16 (gradients scaled up so that they do not underflow in float16,
    a step skipped and the scale lowered when they overflow); None for every other precision."""
    if precision != "fp16":
        return None
    return torch.amp.GradScaler(device.type)



def optimizer_step(optimizer: torch.optim.Optimizer, parameters, clip: float,
                   scaler: Optional[torch.amp.GradScaler]) -> torch.Tensor:
    """Clip the gradients' global norm to `clip` (0: no clipping) and step. With a GradScaler the
    gradients are unscaled first and a step whose gradients overflowed in fp16 is skipped (the
    scale then drops); its norm is returned as 0, not inf, as it is no divergence. Returns the
    norm before clipping, on the device."""
    if scaler:
        scaler.unscale_(optimizer)
    norm = torch.nn.utils.clip_grad_norm_(parameters, clip if clip > 0 else math.inf)
    if scaler:
        scaler.step(optimizer)
        scaler.update()
        return torch.nan_to_num(norm, nan=0.0, posinf=0.0)
    optimizer.step()
    return norm

def matmul_seconds(dtype: torch.dtype, size: int = PROBE_SIZE, rounds: int = PROBE_ROUNDS) -> float:
    """The best of `rounds` timings of one size×size matmul in `dtype` (after one warm-up)."""
    a = torch.ones(size, size, dtype=dtype)
    a @ a
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t0)
    return best


def bf16_slower_note(precision: str, device: torch.device, probe=None) -> Optional[str]:
    """A one-line note when --precision bf16 runs on a CPU that multiplies bf16 matrices more slowly
    than fp32 ones (no native bf16: autocast then costs time and saves nothing); None otherwise.
    It only informs: training goes on in bf16 as asked."""
    if precision != "bf16" or device.type != "cpu":
        return None
    probe = probe or matmul_seconds
    fp32, bf16 = probe(torch.float32), probe(torch.bfloat16)
    if bf16 <= fp32:
        return None
    return (f"--precision bf16: this CPU multiplies bf16 matrices {bf16 / fp32:.1f}x slower than fp32 "
            f"(a {PROBE_SIZE}x{PROBE_SIZE} matmul); fp32 may train faster here")


def compiled_graphs() -> int:
    """How many graphs torch.compile (dynamo) has built in this process so far."""
    return int(torch._dynamo.utils.counters["stats"]["unique_graphs"])     # torch loads _dynamo on first use
