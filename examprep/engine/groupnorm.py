"""Group normalisation and instance normalisation, as torch.nn.GroupNorm and torch.nn.InstanceNorm2d:
forward, backward and the number of learnable parameters.

Both normalise each example on its own (no batch statistics, so training and evaluation agree):
group norm splits the C channels into num_groups groups of C/num_groups consecutive channels and
normalises each group over its channels and every position (Wu & He 2018, "Group Normalization",
eq. 1 and Fig. 2); instance norm is the case num_groups = C, each channel over its positions
(Ulyanov et al. 2016). num_groups = 1 is layer norm over C×H×W.
"""
from __future__ import annotations

import numpy as np

from examprep.engine._core import Trace, array, boolean, choice, integer, number, shape_str
from examprep.engine.norm import per_channel
from examprep.errors import ParamError, ShapeError

VARIANCES = ("biased", "unbiased")


def _normalise_groups(x, num_groups: int, weight, bias, *, eps, affine, grad_output, variance: str,
                      module: str) -> Trace:
    """The shared body: x (N, C, H, W) or (C, H, W), statistics per example and group of
    C/num_groups consecutive channels over those channels and every position."""
    xa = array("x", x, (3, 4))
    batched = xa.ndim == 4
    x4 = xa if batched else xa[None]
    n, c = x4.shape[:2]
    if c % num_groups:
        raise ParamError(f"num_groups: must divide the number of channels ({c}), got {num_groups}")
    eps = number("eps", eps)
    if eps < 0:
        raise ParamError(f"eps: expected a number ≥ 0, got {eps:g}")
    affine = boolean("affine", affine)
    variance = choice("variance", variance, VARIANCES)
    w = per_channel("weight", weight, c)
    b = per_channel("bias", bias, c)
    if not affine and (np.any(w != 1) or np.any(b != 0)):
        raise ParamError(f"weight, bias: affine is false, so {module} has no weight or bias; leave them out or set "
                         "affine true")
    m = x4[0].size // num_groups                     # values per group: (C/G)·H·W
    if variance == "unbiased" and m < 2:
        raise ParamError("variance: the unbiased variance needs at least 2 values per group")
    xg = x4.reshape(n, num_groups, m)
    mean = xg.mean(axis=-1)
    centered = xg - mean[..., None]
    var = (centered ** 2).sum(axis=-1) / (m if variance == "biased" else m - 1)
    std = np.sqrt(var + eps)
    if np.any(std == 0):
        raise ParamError("eps: a group has zero variance and eps is 0, so the normalisation divides by zero")
    x_hat = (centered / std[..., None]).reshape(x4.shape)
    shape = (1, c, 1, 1)
    out = w.reshape(shape) * x_hat + b.reshape(shape)
    one = (lambda a: a) if batched else (lambda a: a[0])
    trace = Trace(mean=one(mean), var=one(var), std=one(std), x_hat=one(x_hat), output=one(out),
                  group_size=m, num_params=2 * c * affine)
    if grad_output is not None:
        d = array("grad_output", grad_output, xa.ndim)
        if d.shape != xa.shape:
            raise ShapeError(f"grad_output: expected x's shape {shape_str(xa.shape)}, got {shape_str(d.shape)}")
        d4 = d if batched else d[None]
        dx_hat = (d4 * w.reshape(shape)).reshape(n, num_groups, m)
        xh = x_hat.reshape(n, num_groups, m)
        # σ² = k/m · Σ(x − μ)², k = 1 (biased) or m/(m − 1) (unbiased): ∂σ²/∂x carries that k
        k = 1.0 if variance == "biased" else m / (m - 1)
        grad_input = (dx_hat - dx_hat.mean(axis=-1, keepdims=True)
                      - k * xh * (dx_hat * xh).mean(axis=-1, keepdims=True)) / std[..., None]
        trace["grad_input"] = one(grad_input.reshape(x4.shape))
        if affine:
            trace.update(grad_weight=(d4 * x_hat).sum(axis=(0, 2, 3)), grad_bias=d4.sum(axis=(0, 2, 3)))
    return trace


def group_norm(x, num_groups, weight=1.0, bias=0.0, *, eps: float = 1e-5, affine: bool = True, num_channels=None,
               grad_output=None, variance: str = "biased") -> Trace:
    """Group normalisation of x, as torch.nn.GroupNorm(num_groups, num_channels, eps, affine).

    Shapes: x (N, C, H, W), or (C, H, W) for one example (what GroupNorm computes on x[None]);
    weight (γ) and bias (β) a number or (C,): one per CHANNEL, not per group, as torch's.
    Group g holds channels g·C/G … (g + 1)·C/G − 1; per example and group, over its m = (C/G)·H·W values:
        μ = (1/m) Σ x,  σ² = (1/m) Σ (x − μ)²  (biased, as torch; "unbiased" divides by m − 1),
        x̂ = (x − μ)/√(σ² + ε),  y = γ_c x̂ + β_c.
    Backward (grad_output δ, x's shape), per example and group, with x̂' = δ·γ_c:
        ∂L/∂x = (x̂' − mean(x̂') − x̂·mean(x̂'·x̂))/√(σ² + ε)   (the last term × m/(m − 1) for "unbiased"),
        ∂L/∂γ_c = Σ δ x̂,  ∂L/∂β_c = Σ δ  (over the batch and the positions).
    num_params: 2C with affine (γ and β), else 0; GroupNorm keeps no running statistics.
    num_channels (optional) must equal x's C, as torch checks the module's against its input.
    Returns mean, var, std (√(σ² + ε)) of shape (N, G) or (G,), x_hat, output, group_size m, num_params;
    with grad_output also grad_input, and grad_weight and grad_bias when affine.
    Raises ParamError for num_groups not dividing C, ε < 0, a weight or bias with affine false, a zero
    variance with ε = 0; ShapeError for a weight, bias or grad_output of the wrong shape.
    """
    num_groups = integer("num_groups", num_groups, 1)
    if num_channels is not None:
        c = array("x", x, (3, 4)).shape[-3]
        if integer("num_channels", num_channels, 1) != c:
            raise ShapeError(f"num_channels: {num_channels} does not match x, which has {c} channels "
                             "(x is N×C×H×W or C×H×W)")
    return _normalise_groups(x, num_groups, weight, bias, eps=eps, affine=affine, grad_output=grad_output,
                             variance=variance, module="GroupNorm")


def instance_norm(x, weight=1.0, bias=0.0, *, eps: float = 1e-5, affine: bool = False, num_features=None,
                  grad_output=None, variance: str = "biased") -> Trace:
    """Instance normalisation of x, as torch.nn.InstanceNorm2d(num_features, eps, affine) with its
    default track_running_stats=False (each instance's own statistics in training and evaluation).

    Shapes: x (N, C, H, W) or (C, H, W) (unbatched, as InstanceNorm2d accepts); weight and bias a number
    or (C,), only with affine (False by default, as torch: no learnable parameters unless asked).
    Group norm with one channel per group: per example and channel, over its H·W positions,
        x̂ = (x − μ)/√(σ² + ε) with the biased σ²,  y = γ_c x̂ + β_c;  backward as group_norm's.
    num_params: 2C with affine, else 0.
    Returns mean, var, std of shape (N, C) or (C,), x_hat, output, num_params; with grad_output also
    grad_input, and grad_weight and grad_bias when affine.
    Raises ParamError for one position per channel (H·W = 1: torch refuses it in training) and as
    group_norm otherwise.
    """
    xa = array("x", x, (3, 4))
    c = xa.shape[-3]
    if num_features is not None and integer("num_features", num_features, 1) != c:
        raise ShapeError(f"num_features: {num_features} does not match x, which has {c} channels "
                         "(x is N×C×H×W or C×H×W)")
    if xa.shape[-1] * xa.shape[-2] < 2:
        raise ParamError(f"x: instance norm needs more than one position per channel (got H×W = "
                         f"{xa.shape[-2]}×{xa.shape[-1]}), as PyTorch")
    return _normalise_groups(xa, c, weight, bias, eps=eps, affine=affine, grad_output=grad_output,
                             variance=variance, module="InstanceNorm2d")


def group_norm_from_stats(x, mean, var, num_groups, eps=1e-5, weight=1.0, bias=0.0, channel=None) -> np.ndarray:
    """γ_c (x − μ_g)/√(σ²_g + ε) + β_c from given statistics, one per example and group of consecutive
    channels (an ECF rule: the output from a student's own μ and σ²). x (N, C, H, W) or (C, H, W); mean
    and var (N, G) or (G,); num_groups = C is instance norm. channel (optional, one example only): that
    channel's H×W plane alone, for a part that asks one channel."""
    X = array("x", x, (3, 4))
    x4 = X if X.ndim == 4 else X[None]
    n, c = x4.shape[:2]
    g = integer("num_groups", num_groups, 1)
    if c % g:
        raise ParamError(f"num_groups: must divide the number of channels ({c}), got {g}")
    mu, v = array("mean", mean), array("var", var)
    if mu.size != n * g or v.size != n * g:
        raise ShapeError(f"mean, var: expected one per example and group ({n}×{g})")
    if np.any(v < 0):
        raise ParamError("var: a variance cannot be negative")
    xg = x4.reshape(n, g, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_hat = ((xg - mu.reshape(n, g, 1)) / np.sqrt(v.reshape(n, g, 1) + number("eps", eps))).reshape(x4.shape)
    shape = (1, c, 1, 1)
    out = per_channel("weight", weight, c).reshape(shape) * x_hat + per_channel("bias", bias, c).reshape(shape)
    out = out if X.ndim == 4 else out[0]
    if channel is None:
        return out
    if X.ndim == 4:
        raise ShapeError("channel: picks a channel of one example (x C×H×W), not of a batch")
    c_pick = integer("channel", channel, 0)
    if c_pick >= c:
        raise ParamError(f"channel: expected 0 … {c - 1}, got {c_pick}")
    return out[c_pick]
