"""Layer normalisation, and the same normalisation from given statistics (an ECF rule)."""
from __future__ import annotations

import numpy as np

from examprep.engine._core import Trace, array, boolean, choice, integer, number, shape_str
from examprep.errors import ParamError, ShapeError

EPS_PLACEMENTS = ("added-to-std", "inside-sqrt")
VARIANCES = ("biased", "unbiased")


def normalized_shape_of(value) -> tuple[int, ...]:
    """torch.nn.LayerNorm's normalized_shape: an int (the last axis) or a list of ints (the last axes)."""
    if isinstance(value, (list, tuple)):
        if not value:
            raise ParamError("normalized_shape: expected an int or a non-empty list of ints, got []")
        return tuple(integer(f"normalized_shape[{i}]", v, 1) for i, v in enumerate(value))
    return (integer("normalized_shape", value, 1),)


def layer_norm(x, gamma=1.0, beta=0.0, *, eps: float = 1e-5, eps_placement: str = "added-to-std",
               variance: str = "biased", normalized_shape=None) -> Trace:
    """Layer normalisation over the last axis (per token), with learned gain γ and bias β; or, with
    normalized_shape, over the last len(normalized_shape) axes, as torch.nn.LayerNorm(normalized_shape).

    Shapes: x (D,) or (N, D); gamma and beta a number or (D,); output like x, mean and var one per row.
    normalized_shape (an int or a list, e.g. [C, H, W]): x's last axes must be those (with up to two
    leading axes: C×H×W or N×C×H×W for [C, H, W]); gamma and beta a number or of that shape; mean and
    var one per leading index (a number when x is normalized_shape itself); D = their product.
    eps_placement: "added-to-std"  y = γ ⊙ (x − μ)/(σ + ε) + β  (the lecture notes' formula;
                                   The Annotated Transformer's LayerNorm)
                   "inside-sqrt"   y = γ ⊙ (x − μ)/√(σ² + ε) + β  (Ba et al. 2016, eq. 4 with ε;
                                   torch.nn.LayerNorm)
    variance: "biased" σ² = (1/D) Σ (x − μ)² (PyTorch's), or "unbiased" (1/(D−1)) (torch.std's default).
    Returns mean, var, std, denominator, normalized, output.
    Raises ParamError for ε < 0 or a 1-feature input with unbiased variance, ShapeError for γ/β
    of the wrong length.
    """
    if normalized_shape is None:
        x_arr = array("x", x, (1, 2))
        k, d = 1, x_arr.shape[-1]
    else:
        norm_shape = normalized_shape_of(normalized_shape)
        k, d = len(norm_shape), int(np.prod(norm_shape))
        x_arr = array("x", x, (k, k + 1, k + 2))
        if x_arr.shape[-k:] != norm_shape:
            raise ShapeError(f"x: its last {k} axes must be normalized_shape {shape_str(norm_shape)}, "
                             f"got x of shape {shape_str(x_arr.shape)}")
    axes = tuple(range(-k, 0))
    eps_placement = choice("eps_placement", eps_placement, EPS_PLACEMENTS)
    variance = choice("variance", variance, VARIANCES)
    eps = number("eps", eps)
    if eps < 0:
        raise ParamError(f"eps: expected a number ≥ 0, got {eps:g}")
    g = array("gamma", gamma, (0, 1) if normalized_shape is None else None)
    b = array("beta", beta, (0, 1) if normalized_shape is None else None)
    for name, arr in (("gamma", g), ("beta", b)):
        if arr.ndim == 1 and k == 1 and arr.shape[0] != d:
            raise ShapeError(f"{name}: expected a number or a vector of length {d}, got length {arr.shape[0]}")
        if arr.ndim and arr.shape != x_arr.shape[-k:]:
            raise ShapeError(f"{name}: expected a number or normalized_shape {shape_str(x_arr.shape[-k:])}, "
                             f"got {shape_str(arr.shape)}")
    if variance == "unbiased" and d < 2:
        raise ParamError("variance: the unbiased variance needs at least 2 features")
    mean = x_arr.mean(axis=axes, keepdims=True)
    centered = x_arr - mean
    var = (centered**2).sum(axis=axes, keepdims=True) / (d if variance == "biased" else d - 1)
    std = np.sqrt(var)
    denom = std + eps if eps_placement == "added-to-std" else np.sqrt(var + eps)
    if np.any(denom == 0):
        raise ParamError("x: every feature is equal and eps is 0, so the normalisation divides by zero")
    normalized = centered / denom
    out = g * normalized + b
    lead = x_arr.shape[:-k]                 # one statistic per leading index (a number when there is none)
    squeeze = (lambda a: float(a.reshape(()))) if not lead else (lambda a: a.reshape(lead))
    return Trace(mean=squeeze(mean), centered=centered, var=squeeze(var), std=squeeze(std),
                 denominator=squeeze(denom), normalized=normalized, output=out)


def layer_norm_from_stats(x, mean, var, eps=1e-5, eps_placement="added-to-std", gamma=1.0, beta=0.0,
                          normalized_shape=None) -> np.ndarray:
    """γ ⊙ (x − μ)/(σ + ε) + β ("added-to-std") or γ ⊙ (x − μ)/√(σ² + ε) + β ("inside-sqrt") from given
    statistics: x (D,) with one mean and variance, or (N, D) with one per row; with normalized_shape,
    one mean and variance per index of x's axes before the normalised ones."""
    if normalized_shape is not None:
        X = array("x", x)
        lead = X.shape[:X.ndim - len(normalized_shape_of(normalized_shape))]
        mu, v = array("mean", mean), array("var", var)
        if mu.size != max(1, int(np.prod(lead))) or v.size != mu.size:
            raise ShapeError(f"mean, var: expected one per index of x's leading axes ({shape_str(lead)})")
        shape = lead + (1,) * (X.ndim - len(lead))
        mu, v = mu.reshape(shape), v.reshape(shape)
    else:
        X = array("x", x, (1, 2))
        mu, v = array("mean", mean, (0, 1)), array("var", var, (0, 1))
    if X.ndim == 2 and normalized_shape is None:
        if mu.size != X.shape[0] or v.size != X.shape[0]:
            raise ShapeError(f"mean, var: expected one per row ({X.shape[0]})")
        mu, v = mu.reshape(-1, 1), v.reshape(-1, 1)
    if np.any(v < 0):
        raise ParamError("var: a variance cannot be negative")
    e = number("eps", eps)
    denom = np.sqrt(v) + e if eps_placement == "added-to-std" else np.sqrt(v + e)
    with np.errstate(divide="ignore", invalid="ignore"):
        return array("gamma", gamma) * (X - mu) / denom + array("beta", beta)


def per_channel(name: str, value, c: int) -> np.ndarray:
    """A per-channel parameter (γ, β, a running statistic): one number for every channel, or C values."""
    arr = array(name, value, (0, 1))
    if arr.ndim == 1 and arr.shape[0] != c:
        raise ShapeError(f"{name}: expected a number or {c} values (one per channel), got {arr.shape[0]}")
    return np.broadcast_to(arr, (c,)).astype(float)


BN_MOMENTUM = ("pytorch", "keras")
BN_RUNNING_VAR = ("unbiased", "biased")


def batch_norm(x, gamma=1.0, beta=0.0, *, eps: float = 1e-5, training: bool = True, running_mean=0.0,
               running_var=1.0, momentum: float = 0.1, grad_output=None, variance: str = "biased",
               momentum_convention: str = "pytorch", running_var_update: str = "unbiased") -> Trace:
    """Batch normalisation of one batch, as torch.nn.BatchNorm1d/2d (Ioffe & Szegedy 2015).

    Shapes: x (N, C) or (N, C, H, W): statistics per channel C over every other axis (batch and
    space, unlike layer norm's per-example statistics); gamma, beta, running_mean, running_var a
    number or (C,).
    training true: μ_c and the biased σ²_c of the batch normalise,
        x̂ = (x − μ) / √(σ² + ε),  y = γ x̂ + β,
      and the running statistics move: new = (1 − momentum)·running + momentum·batch, with the
      UNBIASED batch variance (m/(m − 1)·σ², m values per channel), as PyTorch.
    training false (eval): the running statistics normalise and stay unchanged.
    Conventions (PyTorch's are the defaults; the others are Keras's or common mistakes):
      variance            "biased" normalises by the biased batch variance (PyTorch, Keras), "unbiased" by m/(m−1)·σ²
      momentum_convention "pytorch": new = (1 − momentum)·running + momentum·batch;
                          "keras": new = momentum·running + (1 − momentum)·batch (tf.keras: momentum 0.99 = PyTorch's 0.01)
      running_var_update  "unbiased" (PyTorch) or "biased" (tf.keras) batch variance in the running update
    Backward (grad_output δ, x's shape), training: ∂L/∂x = γ/√(σ²+ε) · (δ − mean(δ) − x̂·mean(δ x̂)),
    per channel (the last term × m/(m − 1) when the unbiased variance normalises);
    eval: ∂L/∂x = γ/√(running_var + ε) · δ.  ∂L/∂γ = Σ δ x̂, ∂L/∂β = Σ δ.
    ∂L/∂μ and ∂L/∂σ² (grad_mean, grad_var) of the statistics that normalise, μ and σ² as nodes of the
    graph (_statistics_gradients): the batch's in training, the running ones in evaluation.
    Returns mean, var (those that normalise), std (√(var + ε)), x_hat, output, running_mean_new,
    running_var_new; with grad_output also grad_input, grad_gamma, grad_beta, grad_mean and grad_var.
    Raises ParamError for training with one value per channel (PyTorch refuses it), ε < 0 or a
    momentum outside [0, 1].
    """
    xa = array("x", x, (2, 4))
    c = xa.shape[1]
    axes = (0,) if xa.ndim == 2 else (0, 2, 3)
    m = xa.size // c
    training = boolean("training", training)
    variance = choice("variance", variance, ("biased", "unbiased"))
    momentum_convention = choice("momentum_convention", momentum_convention, BN_MOMENTUM)
    running_var_update = choice("running_var_update", running_var_update, BN_RUNNING_VAR)
    eps = number("eps", eps)
    if eps < 0:
        raise ParamError(f"eps: expected a number ≥ 0, got {eps:g}")
    momentum = number("momentum", momentum)
    if not 0 <= momentum <= 1:
        raise ParamError(f"momentum: expected a number in [0, 1], got {momentum:g}")
    g = per_channel("gamma", gamma, c)
    b = per_channel("beta", beta, c)
    rm = per_channel("running_mean", running_mean, c)
    rv = per_channel("running_var", running_var, c)
    if np.any(rv < 0):
        raise ParamError("running_var: a variance cannot be negative")
    shape = (1, c) + (1,) * (xa.ndim - 2)
    if training:
        if m < 2:
            raise ParamError(f"x: training mode needs more than one value per channel to take a batch variance "
                             f"(got shape {shape_str(xa.shape)}), as PyTorch")
        mean = xa.mean(axis=axes)
        biased = ((xa - mean.reshape(shape)) ** 2).mean(axis=axes)
        unbiased = biased * m / (m - 1)
        var = biased if variance == "biased" else unbiased
        new = momentum if momentum_convention == "pytorch" else 1 - momentum      # the batch's weight
        rm_new = (1 - new) * rm + new * mean
        rv_new = (1 - new) * rv + new * (unbiased if running_var_update == "unbiased" else biased)
    else:
        mean, var = rm.copy(), rv.copy()
        unbiased = None
        rm_new, rv_new = rm.copy(), rv.copy()
    std = np.sqrt(var + eps)
    if np.any(std == 0):
        raise ParamError("eps: a channel has zero variance and eps is 0, so the normalisation divides by zero")
    x_hat = (xa - mean.reshape(shape)) / std.reshape(shape)
    out = g.reshape(shape) * x_hat + b.reshape(shape)
    trace = Trace(mean=mean, var=var, std=std, x_hat=x_hat, output=out, running_mean_new=rm_new,
                  running_var_new=rv_new)
    if unbiased is not None:
        trace["var_unbiased"] = unbiased
    if grad_output is not None:
        d = array("grad_output", grad_output, xa.ndim)
        if d.shape != xa.shape:
            raise ShapeError(f"grad_output: expected x's shape {shape_str(xa.shape)}, got {shape_str(d.shape)}")
        grad_beta = d.sum(axis=axes)
        grad_gamma = (d * x_hat).sum(axis=axes)
        scale = (g / std).reshape(shape)
        if training:
            # σ² = c/m · Σ(x − μ)² with c = 1 (biased) or m/(m − 1) (unbiased): ∂σ/∂x carries that c
            c = 1.0 if variance == "biased" else m / (m - 1)
            grad_input = scale * (d - (grad_beta / m).reshape(shape) - c * x_hat * (grad_gamma / m).reshape(shape))
        else:
            grad_input = scale * d
        trace.update(grad_input=grad_input, grad_gamma=grad_gamma, grad_beta=grad_beta)
        trace.update(_statistics_gradients(xa, mean.reshape(shape), std, g.reshape(shape) * d, axes,
                                           (m if variance == "biased" else m - 1) if training else None))
    return trace


def _statistics_gradients(x, mean, std, grad_x_hat, axes, divisor) -> dict:
    """∂L/∂σ² and ∂L/∂μ of batch norm, μ and σ² taken as nodes of the graph (Ioffe & Szegedy 2015,
    §3: the backward pass through the transform), per channel, with x̂' = ∂L/∂x̂ = δ·γ:
        ∂L/∂σ² = Σ x̂'·(x − μ) · (−½)(σ² + ε)^(−3/2)
        ∂L/∂μ  = Σ x̂'·(−1/√(σ² + ε)) + ∂L/∂σ² · Σ −2(x − μ)/divisor
    where in training σ² = Σ(x − μ)²/divisor also depends on μ (that last sum is 0: Σ(x − μ) = 0);
    in evaluation (divisor None) μ and σ² are the running statistics and σ² does not depend on μ."""
    centered = x - mean
    grad_var = (grad_x_hat * centered).sum(axis=axes) * -0.5 * std ** -3.0
    grad_mean = -grad_x_hat.sum(axis=axes) / std
    if divisor is not None:
        grad_mean = grad_mean + grad_var * (-2.0 * centered).sum(axis=axes) / divisor
    return {"grad_mean": grad_mean, "grad_var": grad_var}



def batch_norm_from_stats(x, mean, var, eps=1e-5, gamma=1.0, beta=0.0) -> np.ndarray:
    """γ ⊙ (x − μ)/√(σ² + ε) + β per channel from given statistics (an ECF rule: batch norm's output from
    a student's own mean and variance). x (N, C) or (N, C, H, W); mean, var, gamma, beta a number or (C,)."""
    X = array("x", x, (2, 4))
    c = X.shape[1]
    shape = (1, c) + (1,) * (X.ndim - 2)
    mu, v = per_channel("mean", mean, c).reshape(shape), per_channel("var", var, c).reshape(shape)
    if np.any(v < 0):
        raise ParamError("var: a variance cannot be negative")
    g, b = per_channel("gamma", gamma, c).reshape(shape), per_channel("beta", beta, c).reshape(shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        return g * (X - mu) / np.sqrt(v + number("eps", eps)) + b


def running_update(running, batch, momentum=0.1, momentum_convention: str = "pytorch", batch_factor=1.0) -> np.ndarray:
    """A running statistic after one step from a given batch statistic (an ECF rule): PyTorch's
    (1 − momentum)·running + momentum·f·batch, or Keras's momentum·running + (1 − momentum)·f·batch, where
    f (batch_factor) is m/(m − 1) for PyTorch's running variance from the biased batch variance, else 1."""
    r, b = array("running", running, (0, 1)), array("batch", batch, (0, 1))
    if r.ndim and b.ndim and r.shape != b.shape:
        raise ShapeError(f"batch: expected {r.shape[0]} values (one per channel), got {b.shape[0]}")
    m = number("momentum", momentum)
    new = m if choice("momentum_convention", momentum_convention, BN_MOMENTUM) == "pytorch" else 1 - m
    return (1 - new) * r + new * number("batch_factor", batch_factor) * b
