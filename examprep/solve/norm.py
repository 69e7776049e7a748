"""Solve topic of normalisation: layer-norm."""
from __future__ import annotations

from typing import Any, NamedTuple

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Param, Step, Topic


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
    lambda p: {"eps_placement": {"added-to-std": "(x−μ)/(σ+ε), as the lecture notes",
                                 "inside-sqrt": "(x−μ)/√(σ²+ε), as torch.nn.LayerNorm"}.get(p["eps_placement"], ""),
               "variance": {"biased": "biased: divide by D (PyTorch)",
                            "unbiased": "unbiased: divide by D−1"}.get(p["variance"], ""),
               "eps": str(p["eps"])},
)
