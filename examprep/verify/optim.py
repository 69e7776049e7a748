"""Torch reference of optimizer updates: torch.optim's optimizers stepped with the given gradients;
Adam without bias correction (a mistake torch does not make) from Kingma and Ba's Algorithm 1 in torch."""
from __future__ import annotations

import numpy as np
import torch

from examprep.verify._torch import Reference, as_numpy, normal, pick, tensor

_STATE = {"velocity": "momentum_buffer", "square_avg": "square_avg", "sum": "sum", "exp_avg": "exp_avg",
          "exp_avg_sq": "exp_avg_sq"}


def _optimizer(p: dict, params: list[torch.Tensor]) -> torch.optim.Optimizer:
    name = p["optimizer"]
    kw: dict = {"lr": p["lr"]}
    for key in ("eps", "weight_decay", "alpha"):
        if p.get(key) is not None:
            kw[key] = p[key]
    if p.get("betas") is not None:
        kw["betas"] = tuple(p["betas"])
    if name in ("momentum", "nesterov"):
        kw["momentum"] = 0.9 if p.get("momentum") is None else p["momentum"]
        kw["dampening"] = p.get("dampening") or 0.0
        kw["nesterov"] = name == "nesterov"
    cls = {"sgd": torch.optim.SGD, "momentum": torch.optim.SGD, "nesterov": torch.optim.SGD, "rmsprop": torch.optim.RMSprop,
           "adagrad": torch.optim.Adagrad, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[name]
    return cls(params, **kw)


def ref_optimizer_step(p: dict) -> dict:
    grads = np.atleast_2d(np.asarray(p["grads"], dtype=float))
    w = tensor(p["params"], grad=True)
    if not p.get("bias_correction", True):
        return _adam_without_correction(p, w, grads)
    opt = _optimizer(p, [w])
    history = []
    for g in grads:
        w.grad = tensor(g)
        opt.step()
        history.append(as_numpy(w).copy())
    out = {"params_per_step": np.array(history), "params_new": history[-1]}
    state = opt.state[w]
    for ours, theirs in _STATE.items():
        if theirs in state and not (ours == "velocity" and p["optimizer"] not in ("momentum", "nesterov")):
            out[ours] = as_numpy(state[theirs])
    return out


def _adam_without_correction(p: dict, w: torch.Tensor, grads: np.ndarray) -> dict:
    b1, b2 = p.get("betas") or (0.9, 0.999)
    eps = 1e-8 if p.get("eps") is None else p["eps"]
    decay = (0.01 if p["optimizer"] == "adamw" else 0.0) if p.get("weight_decay") is None else p["weight_decay"]
    m = torch.zeros_like(w)
    v = torch.zeros_like(w)
    x = w.detach().clone()
    history = []
    for g in grads:
        g = tensor(g)
        if p["optimizer"] == "adamw":
            x = x * (1 - p["lr"] * decay)
        else:
            g = g + decay * x
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        x = x - p["lr"] * m / (v.sqrt() + eps)
        history.append(as_numpy(x).copy())
    return {"params_per_step": np.array(history), "params_new": history[-1], "exp_avg": as_numpy(m),
            "exp_avg_sq": as_numpy(v)}


def random_optimizer_step(rng: np.random.Generator) -> dict:
    """A random valid optimizer-step instance."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    name = pick(rng, ["sgd", "momentum", "nesterov", "rmsprop", "adagrad", "adam", "adamw"])
    d, steps = ri(1, 4), ri(1, 3)
    p = {"optimizer": name, "params": normal(rng, d), "grads": normal(rng, steps, d) if steps > 1 else normal(rng, d),
         "lr": pick(rng, [0.1, 0.01, 0.5])}
    if rng.random() < 0.4:
        p["weight_decay"] = pick(rng, [0.0, 0.1])
    if name in ("momentum", "nesterov") and rng.random() < 0.5:
        p["momentum"] = pick(rng, [0.5, 0.8])
    if name == "momentum" and rng.random() < 0.3:
        p["dampening"] = 0.5
    if name in ("adam", "adamw") and rng.random() < 0.4:
        p["betas"] = [0.8, 0.9]
    if name in ("adam", "adamw") and rng.random() < 0.2:
        p["bias_correction"] = False
    if name == "rmsprop" and rng.random() < 0.4:
        p["alpha"] = 0.9
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "optimizer-step": Reference(ref_optimizer_step, random_optimizer_step),
}
