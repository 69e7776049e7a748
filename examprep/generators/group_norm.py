"""Group and instance normalisation by hand (torch.nn.GroupNorm, torch.nn.InstanceNorm2d) on one example
C×H×W: which values share a mean and a variance, the per-channel γ and β, the parameter count, and the
gradients of γ and β.

Level 1: GroupNorm(2, 4) on a 4×1×2 input: two groups of two consecutive channels, μ and the biased σ²
of each group's 4 values, and x̂ = (x − μ)/√(σ² + ε) channel by channel.
Level 2: the same with learned per-channel γ and β, and the layer's number of parameters (2C, not 2G).
Level 3: InstanceNorm2d(2, affine=True) on a 2×2×2 input (each channel over its own 4 positions), the
output, ∂L/∂γ = Σ δ x̂ and ∂L/∂β = Σ δ for a given δ, and the parameters of InstanceNorm2d(2) with its
default affine=False.
Calculator-free: each group's (or channel's) deviations from its mean are whole numbers with a whole σ
and ε = 0, γ and β integers, so every answer is an exact fraction.
"""
from __future__ import annotations

import functools
import itertools
from fractions import Fraction

import numpy as np

from examprep import solve
from examprep.document import Matrix, Text
from examprep.exact import frac
from examprep.generators.framework import (
    Degenerate, Draft, Stream, generator, jsonable, step_per_part, steps_from, value_blocks,
)
from examprep.problem import EcfRule, Part, SolutionStep


@functools.cache
def _whole_sigma_deviations() -> tuple[tuple[int, ...], ...]:
    """Integer deviations of 4 values with Σ = 0 and a whole biased σ (Σd² = 4σ², σ = 1, 2, 3)."""
    return tuple(c for c in itertools.combinations_with_replacement(range(-5, 6), 4)
                 if not sum(c) and sum(v * v for v in c) in (4, 16, 36))


def _four_values(rng: Stream, exact: bool) -> np.ndarray:
    """The 4 values that share one mean and variance."""
    if exact:
        return np.array(rng.shuffle(rng.choice(_whole_sigma_deviations())), dtype=float) + rng.integer(-2, 4)
    v = rng.ints(-3, 5, (4,))
    return v if np.ptp(v) > 0 else _four_values(rng, exact)


def _channel(v, c: int) -> list:
    return jsonable(np.asarray(v)[c])


def _per_channel_ecf(rule: EcfRule | None, c: int) -> EcfRule | None:
    """The table's ECF rule for the whole output, narrowed to channel c (a part asks one channel)."""
    return None if rule is None else EcfRule(rule.op, {**rule.args, "channel": c}, rule.output)


class _Exact:
    """The calculator-free answers as exact fractions: ε = 0, whole σ per group."""

    def __init__(self, x: np.ndarray, groups: int, gamma, beta, delta=None):
        c = x.shape[0]
        per = c // groups
        fr = lambda v: Fraction(str(float(v)))  # noqa: E731
        g = [fr(v) for v in np.broadcast_to(gamma, (c,))]
        b = [fr(v) for v in np.broadcast_to(beta, (c,))]
        self.mean, self.var, self.output, x_hat = [], [], [], []
        for k in range(groups):
            vals = [fr(v) for v in np.ravel(x[k * per:(k + 1) * per])]
            mu = sum(vals) / len(vals)
            var = sum((v - mu) ** 2 for v in vals) / len(vals)
            sd = Fraction(round(float(var) ** 0.5))
            assert sd * sd == var
            self.mean.append(frac(mu))
            self.var.append(frac(var))
            for ch in range(k * per, (k + 1) * per):
                xh = [[(fr(v) - mu) / sd for v in row] for row in x[ch]]
                x_hat.append(xh)
                self.output.append([[frac(g[ch] * e + b[ch]) for e in row] for row in xh])
        if delta is not None:
            self.grad_weight = [frac(sum(fr(d) * e for dr, xr in zip(delta[ch], x_hat[ch]) for d, e in zip(dr, xr)))
                                for ch in range(c)]
            self.grad_bias = [frac(sum(fr(d) for d in np.ravel(delta[ch]))) for ch in range(c)]


@generator("group-norm", title="Group and instance normalisation", version=1,
           syllabus="Normalisation layers: group norm and instance norm (axes, γ and β per channel, parameters)")
def group_norm(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    if difficulty < 3:
        return _group_norm(rng, difficulty, calculator_free)
    return _instance_norm(rng, calculator_free)


def _affine(rng: Stream, c: int, exact: bool) -> tuple[np.ndarray, np.ndarray]:
    if exact:
        return rng.ints(1, 3, (c,)).astype(float), rng.ints(-2, 2, (c,)).astype(float)
    return rng.decimals(0.5, 2, 0.5, (c,)), rng.decimals(-1, 1, 0.5, (c,))


def _group_norm(rng: Stream, difficulty: int, exact: bool) -> Draft:
    c, groups = 4, 2
    x = np.concatenate([_four_values(rng, exact) for _ in range(groups)]).reshape(c, 1, 2)
    gamma, beta = _affine(rng, c, exact) if difficulty == 2 else (np.ones(c), np.zeros(c))
    eps = 0.0 if exact else 1e-5
    params = {"x": jsonable(x), "num_groups": groups, "eps": eps}
    if difficulty == 2:
        params |= {"weight": jsonable(gamma), "bias": jsonable(beta)}
    known = solve.mistakes("group-norm", params)
    t = known.trace()
    if np.any((np.abs(t.output) < 1e-3) & (np.abs(t.output) > 0)):
        raise Degenerate("an output that ε alone keeps off 0")
    ex = _Exact(x, groups, gamma, beta) if exact else None
    steps = solve.groupnorm.group_norm_steps(known.params, t)
    whole = solve.ecf("group-norm", "output", known.params, t, ("mean", "var"))
    parts = [
        Part("mean", r"The mean $\mu$ of each group (group 1: channels 0 and 1; group 2: channels 2 and 3).", "vector",
             jsonable(t.mean), shape=(2,), points=1, minutes=1.5, exact=ex and ex.mean,
             misconceptions=known.of("mean", jsonable), hint="Average the 4 values of each group: 2 channels × 2 positions."),
        Part("var", r"The variance $\sigma^2$ of each group (biased: divide by the group's 4 values).", "vector",
             jsonable(t.var), shape=(2,), points=1, minutes=2, exact=ex and ex.var,
             misconceptions=known.of("var", jsonable), hint="σ² = (1/m) Σ (x − μ)² over the group, m = (C/G)·H·W = 4."),
    ]
    for ch in range(c):
        parts.append(Part(f"output_{ch}", f"The output of channel {ch}, $y[{ch}]$ (1×2).", "matrix", _channel(t.output, ch),
                          shape=(1, 2), points=1, minutes=1, exact=ex and ex.output[ch],
                          misconceptions=known.of("output", lambda v, ch=ch: _channel(v, ch)),
                          ecf_rule=_per_channel_ecf(whole, ch)))
    solution = (steps_from(steps.groups, "mean") + step_per_part(steps.statistics, {"mean": "mean", "var": "var"},
                                                                 titles={"var": "The variance of each group"})
                + step_per_part(steps.normalise, {"std": "output_0", "x_hat": "output_0"})
                + step_per_part(steps.affine, {f"output[{ch}]": f"output_{ch}" for ch in range(c)},
                                titles={f"output[{ch}]": f"Channel {ch}" for ch in range(1, c)}))
    if difficulty == 2:
        parts.append(Part("num_params", "The number of learnable parameters of this GroupNorm(2, 4) layer.", "integer",
                          int(t.num_params), points=1, minutes=1, misconceptions=known.of("num_params"),
                          hint="γ and β, as torch's affine=True has them: how many of each?"))
        solution += steps_from(steps.parameters, "num_params")
    if ex is not None:
        solution.append(SolutionStep("Exact values", [Matrix(p.id, p.exact) for p in parts if p.exact]))
    eps_text = "ε = 0 (to keep the numbers exact)" if exact else "ε = 10⁻⁵ (inside the square root, as PyTorch)"
    intro = ("A GroupNorm(num_groups=2, num_channels=4) layer normalises one example x of shape C×H×W = 4×1×2 "
             "(each row below is one channel's 1×2 plane): "
             + ("γ = 1, β = 0" if difficulty == 1 else "with the learned per-channel γ and β below") + f"; {eps_text}.")
    statement = [Text(intro), Matrix("x", jsonable(x.reshape(c, 2)), row_labels=[f"channel {ch}" for ch in range(c)],
                                     col_labels=["position 0", "position 1"])]
    if difficulty == 2:
        statement += [Matrix("γ", jsonable(gamma)), Matrix("β", jsonable(beta))]
    return Draft(title={1: "Group norm: statistics per group", 2: "Group norm with γ and β, and its parameters"}[difficulty],
                 params=params, statement=statement, parts=parts, solution=solution,
                 conventions={"groups": "2 groups of 2 consecutive channels; statistics per example and group",
                              "variance": "biased (÷ m)", "eps": ("10⁻⁵" if eps else "0") + " inside the square root"})


def _instance_norm(rng: Stream, exact: bool) -> Draft:
    c = 2
    x = np.stack([_four_values(rng, exact).reshape(2, 2) for _ in range(c)])
    gamma, beta = _affine(rng, c, exact)
    delta = rng.ints(-2, 2, (c, 2, 2), nonzero=True).astype(float)
    eps = 0.0 if exact else 1e-5
    params = {"x": jsonable(x), "affine": True, "weight": jsonable(gamma), "bias": jsonable(beta), "eps": eps,
              "grad_output": jsonable(delta)}
    known = solve.mistakes("instance-norm", params)
    t = known.trace()
    if np.any((np.abs(t.output) < 1e-3) & (np.abs(t.output) > 0)) or not np.all(t.grad_weight):
        raise Degenerate("an output that ε alone keeps off 0, or a zero ∂L/∂γ")
    default = known.at(affine=False, weight=1.0, bias=0.0, grad_output=None)      # InstanceNorm2d(2) as torch builds it
    ex = _Exact(x, c, gamma, beta, delta) if exact else None
    steps = solve.groupnorm.group_norm_steps(known.params, t)
    whole = solve.ecf("instance-norm", "output", known.params, t, ("mean", "var"))
    parts = [
        Part("mean", r"The mean $\mu$ of each channel.", "vector", jsonable(t.mean), shape=(2,), points=1, minutes=1.5,
             exact=ex and ex.mean, misconceptions=known.of("mean", jsonable)),
        Part("var", r"The (biased) variance $\sigma^2$ of each channel.", "vector", jsonable(t.var), shape=(2,), points=1,
             minutes=2, exact=ex and ex.var, misconceptions=known.of("var", jsonable)),
    ]
    for ch in range(c):
        parts.append(Part(f"output_{ch}", f"The output of channel {ch}, $y[{ch}]$ (2×2).", "matrix", _channel(t.output, ch),
                          shape=(2, 2), points=2, minutes=2, exact=ex and ex.output[ch],
                          misconceptions=known.of("output", lambda v, ch=ch: _channel(v, ch)),
                          ecf_rule=_per_channel_ecf(whole, ch)))
    parts += [
        Part("grad_bias", r"$\partial L / \partial \beta$ (one entry per channel), given $\delta = \partial L / \partial y$.",
             "vector", jsonable(t.grad_bias), shape=(2,), points=1, minutes=1, exact=ex and ex.grad_bias,
             misconceptions=known.of("grad_bias", jsonable)),
        Part("grad_weight", r"$\partial L / \partial \gamma$ (one entry per channel).", "vector", jsonable(t.grad_weight),
             shape=(2,), points=2, minutes=2, exact=ex and ex.grad_weight, misconceptions=known.of("grad_weight", jsonable),
             hint="∂L/∂γ_c = Σ δ · x̂ over channel c's positions."),
        Part("num_params_default", "How many learnable parameters has InstanceNorm2d(2) built with its default "
             "arguments?", "integer", int(default.trace().num_params), points=1, minutes=0.5,
             misconceptions=default.of("num_params")),
    ]
    default_steps = solve.groupnorm.group_norm_steps(default.params, default.trace())
    solution = (steps_from(steps.groups, "mean") + step_per_part(steps.statistics, {"mean": "mean", "var": "var"},
                                                                 titles={"var": "The variance of each channel"})
                + step_per_part(steps.normalise, {"std": "output_0", "x_hat": "output_0"})
                + step_per_part(steps.affine, {"output[0]": "output_0", "output[1]": "output_1"},
                                titles={"output[1]": "Channel 1"})
                + step_per_part(steps.grad_weight_bias, {"grad_bias": "grad_bias", "grad_weight": "grad_weight"},
                                titles={"grad_weight": "The gradient of γ"})
                + steps_from(default_steps.parameters, "num_params_default", prefix="InstanceNorm2d(2): "))
    if ex is not None:
        solution.append(SolutionStep("Exact values", [Matrix(p.id, p.exact) for p in parts if p.exact]))
    eps_text = "ε = 0 (to keep the numbers exact)" if exact else "ε = 10⁻⁵ (inside the square root, as PyTorch)"
    statement = [Text("An InstanceNorm2d(2, affine=True) layer normalises one example x of shape C×H×W = 2×2×2, with "
                      f"the learned per-channel γ and β below; {eps_text}. Backpropagation has delivered "
                      r"$\delta = \partial L / \partial y$."),
                 *value_blocks("x", jsonable(x)), Matrix("γ", jsonable(gamma)), Matrix("β", jsonable(beta)),
                 *value_blocks("δ", jsonable(delta))]
    return Draft(title="Instance norm: forward, the gradients of γ and β, and its parameters", params=params,
                 statement=statement, parts=parts, solution=solution,
                 conventions={"axis": "each channel of the example over its H×W positions", "variance": "biased (÷ H·W)",
                              "eps": ("10⁻⁵" if eps else "0") + " inside the square root",
                              "defaults": "InstanceNorm2d: affine=False, track_running_stats=False"})
