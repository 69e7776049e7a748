"""Helpers of the torch references: a table row (Reference), float64 tensors in and numpy arrays
out, the activations by name, the draws of random instances (sizes small, values of order 1) and
TensorFlow's "SAME" padding."""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F



class Reference(NamedTuple):
    """A solve topic's row in its area's TOPICS table (verify/<area>.py)."""

    reference: Callable[[dict], dict]                   # solve params → {answer name: numpy value}
    random: Callable[[np.random.Generator], dict]       # a random valid params dict


DTYPE = torch.float64
DTYPE_OF_BYTES = {2: torch.bfloat16, 4: torch.float32, 8: torch.float64}


def tensor(x: Any, grad: bool = False) -> torch.Tensor:
    return torch.tensor(np.asarray(x, dtype=np.float64), dtype=DTYPE, requires_grad=grad)


def as_numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


def dims(v: Any, n: int) -> list[int]:
    return list(v) if isinstance(v, (list, tuple)) else [v] * n


ACTS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": F.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh,
    "leaky-relu": lambda a: F.leaky_relu(a, 0.01), "gelu": F.gelu,
}


def normal(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> list:
    return (rng.standard_normal(shape) * scale).round(6).tolist()


def pick(rng: np.random.Generator, options: list) -> Any:
    return options[int(rng.integers(len(options)))]


def tf_same(n: int, k: int, s: int, d: int) -> tuple[int, int]:
    """TensorFlow's "SAME" padding (tf.nn.convolution docs), (before, after) for one dimension."""
    want = -(-n // s)
    total = max((want - 1) * s + d * (k - 1) + 1 - n, 0)
    return total // 2, total - total // 2
