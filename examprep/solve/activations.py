"""Solve topic of activation functions: activation (value and derivative)."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.engine.activations import sigmoid_derivative_from_output, tanh_derivative_from_output
from examprep.solve.contract import Ecf, Mistake, Param, Ref, Step, Topic


class ActivationSteps(NamedTuple):
    cdf: Step | None               # gelu: Φ(x) and φ(x) first
    value: Step
    derivative: Step
    bound: Step | None = None      # the largest slope over all x


_BOUND = {"sigmoid": r"\max_x \sigma'(x) = \sigma'(0) = \tfrac12 \cdot \tfrac12 = \tfrac14",
          "tanh": r"\max_x \tanh'(x) = \tanh'(0) = 1 - 0^2 = 1", "relu": r"\max_x \mathrm{ReLU}'(x) = 1",
          "leaky-relu": r"\max_x f'(x) = \max(1, \alpha)", "gelu": r"\max_x \mathrm{GELU}'(x) \approx 1.129"}


def activation_steps(p: dict[str, Any], t: Trace) -> ActivationSteps:
    steps = _value_steps(p, t)
    return steps._replace(bound=Step("The largest slope, over all x", _BOUND[p["name"]], {"max_derivative": t.max_derivative}))


def _value_steps(p: dict[str, Any], t: Trace) -> ActivationSteps:
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


def _is(*names: str) -> Any:
    return lambda p: p["name"] in names


def _x(p: dict[str, Any]) -> np.ndarray:
    return np.asarray(p["x"], dtype=float)


ACTIVATION_MISTAKES = {
    "output": (Mistake("sign-flip", x=lambda p: (-_x(p)).tolist(), when=_is("sigmoid"),
                       why="σ(x) = 1/(1 + e^{−x}): the exponent is −x; you computed σ(−x)."),
               Mistake("tanh-for-sigmoid", name="tanh", when=_is("sigmoid"), why="That is tanh x, not the sigmoid."),
               Mistake("sigmoid-for-tanh", name="sigmoid", when=_is("tanh"), why="That is σ(x); tanh x = 2σ(2x) − 1."),
               Mistake("identity", compute=lambda p, t: _x(p), when=lambda p: p["name"] == "relu" and bool(np.any(_x(p) < 0)),
                       why="ReLU clips negative inputs to 0."),
               Mistake("relu", name="relu", when=_is("leaky-relu"),
                       why="Leaky ReLU keeps a slope α for negative inputs instead of clipping them to 0."),
               Mistake("slope-everywhere", compute=lambda p, t: p["negative_slope"] * _x(p), when=_is("leaky-relu"),
                       why="Positive inputs pass unchanged; only x ≤ 0 is multiplied by α.")),
    "derivative": (Mistake("value-not-derivative", compute=lambda p, t: t.output, when=_is("sigmoid"),
                           why="That is σ(x) itself; the derivative is σ(x)(1 − σ(x))."),
                   Mistake("one-minus-square", compute=lambda p, t: tanh_derivative_from_output(t.output), when=_is("sigmoid"),
                           why="1 − σ² is the pattern of tanh' = 1 − tanh²; for the sigmoid it is σ(1 − σ)."),
                   Mistake("exp-only", compute=lambda p, t: np.exp(-_x(p)), when=_is("sigmoid"),
                           why="e^{−x} is only the inner part; σ' = e^{−x}/(1 + e^{−x})² = σ(1 − σ)."),
                   Mistake("no-square", compute=lambda p, t: 1 - t.output, when=_is("tanh"),
                           why="tanh' = 1 − tanh²: square the tanh before subtracting."),
                   Mistake("sigmoid-pattern", compute=lambda p, t: sigmoid_derivative_from_output(t.output), when=_is("tanh"),
                           why="t(1 − t) is the sigmoid's pattern; tanh' = 1 − tanh²."),
                   Mistake("always-one", compute=lambda p, t: np.ones_like(_x(p)), when=_is("relu"),
                           why="ReLU' is 0 where x < 0: the unit passes no gradient there."),
                   Mistake("value-not-derivative", compute=lambda p, t: t.output, when=_is("relu"),
                           why="That is ReLU(x) itself; its derivative is 1 for x > 0 and 0 otherwise."),
                   Mistake("kink-one", compute=lambda p, t: np.where(_x(p) == 0, 1.0, t.derivative), when=_is("relu"),
                           why="ReLU is not differentiable at 0; PyTorch (and this course) use ReLU'(0) = 0."),
                   Mistake("relu-derivative", name="relu", when=_is("leaky-relu"),
                           why="Leaky ReLU's slope for x < 0 is α, not 0: that is what keeps units from dying."),
                   Mistake("value-not-derivative", compute=lambda p, t: t.output, when=_is("leaky-relu"),
                           why="That is the function's value; the derivative is 1 or α.")),
    # the largest slope: the value at the point of the largest slope, or the other squashing function's bound
    "max_derivative": (Mistake("sigma-at-zero", compute=lambda p, t: engine.activation("sigmoid", 0.0).output,
                               when=_is("sigmoid"),
                               why="σ(0) = 1/2 is the value; the slope there is σ(0)(1 − σ(0)) = 1/4."),
                       Mistake("one", compute=lambda p, t: engine.max_derivative("tanh"), when=_is("sigmoid"),
                               why="That is tanh's largest slope; σ' never exceeds 1/4."),
                       Mistake("sigmoid-bound", compute=lambda p, t: engine.max_derivative("sigmoid"), when=_is("tanh"),
                               why="1/4 is the sigmoid's bound; tanh'(0) = 1 − 0² = 1."),
                       Mistake("tanh-at-zero", compute=lambda p, t: engine.activation("tanh", 0.0).output,
                               when=_is("tanh"), why="tanh(0) = 0 is the value; the slope there is 1.")),
}


# the derivative from the student's own output: σ(1 − σ) for the sigmoid, 1 − tanh² for tanh
ACTIVATION_ECF = {
    "derivative": (Ecf("sigmoid-derivative-from-output", lambda p, t: {"output": Ref("output")}, when=_is("sigmoid")),
                   Ecf("tanh-derivative-from-output", lambda p, t: {"output": Ref("output")}, when=_is("tanh"))),
}


def _activation(p: dict[str, Any]) -> Trace:
    t = engine.activation(p["name"], p["x"], negative_slope=p["negative_slope"], approximate=p["approximate"])
    t["max_derivative"] = engine.max_derivative(p["name"], p["negative_slope"], p["approximate"])
    return t


ACTIVATION = Topic(
    "activation", "Activation value and derivative",
    (Param("name", '"sigmoid", "tanh", "relu", "leaky-relu" or "gelu"'),
     Param("x", "number or vector"),
     Param("negative_slope", "number (leaky-relu)", 0.01),
     Param("approximate", '"none" or "tanh" (gelu)', "none")),
    ("output", "derivative", "max_derivative"),
    _activation,
    activation_steps,
    lambda p: {"name": p["name"]} | ({"negative_slope": str(p["negative_slope"])} if p["name"] == "leaky-relu" else {})
    | ({"approximate": p["approximate"]} if p["name"] == "gelu" else {}),
    mistakes=ACTIVATION_MISTAKES,
    ecf=ACTIVATION_ECF,
)
