"""Torch references of counting: sum(p.numel()) of the real torch modules (Keras's documented formulas
for Keras), PEFT-style LoRA modules, and the bytes a real optimizer step keeps."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from examprep.verify._torch import DTYPE, DTYPE_OF_BYTES, Reference, as_numpy, normal, pick, tensor
from examprep.verify.network import random_network_shapes, ref_network_shapes


def ref_param_count(p: dict) -> dict:
    if p["layer"] == "network":          # the network run as torch modules (verify/network.py)
        return {"count": ref_network_shapes({**p, "framework": p.get("framework", "pytorch")})["total_params"]}
    """Counts sum(p.numel()) of the real torch module (PyTorch) or Keras's documented formulas."""
    layer = p["layer"]
    bias = p.get("bias", True)
    fw = p.get("framework", "pytorch")
    nl = p.get("num_layers", 1)
    if fw == "keras" and layer in ("rnn", "lstm", "gru"):
        g = {"rnn": 1, "lstm": 4, "gru": 3}[layer]
        n_in, H = p["input_size"], p["hidden_size"]
        dirs = 2 if p.get("bidirectional", False) else 1
        nb = (2 if (layer == "gru" and p.get("reset_after", True)) else 1) if bias else 0
        total = 0
        for lyr in range(nl):
            inp = n_in if lyr == 0 else H * dirs
            total += dirs * (g * H * (inp + H) + nb * g * H)   # kernel + recurrent_kernel + bias
        return {"count": total}
    d = p.get("d_model")
    if layer == "linear":
        m = nn.Linear(p["in_features"], p["out_features"], bias=bias)
    elif layer == "conv2d":
        m = nn.Conv2d(p["in_channels"], p["out_channels"], p["kernel_size"], groups=p.get("groups", 1), bias=bias)
    elif layer in ("rnn", "lstm", "gru"):
        cls = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}[layer]
        m = cls(p["input_size"], p["hidden_size"], num_layers=nl, bias=bias, bidirectional=p.get("bidirectional", False))
        nl = 1
    elif layer == "embedding":
        m = nn.Embedding(p["num_embeddings"], p["embedding_dim"])
    elif layer == "batch-norm":
        m = nn.BatchNorm2d(p["num_features"], affine=p.get("affine", True))
    elif layer == "layer-norm":
        m = nn.LayerNorm(p["normalized_shape"], elementwise_affine=p.get("affine", True), bias=bias)
    elif layer == "multi-head-attention" and any(p.get(f"{x}_bias") is not None for x in ("q", "k", "v", "out")):
        # a bias flag per projection: the four projections as nn.Linear modules (GPT-2's, Whisper's layout)
        m = nn.ModuleList(nn.Linear(d, d, bias=bias if p.get(f"{x}_bias") is None else p[f"{x}_bias"])
                          for x in ("q", "k", "v", "out"))
    elif layer == "multi-head-attention":
        m = nn.MultiheadAttention(d, p["num_heads"], bias=bias)
    elif layer == "transformer-encoder-layer":
        m = nn.TransformerEncoderLayer(d, p["num_heads"], p.get("dim_feedforward", 2048), bias=bias)
    else:
        m = nn.TransformerDecoderLayer(d, p["num_heads"], p.get("dim_feedforward", 2048), bias=bias)
    return {"count": nl * sum(q.numel() for q in m.parameters())}


class _LoRALinear(nn.Module):
    """A frozen nn.Linear(k → d) plus trainable B (d×r) A (r×k), as in the PEFT library."""

    def __init__(self, d: int, k: int, r: int):
        super().__init__()
        self.base = nn.Linear(k, d, bias=False)
        self.base.weight.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.zeros(r, k))
        self.lora_B = nn.Parameter(torch.zeros(d, r))


    def forward(self, x: torch.Tensor, scaling: float = 1.0) -> torch.Tensor:
        """PEFT's LoRA linear: base(x) + scaling · (x Aᵀ) Bᵀ."""
        return self.base(x) + scaling * ((x @ self.lora_A.T) @ self.lora_B.T)


def ref_lora(p: dict) -> dict:
    """Counts from PEFT-style modules' trainable parameters; the update ΔW read off the module's output
    on the identity (its rows are the inputs e_j), minus the frozen layer's: (x ↦ scaling·BAx)(I)ᵀ."""
    mods = [_LoRALinear(p["d"], p["k"], p["r"]) for _ in range(p.get("num_matrices", 1))]
    trainable = sum(q.numel() for m in mods for q in m.parameters() if q.requires_grad)
    full = sum(m.base.weight.numel() for m in mods)
    out = {"trainable_params": trainable, "full_params": full, "fraction": trainable / full}
    if p.get("lora_B") is not None:
        mod = _LoRALinear(p["d"], p["k"], p["r"]).to(DTYPE)
        with torch.no_grad():
            mod.lora_B.copy_(tensor(p["lora_B"]))
            mod.lora_A.copy_(tensor(p["lora_A"]))
            eye = torch.eye(p["k"], dtype=DTYPE)
            scaling = 1.0 if p.get("lora_alpha") is None else p["lora_alpha"] / p["r"]
            out["delta_weight"] = as_numpy((mod(eye, scaling) - mod.base(eye)).T)
    return out


def _training_bytes(params: list, optimizer: str) -> int:
    """One real optimizer step, then the bytes of every gradient and optimizer state kept for ``params``."""
    if optimizer == "adam":
        opt = torch.optim.Adam(params, lr=1e-3)
    else:
        opt = torch.optim.SGD(params, lr=1e-3, momentum=0.9 if optimizer == "sgd-momentum" else 0.0)
    sum(q.float().square().sum() for q in params).backward()
    opt.step()
    total = 0
    for q in params:
        total += q.grad.numel() * q.grad.element_size()
        for state in opt.state[q].values():
            if torch.is_tensor(state) and state.shape == q.shape:    # not Adam's scalar step counter
                total += state.numel() * state.element_size()
    return total


def ref_lora_memory(p: dict) -> dict:
    """PEFT-style modules in the asked dtype; the bytes are measured after a real optimizer step."""
    dtype = DTYPE_OF_BYTES[p.get("bytes_per_value", 4)]
    opt = p.get("optimizer", "adam")
    mods = [_LoRALinear(p["d"], p["k"], p["r"]).to(dtype) for _ in range(p.get("num_matrices", 1))]
    trainable = [q for mod in mods for q in mod.parameters() if q.requires_grad]
    full = [nn.Parameter(mod.base.weight.detach().clone()) for mod in mods]
    n_train, n_full = sum(q.numel() for q in trainable), sum(q.numel() for q in full)
    full_bytes, lora_bytes = _training_bytes(full, opt), _training_bytes(trainable, opt)
    return {"trainable_params": n_train, "full_params": n_full, "fraction": n_train / n_full,
            "full_training_bytes": full_bytes, "lora_training_bytes": lora_bytes, "saved_bytes": full_bytes - lora_bytes,
            "saved_mib": (full_bytes - lora_bytes) / 2 ** 20}


def random_param_count(rng: np.random.Generator) -> dict:
    """A random valid param-count instance."""
    if rng.random() < 0.1:
        net = random_network_shapes(rng)
        return {"layer": "network", "input_shape": net["input_shape"], "layers": net["layers"], "framework": net["framework"]}
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    layer = pick(rng, ["linear", "conv2d", "rnn", "lstm", "gru", "embedding", "layer-norm", "batch-norm",
                        "multi-head-attention", "transformer-encoder-layer", "transformer-decoder-layer"])
    p = {"layer": layer, "bias": bool(rng.random() < 0.7)}
    if layer == "linear":
        p.update(in_features=ri(1, 50), out_features=ri(1, 50))
    elif layer == "conv2d":
        g = ri(1, 2)
        p.update(in_channels=g * ri(1, 4), out_channels=g * ri(1, 4), kernel_size=ri(1, 5), groups=g)
    elif layer in ("rnn", "lstm", "gru"):
        p.update(input_size=ri(1, 20), hidden_size=ri(1, 20), num_layers=ri(1, 3),
                 bidirectional=bool(rng.random() < 0.3), framework=pick(rng, ["pytorch", "keras"]))
        if layer == "gru" and p["framework"] == "keras":
            p["reset_after"] = bool(rng.random() < 0.5)
    elif layer == "embedding":
        p = {"layer": layer, "num_embeddings": ri(1, 100), "embedding_dim": ri(1, 32)}
    elif layer == "layer-norm":
        p.update(normalized_shape=ri(1, 64) if rng.random() < 0.7 else [ri(1, 8), ri(1, 8), ri(1, 8)],   # [C, H, W]
                 affine=bool(rng.random() < 0.8))
    elif layer == "batch-norm":
        p = {"layer": layer, "num_features": ri(1, 64), "affine": bool(rng.random() < 0.8)}
    else:
        h = ri(1, 4)
        p.update(d_model=h * ri(1, 8), num_heads=h)
        if layer == "multi-head-attention" and rng.random() < 0.5:
            p.update({f"{x}_bias": bool(rng.random() < 0.5) for x in ("q", "k", "v", "out") if rng.random() < 0.7})
        if layer.startswith("transformer"):
            p["dim_feedforward"] = ri(1, 64)
    return p


def random_lora(rng: np.random.Generator) -> dict:
    """A random valid lora instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    p = {"d": ri(1, 64), "k": ri(1, 64), "r": ri(1, 8), "num_matrices": ri(1, 4)}
    if rng.random() < 0.5:                  # the update ΔW = (α/r)·B A of small factors
        p |= {"d": ri(1, 4), "k": ri(1, 4), "r": ri(1, 3)}
        p |= {"lora_B": normal(rng, p["d"], p["r"]), "lora_A": normal(rng, p["r"], p["k"]),
              "lora_alpha": None if rng.random() < 0.5 else ri(1, 16)}
    return p


def random_lora_memory(rng: np.random.Generator) -> dict:
    """A random valid lora-memory instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    return {"d": ri(1, 48), "k": ri(1, 48), "r": ri(1, 8), "num_matrices": ri(1, 3),
            "bytes_per_value": pick(rng, [2, 4, 8]), "optimizer": pick(rng, ["adam", "sgd-momentum", "sgd"])}


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "param-count": Reference(ref_param_count, random_param_count),
    "lora": Reference(ref_lora, random_lora),
    "lora-memory": Reference(ref_lora_memory, random_lora_memory),
}
