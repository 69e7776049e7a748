"""Solve topic of normalisation: layer-norm."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Ecf, Mistake, Param, Ref, Step, Topic


class LayerNormSteps(NamedTuple):
    mean: Step
    variance: Step
    denominator: Step
    normalise: Step
    affine: Step                   # γ and β


def layer_norm_steps(p: dict[str, Any], t: Trace) -> LayerNormSteps:
    denom = r"\sigma + \varepsilon" if p["eps_placement"] == "added-to-std" else r"\sqrt{\sigma^2 + \varepsilon}"
    var = r"\frac{1}{D}" if p["variance"] == "biased" else r"\frac{1}{D-1}"
    return LayerNormSteps(
        Step("Mean over the features", r"\mu = \frac{1}{D}\sum_i x_i", {"mean": t.mean}),
        Step(f"Variance ({p['variance']})", rf"\sigma^2 = {var}\sum_i (x_i - \mu)^2", {"var": t.var, "std": t.std}),
        Step("Denominator", denom, {"denominator": t.denominator}),
        Step("Normalise", rf"\hat x = \frac{{x - \mu}}{{{denom}}}", {"normalized": t.normalized}),
        Step("Scale and shift", r"y = \gamma \odot \hat x + \beta", {"output": t.output}))


def _per_row(stat: Any, p: dict[str, Any]) -> Any:
    """A statistic (one per row) shaped to divide the rows of x."""
    return np.atleast_1d(stat).reshape(-1, 1) if np.ndim(p["x"]) == 2 else stat


def _affine(v: Any, p: dict[str, Any]) -> Any:
    return v * np.asarray(p["gamma"], dtype=float) + np.asarray(p["beta"], dtype=float)


def _rows(p: dict[str, Any]) -> bool:
    return np.ndim(p["x"]) == 2


def _given_affine(p: dict[str, Any]) -> bool:
    return np.ndim(p["gamma"]) > 0 or np.ndim(p["beta"]) > 0


def _batch_norm_axis(p: dict[str, Any]) -> bool:
    return _rows(p) and bool(np.all(np.ptp(np.asarray(p["x"], dtype=float), axis=0) > 0))


LAYER_NORM_MISTAKES = {
    "mean": (Mistake("sum-not-mean", compute=lambda p, t: np.sum(np.asarray(p["x"], dtype=float), axis=-1),
                     why="μ is the mean: divide the sum by D."),
             Mistake("over-tokens", compute=lambda p, t: np.asarray(p["x"], dtype=float).mean(axis=0), when=_rows,
                     why="Layer norm averages over each token's features (along a row), not over the tokens.")),
    "var": (Mistake("unbiased", variance="unbiased",
                    why="Layer norm uses the biased variance, dividing by D (as PyTorch), not D − 1."),
            Mistake("std-not-var", compute=lambda p, t: t.std, why="That is σ; the variance is σ².")),
    "output": (Mistake("unbiased", variance="unbiased", why="Use the biased variance (divide by D) for σ."),
               # the variance where the standard deviation belongs, and x where x − μ belongs (no ε in either)
               Mistake("divide-by-variance", compute=lambda p, t: _affine(t.centered / _per_row(t.var, p), p),
                       why="Divide by the standard deviation σ (+ ε), not by σ²."),
               Mistake("not-centred", compute=lambda p, t: _affine(np.asarray(p["x"], dtype=float) / _per_row(t.std, p), p),
                       why="Subtract the mean μ before dividing."),
               Mistake("batch-norm-axis", when=_batch_norm_axis,
                       compute=lambda p, t: _affine(engine.layer_norm(np.asarray(p["x"], dtype=float).T,
                                                                      eps=p["eps"]).normalized.T, p),
                       why="You normalised each feature over the tokens — batch norm's axis. Layer norm normalises each "
                           "token over its features."),
               Mistake("no-affine", compute=lambda p, t: t.normalized, when=_given_affine,
                       why="Apply the learned gain and bias: y = γ ⊙ x̂ + β."),
               Mistake("swapped-affine", gamma=lambda p: p["beta"], beta=lambda p: p["gamma"], when=_given_affine,
                       why="y = γ ⊙ x̂ + β: γ multiplies, β adds.")),
}

LAYER_NORM_ECF = {
    "output": (Ecf("layer-norm-from-stats", lambda p, t: {"x": p["x"], "mean": Ref("mean"), "var": Ref("var"), "eps": p["eps"],
                                                          "eps_placement": p["eps_placement"], "gamma": p["gamma"],
                                                          "beta": p["beta"]}),),
}


LAYER_NORM = Topic(
    "layer-norm", "Layer normalisation",
    (Param("x", "vector or rows (over the last axis)"), Param("gamma", "number or vector", 1.0),
     Param("beta", "number or vector", 0.0), Param("eps", "number", 1e-5),
     Param("eps_placement", '"added-to-std" (lecture) or "inside-sqrt" (PyTorch)', "added-to-std"),
     Param("variance", '"biased" or "unbiased"', "biased")),
    ("output", "mean", "var"),
    lambda p: engine.layer_norm(p["x"], p["gamma"], p["beta"], eps=p["eps"], eps_placement=p["eps_placement"],
                                variance=p["variance"]),
    layer_norm_steps,
    mistakes=LAYER_NORM_MISTAKES,
    ecf=LAYER_NORM_ECF,
    conventions=lambda p: {"eps_placement": {"added-to-std": "(x−μ)/(σ+ε), as the lecture notes",
                                 "inside-sqrt": "(x−μ)/√(σ²+ε), as torch.nn.LayerNorm"}.get(p["eps_placement"], ""),
               "variance": {"biased": "biased: divide by D (PyTorch)",
                            "unbiased": "unbiased: divide by D−1"}.get(p["variance"], ""),
               "eps": str(p["eps"])},
)
