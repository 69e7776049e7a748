"""Optimisation: a gradient-descent step and gradient clipping by norm."""
from __future__ import annotations

import numpy as np

from typing import Any, NamedTuple

from examprep.engine._core import Trace, array, choice, number, same_shape, vector
from examprep.errors import ParamError, ShapeError


def sgd_step(param, grad, lr) -> np.ndarray:
    """param − lr · grad (one gradient-descent step)."""
    p, g = array("param", param), array("grad", grad)
    same_shape("grad", g, p, "param")
    out = p - number("lr", lr) * g
    return float(out) if out.ndim == 0 else out


def clip_by_norm(grad, max_norm) -> np.ndarray:
    """g · min(1, c/‖g‖₂): gradient clipping by norm (torch.nn.utils.clip_grad_norm_, up to its 1e-6)."""
    g = array("grad", grad)
    c = number("max_norm", max_norm)
    norm = float(np.sqrt(np.sum(g**2)))
    out = g * min(1.0, c / norm) if norm > 0 else g
    return float(out) if out.ndim == 0 else out


OPTIMIZERS = ("sgd", "momentum", "nesterov", "rmsprop", "adagrad", "adam", "adamw")
_STATE = {"sgd": (), "momentum": ("velocity",), "nesterov": ("velocity",), "rmsprop": ("square_avg",),
          "adagrad": ("sum",), "adam": ("exp_avg", "exp_avg_sq"), "adamw": ("exp_avg", "exp_avg_sq")}


class Settings(NamedTuple):
    """An optimizer's settings after optimizer_settings' checks, defaults filled in as torch.optim's."""

    optimizer: str
    lr: float
    momentum: float
    beta1: float
    beta2: float
    eps: float
    alpha: float
    dampening: float
    weight_decay: float
    bias_correction: bool


def optimizer_settings(optimizer: str, *, lr, momentum=None, betas=None, eps=None, alpha=None, weight_decay=None,
                       dampening=None, bias_correction: bool = True) -> Settings:
    """The checked settings of an optimizer (see optimizer_step): defaults as torch.optim, an option the
    chosen optimizer does not have refused, every value checked against its range (ParamError naming it)."""
    optimizer = choice("optimizer", optimizer, OPTIMIZERS)
    eta = number("lr", lr)
    if eta < 0:
        raise ParamError(f"lr: expected a learning rate ≥ 0, got {eta:g}")
    given = {"momentum": momentum, "betas": betas, "alpha": alpha, "dampening": dampening}
    owner = {"momentum": ("momentum", "nesterov"), "betas": ("adam", "adamw"), "alpha": ("rmsprop",),
             "dampening": ("momentum", "nesterov")}
    for name, value in given.items():
        if value is not None and optimizer not in owner[name]:
            raise ParamError(f"{name}: optimizer {optimizer!r} has no {name} (it applies to "
                             f"{' and '.join(repr(o) for o in owner[name])})")
    mu = number("momentum", 0.9 if momentum is None else momentum)
    if not 0 <= mu < 1 and optimizer in ("momentum", "nesterov"):
        raise ParamError(f"momentum: expected a number in [0, 1), got {mu:g}")
    if betas is None:
        b1, b2 = 0.9, 0.999
    else:
        bv = vector("betas", betas, 2)
        b1, b2 = float(bv[0]), float(bv[1])
        if not (0 <= b1 < 1 and 0 <= b2 < 1):
            raise ParamError(f"betas: expected two numbers in [0, 1), got [{b1:g}, {b2:g}]")
    e = number("eps", (1e-10 if optimizer == "adagrad" else 1e-8) if eps is None else eps)
    if e < 0:
        raise ParamError(f"eps: expected a number ≥ 0, got {e:g}")
    a = number("alpha", 0.99 if alpha is None else alpha)
    if not 0 <= a <= 1:
        raise ParamError(f"alpha: expected a number in [0, 1], got {a:g}")
    damp = number("dampening", 0.0 if dampening is None else dampening)
    if not 0 <= damp <= 1:
        raise ParamError(f"dampening: expected a number in [0, 1], got {damp:g}")
    if damp and optimizer == "nesterov":
        raise ParamError("dampening: Nesterov momentum needs zero dampening (torch.optim.SGD refuses it)")
    if not isinstance(bias_correction, bool):
        raise ParamError(f"bias_correction: expected true or false, got {bias_correction!r}")
    wd = number("weight_decay", (0.01 if optimizer == "adamw" else 0.0) if weight_decay is None else weight_decay)
    if wd < 0:
        raise ParamError(f"weight_decay: expected a number ≥ 0, got {wd:g}")
    return Settings(optimizer, eta, mu, b1, b2, e, a, damp, wd, bias_correction)


def initial_state(s: Settings, p: np.ndarray) -> dict[str, np.ndarray]:
    """The optimizer's state before its first step: zeros named as optimizer_step returns them."""
    return {name: np.zeros_like(p) for name in _STATE[s.optimizer]}


def optimizer_update(s: Settings, p: np.ndarray, g0: np.ndarray, state: dict[str, Any], t: int,
                     lr: float | None = None) -> tuple[np.ndarray, dict[str, Any], dict[str, Any]]:
    """Step t (1, 2, …) of optimizer_step's updates from parameters p with gradient g0 and the state
    after step t − 1 (initial_state before step 1); ``lr`` replaces s.lr for this step (a scheduler's rate).
    Returns the new parameters, the new state (a new dict) and, for adam and adamw, the step's bias
    corrections and corrected moments."""
    optimizer, eta = s.optimizer, s.lr if lr is None else lr
    wd, mu, damp, a, e = s.weight_decay, s.momentum, s.dampening, s.alpha, s.eps
    state = dict(state)
    extra: dict[str, Any] = {}
    g = g0 + wd * p if (wd and optimizer != "adamw") else g0.copy()
    if optimizer == "sgd":
        p = p - eta * g
    elif optimizer in ("momentum", "nesterov"):
        v = g.copy() if t == 1 else mu * state["velocity"] + (1 - damp) * g
        state["velocity"] = v
        p = p - eta * (g + mu * v if optimizer == "nesterov" else v)
    elif optimizer == "rmsprop":
        sq = a * state["square_avg"] + (1 - a) * g * g
        state["square_avg"] = sq
        p = p - eta * g / (np.sqrt(sq) + e)
    elif optimizer == "adagrad":
        sq = state["sum"] + g * g
        state["sum"] = sq
        p = p - eta * g / (np.sqrt(sq) + e)
    else:
        b1, b2 = s.beta1, s.beta2
        if optimizer == "adamw":
            p = p * (1 - eta * wd)
        m = b1 * state["exp_avg"] + (1 - b1) * g
        v2 = b2 * state["exp_avg_sq"] + (1 - b2) * g * g
        state["exp_avg"], state["exp_avg_sq"] = m, v2
        c1, c2 = (1 - b1**t, 1 - b2**t) if s.bias_correction else (1.0, 1.0)
        m_hat, v_hat = m / c1, v2 / c2
        p = p - eta * m_hat / (np.sqrt(v_hat) + e)
        extra = {"bias_correction1": c1, "bias_correction2": c2, "exp_avg_hat": m_hat, "exp_avg_sq_hat": v_hat}
    return p, state, extra


def optimizer_step(optimizer: str, params, grads, *, lr, momentum=None, betas=None, eps=None, alpha=None,
                   weight_decay=None, dampening=None, bias_correction: bool = True) -> Trace:
    """T steps of an optimizer on a parameter vector with given gradients, as torch.optim.

    Shapes: params (d,); grads (d,) for one step, or (T, d): the gradient at step t is row t.
    With g the gradient (plus weight_decay·p, except for AdamW), per step t = 1…T:
      sgd        p ← p − lr·g
      momentum   v ← μ v + g (v = g at the first step);  p ← p − lr·v          (torch.optim.SGD, dampening 0)
      nesterov   v ← μ v + g;  p ← p − lr·(g + μ v)                          (SGD(nesterov=True))
      rmsprop    s ← α s + (1 − α) g²;  p ← p − lr·g / (√s + ε)               (torch.optim.RMSprop)
      adagrad    s ← s + g²;  p ← p − lr·g / (√s + ε)                         (torch.optim.Adagrad)
      adam       m ← β₁ m + (1 − β₁) g;  v ← β₂ v + (1 − β₂) g²;
                 m̂ = m/(1 − β₁ᵗ), v̂ = v/(1 − β₂ᵗ);  p ← p − lr·m̂/(√v̂ + ε)     (Kingma & Ba 2015, Alg. 1)
      adamw      p ← p − lr·λ·p first, then adam without adding λp to g      (Loshchilov & Hutter 2019)
    Defaults as torch.optim: momentum 0.9 (momentum, nesterov), betas [0.9, 0.999], eps 1e-8
    (adagrad 1e-10), alpha 0.99, weight_decay 0 (adamw 0.01). An option that the chosen optimizer
    does not have is refused (plain "sgd" has no momentum: use "momentum").
    dampening (momentum, nesterov; torch.optim.SGD's, default 0): v ← μ v + (1 − dampening) g after the
    first step. bias_correction false: Adam without m̂ and v̂ — a common mistake (and the first steps of
    RMSprop with momentum), which moves the first steps far less than lr.
    Returns params_per_step (T, d), params_new, and the state after the last step: velocity,
    square_avg, sum, or exp_avg and exp_avg_sq (plus the bias corrections of the last step for adam).
    """
    s = optimizer_settings(optimizer, lr=lr, momentum=momentum, betas=betas, eps=eps, alpha=alpha,
                           weight_decay=weight_decay, dampening=dampening, bias_correction=bias_correction)
    p = vector("params", params).copy()
    g_all = array("grads", grads, (1, 2))
    if g_all.ndim == 1:
        g_all = g_all[None, :]
    if g_all.shape[1] != p.shape[0]:
        raise ShapeError(f"grads: expected {p.shape[0]} values per step (one per parameter), got {g_all.shape[1]}")
    state = initial_state(s, p)
    history = []
    extra: dict[str, Any] = {}
    for t, g0 in enumerate(g_all, 1):
        p, state, extra = optimizer_update(s, p, g0, state, t)
        history.append(p.copy())
    return Trace(params_per_step=np.array(history), params_new=p, **state, **extra)
