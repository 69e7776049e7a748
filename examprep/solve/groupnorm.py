"""Solve topics of group and instance normalisation: group-norm and instance-norm (issue 38).

Known mistakes are the axes students mix up — the four normalisations differ only in which values
share a mean and a variance (Wu & He 2018, Fig. 2: batch norm over (N, H, W), layer norm over
(C, H, W), instance norm over (H, W), group norm over (C/G, H, W)) — and the per-channel (not
per-group, not per-position) affine parameters.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.engine.groupnorm import group_norm, instance_norm
from examprep.errors import ParamError
from examprep.solve.contract import Ecf, Mistake, Param, Ref, Refusal, Step, Topic


class GroupNormSteps(NamedTuple):
    groups: Step                   # which channels share statistics, m values each
    statistics: Step               # mean, var
    normalise: Step                # std, x_hat
    affine: Step                   # output
    parameters: Step               # num_params
    grad_weight_bias: Step | None  # with grad_output and affine
    grad_input: Step | None        # with grad_output


def _channels(p: dict[str, Any]) -> int:
    return int(np.shape(p["x"])[-3])


def _groups(p: dict[str, Any]) -> int:
    """num_groups of the problem: its own, or C for instance norm."""
    return int(p["num_groups"]) if "num_groups" in p else _channels(p)


def _batch(p: dict[str, Any]) -> int:
    return int(np.shape(p["x"])[0]) if np.ndim(p["x"]) == 4 else 1


def group_norm_steps(p: dict[str, Any], t: Trace) -> GroupNormSteps:
    c, g = _channels(p), _groups(p)
    per = c // g
    if per == 1:
        groups = f"Instance norm: each channel on its own, over its {t.group_size} positions (per example)"
    elif g == 1:
        groups = f"One group of all {c} channels: layer norm over C×H×W, {t.group_size} values per example"
    else:
        groups = (f"{g} groups of {per} consecutive channels (group 1: channels 0–{per - 1}, …), "
                  f"{t.group_size} values each, per example")
    variance = r"\frac{1}{m}" if p["variance"] == "biased" else r"\frac{1}{m-1}"
    grads: tuple[Step | None, Step | None] = (None, None)
    if "grad_input" in t:
        grads = (Step("Gradients of γ and β (per channel, summed over the batch and the positions)",
                      r"\frac{\partial L}{\partial \gamma_c} = \sum \delta\, \hat x,\ \ "
                      r"\frac{\partial L}{\partial \beta_c} = \sum \delta",
                      {"grad_weight": t.grad_weight, "grad_bias": t.grad_bias}) if "grad_weight" in t else None,
                 Step("Input gradient (μ and σ² depend on every value of the group)",
                      r"\frac{\partial L}{\partial x} = \frac{1}{\sqrt{\sigma^2+\varepsilon}}\Big(\hat x' - \overline{\hat x'}"
                      r" - \hat x\, \overline{\hat x' \hat x}\Big),\ \ \hat x' = \gamma_c\, \delta"
                      r"\ \text{(means over the group)}", {"grad_input": t.grad_input}))
    return GroupNormSteps(
        Step(groups, r"m = \frac{C}{G}\, H\, W", {"group_size": t.group_size}),
        Step(f"Statistics per example and group ({p['variance']} variance)",
             rf"\mu_g = \frac{{1}}{{m}}\sum x,\ \ \sigma^2_g = {variance}\sum (x - \mu_g)^2", {"mean": t.mean, "var": t.var}),
        Step("Normalise (ε inside the square root, as PyTorch)", r"\hat x = \frac{x - \mu_g}{\sqrt{\sigma^2_g + \varepsilon}}",
             {"std": t.std, "x_hat": t.x_hat}),
        Step("Scale and shift, per channel", r"y = \gamma_c\, \hat x + \beta_c", {"output": t.output}),
        Step("Learnable parameters: γ and β, one per channel" if p["affine"] else "affine false: no learnable parameters",
             r"2C" if p["affine"] else "0", {"num_params": t.num_params}),
        *grads)


# ------------------------------------------------------------------------------------ the mistakes

def _call(p: dict[str, Any], x: Any = None, weight: Any = None, bias: Any = None, num_groups: int | None = None,
          grad_output: Any = None) -> Trace:
    """The engine on this problem with some values changed (the mistaken axes)."""
    return group_norm(p["x"] if x is None else x, num_groups or _groups(p),
                      p["weight"] if weight is None else weight, p["bias"] if bias is None else bias, eps=p["eps"],
                      affine=p["affine"], grad_output=p["grad_output"] if grad_output is None else grad_output,
                      variance=p["variance"])


def _defined(compute: Any) -> Any:
    """A mistaken computation, or None (no mistake to name) where its grouping divides by zero: ε = 0 and
    a group of equal values under the mistaken axes, though the problem's own groups vary."""
    def safe(p: dict[str, Any], t: Trace) -> Any:
        try:
            return compute(p, t)
        except ParamError:
            return None
    return safe


def _regrouped(answer: str, num_groups: Any) -> Any:
    """The answer with num_groups(p) groups instead of the problem's."""
    return _defined(lambda p, t: _call(p, num_groups=num_groups(p))[answer])


def _strided(p: dict[str, Any]) -> tuple[Trace, np.ndarray]:
    """The trace with group g holding channels g, g + G, g + 2G, … instead of consecutive ones, and the
    permutation that undoes it (read the output back in the problem's channel order)."""
    c, g = _channels(p), _groups(p)
    order = np.argsort(np.arange(c) % g, kind="stable")
    back = np.argsort(order)

    def per_channel(v: Any) -> Any:
        return np.asarray(v, dtype=float)[order] if np.ndim(v) else v

    x = np.asarray(p["x"], dtype=float)[..., order, :, :]
    d = None if p["grad_output"] is None else np.asarray(p["grad_output"], dtype=float)[..., order, :, :]
    return _call(p, x, per_channel(p["weight"]), per_channel(p["bias"]), grad_output=d), back


def _strided_value(answer: str) -> Any:
    def compute(p: dict[str, Any], t: Trace) -> Any:
        s, back = _strided(p)
        return s[answer] if answer in ("mean", "var") else s[answer][..., back, :, :]
    return _defined(compute)


def _broadcast(answer: str, num_groups: Any) -> Any:
    """A statistic over other axes written into the problem's (N, G) table: one per example and group."""
    def compute(p: dict[str, Any], t: Trace) -> Any:
        return np.broadcast_to(np.asarray(_call(p, num_groups=num_groups(p))[answer])[..., :1], np.shape(t[answer])).copy()
    return _defined(compute)


def _one_group(answer: str) -> Any:
    """Instance norm's answer had all channels been normalised together (layer norm over C×H×W)."""
    return _regrouped(answer, lambda p: 1)


@_defined
def _batch_axis(p: dict[str, Any], t: Trace) -> Any:
    """Batch norm's axis: each channel over the batch and the positions."""
    bn = engine.batch_norm(p["x"], p["weight"], p["bias"], eps=p["eps"], variance=p["variance"])
    return bn.output


def _batch_axis_stat(answer: str) -> Any:
    def compute(p: dict[str, Any], t: Trace) -> Any:
        bn = engine.batch_norm(p["x"], eps=p["eps"], variance=p["variance"])
        return np.broadcast_to(bn[answer], np.shape(t[answer])).copy()
    return _defined(compute)


def _several_groups(p: dict[str, Any]) -> bool:
    return 1 < _groups(p) < _channels(p)


def _not_one_group(p: dict[str, Any]) -> bool:
    return _groups(p) > 1


def _not_instance(p: dict[str, Any]) -> bool:
    return _groups(p) < _channels(p)


def _group_size_swapped(p: dict[str, Any]) -> bool:
    return _channels(p) // _groups(p) != _groups(p)


def _given_affine(p: dict[str, Any]) -> bool:
    return bool(np.any(np.asarray(p["weight"], dtype=float) != 1) or np.any(np.asarray(p["bias"], dtype=float) != 0))


def _with_grads(p: dict[str, Any]) -> bool:
    return p["grad_output"] is not None


def _with_affine_grads(p: dict[str, Any]) -> bool:
    return _with_grads(p) and bool(p["affine"])


def _several_batches(p: dict[str, Any]) -> bool:
    return _batch(p) > 1


def _summed_count(p: dict[str, Any]) -> int:
    """How many values each channel's ∂L/∂γ and ∂L/∂β sum: N·H·W."""
    return _batch(p) * int(np.shape(p["x"])[-1] * np.shape(p["x"])[-2])


def _constant_statistics(p: dict[str, Any], t: Trace) -> Any:
    """∂L/∂x with μ and σ² taken as constants: γ_c δ/√(σ² + ε)."""
    x4 = np.asarray(p["x"], dtype=float)
    x4 = x4 if x4.ndim == 4 else x4[None]
    n, c = x4.shape[:2]
    g = _groups(p)
    std = np.reshape(t.std, (n, g, 1, 1, 1))
    d = np.asarray(p["grad_output"], dtype=float).reshape(n, g, c // g, *x4.shape[2:])
    w = np.broadcast_to(np.asarray(p["weight"], dtype=float), (c,)).reshape(1, g, c // g, 1, 1)
    return (w * d / std).reshape(np.shape(p["x"]))


_UNBIASED = "Group norm (as batch and layer norm) uses the biased variance: divide by m, the values in the group, not m − 1."
_NO_AFFINE = "Apply the learned per-channel scale and shift: y = γ_c x̂ + β_c."

GROUP_NORM_MISTAKES = {
    "mean": (Mistake("strided-groups", compute=_strided_value("mean"), when=_several_groups,
                     why="A group is C/G CONSECUTIVE channels (channels 0…C/G − 1 form group 1), not every G-th channel."),
             Mistake("layer-norm-axis", compute=_broadcast("mean", lambda p: 1), when=_not_one_group,
                     why="That is the mean over all channels (layer norm, one group); group norm averages each group "
                         "of C/G channels separately.")),
    "var": (Mistake("unbiased", variance="unbiased", why=_UNBIASED),
            Mistake("std-not-var", compute=lambda p, t: t.std, why="That is √(σ² + ε); the variance is σ²."),
            Mistake("strided-groups", compute=_strided_value("var"), when=_several_groups,
                    why="A group is C/G CONSECUTIVE channels (channels 0…C/G − 1 form group 1), not every G-th channel.")),
    "x_hat": (Mistake("layer-norm-axis", compute=_regrouped("x_hat", lambda p: 1), when=_not_one_group,
                      why="You normalised over all channels at once (layer norm, G = 1); group norm normalises each group "
                          "of C/G channels on its own."),
              Mistake("instance-norm-axis", compute=_regrouped("x_hat", _channels), when=_not_instance,
                      why="You normalised each channel on its own (instance norm, G = C); group norm pools C/G channels "
                          "per group."),
              Mistake("unbiased", variance="unbiased", why=_UNBIASED)),
    "output": (Mistake("layer-norm-axis", compute=_regrouped("output", lambda p: 1), when=_not_one_group,
                       why="You normalised over all channels at once (layer norm, G = 1); group norm normalises each "
                           "group of C/G channels on its own."),
               Mistake("instance-norm-axis", compute=_regrouped("output", _channels), when=_not_instance,
                       why="You normalised each channel on its own (instance norm, G = C); group norm pools C/G "
                           "channels per group."),
               Mistake("channels-per-group", compute=_regrouped("output", lambda p: _channels(p) // _groups(p)),
                       when=_group_size_swapped,
                       why="num_groups is the NUMBER of groups G (torch.nn.GroupNorm(num_groups, num_channels)); each "
                           "group holds C/G channels."),
               Mistake("strided-groups", compute=_strided_value("output"), when=_several_groups,
                       why="A group is C/G CONSECUTIVE channels (channels 0…C/G − 1 form group 1), not every G-th channel."),
               Mistake("unbiased", variance="unbiased", why=_UNBIASED),
               Mistake("no-affine", compute=lambda p, t: t.x_hat, when=_given_affine, why=_NO_AFFINE)),
    "num_params": (Mistake("per-group", compute=lambda p, t: 2 * _groups(p), when=lambda p: p["affine"] and _not_instance(p),
                           why="GroupNorm's γ and β are per CHANNEL (num_channels each), not per group: 2C parameters."),
                   Mistake("no-bias", compute=lambda p, t: _channels(p), when=lambda p: p["affine"],
                           why="affine gives both a scale γ and a shift β per channel: 2C parameters."),
                   Mistake("affine-anyway", compute=lambda p, t: 2 * _channels(p), when=lambda p: not p["affine"],
                           why="With affine=False the layer has no γ and no β: 0 parameters.")),
    "grad_input": (Mistake("constant-statistics", compute=_constant_statistics, when=_with_grads,
                           why="μ and σ² depend on every value of the group: subtract the group means of x̂' and of "
                               "x̂'·x̂ (x̂ times it) before dividing by √(σ² + ε)."),
                   Mistake("layer-norm-axis", compute=_regrouped("grad_input", lambda p: 1),
                           when=lambda p: _with_grads(p) and _not_one_group(p),
                           why="The statistics, and so the gradient's means, are per group of C/G channels, not over all "
                               "channels."),
                   Mistake("instance-norm-axis", compute=_regrouped("grad_input", _channels),
                           when=lambda p: _with_grads(p) and _not_instance(p),
                           why="The statistics, and so the gradient's means, pool the C/G channels of a group, not one "
                               "channel.")),
    "grad_weight": (Mistake("without-x-hat", compute=lambda p, t: t.grad_bias, when=_with_affine_grads,
                            why="∂L/∂γ_c = Σ δ·x̂: γ multiplies x̂, so its gradient carries x̂."),
                    Mistake("mean-not-sum", compute=lambda p, t: t.grad_weight / _summed_count(p),
                            when=_with_affine_grads,
                            why="γ_c scales every value of channel c: SUM δ·x̂ over the batch and the positions.")),
    "grad_bias": (Mistake("with-x-hat", compute=lambda p, t: t.grad_weight, when=_with_affine_grads,
                          why="β_c is added as it is: ∂L/∂β_c = Σ δ, with no x̂ (that is ∂L/∂γ_c)."),
                  Mistake("mean-not-sum", compute=lambda p, t: t.grad_bias / _summed_count(p), when=_with_affine_grads,
                          why="β_c shifts every value of channel c: SUM δ over the batch and the positions.")),
}

_INSTANCE_UNBIASED = "Instance norm uses the biased variance: divide by H·W, not H·W − 1."

INSTANCE_NORM_MISTAKES = {
    "mean": (Mistake("batch-norm-axis", compute=_batch_axis_stat("mean"), when=_several_batches,
                     why="That is each channel's mean over the whole batch (batch norm); instance norm averages each "
                         "example's channel on its own."),
             Mistake("layer-norm-axis", compute=_broadcast("mean", lambda p: 1), when=_not_one_group,
                     why="That is the example's mean over all its channels (layer norm); instance norm averages each "
                         "channel over its H·W positions.")),
    "var": (Mistake("unbiased", variance="unbiased", why=_INSTANCE_UNBIASED),
            Mistake("std-not-var", compute=lambda p, t: t.std, why="That is √(σ² + ε); the variance is σ²."),
            Mistake("batch-norm-axis", compute=_batch_axis_stat("var"), when=_several_batches,
                    why="That is each channel's variance over the whole batch (batch norm); instance norm takes each "
                        "example's channel on its own.")),
    "x_hat": (Mistake("batch-norm-axis", compute=_defined(lambda p, t: engine.batch_norm(p["x"], eps=p["eps"],
                                                                                         variance=p["variance"]).x_hat),
                      when=_several_batches,
                      why="You normalised each channel over the whole batch (batch norm); instance norm normalises each "
                          "example's channel over its own positions."),
              Mistake("layer-norm-axis", compute=_one_group("x_hat"), when=_not_one_group,
                      why="You normalised over all channels of the example (layer norm); instance norm normalises each "
                          "channel on its own."),
              Mistake("unbiased", variance="unbiased", why=_INSTANCE_UNBIASED)),
    "output": (Mistake("batch-norm-axis", compute=_batch_axis, when=_several_batches,
                       why="You normalised each channel over the whole batch (batch norm); instance norm normalises each "
                           "example's channel over its own positions."),
               Mistake("layer-norm-axis", compute=_one_group("output"), when=_not_one_group,
                       why="You normalised over all channels of the example (layer norm); instance norm normalises each "
                           "channel on its own."),
               Mistake("unbiased", variance="unbiased", why=_INSTANCE_UNBIASED),
               Mistake("no-affine", compute=lambda p, t: t.x_hat, when=_given_affine, why=_NO_AFFINE)),
    "num_params": (Mistake("affine-by-default", compute=lambda p, t: 2 * _channels(p), when=lambda p: not p["affine"],
                           why="torch.nn.InstanceNorm2d has affine=False by default (unlike BatchNorm2d): no γ, no β, "
                               "0 parameters."),
                   Mistake("per-position", compute=lambda p, t: 2 * int(np.prod(np.shape(p["x"])[-3:])),
                           when=lambda p: p["affine"],
                           why="γ and β are one per channel (2C), not one per position as LayerNorm([C, H, W])'s."),
                   Mistake("running-statistics", compute=lambda p, t: 4 * _channels(p), when=lambda p: p["affine"],
                           why="Only γ and β are parameters (2C); running statistics, where tracked, are buffers.")),
    "grad_input": (Mistake("constant-statistics", compute=_constant_statistics, when=_with_grads,
                           why="μ and σ² depend on every position of the channel: subtract the channel's means of x̂' "
                               "and of x̂'·x̂ before dividing by √(σ² + ε)."),
                   Mistake("layer-norm-axis", compute=_one_group("grad_input"),
                           when=lambda p: _with_grads(p) and _not_one_group(p),
                           why="The statistics, and so the gradient's means, are per channel, not over all channels.")),
    "grad_weight": GROUP_NORM_MISTAKES["grad_weight"],
    "grad_bias": GROUP_NORM_MISTAKES["grad_bias"],
}


def _from_stats(p: dict[str, Any], t: Trace, affine: bool) -> dict[str, Any]:
    c = _channels(p)
    args = {"x": np.asarray(p["x"], dtype=float), "mean": Ref("mean"), "var": Ref("var"), "num_groups": _groups(p),
            "eps": p["eps"]}
    if affine:
        args.update(weight=np.broadcast_to(np.asarray(p["weight"], dtype=float), (c,)).copy(),
                    bias=np.broadcast_to(np.asarray(p["bias"], dtype=float), (c,)).copy())
    return args


_ECF = {"output": (Ecf("group-norm-from-stats", lambda p, t: _from_stats(p, t, True)),),
        "x_hat": (Ecf("group-norm-from-stats", lambda p, t: _from_stats(p, t, False)),)}

_ANSWERS = ("output", "mean", "var", "x_hat", "num_params", "grad_input", "grad_weight", "grad_bias")
_SHARED = (Param("weight", "number or vector (C): γ, one per channel", 1.0),
           Param("bias", "number or vector (C): β, one per channel", 0.0),
           Param("eps", "number (inside the square root, as PyTorch)", 1e-5))
_AFTER = (Param("grad_output", "∂L/∂output, x's shape (optional)", None),
          Param("variance", '"biased" (as PyTorch) or "unbiased"', "biased"))


def _conventions(p: dict[str, Any], what: str) -> dict[str, str]:
    return {"axis": what, "variance": f"{p['variance']} (÷ m{'' if p['variance'] == 'biased' else ' − 1'})",
            "eps": f"{p['eps']} inside the square root (PyTorch)",
            "statistics": "each example's own, in training and evaluation alike (no running statistics)"}


GROUP_NORM = Topic(
    "group-norm", "Group normalisation (torch.nn.GroupNorm): forward, backward, parameters",
    (Param("x", "N×C×H×W, or C×H×W (one example)"),
     Param("num_groups", "int G dividing C: group g holds channels g·C/G … (g+1)·C/G − 1"),
     Param("num_channels", "int: must equal x's C, as torch checks (optional)", None),
     *_SHARED, Param("affine", "bool: learnable γ and β per channel (as torch, true)", True), *_AFTER),
    _ANSWERS,
    lambda p: group_norm(p["x"], p["num_groups"], p["weight"], p["bias"], eps=p["eps"], affine=p["affine"],
                         num_channels=p["num_channels"], grad_output=p["grad_output"], variance=p["variance"]),
    group_norm_steps,
    mistakes=GROUP_NORM_MISTAKES,
    ecf=_ECF,
    conventions=lambda p: _conventions(p, f"per example and group of C/G consecutive channels, over those channels and "
                                          f"H×W (G = {p['num_groups']})"),
    answer_names=lambda p, t: [n for n in _ANSWERS if n in t],
    refuses=(Refusal("num_groups that does not divide the channels, as torch.nn.GroupNorm",
                     {"x": [[[1.0, 2.0]], [[3.0, 5.0]], [[0.0, 4.0]]], "num_groups": 2}),
             Refusal("a weight or bias with affine false (the layer has none)",
                     {"x": [[[1.0, 2.0]], [[3.0, 5.0]]], "num_groups": 1, "affine": False, "weight": [2.0, 1.0]})),
)

INSTANCE_NORM = Topic(
    "instance-norm", "Instance normalisation (torch.nn.InstanceNorm2d): forward, backward, parameters",
    (Param("x", "N×C×H×W, or C×H×W (one example, as InstanceNorm2d accepts)"),
     Param("num_features", "int: must equal x's C (optional)", None),
     *_SHARED, Param("affine", "bool: learnable γ and β per channel (false, as torch's default)", False), *_AFTER),
    _ANSWERS,
    lambda p: instance_norm(p["x"], p["weight"], p["bias"], eps=p["eps"], affine=p["affine"],
                            num_features=p["num_features"], grad_output=p["grad_output"], variance=p["variance"]),
    group_norm_steps,
    mistakes=INSTANCE_NORM_MISTAKES,
    ecf=_ECF,
    conventions=lambda p: _conventions(p, "per example and channel, over H×W (group norm with G = C)")
    | {"running statistics": "none: track_running_stats false, as torch's default"},
    answer_names=lambda p, t: [n for n in _ANSWERS if n in t],
    refuses=(Refusal("one position per channel (H×W = 1), as PyTorch in training",
                     {"x": [[[1.0]], [[2.0]]]}),
             Refusal("a weight or bias without affine true (InstanceNorm2d's default has none)",
                     {"x": [[[1.0, 2.0]], [[3.0, 5.0]]], "weight": [2.0, 1.0]})),
)
