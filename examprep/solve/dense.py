"""Solve topics of dense layers: dense (forward and backward), mlp-backprop and mlp-regression (residual
and residual-stack: solve/residual.py)."""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine import ops
from examprep.engine._core import Trace
from examprep.solve.contract import Ecf, Mistake, Param, Ref, Step, Topic

# ----------------------------------------------------------------------------------------- dense

class DenseSteps(NamedTuple):
    forward: Step
    grad_weight: Step | None       # with grad_output (or a target)
    grad_bias: Step | None
    grad_input: Step | None
    grad_output: Step | None       # with a target: δ = ∂L/∂y = y − t


def dense_steps(p: dict[str, Any], t: Trace) -> DenseSteps:
    batch = np.ndim(p["x"]) == 2
    forward = Step("Forward", r"y = x W^\top + b" if batch else r"y = W x + b", {"output": t.output})
    if "grad_weight" not in t:
        return DenseSteps(forward, None, None, None, None)
    upstream = (Step("Upstream gradient of L = ½ Σ (y − t)²", r"\delta = \frac{\partial L}{\partial y} = y - t",
                     {"grad_output": t.grad_output}) if "grad_output" in t else None)
    if batch:
        return DenseSteps(
            forward,
            Step("Weight gradient (summed over the batch)", r"\frac{\partial L}{\partial W} = \delta^\top X",
                 {"grad_weight": t.grad_weight}),
            Step("Bias gradient", r"\frac{\partial L}{\partial b} = \sum_n \delta_n", {"grad_bias": t.grad_bias}),
            Step("Input gradient", r"\frac{\partial L}{\partial X} = \delta W", {"grad_input": t.grad_input}), upstream)
    return DenseSteps(
        forward,
        Step("Weight gradient (outer product)", r"\frac{\partial L}{\partial W} = \delta\, x^\top",
             {"grad_weight": t.grad_weight}),
        Step("Bias gradient", r"\frac{\partial L}{\partial b} = \delta", {"grad_bias": t.grad_bias}),
        Step("Input gradient", r"\frac{\partial L}{\partial x} = W^\top \delta", {"grad_input": t.grad_input}), upstream)


def _square_asymmetric(p: dict[str, Any]) -> bool:
    w = np.asarray(p["weight"], dtype=float)
    return w.shape[0] == w.shape[1] and not np.array_equal(w, w.T)


def _backward(p: dict[str, Any]) -> bool:
    return p["grad_output"] is not None or p["target"] is not None


def _batched(p: dict[str, Any]) -> bool:
    return _backward(p) and np.ndim(p["x"]) == 2


def _single(p: dict[str, Any]) -> bool:
    return _backward(p) and np.ndim(p["x"]) == 1


def _square_weight(p: dict[str, Any]) -> bool:
    return _backward(p) and np.shape(p["weight"])[0] == np.shape(p["weight"])[1]


def _delta(p: dict[str, Any], t: Trace) -> np.ndarray:
    """δ = ∂L/∂y: given, or y − t from the target."""
    return np.asarray(t.grad_output if "grad_output" in t else p["grad_output"], dtype=float)


DENSE_MISTAKES = {
    "output": (Mistake("no-bias", bias=None, why="You left out the bias: y = W x + b."),
               Mistake("transposed-weight", weight=lambda p: np.asarray(p["weight"], dtype=float).T.tolist(),
                       when=_square_asymmetric, why="W is out×in: row i of W dots x to give y_i (y = W x, not Wᵀx).")),
    "grad_output": (Mistake("t-minus-y", compute=lambda p, t: -t.grad_output, when=lambda p: p["target"] is not None,
                            why="∂/∂y of ½‖y − t‖² is y − t, not t − y."),
                    Mistake("squared", compute=lambda p, t: t.grad_output**2, when=lambda p: p["target"] is not None,
                            why="Differentiate ½(y − t)²: the ½ cancels the 2 and the result is y − t.")),
    "grad_weight": (Mistake("outer-transposed", compute=lambda p, t: t.grad_weight.T, when=_single,
                            why="∂L/∂W has W's shape out×in: it is δ xᵀ (row i is δ_i xᵀ), not x δᵀ."),
                    Mistake("outer-transposed", compute=lambda p, t: t.grad_weight.T, when=_batched,
                            why="∂L/∂W has W's shape out×in: it is δ xᵀ (δᵀX summed over the batch), not x δᵀ."),
                    Mistake("mean-over-batch", compute=lambda p, t: t.grad_weight / len(p["x"]), when=_batched,
                            why="L sums the examples' losses: the gradients add over the batch, no 1/N."),
                    Mistake("first-example-only", when=_batched,
                            compute=lambda p, t: engine.dense(np.asarray(p["x"], dtype=float)[0], p["weight"], p["bias"],
                                                              _delta(p, t)[0]).grad_weight,
                            why="Every example contributes: ∂L/∂W = Σ_n δ_n x_nᵀ = δᵀX.")),
    "grad_bias": (Mistake("ones", compute=lambda p, t: np.ones_like(t.grad_bias), when=_backward,
                          why="∂y/∂b = 1 is only the local derivative; by the chain rule ∂L/∂b = δ · 1 = δ."),
                  Mistake("mean-over-batch", compute=lambda p, t: t.grad_bias / len(p["x"]), when=_batched,
                          why="L sums the examples' losses: ∂L/∂b = Σ_n δ_n, no 1/N."),
                  Mistake("times-x", compute=lambda p, t: ops.multiply(_delta(p, t), p["x"]),
                          when=lambda p: _single(p) and _square_weight(p), why="b is added, not multiplied by x: ∂L/∂b = δ.")),
    "grad_input": (Mistake("forward-instead", compute=lambda p, t: engine.dense(p["x"], p["weight"], None).output,
                           when=_square_weight,
                           why="W x is the forward pass; the gradient goes backwards through Wᵀ: ∂L/∂x = Wᵀδ."),
                   Mistake("sum-of-weights", compute=lambda p, t: np.asarray(p["weight"], dtype=float).sum(axis=0),
                           when=lambda p: _single(p) and not _square_weight(p),
                           why="You summed W's columns without weighting them by δ: ∂L/∂x_j = Σ_i W_ij δ_i.")),
}


def _dense_args(p: dict[str, Any], backward: bool = True) -> dict[str, Any]:
    """A solve:dense call with the layer's own x, weight and bias and, backwards, the upstream gradient:
    given, or the student's own δ where the target gave it."""
    args = {"x": p["x"], "weight": p["weight"]} | ({"bias": p["bias"]} if p["bias"] is not None else {})
    if backward:
        args["grad_output"] = Ref("grad_output") if p["target"] is not None else p["grad_output"]
    return args


DENSE_ECF = {
    "output": (Ecf("solve:dense", lambda p, t: _dense_args(p, backward=False), "output"),),
    "grad_output": (Ecf("subtract", lambda p, t: {"a": Ref("output"), "b": p["target"]},
                        when=lambda p: p["target"] is not None),),
    **{a: (Ecf("solve:dense", lambda p, t: _dense_args(p), a, when=_backward),)
       for a in ("grad_weight", "grad_bias", "grad_input")},
}


DENSE = Topic(
    "dense", "Dense layer forward and backward",
    (Param("x", "vector (in) or matrix (N×in)"), Param("weight", "matrix (out×in)"),
     Param("bias", "vector (out); zeros when omitted", None),
     Param("grad_output", "∂L/∂y, the output's shape (optional)", None),
     Param("target", "the output's shape (optional, instead of grad_output): L = ½ Σ (y − t)², so ∂L/∂y = y − t",
           None)),
    ("output", "grad_output", "grad_weight", "grad_bias", "grad_input"),
    lambda p: engine.dense(p["x"], p["weight"], p["bias"], p["grad_output"], p["target"]),
    dense_steps,
    lambda p: {"layout": "weight is out×in as torch.nn.Linear; batched y = x Wᵀ + b"}
    | ({"loss": "L = ½ Σ (y − t)², summed over the batch"} if p["target"] is not None else {}),
    mistakes=DENSE_MISTAKES,
    ecf=DENSE_ECF,
    answer_names=lambda p, t: [n for n in ("output", "grad_output", "grad_weight", "grad_bias", "grad_input") if n in t],
)


# ---------------------------------------------------------------------------------- mlp-backprop

class MLPSteps(NamedTuple):
    hidden_pre: Step
    hidden: Step
    logits: Step
    probs: Step
    loss: Step
    grad_logits: Step
    second_layer: Step             # grad_w2 and grad_b2
    grad_hidden: Step
    grad_hidden_pre: Step
    first_layer: Step              # grad_w1 and grad_b1
    grad_x: Step


def mlp_steps(p: dict[str, Any], t: Trace) -> MLPSteps:
    return MLPSteps(
        Step("Hidden pre-activation", r"a = W_1 x + b_1", {"hidden_pre": t.hidden_pre}),
        Step(f"Hidden activation ({p['activation']})", r"h = \phi(a)", {"hidden": t.hidden}),
        Step("Logits", r"z = W_2 h + b_2", {"logits": t.logits}),
        Step("Softmax", r"p = \mathrm{softmax}(z)", {"probs": t.probs}),
        Step("Cross-entropy loss", r"L = -\log p_y", {"loss": t.loss}),
        Step("Gradient at the logits", r"\frac{\partial L}{\partial z} = p - y", {"grad_logits": t.grad_logits}),
        Step("Second layer", r"\frac{\partial L}{\partial W_2} = \frac{\partial L}{\partial z} h^\top,\quad "
                             r"\frac{\partial L}{\partial b_2} = \frac{\partial L}{\partial z}",
             {"grad_w2": t.grad_w2, "grad_b2": t.grad_b2}),
        Step("Back to the hidden layer", r"\frac{\partial L}{\partial h} = W_2^\top \frac{\partial L}{\partial z}",
             {"grad_hidden": t.grad_hidden}),
        Step("Through the activation", r"\frac{\partial L}{\partial a} = \frac{\partial L}{\partial h} \odot \phi'(a)",
             {"activation_derivative": t.activation_derivative, "grad_hidden_pre": t.grad_hidden_pre}),
        Step("First layer", r"\frac{\partial L}{\partial W_1} = \frac{\partial L}{\partial a} x^\top,\quad "
                            r"\frac{\partial L}{\partial b_1} = \frac{\partial L}{\partial a}",
             {"grad_w1": t.grad_w1, "grad_b1": t.grad_b1}),
        Step("Input gradient", r"\frac{\partial L}{\partial x} = W_1^\top \frac{\partial L}{\partial a}", {"grad_x": t.grad_x}),
    )


def _per_activation(id: str, why: str, **how: Any) -> tuple[Mistake, ...]:
    """One mistake per hidden activation, its explanation naming it (``why`` with ``{act}``)."""
    return tuple(Mistake(id, why=why.format(act=act), when=lambda p, act=act: p["activation"] == act, **how)
                 for act in ("relu", "sigmoid", "tanh", "leaky-relu", "gelu"))


def _first_layer_skipping_activation(p: dict[str, Any], t: Trace) -> Trace:
    """The first layer's backward from ∂L/∂h taken as ∂L/∂a (φ' forgotten)."""
    return engine.dense(p["x"], p["w1"], p["b1"], t.grad_hidden)


def _hidden_no_transpose(p: dict[str, Any], t: Trace) -> Any:
    w2 = np.asarray(p["w2"], dtype=float)
    return ops.matmul(w2, t.grad_logits) if w2.shape[0] == w2.shape[1] else w2.sum(axis=0)


MLP_BACKPROP_MISTAKES = {
    "hidden": _per_activation("no-activation", "The hidden layer applies {act} to the pre-activations.",
                              compute=lambda p, t: t.hidden_pre),
    "logits": (Mistake("pre-activation", compute=lambda p, t: engine.dense(t.hidden_pre, p["w2"], p["b2"]).output,
                       why="The second layer multiplies the activated h, not the pre-activations a."),),
    "probs": (Mistake("exp-only", compute=lambda p, t: engine.softmax(t.logits, normalize=False).probs,
                      why="Divide each e^{z_i} by the sum Σ_j e^{z_j}."),
              Mistake("sigmoid-each", compute=lambda p, t: engine.activation("sigmoid", t.logits).output,
                      why="Softmax couples the classes: p_i = e^{z_i} / Σ_j e^{z_j}, not σ(z_i) per class.")),
    "loss": (Mistake("log10", compute=lambda p, t: t.loss / np.log(10), why="Cross-entropy uses the natural logarithm."),
             Mistake("no-minus", compute=lambda p, t: -t.loss, why="L = −log p_y: the minus sign makes the loss positive.")),
    "grad_logits": (Mistake("y-minus-p", compute=lambda p, t: -t.grad_logits, why="Sign flipped: ∂L/∂z = p − y, not y − p."),
                    Mistake("p-only", compute=lambda p, t: t.probs, why="You forgot to subtract the one-hot target y.")),
    "grad_w2": (Mistake("outer-transposed", compute=lambda p, t: t.grad_w2.T, why="∂L/∂W₂ has W₂'s shape C×H: (∂L/∂z) hᵀ."),
                Mistake("pre-activation",
                        compute=lambda p, t: engine.dense(t.hidden_pre, p["w2"], p["b2"], t.grad_logits).grad_weight,
                        why="W₂ multiplies h = φ(a), so ∂L/∂W₂ = (∂L/∂z) hᵀ with h, not a.")),
    "grad_b2": (Mistake("ones", compute=lambda p, t: np.ones(len(t.logits)),
                        why="∂L/∂b₂ = ∂L/∂z · 1: the upstream gradient, not 1."),
                Mistake("y-minus-p", compute=lambda p, t: -t.grad_logits, why="Sign flipped: ∂L/∂b₂ = ∂L/∂z = p − y.")),
    "grad_hidden": (Mistake("no-transpose", compute=_hidden_no_transpose,
                            why="Backwards through W₂ multiply by W₂ᵀ: ∂L/∂h_j = Σ_i W₂[i, j] ∂L/∂z_i."),),
    "grad_hidden_pre": (*_per_activation("skip-activation", "Backwards through {act} multiply by its slope φ'(a) element-wise.",
                                         compute=lambda p, t: t.grad_hidden),
                        Mistake("value-not-derivative",
                                compute=lambda p, t: ops.multiply(
                                    t.grad_hidden, engine.activation(p["activation"], t.hidden_pre).output),
                                why="Multiply by the activation's derivative φ'(a), not its value φ(a).")),
    "grad_w1": (Mistake("outer-transposed", compute=lambda p, t: t.grad_w1.T, why="∂L/∂W₁ has W₁'s shape H×in: (∂L/∂a) xᵀ."),
                Mistake("skip-activation", compute=lambda p, t: _first_layer_skipping_activation(p, t).grad_weight,
                        why="∂L/∂a = ∂L/∂h ⊙ φ'(a) before the outer product with x.")),
    "grad_b1": (Mistake("skip-activation", compute=lambda p, t: t.grad_hidden, why="∂L/∂b₁ = ∂L/∂a = ∂L/∂h ⊙ φ'(a)."),),
    "grad_x": (Mistake("skip-activation", compute=lambda p, t: _first_layer_skipping_activation(p, t).grad_input,
                       why="Use ∂L/∂a = ∂L/∂h ⊙ φ'(a), then W₁ᵀ."),
               Mistake("no-transpose", compute=lambda p, t: ops.matmul(p["w1"], t.grad_hidden_pre),
                       when=lambda p: len(p["w1"]) == len(p["x"]), why="Backwards through W₁ multiply by W₁ᵀ, not W₁.")),
}


def _layer(p: dict[str, Any], n: int, back: str | None = None) -> dict[str, Any]:
    """A solve:dense call of layer ``n`` (1 or 2) on the student's own input (layer 2: their h) and,
    backwards, their gradient ``back``."""
    first = {"x": p["x"], "weight": p["w1"], "bias": p["b1"]}
    args = first if n == 1 else {"x": Ref("hidden"), "weight": p["w2"], "bias": p["b2"]}
    return args | ({"grad_output": Ref(back)} if back else {})


MLP_BACKPROP_ECF = {
    "hidden_pre": (Ecf("solve:dense", lambda p, t: _layer(p, 1), "output"),),
    "hidden": (Ecf("solve:activation", lambda p, t: {"name": p["activation"], "x": Ref("hidden_pre")}, "output"),),
    "logits": (Ecf("solve:dense", lambda p, t: _layer(p, 2), "output"),),
    "probs": (Ecf("solve:softmax", lambda p, t: {"logits": Ref("logits")}, "probs"),),
    "loss": (Ecf("nll", lambda p, t: {"probs": Ref("probs"), "target": p["target"]}),),
    "grad_logits": (Ecf("minus-target", lambda p, t: {"probs": Ref("probs"),
                                                      "target_dist": np.eye(len(t.logits))[p["target"]]}),),
    "grad_w2": (Ecf("solve:dense", lambda p, t: _layer(p, 2, "grad_logits"), "grad_weight"),),
    "grad_b2": (Ecf("solve:dense", lambda p, t: _layer(p, 2, "grad_logits"), "grad_bias"),),
    "grad_hidden": (Ecf("solve:dense", lambda p, t: _layer(p, 2, "grad_logits"), "grad_input"),),
    "grad_hidden_pre": (Ecf("activation-backward", lambda p, t: {"grad_output": Ref("grad_hidden"), "x": Ref("hidden_pre"),
                                                                 "name": p["activation"]}),),
    "grad_w1": (Ecf("solve:dense", lambda p, t: _layer(p, 1, "grad_hidden_pre"), "grad_weight"),),
    "grad_b1": (Ecf("solve:dense", lambda p, t: _layer(p, 1, "grad_hidden_pre"), "grad_bias"),),
    "grad_x": (Ecf("solve:dense", lambda p, t: _layer(p, 1, "grad_hidden_pre"), "grad_input"),),
}


MLP_BACKPROP = Topic(
    "mlp-backprop", "Two-layer MLP with softmax + cross-entropy: forward and backward",
    (Param("x", "vector (in)"), Param("target", "class index"), Param("w1", "matrix (H×in)"),
     Param("b1", "vector (H)"), Param("activation", '"relu", "sigmoid", "tanh", "leaky-relu", "gelu"', "relu"),
     Param("w2", "matrix (C×H)"), Param("b2", "vector (C)")),
    ("hidden_pre", "hidden", "logits", "probs", "loss", "grad_logits", "grad_w2", "grad_b2", "grad_hidden",
     "grad_hidden_pre", "grad_w1", "grad_b1", "grad_x"),
    lambda p: engine.mlp_backprop(p["x"], p["target"], p["w1"], p["b1"], p["w2"], p["b2"], activation=p["activation"]),
    mlp_steps,
    lambda p: {"loss": "softmax + cross-entropy on one example", "activation": p["activation"]},
    mistakes=MLP_BACKPROP_MISTAKES,
    ecf=MLP_BACKPROP_ECF,
)


# -------------------------------------------------------------------------------- mlp-regression

class MLPRegressionSteps(NamedTuple):
    hidden: Step                   # hidden_pre and hidden
    output: Step                   # output_pre and output
    loss: Step
    grad_output_pre: Step
    second_layer: Step             # grad_w2 and grad_b2
    grad_hidden: Step
    grad_hidden_pre: Step
    first_layer: Step              # grad_w1 and grad_b1
    update: Step | None            # with lr


_PSI = {"sigmoid": r"\sigma", "identity": ""}


def mlp_regression_steps(p: dict[str, Any], t: Trace) -> MLPRegressionSteps:
    act, out_act = p["activation"], p["output_activation"]
    psi = _PSI[out_act]
    half = p["loss"] == "half-sse"
    d_loss = r"(o - t)" if half else r"\frac{2}{n}(o - t)"
    d_psi = r" \odot o \odot (1 - o)" if out_act == "sigmoid" else ""
    return MLPRegressionSteps(
        Step(f"Hidden layer ({act})", r"a = W_1 x + b_1,\ \ h = \phi(a)", {"hidden_pre": t.hidden_pre, "hidden": t.hidden}),
        Step("Output layer" + (" (sigmoid)" if out_act == "sigmoid" else " (no activation)"),
             r"z = W_2 h + b_2,\ \ o = " + (rf"{psi}(z)" if psi else "z"), {"output_pre": t.output_pre, "output": t.output}),
        Step("Squared-error loss" + (" (half the sum)" if half else " (mean)"),
             r"L = \tfrac12 \sum (t - o)^2" if half else r"L = \frac{1}{n}\sum (t - o)^2", {"loss": t.loss}),
        Step("Gradient at the output pre-activation", r"\frac{\partial L}{\partial z} = " + d_loss + d_psi,
             {"grad_output": t.grad_output, "grad_output_pre": t.grad_output_pre}),
        Step("Second layer", r"\frac{\partial L}{\partial W_2} = \frac{\partial L}{\partial z} h^\top,\quad "
                             r"\frac{\partial L}{\partial b_2} = \frac{\partial L}{\partial z}",
             {"grad_w2": t.grad_w2, "grad_b2": t.grad_b2}),
        Step("Back to the hidden layer (with the weights before the update)",
             r"\frac{\partial L}{\partial h} = W_2^\top \frac{\partial L}{\partial z}", {"grad_hidden": t.grad_hidden}),
        Step("Through the activation", r"\frac{\partial L}{\partial a} = \frac{\partial L}{\partial h} \odot \phi'(a)",
             {"activation_derivative": t.activation_derivative, "grad_hidden_pre": t.grad_hidden_pre}),
        Step("First layer", r"\frac{\partial L}{\partial W_1} = \frac{\partial L}{\partial a} x^\top,\quad "
                            r"\frac{\partial L}{\partial b_1} = \frac{\partial L}{\partial a}",
             {"grad_w1": t.grad_w1, "grad_b1": t.grad_b1}),
        Step("One gradient-descent step on every weight and bias",
             r"\theta \leftarrow \theta - \eta \frac{\partial L}{\partial \theta}",
             {"w1_new": t.w1_new, "b1_new": t.b1_new, "w2_new": t.w2_new, "b2_new": t.b2_new}) if "w1_new" in t else None)


def _lr(p: dict[str, Any]) -> bool:
    return p["lr"] is not None


def _sigmoid_out(p: dict[str, Any]) -> bool:
    return p["output_activation"] == "sigmoid"


def _not_two_outputs(p: dict[str, Any]) -> bool:
    """With two outputs ½Σ(t − o)² IS the mean of (t − o)²: the two losses are no mistake for each other."""
    return np.size(p["target"]) != 2


def _ascent(name: str) -> Mistake:
    grad = {"w1_new": "grad_w1", "b1_new": "grad_b1", "w2_new": "grad_w2", "b2_new": "grad_b2"}[name]
    old = {"w1_new": "w1", "b1_new": "b1", "w2_new": "w2", "b2_new": "b2"}[name]

    def value(p: dict[str, Any], t: Trace) -> Any:
        base = np.zeros_like(t[grad]) if p[old] is None else np.asarray(p[old], dtype=float)
        return base + p["lr"] * t[grad]
    return Mistake("ascent", compute=value, when=_lr, why="Gradient DEScent subtracts: θ ← θ − η ∂L/∂θ.")


def _hidden_act(act: str) -> Callable[[dict[str, Any]], bool]:
    return lambda p: p["activation"] == act


def _x(p: dict[str, Any]) -> np.ndarray:
    return np.asarray(p["x"], dtype=float)


def _square(p: dict[str, Any], name: str) -> bool:
    return np.shape(p[name])[0] == np.shape(p[name])[1]


def _hidden_as_wide_as_x(p: dict[str, Any]) -> bool:
    """x has as many entries as the hidden layer: a mistake putting x where h goes has ∂L/∂W₂'s shape."""
    return np.shape(p["w1"])[0] == np.size(p["x"])


def _stale_grad_hidden(p: dict[str, Any], t: Trace) -> np.ndarray:
    """W₂ᵀδ with W₂ already updated by the step (lr): a student who updates before backpropagating."""
    return ops.matmul(np.asarray(t.w2_new).T, t.grad_output_pre)


_OTHER_HIDDEN = ("relu", "tanh", "leaky-relu", "gelu")

MLP_REGRESSION_MISTAKES = {
    "hidden": (Mistake("no-activation", activation="identity", when=_hidden_act("sigmoid"),
                       why="Apply σ to the pre-activations: h = σ(a)."),
               *(Mistake("no-activation", activation="identity", when=_hidden_act(act),
                         why=f"The hidden layer applies {act} to the pre-activations.") for act in _OTHER_HIDDEN)),
    "output": (Mistake("no-output-activation", output_activation="identity",
                       why="The output unit is a sigmoid too: o = σ(z)."),),
    "loss": (Mistake("other-squared-loss", loss=lambda p: "mse" if p["loss"] == "half-sse" else "half-sse",
                     when=_not_two_outputs,
                     why="Read the loss as stated: ½Σ(t − o)² and the mean of (t − o)² differ by a factor."),
             Mistake("no-half", compute=lambda p, t: ops.scale(t.loss, 2), when=lambda p: p["loss"] == "half-sse",
                     why="The loss is HALF the sum of squared errors.")),
    "grad_output_pre": (Mistake("no-output-derivative", compute=lambda p, t: t.grad_output, when=_sigmoid_out,
                                why="The output passes through σ: multiply ∂L/∂o by σ'(z) = o(1 − o)."),
                        Mistake("target-minus-output", compute=lambda p, t: -t.grad_output_pre,
                                why="∂L/∂o = o − t for ½Σ(t − o)²: the output minus the target (the sign matters for the "
                                    "update)."),
                        Mistake("other-squared-loss", loss=lambda p: "mse" if p["loss"] == "half-sse" else "half-sse",
                                when=_not_two_outputs,
                                why="Differentiate the loss as stated: ½Σ(t − o)² gives o − t; the mean of (t − o)² gives "
                                    "2(o − t)/n.")),
    "grad_w2": (Mistake("no-output-derivative", compute=lambda p, t: ops.matmul(t.grad_output[:, None], t.hidden[None, :]),
                        when=lambda p: _sigmoid_out(p) and p["loss"] == "half-sse",
                        why="δ carries σ'(z) = o(1 − o): ∂L/∂W₂ = δ hᵀ with δ = (o − t)·o(1 − o)."),
                Mistake("input-not-hidden", compute=lambda p, t: ops.matmul(t.grad_output_pre[:, None], _x(p)[None, :]),
                        when=_hidden_as_wide_as_x,
                        why="W₂ multiplies the hidden activations h, not the input x: ∂L/∂W₂ = δ hᵀ."),
                Mistake("transposed", compute=lambda p, t: t.grad_w2.T, when=lambda p: _square(p, "w2"),
                        why="∂L/∂W₂ = δ hᵀ has W₂'s shape (outputs × hidden).")),
    "grad_hidden": (Mistake("updated-w2", compute=_stale_grad_hidden, when=_lr,
                            why="Backpropagate with the weights of this forward pass: update W₂ only after every "
                                "gradient is computed."),
                    Mistake("no-transpose", compute=lambda p, t: ops.matmul(p["w2"], t.grad_output_pre),
                            when=lambda p: _square(p, "w2"), why="The gradient flows back through W₂ᵀ, not W₂.")),
    "grad_hidden_pre": (Mistake("no-hidden-derivative", compute=lambda p, t: t.grad_hidden,
                                when=lambda p: p["activation"] != "identity",
                                why="Multiply by the hidden activation's derivative φ'(a) on the way back."),
                        Mistake("updated-w2", compute=lambda p, t: _stale_grad_hidden(p, t) * t.activation_derivative,
                                when=_lr, why="Use W₂ as it was in the forward pass, not after its update.")),
    "grad_w1": (Mistake("no-hidden-derivative", compute=lambda p, t: ops.matmul(t.grad_hidden[:, None], _x(p)[None, :]),
                        when=_hidden_act("sigmoid"),
                        why="Multiply by σ'(a) = h(1 − h) on the way through the hidden units."),
                Mistake("no-hidden-derivative", compute=lambda p, t: ops.matmul(t.grad_hidden[:, None], _x(p)[None, :]),
                        when=lambda p: p["activation"] not in ("sigmoid", "identity"),
                        why="Multiply by the hidden activation's derivative φ'(a) on the way back."),
                Mistake("transposed", compute=lambda p, t: t.grad_w1.T, when=lambda p: _square(p, "w1"),
                        why="∂L/∂W₁ = (∂L/∂a) xᵀ: row j is hidden unit j.")),
    "w1_new": (_ascent("w1_new"),), "b1_new": (_ascent("b1_new"),),
    "w2_new": (_ascent("w2_new"),), "b2_new": (_ascent("b2_new"),),
}


def _step_from(name: str) -> Ecf:
    grad, old = {"w1_new": ("grad_w1", "w1"), "b1_new": ("grad_b1", "b1"), "w2_new": ("grad_w2", "w2"),
                 "b2_new": ("grad_b2", "b2")}[name]
    def args(p: dict[str, Any], t: Trace) -> dict[str, Any]:
        base = np.zeros_like(t[grad]) if p[old] is None else np.asarray(p[old], dtype=float)
        return {"param": base, "grad": Ref(grad), "lr": p["lr"]}
    return Ecf("sgd-step", args)


MLP_REGRESSION_ECF = {
    "grad_hidden": (Ecf("matmul", lambda p, t: {"a": np.asarray(p["w2"], dtype=float).T, "b": Ref("grad_output_pre")}),),
    "grad_hidden_pre": (Ecf("activation-backward", lambda p, t: {"grad_output": Ref("grad_hidden"), "x": t.hidden_pre,
                                                                 "name": p["activation"]}),),
    "w1_new": (_step_from("w1_new"),), "b1_new": (_step_from("b1_new"),),
    "w2_new": (_step_from("w2_new"),), "b2_new": (_step_from("b2_new"),),
}


MLP_REGRESSION = Topic(
    "mlp-regression", "Two-layer network with a squared-error loss: forward, backward and one gradient-descent step",
    (Param("x", "vector (in)"), Param("target", "vector (out) or a number"), Param("w1", "matrix (H×in)"),
     Param("b1", "vector (H); zeros when omitted", None),
     Param("w2", "matrix (out×H)"), Param("b2", "vector (out); zeros when omitted", None),
     Param("activation", '"sigmoid", "relu", "tanh", "identity" (also "leaky-relu", "gelu")', "sigmoid"),
     Param("output_activation", '"sigmoid" or "identity"', "sigmoid"),
     Param("loss", '"half-sse": ½Σ(t − o)², or "mse": mean of (t − o)²', "half-sse"),
     Param("lr", "learning rate (optional): one gradient-descent step", None)),
    ("hidden_pre", "hidden", "output_pre", "output", "loss", "grad_output_pre", "grad_w2", "grad_b2", "grad_hidden",
     "grad_hidden_pre", "grad_w1", "grad_b1", "w1_new", "b1_new", "w2_new", "b2_new"),
    lambda p: engine.mlp_regression(p["x"], p["target"], p["w1"], p["b1"], p["w2"], p["b2"], activation=p["activation"],
                                    output_activation=p["output_activation"], loss=p["loss"], lr=p["lr"]),
    mlp_regression_steps,
    mistakes=MLP_REGRESSION_MISTAKES,
    ecf=MLP_REGRESSION_ECF,
    conventions=lambda p: {"layout": "weights out×in as torch.nn.Linear (W x); gradients are ∂L/∂(value)",
                           "loss": "½Σ(t − o)² (half sum of squared errors)" if p["loss"] == "half-sse"
                           else "mean of (t − o)² (torch.nn.MSELoss)",
                           "update": "every weight updated from the gradients of the same forward pass"},
    answer_names=lambda p, t: [n for n in ("hidden_pre", "hidden", "output_pre", "output", "loss", "grad_output_pre",
                                           "grad_w2", "grad_b2", "grad_hidden", "grad_hidden_pre", "grad_w1", "grad_b1",
                                           "w1_new", "b1_new", "w2_new", "b2_new") if n in t],
)
