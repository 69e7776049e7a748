"""Solve topic of activation functions: activation (value and derivative)."""
from __future__ import annotations

from typing import Any, NamedTuple

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Param, Step, Topic


class ActivationSteps(NamedTuple):
    cdf: Step | None               # gelu: Φ(x) and φ(x) first
    value: Step
    derivative: Step


def activation_steps(p: dict[str, Any], t: Trace) -> ActivationSteps:
    name = p["name"]
    if name == "sigmoid":
        return ActivationSteps(None, Step("Sigmoid", r"\sigma(x) = \frac{1}{1 + e^{-x}}", {"output": t.output}),
                               Step("Derivative", r"\sigma'(x) = \sigma(x)\,(1 - \sigma(x)) \le \tfrac14",
                                    {"derivative": t.derivative}))
    if name == "tanh":
        return ActivationSteps(None, Step("tanh", r"\tanh x = \frac{e^{x} - e^{-x}}{e^{x} + e^{-x}}", {"output": t.output}),
                               Step("Derivative", r"\tanh'(x) = 1 - \tanh^2 x \le 1", {"derivative": t.derivative}))
    if name == "relu":
        return ActivationSteps(None, Step("ReLU", r"\max(0, x)", {"output": t.output}),
                               Step("Derivative (0 at x = 0, as PyTorch)", r"\mathbb{1}[x > 0]",
                                    {"derivative": t.derivative}))
    if name == "leaky-relu":
        return ActivationSteps(None, Step("Leaky ReLU", r"x \text{ if } x > 0 \text{ else } \alpha x", {"output": t.output}),
                               Step("Derivative (α at x = 0, as PyTorch)", r"1 \text{ if } x > 0 \text{ else } \alpha",
                                    {"derivative": t.derivative}))
    return ActivationSteps(Step("Normal CDF and density", r"\Phi(x),\ \varphi(x)", {"cdf": t.get("cdf"), "pdf": t.get("pdf")}),
                           Step("GELU", r"x\,\Phi(x)", {"output": t.output}),
                           Step("Derivative", r"\Phi(x) + x\,\varphi(x)", {"derivative": t.derivative}))


ACTIVATION = Topic(
    "activation", "Activation value and derivative",
    (Param("name", '"sigmoid", "tanh", "relu", "leaky-relu" or "gelu"'),
     Param("x", "number or vector"),
     Param("negative_slope", "number (leaky-relu)", 0.01),
     Param("approximate", '"none" or "tanh" (gelu)', "none")),
    ("output", "derivative"),
    lambda p: engine.activation(p["name"], p["x"], negative_slope=p["negative_slope"], approximate=p["approximate"]),
    activation_steps,
    lambda p: {"name": p["name"]} | ({"negative_slope": str(p["negative_slope"])} if p["name"] == "leaky-relu" else {})
    | ({"approximate": p["approximate"]} if p["name"] == "gelu" else {}),
)
