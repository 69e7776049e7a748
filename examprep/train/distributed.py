"""Device choice and torch.distributed set-up: one process, or several under `torchrun`.

torchrun sets RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE; we then join the process group
(NCCL on GPUs, gloo on CPUs) and wrap the model in DistributedDataParallel. Nothing here moves
data between processes by hand.
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Optional

import torch
import torch.distributed as dist

from examprep.checkpoints.errors import DeviceError

DEVICES = ("auto", "cpu", "cuda")


@dataclass
class Dist:
    rank: int
    world: int
    local_rank: int
    device: torch.device

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        return self.world > 1

    def sum(self, values: list[float]) -> list[float]:
        """Element-wise sum over all processes (one collective)."""
        if not self.enabled:
            return values
        t = torch.tensor(values, dtype=torch.float64, device=self.device)
        dist.all_reduce(t)
        return t.tolist()

    def broadcast(self, values: list[float]) -> list[float]:
        """Rank 0's values, on every process."""
        if not self.enabled:
            return values
        t = torch.tensor(values, dtype=torch.float64, device=self.device)
        dist.broadcast(t, src=0)
        return t.tolist()

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()


def resolve_device(choice: str) -> torch.device:
    """auto: CUDA if a GPU is visible, else CPU. cuda without a GPU is an error."""
    if choice not in DEVICES:
        raise DeviceError(f"--device {choice!r} is not one of {', '.join(DEVICES)}")
    if choice == "cuda" and not torch.cuda.is_available():
        raise DeviceError("--device cuda: no CUDA GPU is visible to PyTorch "
                          f"(torch {torch.__version__}, cuda available: no); use --device cpu or auto")
    if choice == "cuda" or (choice == "auto" and torch.cuda.is_available()):
        return torch.device("cuda")
    return torch.device("cpu")


def busy_cores(window: float = 0.25) -> float:
    """How many cores other programs keep busy right now: the non-idle share of all CPU time in
    /proc/stat over `window` seconds, times the cores (Linux; elsewhere the 1-minute load average)."""
    cores = os.cpu_count() or 1

    def sample() -> tuple[int, int]:
        with open("/proc/stat", encoding="ascii") as f:
            values = [int(v) for v in f.readline().split()[1:]]
        return sum(values), values[3] + values[4]          # total, idle + iowait

    try:
        total0, idle0 = sample()
        time.sleep(window)
        total1, idle1 = sample()
        if total1 > total0:
            return cores * (1.0 - (idle1 - idle0) / (total1 - total0))
    except (OSError, ValueError, IndexError):
        pass
    try:
        return float(os.getloadavg()[0])
    except OSError:
        return 0.0


def cpu_threads(requested: int = 0, processes: int = 1) -> int:
    """Threads for one CPU process: `requested` if above 0, else (auto) the cores that other
    programs leave free (`busy_cores`), shared by the `processes` on this machine, at least one.

    PyTorch's OpenMP threads wait for one another at every operation, so a thread whose core
    another program keeps busy stalls every step: on a 2-core machine with another job running,
    two threads trained several times slower than one.
    """
    if requested > 0:
        return requested
    cores = os.cpu_count() or 1
    free = min(cores, round(cores - busy_cores()))
    return max(1, free // processes)


@contextmanager
def one_thread() -> Iterator[None]:
    """One torch thread for the block, the caller's count restored after: for commands whose matrices
    (one sentence, a few random instances) are far too small for more to pay off; on a busy 2-core
    machine attention-map's waiting threads made it 10-20x slower."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def setup(choice: str, threads: Optional[int] = None) -> Dist:
    """Pick the device and, under torchrun, join the process group. On the CPU, threads: None
    leaves torch's thread count alone, 0 chooses it (`cpu_threads`), n > 0 sets it."""
    device = resolve_device(choice)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        if device.type == "cpu" and threads is not None:
            torch.set_num_threads(cpu_threads(threads))
        return Dist(0, 1, 0, device)
    rank, local = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", str(world)))
    if device.type == "cuda":
        if torch.cuda.device_count() < local_world:
            raise DeviceError(f"torchrun started {local_world} processes on this machine but only "
                              f"{torch.cuda.device_count()} GPU(s) are visible; use --nproc_per_node "
                              f"{torch.cuda.device_count()}")
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
        backend = "nccl"
    else:
        # Share the cores: each process gets its part instead of all of them fighting for all.
        torch.set_num_threads(cpu_threads(threads or 0, local_world))
        backend = "gloo"
    if not dist.is_initialized():
        dist.init_process_group(backend)
    return Dist(rank, world, local, device)


def teardown(d: Dist) -> None:
    if d.enabled and dist.is_initialized():
        dist.destroy_process_group()
