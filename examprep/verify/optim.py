"""Torch reference of optimizer updates: torch.optim's optimizers stepped with the given gradients, a
given state loaded into the optimizer first (optimizer.state[p] = {...}, torch's keys); Adam without bias
correction (a mistake torch does not make) from Kingma and Ba's Algorithm 1 in torch; ε inside the
square root (d2l's RMSProp, Adagrad and Adam; TensorFlow's ApplyRMSProp) written out in torch ops, which
torch.optim does not offer; the velocity with lr inside (CS231n, Keras) as torch.optim.SGD's buffer
times −lr."""
from __future__ import annotations

import numpy as np
import torch

from examprep.verify._torch import DTYPE, Reference, as_numpy, normal, pick, tensor

# torch.optim's state keys per optimizer (a fresh optimizer's values: zeros, step 0, SGD's buffer absent)
_KEYS = {"sgd": (), "momentum": ("momentum_buffer",), "nesterov": ("momentum_buffer",),
         "rmsprop": ("step", "square_avg"), "adagrad": ("step", "sum"), "adam": ("step", "exp_avg", "exp_avg_sq"),
         "adamw": ("step", "exp_avg", "exp_avg_sq"), "adamax": ("step", "exp_avg", "exp_inf"),
         "adadelta": ("step", "square_avg", "acc_delta")}


def _optimizer(p: dict, params: list[torch.Tensor]) -> torch.optim.Optimizer:
    name = p["optimizer"]
    kw: dict = {"lr": p["lr"]}
    for key in ("eps", "weight_decay", "alpha", "rho", "initial_accumulator_value"):
        if p.get(key) is not None:
            kw[key] = p[key]
    if p.get("betas") is not None:
        kw["betas"] = tuple(p["betas"])
    if name in ("momentum", "nesterov"):
        kw["momentum"] = 0.9 if p.get("momentum") is None else p["momentum"]
        kw["dampening"] = p.get("dampening") or 0.0
        kw["nesterov"] = name == "nesterov"
    if name == "rmsprop":
        kw["momentum"] = p.get("momentum") or 0.0
        kw["centered"] = bool(p.get("centered"))
    cls = {"sgd": torch.optim.SGD, "momentum": torch.optim.SGD, "nesterov": torch.optim.SGD, "rmsprop": torch.optim.RMSprop,
           "adagrad": torch.optim.Adagrad, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW,
           "adamax": torch.optim.Adamax, "adadelta": torch.optim.Adadelta}[name]
    return cls(params, **kw)


def _load_state(p: dict, opt: torch.optim.Optimizer, w: torch.Tensor) -> None:
    """The given state (torch's keys) into optimizer.state[w], a fresh optimizer's values for the rest."""
    given = dict(p.get("state") or {})
    if p.get("velocity_convention") == "lr-inside" and "momentum_buffer" in given:
        given["momentum_buffer"] = -np.asarray(given["momentum_buffer"], dtype=float) / p["lr"]     # v = −lr·buf
    name, keys = p["optimizer"], list(_KEYS[p["optimizer"]])
    if name == "rmsprop":
        keys += ["momentum_buffer"] * bool(p.get("momentum")) + ["grad_avg"] * bool(p.get("centered"))
    fresh = dict(opt.state[w])        # Adagrad makes its state in the constructor; the others at their first step
    state = {}
    for key in keys:
        if key == "step":
            state["step"] = torch.tensor(float(given.get("step", 0)), dtype=DTYPE)
        elif key in given:
            state[key] = tensor(np.broadcast_to(np.asarray(given[key], dtype=float), w.shape).copy())
        elif key in fresh:
            state[key] = fresh[key].clone()
        elif key != "momentum_buffer" or name == "rmsprop":
            state[key] = torch.zeros_like(w, memory_format=torch.preserve_format).detach()
    if state:
        opt.state[w] = state


def ref_optimizer_step(p: dict) -> dict:
    grads = np.atleast_2d(np.asarray(p["grads"], dtype=float))
    w = tensor(p["params"], grad=True)
    if not p.get("bias_correction", True) or p.get("eps_placement") == "inside":
        return _by_hand(p, w, grads)
    opt = _optimizer(p, [w])
    _load_state(p, opt, w)
    history = []
    for g in grads:
        w.grad = tensor(g)
        opt.step()
        history.append(as_numpy(w).copy())
    out = {"params_per_step": np.array(history), "params_new": history[-1]}
    state = opt.state[w]
    for key, value in state.items():
        out[key] = int(value.item()) if key == "step" else as_numpy(value)
    if "momentum_buffer" in out and p.get("velocity_convention") == "lr-inside":
        out["momentum_buffer"] = -p["lr"] * out["momentum_buffer"]
    if p["optimizer"] in ("momentum", "nesterov"):
        out["velocity"] = out["momentum_buffer"]
    return out


def _by_hand(p: dict, w: torch.Tensor, grads: np.ndarray) -> dict:
    """Adam without bias correction (Kingma and Ba's Algorithm 1 less its two divisions) and ε inside the
    square root (d2l §12.8 RMSProp: x ← x − η/√(s + ε)·g; §12.7 Adagrad; TF's ApplyRMSProp), in torch ops."""
    name, lr, given = p["optimizer"], p["lr"], p.get("state") or {}
    inside = p.get("eps_placement") == "inside"
    eps = ({"adagrad": 1e-10}.get(name, 1e-8)) if p.get("eps") is None else p["eps"]
    decay = (0.01 if name == "adamw" else 0.0) if p.get("weight_decay") is None else p["weight_decay"]

    def start(key: str, value: float = 0.0) -> torch.Tensor:
        return tensor(np.broadcast_to(np.asarray(given.get(key, value), dtype=float), w.shape).copy())

    def root(x: torch.Tensor) -> torch.Tensor:
        return (x + eps).sqrt() if inside else x.sqrt() + eps

    x = w.detach().clone()
    t = int(given.get("step", 0))
    a, mu, centered = p.get("alpha") or 0.99, p.get("momentum") or 0.0, bool(p.get("centered"))
    b1, b2 = p.get("betas") or (0.9, 0.999)
    m, v = start("exp_avg"), start("exp_avg_sq")
    sq = start("sum", p.get("initial_accumulator_value") or 0.0) if name == "adagrad" else start("square_avg")
    ga, buf = start("grad_avg"), start("momentum_buffer")
    history = []
    for g in grads:
        g, t = tensor(g), t + 1
        if name == "adamw":
            x = x * (1 - lr * decay)
        else:
            g = g + decay * x
        if name == "adagrad":
            sq = sq + g * g
            x = x - lr * g / root(sq)
        elif name == "rmsprop":
            sq = a * sq + (1 - a) * g * g
            ga = a * ga + (1 - a) * g
            den = root(sq - ga * ga if centered else sq)
            buf = mu * buf + g / den
            x = x - lr * (buf if mu else g / den)
        else:
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            c1, c2 = (1 - b1**t, 1 - b2**t) if p.get("bias_correction", True) else (1.0, 1.0)
            x = x - lr * (m / c1) / root(v / c2)
        history.append(as_numpy(x).copy())
    out = {"params_per_step": np.array(history), "params_new": history[-1], "step": t}
    if name == "adagrad":
        return out | {"sum": as_numpy(sq)}
    if name == "rmsprop":
        return out | {"square_avg": as_numpy(sq)} | ({"grad_avg": as_numpy(ga)} if centered else {}) | (
            {"momentum_buffer": as_numpy(buf)} if mu else {})
    return out | {"exp_avg": as_numpy(m), "exp_avg_sq": as_numpy(v)}


def random_state(rng: np.random.Generator, p: dict, d: int) -> dict:
    """A random state of torch's keys for optimizer p (some keys left out: a fresh optimizer's)."""
    name, state = p["optimizer"], {}
    keys = list(_KEYS[name]) + ["momentum_buffer"] * (name == "rmsprop" and bool(p.get("momentum"))) + [
        "grad_avg"] * (name == "rmsprop" and bool(p.get("centered")))
    for key in keys:
        if rng.random() < 0.3:
            continue
        if key == "step":
            state["step"] = int(rng.integers(0, 6))
        elif key in ("momentum_buffer", "exp_avg", "grad_avg"):
            state[key] = normal(rng, d, scale=0.5)
        else:                                   # averages and sums of squares: ≥ 0, and ≥ grad_avg² when centered
            state[key] = (np.abs(rng.standard_normal(d)) + 0.5).round(6).tolist()
    if "grad_avg" in state:                     # a variance: square_avg ≥ grad_avg²
        state["square_avg"] = (np.asarray(state["grad_avg"]) ** 2 + 0.5).round(6).tolist()
    return state


def random_optimizer_step(rng: np.random.Generator) -> dict:
    """A random valid optimizer-step instance (from a given state with probability ½)."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    name = pick(rng, ["sgd", "momentum", "nesterov", "rmsprop", "adagrad", "adam", "adamw", "adamax", "adadelta"])
    d, steps = ri(1, 4), ri(1, 3)
    p = {"optimizer": name, "params": normal(rng, d), "grads": normal(rng, steps, d) if steps > 1 else normal(rng, d),
         "lr": pick(rng, [0.1, 0.01, 0.5])}
    if rng.random() < 0.4:
        p["weight_decay"] = pick(rng, [0.0, 0.1])
    if name in ("momentum", "nesterov", "rmsprop") and rng.random() < 0.5:
        p["momentum"] = pick(rng, [0.5, 0.8])
    if name == "momentum" and rng.random() < 0.3:
        p["dampening"] = 0.5
    elif name == "momentum" and rng.random() < 0.3:
        p["velocity_convention"] = "lr-inside"
    if name in ("adam", "adamw", "adamax") and rng.random() < 0.4:
        p["betas"] = [0.8, 0.9]
    if name in ("adam", "adamw") and rng.random() < 0.2:
        p["bias_correction"] = False
    if name == "rmsprop" and rng.random() < 0.4:
        p["alpha"] = 0.9
    if name == "rmsprop" and rng.random() < 0.4:
        p["centered"] = True
    if name == "adadelta" and rng.random() < 0.4:
        p["rho"] = 0.5
    if name == "adagrad" and rng.random() < 0.3:
        p["initial_accumulator_value"] = 0.1
    if name in ("rmsprop", "adagrad", "adam", "adamw") and rng.random() < 0.25:
        p["eps_placement"] = "inside"
        p["eps"] = 0.01
    if rng.random() < 0.5:
        p["state"] = random_state(rng, p, d)
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "optimizer-step": Reference(ref_optimizer_step, random_optimizer_step),
}
