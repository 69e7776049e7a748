"""Solve topics of residual connections: residual (a block y = x + F(x), forward and the gradient through
both paths) and residual-stack (a stack of one-unit layers with or without skips, its gradient and bound)."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine import ops
from examprep.engine._core import Trace
from examprep.solve.contract import Ecf, Mistake, Param, Ref, Step, Topic

_PHI = {"relu": r"\mathrm{ReLU}", "sigmoid": r"\sigma", "tanh": r"\tanh", "leaky-relu": r"\mathrm{LeakyReLU}",
        "gelu": r"\mathrm{GELU}"}
_PHI_PRIME = {"relu": r"\mathbb{1}[a > 0]", "sigmoid": r"\sigma(a)(1 - \sigma(a))", "tanh": r"1 - \tanh^2 a",
              "leaky-relu": r"1 \text{ if } a > 0 \text{ else } \alpha", "gelu": r"\Phi(a) + a\,\varphi(a)"}



class ResidualSteps(NamedTuple):
    branch_pre: Step
    activation: Step
    branch_output: Step | None          # a two-layer branch
    skip: Step
    activation_derivative: Step
    jacobian: Step
    back_w2: Step | None                # with grad_output and a two-layer branch
    through_activation: Step | None     # with grad_output
    branch_share: Step | None
    grad_input: Step | None
    weight_gradients: Step | None


def residual_steps(p: dict[str, Any], t: Trace) -> ResidualSteps:
    phi = _PHI[p["activation"]]
    two = p["w2"] is not None
    branch_pre = Step("Branch pre-activation", r"a = W_1 x + b_1", {"branch_pre": t.branch_pre})
    activation = Step(f"Branch activation ({p['activation']})", rf"h = {phi}(a)",
                      {"branch_hidden": t.branch_hidden} if two else {"branch": t.branch})
    branch_output = Step("Branch output", r"F(x) = W_2 h + b_2", {"branch": t.branch}) if two else None
    skip = Step("Add the skip connection", r"y = x + F(x)", {"output": t.output})
    derivative = Step("Local derivative of the activation", rf"\phi'(a) = {_PHI_PRIME[p['activation']]}",
                      {"activation_derivative": t.activation_derivative})
    jacobian = Step("Jacobian: the identity (skip path) plus the branch",
                    r"\frac{\partial y}{\partial x} = I + \frac{\partial F}{\partial x},\quad \frac{\partial F}{\partial x} = "
                    + (r"W_2\, \mathrm{diag}(\phi'(a))\, W_1" if two else r"\mathrm{diag}(\phi'(a))\, W_1"),
                    {"branch_jacobian": t.branch_jacobian, "jacobian": t.jacobian})
    if "grad_input" not in t:
        return ResidualSteps(branch_pre, activation, branch_output, skip, derivative, jacobian, None, None, None, None, None)
    back_w2 = (Step("Back through W_2", r"\frac{\partial L}{\partial h} = W_2^\top \delta", {"grad_hidden": t.grad_hidden})
               if two else None)
    return ResidualSteps(
        branch_pre, activation, branch_output, skip, derivative, jacobian, back_w2,
        Step("Through the activation", r"\frac{\partial L}{\partial a} = \frac{\partial L}{\partial h} \odot \phi'(a)",
             {"grad_branch_pre": t.grad_branch_pre}),
        Step("The branch's share of the input gradient", r"W_1^\top \frac{\partial L}{\partial a}",
             {"grad_branch": t.grad_branch}),
        Step("Input gradient: the skip path passes δ unchanged",
             r"\frac{\partial L}{\partial x} = \delta + W_1^\top \frac{\partial L}{\partial a}",
             {"grad_input": t.grad_input}),
        Step("Weight gradients of the branch",
             r"\frac{\partial L}{\partial W_1} = \frac{\partial L}{\partial a}\, x^\top,\ "
             r"\frac{\partial L}{\partial b_1} = \frac{\partial L}{\partial a}"
             + (r",\ \frac{\partial L}{\partial W_2} = \delta\, h^\top,\ "
                r"\frac{\partial L}{\partial b_2} = \delta" if two else ""),
             {k: t[k] for k in ("grad_w1", "grad_b1", "grad_w2", "grad_b2") if k in t}))


def _relu(p: dict[str, Any]) -> bool:
    return p["activation"] == "relu"


def _one_feature(p: dict[str, Any]) -> bool:
    return np.ndim(p["x"]) == 0


def _without_activation(p: dict[str, Any]) -> Trace:
    """The block with φ(a) = a (a leaky ReLU of slope 1): a student who forgets the activation."""
    return RESIDUAL.compute({**p, "activation": "leaky-relu", "negative_slope": 1.0})


RESIDUAL_MISTAKES = {
    "branch": (Mistake("no-activation", activation="leaky-relu", negative_slope=1.0, when=_relu,
                       why="F applies the ReLU: negative pre-activations become 0."),),
    "output": (Mistake("branch-only", compute=lambda p, t: t.branch,
                       why="The skip adds the input back: y = x + F(x), not F(x)."),),
    "jacobian": (Mistake("no-skip", compute=lambda p, t: t.branch_jacobian, when=_one_feature,
                         why="d/dx of x is 1: dy/dx = 1 + F'(x), the skip's \"+1\"."),
                 Mistake("no-skip", compute=lambda p, t: t.branch_jacobian, when=lambda p: not _one_feature(p),
                         why="∂y/∂x = I + ∂F/∂x: the skip adds the identity."),
                 Mistake("transposed", compute=lambda p, t: t.jacobian.T, when=lambda p: not _one_feature(p),
                         why="Row i of the Jacobian holds ∂y_i/∂x_j: I + W₂ diag(ReLU'(a)) W₁.")),
    "grad_branch": (Mistake("skip-activation", compute=lambda p, t: _without_activation(p).grad_input, when=_relu,
                            why="The ReLU's slope is 0 where its input is negative: those units pass no gradient."),
                    Mistake("with-skip", compute=lambda p, t: t.grad_input,
                            why="That already includes the skip's δ; the branch alone gives W₁ᵀ(ReLU'(a) ⊙ W₂ᵀδ).")),
    "grad_input": (Mistake("no-skip", compute=lambda p, t: ops.multiply(p["grad_output"], t.branch_jacobian)
                           if _one_feature(p) else t.grad_branch,        # δ·F'(x): −0.0 for a dead ReLU, as generated
                           why="The skip path passes δ straight to x: ∂L/∂x = δ + (∂F/∂x)ᵀδ — you kept only the branch."),
                   Mistake("no-branch", compute=lambda p, t: p["grad_output"],
                           why="The branch contributes too: add (∂F/∂x)ᵀδ to the δ from the skip."),
                   Mistake("no-delta", compute=lambda p, t: t.jacobian, when=_one_feature,
                           why="That is dy/dx; by the chain rule ∂L/∂x = δ · dy/dx."),
                   Mistake("no-transpose", when=lambda p: p["w2"] is not None,
                           compute=lambda p, t: ops.add(p["grad_output"], ops.matmul(p["w1"], ops.multiply(
                               t.activation_derivative, ops.matmul(p["w2"], p["grad_output"])))),
                           why="Backwards through a weight matrix multiply by its transpose: W₁ᵀ(…(W₂ᵀδ)).")),
}


def _block(p: dict[str, Any], *extra: str) -> dict[str, Any]:
    """The residual block's own parameters for a solve:residual rule (those at their defaults left out)."""
    keys = ("x", "w1", "b1", *(("w2",) if p["w2"] is not None else ()), *(("b2",) if p["b2"] is not None else ()),
            "activation", *(("negative_slope",) if p["activation"] == "leaky-relu" else ()), *extra)
    return {k: p[k] for k in keys}


RESIDUAL_ECF = {
    "output": (Ecf("add", lambda p, t: {"a": p["x"], "b": Ref("branch")}),),
    "jacobian": (Ecf("solve:residual", lambda p, t: _block(p), "jacobian"),),
    "grad_branch": (Ecf("solve:residual", lambda p, t: _block(p, "grad_output"), "grad_branch"),),
    "grad_input": (Ecf("add", lambda p, t: {"a": p["grad_output"], "b": Ref("grad_branch")}),
                   Ecf("multiply", lambda p, t: {"a": p["grad_output"], "b": Ref("jacobian")}, when=_one_feature)),
}


RESIDUAL = Topic(
    "residual", "Residual block y = x + F(x): forward and the gradient through both paths",
    (Param("x", "vector (d) or a number"), Param("w1", "matrix (H×d), a number when d = H = 1"),
     Param("b1", "vector (H); zeros when omitted", None),
     Param("w2", "matrix (d×H): a two-layer branch F = W2 φ(W1 x + b1) + b2; without it F = φ(W1 x + b1)", None),
     Param("b2", "vector (d); zeros when omitted (with w2 only)", None),
     Param("activation", '"relu", "sigmoid", "tanh", "leaky-relu" or "gelu"', "relu"),
     Param("negative_slope", "number (leaky-relu)", 0.01),
     Param("grad_output", "∂L/∂y, the output's shape (optional)", None)),
    ("branch", "output", "jacobian", "grad_branch", "grad_input", "grad_w1", "grad_b1", "grad_w2", "grad_b2"),
    lambda p: engine.residual_block(p["x"], p["w1"], p["b1"], p["w2"], p["b2"], activation=p["activation"],
                                    negative_slope=p["negative_slope"], grad_output=p["grad_output"]),
    residual_steps,
    lambda p: {"branch": ("F(x) = W2 φ(W1 x + b1) + b2" if p["w2"] is not None else "F(x) = φ(W1 x + b1)")
               + f", φ = {p['activation']}",
               "skip": "identity: y = x + F(x) (He et al. 2016)", "layout": "weights out×in as torch.nn.Linear"},
    answer_names=lambda p, t: [n for n in ("branch", "output", "jacobian", "grad_branch", "grad_input", "grad_w1",
                                           "grad_b1", "grad_w2", "grad_b2") if n in t],
    mistakes=RESIDUAL_MISTAKES,
    ecf=RESIDUAL_ECF,
)


class StackSteps(NamedTuple):
    forward: Step
    activation_derivatives: Step
    local_derivatives: Step
    chain: Step
    bound: Step | None = None      # the most the gradient can be, from the activation's largest slope


def stack_steps(p: dict[str, Any], t: Trace) -> StackSteps:
    phi = _PHI[p["activation"]]
    skip = p["skip"]
    return StackSteps(
        Step("Forward, layer by layer", (rf"a_l = w_l y_{{l-1}} + b_l,\ y_l = y_{{l-1}} + {phi}(a_l)" if skip
                                         else rf"a_l = w_l y_{{l-1}} + b_l,\ y_l = {phi}(a_l)") + r",\ y_0 = x",
             {"pre_activations": t.pre_activations, "outputs": t.outputs}),
        Step("Activation derivatives", rf"\phi'(a_l) = {_PHI_PRIME[p['activation']]}",
             {"activation_derivatives": t.activation_derivatives}),
        Step("Local derivatives" + (" (the skip adds 1)" if skip else ""),
             r"\frac{\partial y_l}{\partial y_{l-1}} = " + (r"1 + w_l \phi'(a_l)" if skip else r"w_l \phi'(a_l)"),
             {"local_derivatives": t.local_derivatives}),
        Step("Chain rule: multiply the local derivatives",
             r"\frac{\partial y_L}{\partial x} = \prod_{l=1}^{L} \frac{\partial y_l}{\partial y_{l-1}}",
             {"gradient": t.gradient}),
        Step("Bound: each factor is at most " + ("1 + |w_l| m" if skip else "|w_l| m") + ", m the largest slope of φ",
             (r"\left|\frac{\partial y_L}{\partial x}\right| \le \prod_{l=1}^{L} "
              + (r"(1 + |w_l|\, \max \phi')" if skip else r"|w_l|\, \max \phi'")), {"bound": t.bound}),
    )


def _slope_bound(p: dict[str, Any]) -> float:
    return engine.max_derivative(p["activation"])


def _plain(p: dict[str, Any]) -> bool:
    return p["skip"] is False


def _plain_equal_weights(p: dict[str, Any]) -> bool:
    """A plain stack whose weights are all as large: its bound is one power (|w|·m)^L."""
    return _plain(p) and len({abs(float(w)) for w in np.ravel(p["weights"])}) == 1


def _abs_weights(p: dict[str, Any]) -> np.ndarray:
    return np.abs(np.ravel(np.asarray(p["weights"], dtype=float)))


RESIDUAL_STACK_MISTAKES = {
    "local_derivatives": (*(Mistake("weights-only", compute=lambda p, t: p["weights"],
                                    when=lambda p, act=act: p["activation"] == act and p["skip"] is False,
                                    why=f"Each factor is w_l·φ'(a_l): include the {act} slope at the layer's input.")
                            for act in ("tanh", "sigmoid", "relu", "leaky-relu", "gelu")),
                          Mistake("no-skip", compute=lambda p, t: t.local_derivatives - 1.0, when=lambda p: p["skip"] is True,
                                  why="y_l = y_{l−1} + F(y_{l−1}): the skip adds 1 to every local derivative.")),
    "gradient": (Mistake("added", compute=lambda p, t: ops.total(t.local_derivatives),
                         why="The chain rule multiplies the local derivatives; it does not add them."),
                 Mistake("one-plus-product", compute=lambda p, t: 1 + ops.product(t.local_derivatives - 1.0),
                         when=lambda p: p["skip"] is True,
                         why="Each layer has its own 1 + F'_l: the product is ∏(1 + F'_l), not 1 + ∏ F'_l.")),
    "bound": (Mistake("half-per-layer", compute=lambda p, t: float(np.prod(_abs_weights(p) * 0.5)),
                      when=lambda p: _plain(p) and p["activation"] == "sigmoid",
                      why="σ' ≤ 1/4, not 1/2 (σ itself is 1/2 at 0)."),
              Mistake("added", compute=lambda p, t: float(np.sum(_abs_weights(p) * _slope_bound(p))), when=_plain,
                      why="Chain rule: the layers' slopes multiply, they do not add.")),
}

RESIDUAL_STACK_ECF = {"gradient": (Ecf("product", lambda p, t: {"values": Ref("local_derivatives")}),),
                      "bound": (Ecf("power", lambda p, t: {"base": abs(float(p["weights"][0])) * _slope_bound(p),
                                                           "exponent": len(p["weights"])}, when=_plain_equal_weights),)}


RESIDUAL_STACK = Topic(
    "residual-stack", "Gradient through a stack of one-unit layers, with or without skip connections",
    (Param("x", "number (the input y_0)"), Param("weights", "vector (L): w_l of each layer"),
     Param("biases", "vector (L); zeros when omitted", None),
     Param("activation", '"tanh", "sigmoid", "relu", "leaky-relu" or "gelu"', "tanh"),
     Param("skip", "bool: y_l = y_{l−1} + φ(a_l) (residual) or y_l = φ(a_l) (plain)", True)),
    ("outputs", "local_derivatives", "gradient", "bound"),
    lambda p: engine.residual_stack(p["x"], p["weights"], p["biases"], activation=p["activation"], skip=p["skip"]),
    stack_steps,
    lambda p: {"layers": ("residual: y_l = y_{l−1} + φ(w_l y_{l−1} + b_l)" if p["skip"] is True
                          else "plain: y_l = φ(w_l y_{l−1} + b_l)"), "activation": str(p["activation"])},
    mistakes=RESIDUAL_STACK_MISTAKES,
    ecf=RESIDUAL_STACK_ECF,
)
