"""Optimisation: a gradient-descent step and gradient clipping by norm."""
from __future__ import annotations

import numpy as np

from typing import Any, NamedTuple

from examprep.engine._core import Trace, array, choice, integer, number, same_shape, vector
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
STEP_OPTIMIZERS = OPTIMIZERS + ("adamax", "adadelta")     # optimizer_step's (minimize and lr-schedule: OPTIMIZERS)
VELOCITY_CONVENTIONS = ("torch", "lr-inside")
EPS_PLACEMENTS = ("outside", "inside")
# torch.optim's state keys per optimizer, by their torch names (SGD's momentum_buffer is "velocity" in the
# engine); "step" is kept by every optimizer but SGD and used in the update by the Adam family only
STATE_KEYS = {"sgd": (), "momentum": ("momentum_buffer",), "nesterov": ("momentum_buffer",),
              "rmsprop": ("step", "square_avg", "momentum_buffer", "grad_avg"), "adagrad": ("step", "sum"),
              "adam": ("step", "exp_avg", "exp_avg_sq"), "adamw": ("step", "exp_avg", "exp_avg_sq"),
              "adamax": ("step", "exp_avg", "exp_inf"), "adadelta": ("step", "square_avg", "acc_delta")}


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
    centered: bool = False
    rho: float = 0.9
    lr_inside: bool = False          # velocity_convention "lr-inside": v ← μv − lr·g, p ← p + v (CS231n, Keras)
    eps_inside: bool = False         # eps_placement "inside": g / √(s + ε) (d2l, TF's ApplyRMSProp)


def optimizer_settings(optimizer: str, *, lr, momentum=None, betas=None, eps=None, alpha=None, weight_decay=None,
                       dampening=None, bias_correction: bool = True, centered: bool = False, rho=None,
                       velocity_convention: str = "torch", eps_placement: str = "outside",
                       optimizers: tuple[str, ...] = OPTIMIZERS) -> Settings:
    """The checked settings of an optimizer (see optimizer_step): defaults as torch.optim, an option the
    chosen optimizer does not have refused, every value checked against its range (ParamError naming it)."""
    optimizer = choice("optimizer", optimizer, optimizers)
    eta = number("lr", lr)
    if eta < 0:
        raise ParamError(f"lr: expected a learning rate ≥ 0, got {eta:g}")
    given = {"momentum": momentum, "betas": betas, "alpha": alpha, "dampening": dampening, "rho": rho,
             "centered": centered or None, "velocity_convention": None if velocity_convention == "torch" else 1,
             "eps_placement": None if eps_placement == "outside" else 1}
    owner = {"momentum": ("momentum", "nesterov", "rmsprop"), "betas": ("adam", "adamw", "adamax"),
             "alpha": ("rmsprop",), "dampening": ("momentum", "nesterov"), "rho": ("adadelta",),
             "centered": ("rmsprop",), "velocity_convention": ("momentum",),
             "eps_placement": ("rmsprop", "adagrad", "adam", "adamw")}
    for name, value in given.items():
        if value is not None and optimizer not in owner[name]:
            raise ParamError(f"{name}: optimizer {optimizer!r} has no {name} (it applies to "
                             f"{' and '.join(repr(o) for o in owner[name])})")
    mu = number("momentum", (0.0 if optimizer == "rmsprop" else 0.9) if momentum is None else momentum)
    if not 0 <= mu < 1 and optimizer in ("momentum", "nesterov", "rmsprop"):
        raise ParamError(f"momentum: expected a number in [0, 1), got {mu:g}")
    if betas is None:
        b1, b2 = 0.9, 0.999
    else:
        bv = vector("betas", betas, 2)
        b1, b2 = float(bv[0]), float(bv[1])
        if not (0 <= b1 < 1 and 0 <= b2 < 1):
            raise ParamError(f"betas: expected two numbers in [0, 1), got [{b1:g}, {b2:g}]")
    e = number("eps", {"adagrad": 1e-10, "adadelta": 1e-6}.get(optimizer, 1e-8) if eps is None else eps)
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
    r = number("rho", 0.9 if rho is None else rho)
    if not 0 <= r <= 1:
        raise ParamError(f"rho: expected a number in [0, 1], got {r:g}")
    if not isinstance(centered, bool):
        raise ParamError(f"centered: expected true or false, got {centered!r}")
    lr_inside = choice("velocity_convention", velocity_convention, VELOCITY_CONVENTIONS) == "lr-inside"
    eps_inside = choice("eps_placement", eps_placement, EPS_PLACEMENTS) == "inside"
    if lr_inside and damp:
        raise ParamError("dampening: the lr-inside velocity (v ← μv − lr·g) has no dampening")
    if not isinstance(bias_correction, bool):
        raise ParamError(f"bias_correction: expected true or false, got {bias_correction!r}")
    wd = number("weight_decay", (0.01 if optimizer == "adamw" else 0.0) if weight_decay is None else weight_decay)
    if wd < 0:
        raise ParamError(f"weight_decay: expected a number ≥ 0, got {wd:g}")
    return Settings(optimizer, eta, mu, b1, b2, e, a, damp, wd, bias_correction, centered, r, lr_inside, eps_inside)


def initial_state(s: Settings, p: np.ndarray) -> dict[str, np.ndarray]:
    """The optimizer's state before its first step, as torch.optim makes it lazily: zeros, by torch's
    names, except SGD's momentum buffer, which torch sets to the first gradient (none here); Adagrad's
    sum starts at initial_accumulator_value (given_state)."""
    names = {"step", "momentum_buffer", "grad_avg"} if s.optimizer == "rmsprop" else {"step", "momentum_buffer"}
    out = {name: np.zeros_like(p) for name in STATE_KEYS[s.optimizer] if name not in names}
    if s.optimizer == "rmsprop" and s.momentum:
        out["momentum_buffer"] = np.zeros_like(p)
    if s.optimizer == "rmsprop" and s.centered:
        out["grad_avg"] = np.zeros_like(p)
    return out


def given_state(s: Settings, p: np.ndarray, state, initial_accumulator_value=None) -> tuple[dict[str, Any], int]:
    """The optimizer's state before the first step computed here, from ``state`` (torch's keys, as
    optimizer.state[p] holds them; None: a fresh optimizer): the engine's state and ``step``, the number
    of steps already taken. A key the optimizer does not keep is refused; a missing one starts as torch's."""
    out = initial_state(s, p)
    if initial_accumulator_value is not None:
        if s.optimizer != "adagrad":
            raise ParamError(f"initial_accumulator_value: optimizer {s.optimizer!r} has none (it applies to 'adagrad')")
        v0 = number("initial_accumulator_value", initial_accumulator_value)
        if v0 < 0:
            raise ParamError(f"initial_accumulator_value: expected a number ≥ 0, got {v0:g}")
        out["sum"] = np.full_like(p, v0)
    if state is None:
        return out, 0
    if not isinstance(state, dict):
        raise ParamError(f"state: expected an object of torch's state keys, got {type(state).__name__}")
    keys = STATE_KEYS[s.optimizer]
    for key in state:
        if key not in keys:
            raise ParamError(f"state: optimizer {s.optimizer!r} keeps no {key!r} (its state: "
                             f"{', '.join(keys) if keys else 'none'})")
    if s.optimizer == "rmsprop" and "momentum_buffer" in state and not s.momentum:
        raise ParamError("state: momentum_buffer given but RMSprop's momentum is 0")
    if s.optimizer == "rmsprop" and "grad_avg" in state and not s.centered:
        raise ParamError("state: grad_avg given but RMSprop is not centered (centered: true)")
    step = 0
    for key, value in state.items():
        if key == "step":
            step = integer("state.step", value, 0)
            continue
        v = array(f"state.{key}", value)
        if v.ndim == 0:
            v = np.full_like(p, float(v))
        same_shape(f"state.{key}", v, p, "params")
        if key in ("sum", "square_avg", "exp_avg_sq", "exp_inf", "acc_delta") and np.any(v < 0):
            raise ParamError(f"state.{key}: expected values ≥ 0 (a running sum or average of squares)")
        out["velocity" if key == "momentum_buffer" and s.optimizer in ("momentum", "nesterov") else key] = v.astype(float)
    if s.optimizer == "rmsprop" and "grad_avg" in state and np.any(out["square_avg"] < out["grad_avg"] ** 2):
        raise ParamError("state.square_avg: expected square_avg ≥ grad_avg² (centered RMSprop's variance is their "
                         "difference)")
    return out, step


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

    def root(x):                    # the denominator √x + ε, or √(x + ε) with eps_placement "inside"
        return np.sqrt(x + e) if s.eps_inside else np.sqrt(x) + e

    if optimizer == "sgd":
        p = p - eta * g
    elif optimizer in ("momentum", "nesterov") and s.lr_inside:
        v = mu * state.get("velocity", 0.0) - eta * g
        state["velocity"] = v
        p = p + v
    elif optimizer in ("momentum", "nesterov"):
        v = g.copy() if "velocity" not in state else mu * state["velocity"] + (1 - damp) * g
        state["velocity"] = v
        p = p - eta * (g + mu * v if optimizer == "nesterov" else v)
    elif optimizer == "rmsprop":
        sq = a * state["square_avg"] + (1 - a) * g * g
        state["square_avg"] = sq
        if s.centered:
            ga = a * state["grad_avg"] + (1 - a) * g
            state["grad_avg"] = ga
            sq = sq - ga * ga
        if mu:
            buf = mu * state["momentum_buffer"] + g / root(sq)
            state["momentum_buffer"] = buf
            p = p - eta * buf
        else:
            p = p - eta * g / root(sq)
    elif optimizer == "adagrad":
        sq = state["sum"] + g * g
        state["sum"] = sq
        p = p - eta * g / root(sq)
    elif optimizer == "adadelta":
        r = s.rho
        sq = r * state["square_avg"] + (1 - r) * g * g
        delta = np.sqrt(state["acc_delta"] + e) / np.sqrt(sq + e) * g
        state["square_avg"], state["acc_delta"] = sq, r * state["acc_delta"] + (1 - r) * delta * delta
        p = p - eta * delta
        extra = {"delta": delta}
    elif optimizer == "adamax":
        b1, b2 = s.beta1, s.beta2
        m = b1 * state["exp_avg"] + (1 - b1) * g
        u = np.maximum(b2 * state["exp_inf"], np.abs(g) + e)
        state["exp_avg"], state["exp_inf"] = m, u
        c1 = 1 - b1**t if s.bias_correction else 1.0
        p = p - eta / c1 * m / u
        extra = {"bias_correction1": c1}
    else:
        b1, b2 = s.beta1, s.beta2
        if optimizer == "adamw":
            p = p * (1 - eta * wd)
        m = b1 * state["exp_avg"] + (1 - b1) * g
        v2 = b2 * state["exp_avg_sq"] + (1 - b2) * g * g
        state["exp_avg"], state["exp_avg_sq"] = m, v2
        c1, c2 = (1 - b1**t, 1 - b2**t) if s.bias_correction else (1.0, 1.0)
        m_hat, v_hat = m / c1, v2 / c2
        p = p - eta * m_hat / root(v_hat)
        extra = {"bias_correction1": c1, "bias_correction2": c2, "exp_avg_hat": m_hat, "exp_avg_sq_hat": v_hat}
    return p, state, extra


def optimizer_step(optimizer: str, params, grads, *, lr, momentum=None, betas=None, eps=None, alpha=None,
                   weight_decay=None, dampening=None, bias_correction: bool = True, state=None,
                   initial_accumulator_value=None, centered: bool = False, rho=None,
                   velocity_convention: str = "torch", eps_placement: str = "outside") -> Trace:
    """T steps of an optimizer on a parameter vector with given gradients, as torch.optim.

    Shapes: params (d,); grads (d,) for one step, or (T, d): the gradient at step t is row t.
    With g the gradient (plus weight_decay·p, except for AdamW), per step t = step + 1 … step + T:
      sgd        p ← p − lr·g
      momentum   v ← μ v + g (v = g at the first step);  p ← p − lr·v          (torch.optim.SGD, dampening 0)
      nesterov   v ← μ v + g;  p ← p − lr·(g + μ v)                          (SGD(nesterov=True))
      rmsprop    s ← α s + (1 − α) g²;  p ← p − lr·g / (√s + ε)               (torch.optim.RMSprop)
                 centered: ḡ ← α ḡ + (1 − α) g and √(s − ḡ²) for √s; momentum μ > 0: b ← μ b + g/(√s + ε),
                 p ← p − lr·b
      adagrad    s ← s + g²;  p ← p − lr·g / (√s + ε)                         (torch.optim.Adagrad)
      adadelta   s ← ρ s + (1 − ρ) g²;  Δ = √(a + ε)/√(s + ε)·g;  a ← ρ a + (1 − ρ) Δ²;  p ← p − lr·Δ
                                                                             (Zeiler 2012; torch.optim.Adadelta)
      adam       m ← β₁ m + (1 − β₁) g;  v ← β₂ v + (1 − β₂) g²;
                 m̂ = m/(1 − β₁ᵗ), v̂ = v/(1 − β₂ᵗ);  p ← p − lr·m̂/(√v̂ + ε)     (Kingma & Ba 2015, Alg. 1)
      adamw      p ← p − lr·λ·p first, then adam without adding λp to g      (Loshchilov & Hutter 2019)
      adamax     m ← β₁ m + (1 − β₁) g;  u ← max(β₂ u, |g| + ε);  p ← p − lr/(1 − β₁ᵗ)·m/u
                                                                             (Kingma & Ba 2015, Alg. 2; torch.optim.Adamax)
    Defaults as torch.optim: momentum 0.9 (momentum, nesterov; rmsprop 0), betas [0.9, 0.999], eps 1e-8
    (adagrad 1e-10, adadelta 1e-6), alpha 0.99, rho 0.9, weight_decay 0 (adamw 0.01). An option that the
    chosen optimizer does not have is refused (plain "sgd" has no momentum: use "momentum").
    dampening (momentum, nesterov; torch.optim.SGD's, default 0): v ← μ v + (1 − dampening) g after the
    first step. bias_correction false: Adam without m̂ and v̂ — a common mistake (and the first steps of
    RMSprop with momentum), which moves the first steps far less than lr.
    state: the optimizer's state before these steps by torch's keys (optimizer.state[p]): momentum_buffer,
    sum, square_avg, grad_avg, exp_avg, exp_avg_sq, exp_inf, acc_delta, and step, the number of steps
    already taken (so the first step here is t = step + 1); a key not given starts as in a fresh optimizer.
    initial_accumulator_value (adagrad): the sum's start, as torch's.
    velocity_convention "lr-inside" (momentum): v ← μ v − lr·g, p ← p + v, v₀ = 0 (CS231n, Keras's SGD);
    eps_placement "inside" (rmsprop, adagrad, adam, adamw): g/√(s + ε) (d2l; TensorFlow's ApplyRMSProp).
    Returns params_per_step (T, d), params_new, and the state after the last step: velocity (and its
    torch name momentum_buffer), square_avg, grad_avg, sum, exp_avg, exp_avg_sq, exp_inf, acc_delta and
    step (plus the bias corrections of the last step for adam, adamw and adamax).
    """
    s = optimizer_settings(optimizer, lr=lr, momentum=momentum, betas=betas, eps=eps, alpha=alpha,
                           weight_decay=weight_decay, dampening=dampening, bias_correction=bias_correction,
                           centered=centered, rho=rho, velocity_convention=velocity_convention,
                           eps_placement=eps_placement, optimizers=STEP_OPTIMIZERS)
    p = vector("params", params).copy()
    g_all = array("grads", grads, (1, 2))
    if g_all.ndim == 1:
        g_all = g_all[None, :]
    if g_all.shape[1] != p.shape[0]:
        raise ShapeError(f"grads: expected {p.shape[0]} values per step (one per parameter), got {g_all.shape[1]}")
    st, step0 = given_state(s, p, state, initial_accumulator_value)
    history = []
    extra: dict[str, Any] = {}
    for k, g0 in enumerate(g_all, 1):
        p, st, extra = optimizer_update(s, p, g0, st, step0 + k)
        history.append(p.copy())
    out = dict(st)
    if "velocity" in out:
        out["momentum_buffer"] = out["velocity"]
    if "step" in STATE_KEYS[s.optimizer]:
        out["step"] = step0 + len(g_all)
    return Trace(params_per_step=np.array(history), params_new=p, **out, **extra)
