"""Device choice and torch.distributed set-up: one process, or several under `torchrun`.

torchrun sets RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE; we then join the process group
(NCCL on GPUs, gloo on CPUs) and wrap the model in DistributedDataParallel. Nothing here moves
data between processes by hand.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from examprep.train.errors import DeviceError

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


def setup(choice: str) -> Dist:
    """Pick the device and, under torchrun, join the process group."""
    device = resolve_device(choice)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
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
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // local_world))
        backend = "gloo"
    if not dist.is_initialized():
        dist.init_process_group(backend)
    return Dist(rank, world, local, device)


def teardown(d: Dist) -> None:
    if d.enabled and dist.is_initialized():
        dist.destroy_process_group()
