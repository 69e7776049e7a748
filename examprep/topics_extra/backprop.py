"""Solve topics for gradient flow: residual blocks and stacks, unrolled RNNs, the vanishing-gradient
product. Parameter names follow the contract table's style (PyTorch's names where it has them)."""
from __future__ import annotations

from typing import Any


from examprep import engine
from examprep.engine._core import Trace
from examprep.solve import REQUIRED, Param, Step, Topic, topic  # noqa: F401  (REQUIRED: the default of Param)

_PHI = {"relu": r"\mathrm{ReLU}", "sigmoid": r"\sigma", "tanh": r"\tanh", "leaky-relu": r"\mathrm{LeakyReLU}",
        "gelu": r"\mathrm{GELU}"}
_PHI_PRIME = {"relu": r"\mathbb{1}[a > 0]", "sigmoid": r"\sigma(a)(1 - \sigma(a))", "tanh": r"1 - \tanh^2 a",
              "leaky-relu": r"1 \text{ if } a > 0 \text{ else } \alpha", "gelu": r"\Phi(a) + a\,\varphi(a)"}


def _residual_steps(p: dict[str, Any], t: Trace) -> list[Step]:
    phi = _PHI[p["activation"]]
    two = p["w2"] is not None
    steps = [Step("Branch pre-activation", r"a = W_1 x + b_1", {"branch_pre": t.branch_pre}),
             Step(f"Branch activation ({p['activation']})", rf"h = {phi}(a)",
                  {"branch_hidden": t.branch_hidden} if two else {"branch": t.branch}),
             ]
    if two:
        steps.append(Step("Branch output", r"F(x) = W_2 h + b_2", {"branch": t.branch}))
    steps += [Step("Add the skip connection", r"y = x + F(x)", {"output": t.output}),
              Step("Local derivative of the activation", rf"\phi'(a) = {_PHI_PRIME[p['activation']]}",
                   {"activation_derivative": t.activation_derivative}),
              Step("Jacobian: the identity (skip path) plus the branch",
                   r"\frac{\partial y}{\partial x} = I + \frac{\partial F}{\partial x},\quad \frac{\partial F}{\partial x} = "
                   + (r"W_2\, \mathrm{diag}(\phi'(a))\, W_1" if two else r"\mathrm{diag}(\phi'(a))\, W_1"),
                   {"branch_jacobian": t.branch_jacobian, "jacobian": t.jacobian})]
    if "grad_input" in t:
        if two:
            steps.append(Step("Back through W_2", r"\frac{\partial L}{\partial h} = W_2^\top \delta",
                              {"grad_hidden": t.grad_hidden}))
        steps += [Step("Through the activation", r"\frac{\partial L}{\partial a} = \frac{\partial L}{\partial h} \odot \phi'(a)",
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
                       {k: t[k] for k in ("grad_w1", "grad_b1", "grad_w2", "grad_b2") if k in t})]
    return steps


topic(Topic(
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
    _residual_steps,
    lambda p: {"branch": ("F(x) = W2 φ(W1 x + b1) + b2" if p["w2"] is not None else "F(x) = φ(W1 x + b1)")
               + f", φ = {p['activation']}",
               "skip": "identity: y = x + F(x) (He et al. 2016)", "layout": "weights out×in as torch.nn.Linear"},
    answer_names=lambda p, t: [n for n in ("branch", "output", "jacobian", "grad_branch", "grad_input", "grad_w1",
                                           "grad_b1", "grad_w2", "grad_b2") if n in t],
))


def _stack_steps(p: dict[str, Any], t: Trace) -> list[Step]:
    phi = _PHI[p["activation"]]
    skip = p["skip"]
    return [
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
    ]


topic(Topic(
    "residual-stack", "Gradient through a stack of one-unit layers, with or without skip connections",
    (Param("x", "number (the input y_0)"), Param("weights", "vector (L): w_l of each layer"),
     Param("biases", "vector (L); zeros when omitted", None),
     Param("activation", '"tanh", "sigmoid", "relu", "leaky-relu" or "gelu"', "tanh"),
     Param("skip", "bool: y_l = y_{l−1} + φ(a_l) (residual) or y_l = φ(a_l) (plain)", True)),
    ("outputs", "local_derivatives", "gradient"),
    lambda p: engine.residual_stack(p["x"], p["weights"], p["biases"], activation=p["activation"], skip=p["skip"]),
    _stack_steps,
    lambda p: {"layers": ("residual: y_l = y_{l−1} + φ(w_l y_{l−1} + b_l)" if p["skip"] is True
                          else "plain: y_l = φ(w_l y_{l−1} + b_l)"), "activation": str(p["activation"])},
))


def _unroll_steps(p: dict[str, Any], t: Trace) -> list[Step]:
    phi = r"\tanh" if p["nonlinearity"] == "tanh" else r"\mathrm{ReLU}"
    der = r"1 - h_t^2" if p["nonlinearity"] == "tanh" else r"\mathbb{1}[a_t > 0]"
    steps = []
    for i, (a, h) in enumerate(zip(t.pre_activations, t.hidden), 1):
        steps.append(Step(f"Time step {i}",
                          rf"a_{i} = W_{{ih}} x_{i} + b_{{ih}} + W_{{hh}} h_{i - 1} + b_{{hh}},\ h_{i} = {phi}(a_{i})",
                          {f"a_{i}": a, f"h_{i}": h}))
    for i, J in enumerate(t.jacobians, 1):
        der_i = der.replace("_t", f"_{i}")
        steps.append(Step(f"Jacobian of step {i}",
                          rf"\frac{{\partial h_{i}}}{{\partial h_{i - 1}}} = \mathrm{{diag}}({der_i})\, W_{{hh}}",
                          {f"phi_prime_{i}": t.activation_derivatives[i - 1], f"jacobian_{i}": J}))
    T = len(t.jacobians)
    steps.append(Step("Backprop through time multiplies them",
                      rf"\frac{{\partial h_{T}}}{{\partial h_0}} = " + r" ".join(
                          rf"\frac{{\partial h_{i}}}{{\partial h_{i - 1}}}" for i in range(T, 0, -1)),
                      {"hidden": t.hidden, "jacobian": t.jacobian}))
    if "grad_h0" in t:
        steps.append(Step("Gradient at the initial state",
                          rf"\frac{{\partial L}}{{\partial h_0}} = "
                          rf"\left(\frac{{\partial h_{T}}}{{\partial h_0}}\right)^\top \delta",
                          {"grad_h0": t.grad_h0}))
    return steps


topic(Topic(
    "rnn-unroll", "Vanilla RNN over a sequence: hidden states and the Jacobians of backprop through time",
    (Param("x", "matrix (T×I), one row per time step (a vector: T steps of one input)"),
     Param("h0", "vector (H); zeros when omitted", None),
     Param("weight_ih", "matrix (H×I)"), Param("weight_hh", "matrix (H×H)"),
     Param("bias_ih", "vector (H); zeros when omitted", None), Param("bias_hh", "vector (H); zeros when omitted", None),
     Param("nonlinearity", '"tanh" or "relu"', "tanh"),
     Param("grad_output", "∂L/∂h_T (optional)", None)),
    ("hidden", "jacobian", "grad_h0"),
    lambda p: engine.rnn_unroll(p["x"], p["h0"], p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"],
                                nonlinearity=p["nonlinearity"], grad_output=p["grad_output"]),
    _unroll_steps,
    lambda p: {"biases": "two bias vectors b_ih, b_hh (torch.nn.RNN)", "nonlinearity": str(p["nonlinearity"]),
               "jacobian": "∂h_t/∂h_{t−1} = diag(φ'(a_t)) W_hh (Pascanu et al. 2013)"},
    answer_names=lambda p, t: [n for n in ("hidden", "jacobian", "grad_h0") if n in t],
))


def _vanishing_steps(p: dict[str, Any], t: Trace) -> list[Step]:
    tanh = p["nonlinearity"] == "tanh"
    T = t.steps
    return [
        Step("Forward", (r"a_t = w h_{t-1} + u x_t + b,\ h_t = \tanh a_t" if tanh
                         else r"a_t = w h_{t-1} + u x_t + b,\ h_t = \mathrm{ReLU}(a_t)"),
             {"pre_activations": t.pre_activations, "hidden": t.hidden}),
        Step("Activation derivatives", r"\tanh'(a_t) = 1 - h_t^2" if tanh else r"\mathrm{ReLU}'(a_t) = \mathbb{1}[a_t > 0]",
             {"activation_derivatives": t.activation_derivatives}),
        Step("Local derivatives", r"\frac{\partial h_t}{\partial h_{t-1}} = w\, \phi'(a_t)",
             {"local_derivatives": t.local_derivatives}),
        Step("Their product over the T steps",
             rf"\frac{{\partial h_{{{T}}}}}{{\partial h_0}} = \prod_{{t=1}}^{{{T}}} w\, \phi'(a_t)",
             {"gradient": t.gradient}),
        Step("Bound: φ' ≤ 1, so the product is at most |w|^T in size",
             rf"\left|\frac{{\partial h_{{{T}}}}}{{\partial h_0}}\right| \le |w|^{{{T}}}", {"bound": t.bound}),
    ]


topic(Topic(
    "vanishing-gradient", "The vanishing (or exploding) gradient of a one-unit RNN: Π w·φ'(a_t)",
    (Param("w", "number: the recurrent weight"), Param("x", "vector (T): the inputs"),
     Param("u", "number: the input weight", 1.0), Param("h0", "number", 0.0), Param("b", "number", 0.0),
     Param("nonlinearity", '"tanh" or "relu"', "tanh")),
    ("hidden", "local_derivatives", "gradient", "bound"),
    lambda p: engine.vanishing_gradient(p["w"], p["x"], u=p["u"], h0=p["h0"], b=p["b"], nonlinearity=p["nonlinearity"]),
    _vanishing_steps,
    lambda p: {"recurrence": f"h_t = {p['nonlinearity']}(w h_(t−1) + u x_t + b)",
               "gradient": "∂h_T/∂h_0 = Π_t w·φ'(a_t) (Pascanu et al. 2013)"},
))
