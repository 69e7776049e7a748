"""LoRA (Hu et al. 2021): a frozen weight W₀ (d×k) plus a trained low-rank update, W = W₀ + (α/r)·B A
with A (r×k) and B (d×r); B starts at zero, so the adapted model starts as the base model, and A
as in the paper's code (Kaiming-uniform, a = √5).

The model fuses its projections (examprep.train.layers.MultiHeadAttention): self-attention's
``qkv_proj`` holds the rows [q; k; v], cross-attention has ``q_proj`` and a fused ``kv_proj``
holding [k; v]. An adapter on q, k or v acts on its d_model rows of the fused weight (a
parametrization: the layer's code is unchanged), o on ``out_proj``; each adapted matrix is
d = k = d_model, so r(d + k) trainable numbers each, as ``examprep solve lora`` counts them.
``merge`` writes W₀ + (α/r)·B A into the same rows: the plain model, with the adapter's outputs.

Adapter files: ``adapter.safetensors`` holds ``<module>.<target>.lora_A`` and ``….lora_B`` for
each adapted matrix (e.g. ``encoder.layers.0.self_attn.q.lora_A``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import torch
from torch import Tensor, nn
from torch.nn.utils import parametrize

from examprep.checkpoints.errors import ConfigError
from examprep.train.layers import MultiHeadAttention

from examprep.train.options import LORA_TARGETS as TARGETS, check_rank, parse_targets  # noqa: F401  (the API)


class LowRankRows(nn.Module):
    """The parametrization W ↦ W + (α/r)·B A on blocks of rows of W (one block per adapted target)."""

    def __init__(self, blocks: dict[str, tuple[int, int]], in_features: int, rank: int, alpha: float):
        super().__init__()
        self.blocks, self.rank, self.alpha, self.scale = blocks, rank, alpha, alpha / rank
        self.lora_A = nn.ParameterDict()
        self.lora_B = nn.ParameterDict()
        for name, (start, stop) in blocks.items():
            a = torch.empty(rank, in_features)
            nn.init.kaiming_uniform_(a, a=math.sqrt(5))
            self.lora_A[name] = nn.Parameter(a)
            self.lora_B[name] = nn.Parameter(torch.zeros(stop - start, rank))

    def delta(self, like: Tensor) -> Tensor:
        out = like.new_zeros(like.shape)
        for name, (start, stop) in self.blocks.items():
            out[start:stop] = self.scale * (self.lora_B[name] @ self.lora_A[name])
        return out

    def forward(self, weight: Tensor) -> Tensor:
        return weight + self.delta(weight)


@dataclass
class Adapted:
    """What `add_adapters` did: the adapted matrices by name ('<module>.<target>') with their shape."""

    rank: int
    alpha: float
    targets: tuple[str, ...]
    matrices: dict[str, tuple[int, int]]
    modules: dict[str, LowRankRows]          # '<module path>.<weight owner>' -> parametrization

    @property
    def count(self) -> int:
        return len(self.matrices)

    def parameters(self) -> Iterable[nn.Parameter]:
        for m in self.modules.values():
            yield from m.parameters()

    @property
    def trainable(self) -> int:
        return sum(p.numel() for p in self.parameters())

    @property
    def full(self) -> int:
        """What full fine-tuning of the same matrices trains: Σ d·k."""
        return sum(d * k for d, k in self.matrices.values())

    def state_dict(self) -> dict[str, Tensor]:
        """'<attention module>.<target>.lora_A' / '.lora_B' -> tensor (contiguous, detached)."""
        out = {}
        for key, m in self.modules.items():
            attn = key.rsplit(".", 1)[0]
            for name in m.blocks:
                out[f"{attn}.{name}.lora_A"] = m.lora_A[name].detach().contiguous()
                out[f"{attn}.{name}.lora_B"] = m.lora_B[name].detach().contiguous()
        return out

    def load_state_dict(self, tensors: dict[str, Tensor]) -> None:
        expected = self.state_dict()
        missing = sorted(set(expected) - set(tensors))
        extra = sorted(set(tensors) - set(expected))
        if missing or extra:
            what = f"lacks {missing[0]!r}" if missing else f"holds {extra[0]!r}, which these targets do not adapt"
            raise ConfigError(f"the adapter {what}")
        for key, m in self.modules.items():
            attn = key.rsplit(".", 1)[0]
            for name in m.blocks:
                for part, table in (("lora_A", m.lora_A), ("lora_B", m.lora_B)):
                    t = tensors[f"{attn}.{name}.{part}"]
                    if tuple(t.shape) != tuple(table[name].shape):
                        raise ConfigError(f"the adapter's {attn}.{name}.{part} is {list(t.shape)}, expected "
                                          f"{list(table[name].shape)}")
                    with torch.no_grad():
                        table[name].copy_(t)


def _owners(attn: MultiHeadAttention, targets: tuple[str, ...]) -> dict[str, dict[str, tuple[int, int]]]:
    """weight owner attribute -> {target: (first row, end row)} for one attention block."""
    d = attn.n_heads * attn.d_head
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for t in targets:
        if t == "o":
            out.setdefault("out_proj", {})[t] = (0, d)
        elif attn.cross:
            if t == "q":
                out.setdefault("q_proj", {})[t] = (0, d)
            else:
                out.setdefault("kv_proj", {})[t] = (0, d) if t == "k" else (d, 2 * d)
        else:
            i = "qkv".index(t)
            out.setdefault("qkv_proj", {})[t] = (i * d, (i + 1) * d)
    return out


def add_adapters(model: nn.Module, rank: int, alpha: float, targets: tuple[str, ...]) -> Adapted:
    """Freeze every parameter of model and add LoRA adapters to the targets of every attention block
    (encoder self-, decoder self- and cross-attention). Returns what was added; only its
    parameters require gradients."""
    for p in model.parameters():
        p.requires_grad_(False)
    matrices, modules = {}, {}
    for path, attn in [(n, m) for n, m in model.named_modules() if isinstance(m, MultiHeadAttention)]:
        for owner, blocks in _owners(attn, targets).items():
            linear = getattr(attn, owner)
            lr = LowRankRows(blocks, linear.in_features, rank, alpha).to(linear.weight.device)
            parametrize.register_parametrization(linear, "weight", lr)
            modules[f"{path}.{owner}"] = lr
            for t, (start, stop) in blocks.items():
                matrices[f"{path}.{t}"] = (stop - start, linear.in_features)
    if not matrices:
        raise ConfigError("this model has no attention block to adapt")
    return Adapted(rank, alpha, targets, matrices, modules)


def merge(model: nn.Module) -> nn.Module:
    """Write W₀ + (α/r)·B A into every adapted weight and remove the adapters: a plain model whose
    state dict is the base model's (in place; returns model)."""
    for m in list(model.modules()):
        if parametrize.is_parametrized(m, "weight"):
            parametrize.remove_parametrizations(m, "weight", leave_parametrized=True)
    for p in model.parameters():
        p.requires_grad_(True)
    return model


__all__ = ["Adapted", "LowRankRows", "TARGETS", "add_adapters", "check_rank", "merge", "parse_targets"]
