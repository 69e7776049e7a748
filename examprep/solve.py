"""`examprep solve`: the engine behind a contract of topics, named parameters and answers.

The topic table here is the one in ``shared/cases/README.md`` (authoritative for topic names,
parameter names, defaults and answer names) plus the topics later generators add. Each topic
checks its parameters, calls one engine function and describes the worked steps.
"""
from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, TextIO

import numpy as np

from examprep import engine
from examprep.engine._core import Trace, choice
from examprep.errors import ExamprepError, ParamError, UnknownTopicError


class _Required:
    def __repr__(self) -> str:
        return "required"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Param:
    """One parameter of a topic: its JSON name, what it holds, and its default (or REQUIRED)."""

    name: str
    kind: str
    default: Any = REQUIRED
    doc: str = ""


@dataclass(frozen=True)
class Step:
    """One step of a worked solution: a title, a LaTeX formula and the values it produces."""

    title: str
    formula: str
    values: dict[str, Any] = field(default_factory=dict)


@dataclass
class Solution:
    topic: str
    params: dict[str, Any]
    answer: dict[str, Any]
    steps: list[Step]
    conventions: dict[str, str]


@dataclass(frozen=True)
class Topic:
    """A solve topic: parameters, the engine call, the answer names and the worked steps."""

    name: str
    title: str
    params: tuple[Param, ...]
    answers: tuple[str, ...]
    compute: Callable[[dict[str, Any]], Trace]
    steps: Callable[[dict[str, Any], Trace], list[Step]]
    conventions: Callable[[dict[str, Any]], dict[str, str]] = lambda p: {}
    answer_names: Callable[[dict[str, Any], Trace], Iterable[str]] | None = None
    extra_params: bool = False     # accepts names beyond `params` (param-count's sizes)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


TOPICS: dict[str, Topic] = {}


def topic(t: Topic) -> Topic:
    TOPICS[t.name] = t
    return t


def _with(p: dict[str, Any], *names: str) -> dict[str, Any]:
    return {n: p[n] for n in names if n in p and p[n] is not None}


def _given(p: dict[str, Any], name: str) -> bool:
    return p.get(name) is not None


# ---------------------------------------------------------------------------------------- topics

topic(Topic(
    "softmax", "Softmax over the last axis",
    (Param("logits", "vector (C) or matrix (N×C)"),),
    ("probs",),
    lambda p: engine.softmax(p["logits"]),
    lambda p, t: [
        Step("Subtract the maximum (stability; the result is unchanged)", r"z_i - \max_j z_j", {"shifted": t.shifted}),
        Step("Exponentiate", r"e^{z_i - \max_j z_j}", {"exp": t.exp}),
        Step("Normalise", r"p_i = \frac{e^{z_i - \max z}}{\sum_j e^{z_j - \max z}}", {"sum": t.sum, "probs": t.probs}),
    ],
    lambda p: {"axis": "softmax over the last axis (classes)"},
))

topic(Topic(
    "activation", "Activation value and derivative",
    (Param("name", '"sigmoid", "tanh", "relu", "leaky-relu" or "gelu"'),
     Param("x", "number or vector"),
     Param("negative_slope", "number (leaky-relu)", 0.01),
     Param("approximate", '"none" or "tanh" (gelu)', "none")),
    ("output", "derivative"),
    lambda p: engine.activation(p["name"], p["x"], negative_slope=p["negative_slope"], approximate=p["approximate"]),
    lambda p, t: {
        "sigmoid": [Step("Sigmoid", r"\sigma(x) = \frac{1}{1 + e^{-x}}", {"output": t.output}),
                    Step("Derivative", r"\sigma'(x) = \sigma(x)\,(1 - \sigma(x)) \le \tfrac14", {"derivative": t.derivative})],
        "tanh": [Step("tanh", r"\tanh x = \frac{e^{x} - e^{-x}}{e^{x} + e^{-x}}", {"output": t.output}),
                 Step("Derivative", r"\tanh'(x) = 1 - \tanh^2 x \le 1", {"derivative": t.derivative})],
        "relu": [Step("ReLU", r"\max(0, x)", {"output": t.output}),
                 Step("Derivative (0 at x = 0, as PyTorch)", r"\mathbb{1}[x > 0]", {"derivative": t.derivative})],
        "leaky-relu": [Step("Leaky ReLU", r"x \text{ if } x > 0 \text{ else } \alpha x", {"output": t.output}),
                       Step("Derivative (α at x = 0, as PyTorch)", r"1 \text{ if } x > 0 \text{ else } \alpha",
                            {"derivative": t.derivative})],
        "gelu": [Step("Normal CDF and density", r"\Phi(x),\ \varphi(x)", {"cdf": t.get("cdf"), "pdf": t.get("pdf")}),
                 Step("GELU", r"x\,\Phi(x)", {"output": t.output}),
                 Step("Derivative", r"\Phi(x) + x\,\varphi(x)", {"derivative": t.derivative})],
    }[p["name"]],
    lambda p: {"name": p["name"]} | ({"negative_slope": str(p["negative_slope"])} if p["name"] == "leaky-relu" else {})
    | ({"approximate": p["approximate"]} if p["name"] == "gelu" else {}),
))


def _ce_steps(p: dict[str, Any], t: Trace) -> list[Step]:
    eps = p["label_smoothing"]
    steps = [
        Step("Softmax of the logits", r"p_i = \frac{e^{z_i}}{\sum_j e^{z_j}}", {"probs": t.probs}),
        Step("Log-probabilities", r"\log p_i = z_i - \log \sum_j e^{z_j}", {"log_probs": t.log_probs}),
    ]
    if eps:
        steps.append(Step("Smoothed target distribution", r"q = (1 - \varepsilon)\,y + \varepsilon / C",
                          {"target_dist": t.target_dist}))
        steps.append(Step("Loss per example", r"\ell = -\sum_i q_i \log p_i", {"losses": t.losses}))
    else:
        steps.append(Step("Loss per example: minus the log-probability of the target", r"\ell = -\log p_y",
                          {"losses": t.losses}))
    red = p["reduction"]
    if np.ndim(p["logits"]) == 2 and red != "none":
        steps.append(Step(f"Reduce over the batch ({red})",
                          r"L = \frac{1}{N}\sum_n \ell_n" if red == "mean" else r"L = \sum_n \ell_n", {"loss": t.loss}))
    q = "q" if eps else "y"
    div = r"\frac{1}{N}" if red == "mean" and np.ndim(p["logits"]) == 2 else ""
    steps.append(Step("Gradient with respect to the logits", rf"\frac{{\partial L}}{{\partial z}} = {div}(p - {q})",
                      {"grad_logits": t.grad_logits}))
    return steps


topic(Topic(
    "cross-entropy", "Softmax + cross-entropy loss and its gradient",
    (Param("logits", "vector (C) or matrix (N×C)"),
     Param("target", "class index (C logits) or list of N indices"),
     Param("reduction", '"mean", "sum" or "none"', "mean"),
     Param("label_smoothing", "ε in [0, 1]", 0.0)),
    ("loss", "probs", "grad_logits"),
    lambda p: engine.cross_entropy(p["logits"], p["target"], reduction=p["reduction"],
                                   label_smoothing=p["label_smoothing"]),
    _ce_steps,
    lambda p: {"reduction": {"mean": "mean over the batch (PyTorch's default)", "sum": "sum over the batch",
                             "none": "one loss per example"}.get(p["reduction"], p["reduction"]),
               "label_smoothing": f"ε = {p['label_smoothing']}: target gets 1−ε+ε/C, others ε/C (PyTorch)"},
))


def _dense_steps(p: dict[str, Any], t: Trace) -> list[Step]:
    batch = np.ndim(p["x"]) == 2
    steps = [Step("Forward", r"y = x W^\top + b" if batch else r"y = W x + b", {"output": t.output})]
    if "grad_weight" in t:
        if batch:
            steps += [Step("Weight gradient (summed over the batch)", r"\frac{\partial L}{\partial W} = \delta^\top X",
                           {"grad_weight": t.grad_weight}),
                      Step("Bias gradient", r"\frac{\partial L}{\partial b} = \sum_n \delta_n", {"grad_bias": t.grad_bias}),
                      Step("Input gradient", r"\frac{\partial L}{\partial X} = \delta W", {"grad_input": t.grad_input})]
        else:
            steps += [Step("Weight gradient (outer product)", r"\frac{\partial L}{\partial W} = \delta\, x^\top",
                           {"grad_weight": t.grad_weight}),
                      Step("Bias gradient", r"\frac{\partial L}{\partial b} = \delta", {"grad_bias": t.grad_bias}),
                      Step("Input gradient", r"\frac{\partial L}{\partial x} = W^\top \delta", {"grad_input": t.grad_input})]
    return steps


topic(Topic(
    "dense", "Dense layer forward and backward",
    (Param("x", "vector (in) or matrix (N×in)"), Param("weight", "matrix (out×in)"),
     Param("bias", "vector (out); zeros when omitted", None),
     Param("grad_output", "∂L/∂y, the output's shape (optional)", None)),
    ("output", "grad_weight", "grad_bias", "grad_input"),
    lambda p: engine.dense(p["x"], p["weight"], p["bias"], p["grad_output"]),
    _dense_steps,
    lambda p: {"layout": "weight is out×in as torch.nn.Linear; batched y = x Wᵀ + b"},
    answer_names=lambda p, t: [n for n in ("output", "grad_weight", "grad_bias", "grad_input") if n in t],
))

topic(Topic(
    "mlp-backprop", "Two-layer MLP with softmax + cross-entropy: forward and backward",
    (Param("x", "vector (in)"), Param("target", "class index"), Param("w1", "matrix (H×in)"),
     Param("b1", "vector (H)"), Param("activation", '"relu", "sigmoid", "tanh", "leaky-relu", "gelu"', "relu"),
     Param("w2", "matrix (C×H)"), Param("b2", "vector (C)")),
    ("hidden_pre", "hidden", "logits", "probs", "loss", "grad_logits", "grad_w2", "grad_b2", "grad_hidden",
     "grad_hidden_pre", "grad_w1", "grad_b1", "grad_x"),
    lambda p: engine.mlp_backprop(p["x"], p["target"], p["w1"], p["b1"], p["w2"], p["b2"], activation=p["activation"]),
    lambda p, t: [
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
    ],
    lambda p: {"loss": "softmax + cross-entropy on one example", "activation": p["activation"]},
))

topic(Topic(
    "linear-regression", "Linear regression: loss, gradient and one gradient-descent step",
    (Param("X", "matrix (N×d), or vector (N) for one feature"), Param("y", "vector (N)"),
     Param("w", "vector (d), or a number for one feature"), Param("b", "number", 0.0),
     Param("lr", "learning rate"), Param("loss", '"mse" or "half-mse"', "mse")),
    ("predictions", "loss", "grad_w", "grad_b", "w_new", "b_new"),
    lambda p: engine.linear_regression(p["X"], p["y"], p["w"], p["b"], lr=p["lr"], loss=p["loss"]),
    lambda p, t: [
        Step("Predictions", r"\hat y = X w + b", {"predictions": t.predictions}),
        Step("Residuals", r"e = \hat y - y", {"residuals": t.residuals}),
        Step("Loss", r"L = \frac{1}{N}\sum e_n^2" if p["loss"] == "mse" else r"L = \frac{1}{2N}\sum e_n^2", {"loss": t.loss}),
        Step("Gradient", (r"\frac{\partial L}{\partial w} = \frac{2}{N} X^\top e,\ "
                          r"\frac{\partial L}{\partial b} = \frac{2}{N}\sum e_n"
                          if p["loss"] == "mse" else
                          r"\frac{\partial L}{\partial w} = \frac{1}{N} X^\top e,\ "
                          r"\frac{\partial L}{\partial b} = \frac{1}{N}\sum e_n"),
             {"grad_w": t.grad_w, "grad_b": t.grad_b}),
        Step("Gradient-descent step", r"w \leftarrow w - \eta \frac{\partial L}{\partial w},\ "
                                      r"b \leftarrow b - \eta \frac{\partial L}{\partial b}",
             {"w_new": t.w_new, "b_new": t.b_new}),
    ],
    lambda p: {"loss": "mse = mean of squared errors (torch.nn.MSELoss)" if p["loss"] == "mse"
               else "half-mse = ½ · mean of squared errors"},
))


def _size_steps(p: dict[str, Any], t: Trace) -> list[Step]:
    if p["padding"] == "same":
        return [Step("Output size with \"same\" padding", r"o = \lceil n / s \rceil", {"output_size": t.output_size}),
                Step("Total padding, extra at the end (TensorFlow)",
                     r"P = \max((o-1)s + d(k-1) + 1 - n,\ 0),\ p_{\text{before}} = \lfloor P/2 \rfloor",
                     {"pad_before": t.pad_before, "pad_after": t.pad_after})]
    if p["transposed"]:
        return [Step("Transposed convolution", r"o = (n-1)s - 2p + d(k-1) + \text{output\_padding} + 1",
                     {"output_size": t.output_size})]
    rnd = r"\left\lceil" if p["ceil_mode"] else r"\left\lfloor"
    rnd_close = r"\right\rceil" if p["ceil_mode"] else r"\right\rfloor"
    steps = [Step("Effective kernel size", r"k_{\text{eff}} = d(k-1) + 1", {"effective_kernel": t.effective_kernel}),
             Step("Exact quotient before rounding", r"\frac{n + 2p - k_{\text{eff}}}{s} + 1", {"quotient": t.quotient}),
             Step("Round " + ("up (ceil_mode), dropping a last window that starts in the right padding"
                              if p["ceil_mode"] else "down"),
                  rf"o = {rnd} \frac{{n + 2p - k_{{\text{{eff}}}}}}{{s}} {rnd_close} + 1", {"output_size": t.output_size})]
    return steps


topic(Topic(
    "conv-output-size", "Output size of a convolution or pooling layer",
    (Param("input_size", "int or [H, W]"), Param("kernel_size", "int or one per dimension"),
     Param("op", '"conv" or "pool"', "conv"),
     Param("stride", "int (1 for conv, kernel_size for pool)", None),
     Param("padding", 'int, one per dimension, "same" or "valid"', 0),
     Param("dilation", "int", 1), Param("ceil_mode", "bool (pool only)", False),
     Param("transposed", "bool (conv only)", False), Param("output_padding", "int (transposed only)", 0)),
    ("output_size", "pad_before", "pad_after"),
    lambda p: engine.conv_output_size(p["input_size"], p["kernel_size"], op=p["op"], stride=p["stride"],
                                      padding=p["padding"], dilation=p["dilation"], ceil_mode=p["ceil_mode"],
                                      transposed=p["transposed"], output_padding=p["output_padding"]),
    _size_steps,
    lambda p: {"rounding": "⌈n/s⌉ (TensorFlow \"same\")" if p["padding"] == "same"
               else "ceil with PyTorch's last-window rule" if p["ceil_mode"] else "floor (PyTorch)",
               "padding": "TensorFlow \"same\": output ⌈n/s⌉, extra pad at the end" if p["padding"] == "same"
               else f"{p['padding']} on each side"},
    answer_names=lambda p, t: [n for n in ("output_size", "pad_before", "pad_after") if n in t],
))

topic(Topic(
    "receptive-field", "Receptive field of a conv/pool stack",
    (Param("layers", "list of {kernel_size, stride (1), dilation (1)}"),),
    ("receptive_field", "jump", "receptive_fields", "jumps"),
    lambda p: engine.receptive_field(p["layers"]),
    lambda p, t: [
        Step("Effective kernel sizes", r"k_{\text{eff},l} = d_l (k_l - 1) + 1", {"effective_kernels": t.effective_kernels}),
        Step("Jumps (input pixels between neighbouring outputs)", r"j_l = j_{l-1} s_l,\ j_0 = 1", {"jumps": t.jumps}),
        Step("Receptive fields layer by layer", r"r_l = r_{l-1} + (k_{\text{eff},l} - 1)\, j_{l-1},\ r_0 = 1",
             {"receptive_fields": t.receptive_fields}),
        Step("Receptive field of the last layer", r"r_L", {"receptive_field": t.receptive_field, "jump": t.jump}),
    ],
    lambda p: {"recurrence": "r_l = r_{l-1} + (k_eff - 1)·j_{l-1} (Araujo et al. 2019)"},
))


def _conv_steps(p: dict[str, Any], t: Trace) -> list[Step]:
    steps = [Step("Pad the input", r"x_{\text{pad}}", {"padded": t.padded}),
             Step("Slide the kernel (cross-correlation, no flip)",
                  r"y_{ij} = b + \sum_{u,v} K_{uv}\, x_{\text{pad}}[i s + u d,\ j s + v d]", {"output": t.output})]
    if "grad_input" in t:
        steps += [Step("Kernel gradient",
                       r"\frac{\partial L}{\partial K_{uv}} = \sum_{i,j} \delta_{ij}\, x_{\text{pad}}[i s + u d,\ j s + v d]",
                       {"grad_kernel": t.grad_kernel}),
                  Step("Bias gradient", r"\frac{\partial L}{\partial b} = \sum_{i,j} \delta_{ij}", {"grad_bias": t.grad_bias}),
                  Step("Input gradient: scatter δ·K back over each window, crop the padding",
                       r"\frac{\partial L}{\partial x} = \sum_{i,j} \delta_{ij}\, K \text{ placed at window } (i,j)",
                       {"grad_input": t.grad_input})]
    return steps


topic(Topic(
    "conv2d", "2-D (or 1-D) convolution forward and backward",
    (Param("input", "matrix (H×W) or vector"), Param("kernel", "matrix (kH×kW) or vector"),
     Param("stride", "int or [s_h, s_w]", 1), Param("padding", 'int, [before, after] or "same"', 0),
     Param("dilation", "int", 1), Param("bias", "number", 0.0),
     Param("grad_output", "∂L/∂output (optional)", None)),
    ("output", "grad_input", "grad_kernel", "grad_bias"),
    lambda p: engine.conv2d(p["input"], p["kernel"], stride=p["stride"], padding=p["padding"],
                            dilation=p["dilation"], bias=p["bias"], grad_output=p["grad_output"]),
    _conv_steps,
    lambda p: {"operation": "cross-correlation (no kernel flip), as PyTorch",
               "padding": "TensorFlow \"same\": extra pad at the end" if p["padding"] == "same" else "zeros"},
    answer_names=lambda p, t: [n for n in ("output", "grad_input", "grad_kernel", "grad_bias") if n in t],
))

topic(Topic(
    "max-pool", "Max-pooling forward and backward",
    (Param("input", "vector or matrix (H×W)"), Param("kernel_size", "int or [kH, kW]"),
     Param("stride", "int (= kernel_size)", None), Param("padding", "int (padded with −∞)", 0),
     Param("dilation", "int", 1), Param("ceil_mode", "bool", False),
     Param("grad_output", "∂L/∂output (optional)", None)),
    ("output", "grad_input"),
    lambda p: engine.max_pool(p["input"], p["kernel_size"], stride=p["stride"], padding=p["padding"],
                              dilation=p["dilation"], ceil_mode=p["ceil_mode"], grad_output=p["grad_output"]),
    lambda p, t: [Step("Maximum of each window", r"y_{ij} = \max_{(u,v) \in \text{window}(i,j)} x_{uv}",
                       {"output": t.output, "indices": t.indices})]
    + ([Step("Route each gradient to its window's maximum (ties: the first in row-major order)",
             r"\frac{\partial L}{\partial x_{uv}} = \sum_{(i,j):\ \arg\max = (u,v)} \delta_{ij}", {"grad_input": t.grad_input})]
       if "grad_input" in t else []),
    lambda p: {"ties": "the first maximum in row-major order gets the gradient (PyTorch)",
               "padding": "−∞ (never selected)"},
    answer_names=lambda p, t: [n for n in ("output", "grad_input") if n in t],
))

_RNN_PARAMS = (Param("x", "vector (I)"), Param("h", "vector (H)"))


def _bias_params(g: str) -> tuple[Param, ...]:
    return (Param("bias_ih", f"vector ({g}H); zeros when omitted", None),
            Param("bias_hh", f"vector ({g}H); zeros when omitted", None))


topic(Topic(
    "rnn-cell", "Vanilla (Elman) RNN step",
    _RNN_PARAMS + (Param("weight_ih", "matrix (H×I)"), Param("weight_hh", "matrix (H×H)")) + _bias_params("")
    + (Param("nonlinearity", '"tanh" or "relu"', "tanh"),),
    ("h_new",),
    lambda p: engine.rnn_cell(p["x"], p["h"], p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"],
                              nonlinearity=p["nonlinearity"]),
    lambda p, t: [Step("Input part", r"W_{ih} x + b_{ih}", {"input_part": t.input_part}),
                  Step("Hidden part", r"W_{hh} h + b_{hh}", {"hidden_part": t.hidden_part}),
                  Step("Pre-activation", r"a = W_{ih} x + b_{ih} + W_{hh} h + b_{hh}", {"pre_activation": t.pre_activation}),
                  Step("New hidden state", rf"h' = \{p['nonlinearity'] if p['nonlinearity'] == 'tanh' else 'mathrm{ReLU}'}(a)",
                       {"h_new": t.h_new})],
    lambda p: {"biases": "two bias vectors b_ih, b_hh (PyTorch)", "nonlinearity": p["nonlinearity"]},
))

topic(Topic(
    "lstm-cell", "LSTM step",
    _RNN_PARAMS + (Param("c", "vector (H)"), Param("weight_ih", "matrix (4H×I), rows i, f, g, o"),
                   Param("weight_hh", "matrix (4H×H)")) + _bias_params("4"),
    ("i", "f", "g", "o", "c_new", "h_new"),
    lambda p: engine.lstm_cell(p["x"], p["h"], p["c"], p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"]),
    lambda p, t: [
        Step("Gate pre-activations (row blocks i, f, g, o)", r"W_{ih} x + b_{ih} + W_{hh} h + b_{hh}",
             {"pre_i": t.pre_i, "pre_f": t.pre_f, "pre_g": t.pre_g, "pre_o": t.pre_o}),
        Step("Input, forget and output gates", r"i = \sigma(\cdot),\ f = \sigma(\cdot),\ o = \sigma(\cdot)",
             {"i": t.i, "f": t.f, "o": t.o}),
        Step("Candidate", r"g = \tanh(\cdot)", {"g": t.g}),
        Step("New cell state", r"c' = f \odot c + i \odot g", {"c_new": t.c_new}),
        Step("New hidden state", r"h' = o \odot \tanh(c')", {"tanh_c_new": t.tanh_c_new, "h_new": t.h_new}),
    ],
    lambda p: {"layout": "rows i, f, g, o; two bias vectors (torch.nn.LSTMCell)"},
))

_GRU_BLEND = {"lecture": r"h' = (1 - z) \odot h + z \odot n", "pytorch": r"h' = (1 - z) \odot n + z \odot h"}
_GRU_RESET = {"after": r"n = \tanh(W_{in} x + b_{in} + r \odot (W_{hn} h + b_{hn}))",
              "before": r"n = \tanh(W_{in} x + b_{in} + W_{hn} (r \odot h) + b_{hn})"}

def _gru_cell(p: dict[str, Any]) -> Trace:
    # the contract's resets are "after" and "before"; the engine's "none" (a mistake) is not a topic option
    choice("convention", p["convention"], engine.rnn.GRU_CONVENTIONS)
    choice("reset", p["reset"], ("after", "before"))
    return engine.gru_cell(p["x"], p["h"], p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"],
                           convention=p["convention"], reset=p["reset"])


topic(Topic(
    "gru-cell", "GRU step",
    _RNN_PARAMS + (Param("weight_ih", "matrix (3H×I), rows r, z, n"), Param("weight_hh", "matrix (3H×H)"))
    + _bias_params("3")
    + (Param("convention", '"lecture": h\' = (1−z)⊙h + z⊙n; "pytorch": h\' = (1−z)⊙n + z⊙h', "lecture"),
       Param("reset", '"after": r⊙(W_hn h + b_hn); "before": W_hn (r⊙h) + b_hn', "after")),
    ("r", "z", "n", "h_new"),
    lambda p: _gru_cell(p),
    lambda p, t: [
        Step("Reset gate", r"r = \sigma(W_{ir} x + b_{ir} + W_{hr} h + b_{hr})", {"pre_r": t.pre_r, "r": t.r}),
        Step("Update gate", r"z = \sigma(W_{iz} x + b_{iz} + W_{hz} h + b_{hz})", {"pre_z": t.pre_z, "z": t.z}),
        Step("Candidate (reset applied " + p["reset"] + " the hidden product)", _GRU_RESET[p["reset"]],
             {"hidden_n": t.hidden_n, "pre_n": t.pre_n, "n": t.n}),
        Step(f"New hidden state ({p['convention']} convention)", _GRU_BLEND[p["convention"]], {"h_new": t.h_new}),
    ],
    lambda p: {"convention": p["convention"] + ": "
               + {"lecture": "h' = (1−z)⊙h + z⊙n (course notes; Chung et al. 2014)",
                  "pytorch": "h' = (1−z)⊙n + z⊙h (torch.nn.GRUCell)"}.get(p["convention"], ""),
               "reset": p["reset"] + ": " + {"after": "r⊙(W_hn h + b_hn) (PyTorch, the notes)",
                                             "before": "W_hn (r⊙h) + b_hn (Cho et al. 2014)"}.get(p["reset"], "")},
))

topic(Topic(
    "param-count", "Number of learnable parameters of a layer",
    (Param("layer", " | ".join(engine.counts.LAYERS)),
     Param("bias", "bool", True), Param("bidirectional", "bool (recurrent)", False),
     Param("num_layers", "int", 1), Param("framework", '"pytorch" or "keras"', "pytorch"),
     Param("reset_after", "bool (Keras GRU only: two bias vectors when true)", True))
    + tuple(Param(n, "int (a size, by PyTorch's argument name)", None) for n in engine.counts.SIZE_NAMES),
    ("count",),
    lambda p: engine.param_count(p["layer"], bias=p["bias"], bidirectional=p["bidirectional"],
                                 num_layers=p["num_layers"], framework=p["framework"], reset_after=p["reset_after"],
                                 **{n: p[n] for n in engine.counts.SIZE_NAMES if p.get(n) is not None}),
    lambda p, t: ([Step("Gate blocks", r"G", {"gates": t.gates})] if "gates" in t else [])
    + [Step("Parameters per tensor", r"\text{numel}", dict(t.breakdown)),
       Step("Total", r"\sum \text{numel}" + (r" \times \text{num\_layers}" if t.num_layers > 1 else ""), {"count": t["count"]})],
    lambda p: {"framework": p["framework"] + (" (two bias vectors per gate block)" if p["framework"] == "pytorch"
                                              else " (one bias vector per gate block; GRU reset_after keeps two)")},
))


def _ln_steps(p: dict[str, Any], t: Trace) -> list[Step]:
    denom = r"\sigma + \varepsilon" if p["eps_placement"] == "added-to-std" else r"\sqrt{\sigma^2 + \varepsilon}"
    var = r"\frac{1}{D}" if p["variance"] == "biased" else r"\frac{1}{D-1}"
    return [Step("Mean over the features", r"\mu = \frac{1}{D}\sum_i x_i", {"mean": t.mean}),
            Step(f"Variance ({p['variance']})", rf"\sigma^2 = {var}\sum_i (x_i - \mu)^2", {"var": t.var, "std": t.std}),
            Step("Denominator", denom, {"denominator": t.denominator}),
            Step("Normalise", rf"\hat x = \frac{{x - \mu}}{{{denom}}}", {"normalized": t.normalized}),
            Step("Scale and shift", r"y = \gamma \odot \hat x + \beta", {"output": t.output})]


topic(Topic(
    "layer-norm", "Layer normalisation",
    (Param("x", "vector or rows (over the last axis)"), Param("gamma", "number or vector", 1.0),
     Param("beta", "number or vector", 0.0), Param("eps", "number", 1e-5),
     Param("eps_placement", '"added-to-std" (lecture) or "inside-sqrt" (PyTorch)', "added-to-std"),
     Param("variance", '"biased" or "unbiased"', "biased")),
    ("output", "mean", "var"),
    lambda p: engine.layer_norm(p["x"], p["gamma"], p["beta"], eps=p["eps"], eps_placement=p["eps_placement"],
                                variance=p["variance"]),
    _ln_steps,
    lambda p: {"eps_placement": {"added-to-std": "(x−μ)/(σ+ε), as the lecture notes",
                                 "inside-sqrt": "(x−μ)/√(σ²+ε), as torch.nn.LayerNorm"}.get(p["eps_placement"], ""),
               "variance": {"biased": "biased: divide by D (PyTorch)",
                            "unbiased": "unbiased: divide by D−1"}.get(p["variance"], ""),
               "eps": str(p["eps"])},
))

topic(Topic(
    "positional-encoding", "Sinusoidal positional encoding",
    (Param("position", "int or list of ints"), Param("d_model", "int"), Param("base", "number", 10000)),
    ("encoding",),
    lambda p: engine.positional_encoding(p["position"], p["d_model"], base=p["base"]),
    lambda p, t: [Step("Frequencies", r"\omega_i = \text{base}^{-2i/d_{\text{model}}}", {"frequencies": t.frequencies}),
                  Step("Angles", r"\text{pos} \cdot \omega_i", {"angles": t.angles}),
                  Step("Sine at even indices, cosine at odd",
                       r"PE_{(pos, 2i)} = \sin(pos\,\omega_i),\ PE_{(pos, 2i+1)} = \cos(pos\,\omega_i)",
                       {"encoding": t.encoding})],
    lambda p: {"layout": "sin at even indices 2i, cos at odd 2i+1 (Vaswani et al. 2017)"},
))

topic(Topic(
    "rope", "Rotary position embedding",
    (Param("x", "vector (even length) or rows"), Param("position", "int (or one per row)"),
     Param("base", "number", 10000), Param("style", '"interleaved" or "rotate-half"', "interleaved")),
    ("output",),
    lambda p: engine.rope(p["x"], p["position"], base=p["base"], style=p["style"]),
    lambda p, t: [Step("Frequencies", r"\theta_j = \text{base}^{-2j/d}", {"frequencies": t.frequencies}),
                  Step("Angles, cosines and sines", r"m\,\theta_j", {"angles": t.angles, "cos": t.cos, "sin": t.sin}),
                  Step("Rotate each pair",
                       r"(a, b) \mapsto (a\cos m\theta_j - b\sin m\theta_j,\ a\sin m\theta_j + b\cos m\theta_j)",
                       {"output": t.output})],
    lambda p: {"style": {"interleaved": "pairs (x0,x1),(x2,x3),… (RoFormer)",
                         "rotate-half": "pairs (x_j, x_{j+d/2}) (GPT-NeoX, Llama)"}.get(p["style"], "")},
))

_SCORE_FORMULA = {"scaled-dot": r"s_{ij} = q_i \cdot k_j", "dot": r"s_{ij} = q_i \cdot k_j",
                  "bilinear": r"s_{ij} = q_i^\top W k_j", "additive": r"s_{ij} = v^\top \tanh(W_q q_i + W_k k_j)"}


def _attention_steps(p: dict[str, Any], t: Trace) -> list[Step]:
    steps = [Step("Scores", _SCORE_FORMULA[p["score"]], {"scores": t.scores}),
             Step("Scale", r"s_{ij} / \sqrt{d_k}" if p["score"] == "scaled-dot" and p["scale"] is None else r"c \cdot s_{ij}",
                  {"scale": t.scale, "scaled_scores": t.scaled_scores})]
    masked = _given(p, "mask") or p["causal"]
    if masked:                       # (in JSON a −∞ score is null, as the README says: not for paper)
        steps.append(Step("Mask: −∞ where a query may not attend",
                          r"s_{ij} = -\infty \text{ where } M_{ij} = 0" + (r",\ j > i" if p["causal"] else ""),
                          {"allowed": t.allowed, "masked_scores": t.masked_scores}))
    steps += [Step("Softmax over the keys" + (" (a row with no allowed key gets weights 0)" if masked else ""),
                   r"\alpha_{ij} = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}}", {"weights": t.weights}),
              Step("Weighted sum of the values", r"o_i = \sum_j \alpha_{ij} v_j", {"output": t.output})]
    return steps


topic(Topic(
    "attention", "Attention weights and output",
    (Param("query", "matrix (n×d_q) or vector"), Param("key", "matrix (m×d_k)"), Param("value", "matrix (m×d_v)"),
     Param("mask", "n×m of 0/1, 1 = may attend (optional)", None), Param("causal", "bool", False),
     Param("score", '"scaled-dot", "dot", "bilinear" or "additive"', "scaled-dot"),
     Param("scale", "number (1/√d_k for scaled-dot, else 1)", None),
     Param("weight", "matrix (d_q×d_k), bilinear only", None),
     Param("w_query", "matrix (d_a×d_q), additive only", None),
     Param("w_key", "matrix (d_a×d_k), additive only", None),
     Param("v", "vector (d_a), additive only", None)),
    ("scores", "weights", "output"),
    lambda p: engine.attention(p["query"], p["key"], p["value"], mask=p["mask"], causal=p["causal"], score=p["score"],
                               scale=p["scale"], weight=p["weight"], w_query=p["w_query"], w_key=p["w_key"], v=p["v"]),
    _attention_steps,
    lambda p: {"score": p["score"],
               "scale": ("1/√d_k" if p["score"] == "scaled-dot" and p["scale"] is None
                         else str(p["scale"] if p["scale"] is not None else 1)),
               "mask": "1 = may attend; masked weights are 0; a fully masked row gets weights 0 and output 0",
               "causal": "query i attends keys j ≤ i" if p["causal"] else "no causal mask"},
))

topic(Topic(
    "lora", "LoRA trainable parameters",
    (Param("d", "int (out features)"), Param("k", "int (in features)"), Param("r", "int (rank)"),
     Param("num_matrices", "int", 1)),
    ("trainable_params", "full_params", "fraction"),
    lambda p: engine.lora(p["d"], p["k"], p["r"], num_matrices=p["num_matrices"]),
    lambda p, t: [Step("Per adapted matrix: B (d×r) and A (r×k)", r"r(d + k)", {"per_matrix": t.per_matrix}),
                  Step("Trainable parameters", r"\text{num\_matrices} \cdot r (d + k)", {"trainable_params": t.trainable_params}),
                  Step("Full fine-tuning of the same matrices", r"\text{num\_matrices} \cdot d k",
                       {"full_params": t.full_params}),
                  Step("Fraction trained", r"\frac{r(d+k)}{dk}", {"fraction": t.fraction, "saved_params": t.saved_params})],
    lambda p: {"update": "W = W₀ + BA with B (d×r), A (r×k) (Hu et al. 2021)"},
))

topic(Topic(
    "scaling-law", "Training compute C = 6ND and the compute-optimal split",
    (Param("params", "N (parameters)", None), Param("tokens", "D (training tokens)", None),
     Param("compute", "C (FLOPs)", None), Param("tokens_per_param", "number", 20)),
    ("params", "tokens", "compute"),
    lambda p: engine.scaling_law(params=p["params"], tokens=p["tokens"], compute=p["compute"],
                                 tokens_per_param=p["tokens_per_param"]),
    lambda p, t: ([Step("Compute-optimal split (Chinchilla)", r"D = 20 N,\ C = 6 N D = 120 N^2 \Rightarrow N = \sqrt{C / 120}"
                        if p["tokens_per_param"] == 20 else r"D = t N,\ N = \sqrt{C / (6 t)}",
                        {"params": t.params, "tokens": t.tokens})]
                  if len([n for n in ("params", "tokens", "compute") if _given(p, n)]) == 1 else [])
    + [Step("Training compute", r"C = 6 N D", {"params": t.params, "tokens": t.tokens, "compute": t.compute})],
    lambda p: {"compute": "C = 6·N·D FLOPs (Kaplan et al. 2020)",
               "optimal": f"{p['tokens_per_param']} tokens per parameter (Hoffmann et al. 2022)"},
))


def _load_extra_topics() -> None:
    """Topics added by later generators live in examprep/topics_extra/, one module per area; each
    registers with ``topic(Topic(...))`` like the ones above."""
    import importlib
    import pkgutil

    from examprep import topics_extra

    for mod in sorted(pkgutil.iter_modules(topics_extra.__path__), key=lambda m: m.name):
        importlib.import_module(f"examprep.topics_extra.{mod.name}")


# ------------------------------------------------------------------------------------ the API

def get_topic(name: Any) -> Topic:
    if not isinstance(name, str):
        raise UnknownTopicError(f"topic: expected a topic name, got {name!r}")
    if name in TOPICS:
        return TOPICS[name]
    close = difflib.get_close_matches(name, list(TOPICS), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else "; see `examprep solve --list`"
    raise UnknownTopicError(f"unknown topic {name!r}{hint}")


def resolve_params(t: Topic, params: Any) -> dict[str, Any]:
    """The given params with defaults filled in; unknown or missing names raise ParamError."""
    if not isinstance(params, dict):
        raise ParamError(f"params: expected a JSON object of parameters, got {type(params).__name__}")
    names = [p.name for p in t.params]
    for name in params:
        if name not in names:
            close = difflib.get_close_matches(str(name), names, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (topic {t.name!r} takes {', '.join(names)})"
            raise ParamError(f"{name}: unknown parameter{hint}")
    out: dict[str, Any] = {}
    for p in t.params:
        if p.name in params:
            out[p.name] = params[p.name]
        elif p.default is REQUIRED:
            raise ParamError(f"{p.name}: missing; topic {t.name!r} needs it ({p.kind})")
        else:
            out[p.name] = p.default
    return out


def compute(topic_name: str, params: Any) -> tuple[Topic, dict[str, Any], Trace]:
    t = get_topic(topic_name)
    full = resolve_params(t, params)
    return t, full, t.compute(full)


def _answer(t: Topic, full: dict[str, Any], trace: Trace) -> dict[str, Any]:
    names = t.answer_names(full, trace) if t.answer_names else t.answers
    return {n: trace[n] for n in names}


def solve(topic_name: str, params: Any) -> Solution:
    """Solve one topic: the answer, the worked steps and the conventions used.

    Raises ParamError (or a subclass) for bad input; the message names the parameter.
    """
    t, full, trace = compute(topic_name, params)
    return Solution(t.name, params, _answer(t, full, trace), t.steps(full, trace), t.conventions(full))


def answer_only(topic_name: str, params: Any) -> dict[str, Any]:
    """The answer alone (no steps): what --batch needs."""
    t, full, trace = compute(topic_name, params)
    return _answer(t, full, trace)


def jsonable(value: Any) -> Any:
    """Numpy values to JSON values; NaN and ±∞ become None (JSON has no such numbers)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "iub":
            return value.astype(int).tolist()
        return jsonable(value.tolist())
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return f if math.isfinite(f) else None
    return value


def solution_dict(s: Solution) -> dict[str, Any]:
    return {"topic": s.topic, "params": jsonable(s.params), "answer": jsonable(s.answer),
            "steps": [{"title": st.title, "formula": st.formula, "values": jsonable(st.values)} for st in s.steps],
            "conventions": s.conventions}


def to_json(s: Solution) -> str:
    return json.dumps(solution_dict(s), allow_nan=False, ensure_ascii=False)


def read_params(text: str | None) -> Any:
    """Parse --params: a JSON object, or @FILE holding one. Missing means {}."""
    if text is None:
        return {}
    source = "--params"
    if text.startswith("@"):
        path = text[1:]
        try:
            with open(path, encoding="utf-8-sig") as fh:
                text = fh.read()
        except OSError as err:
            raise ParamError(f"--params: cannot read {path}: {err.strerror}") from None
        except UnicodeDecodeError:
            raise ParamError(f"--params: {path} is not UTF-8 text") from None
        source = path
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ParamError(f"{source}: invalid JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None
    if not isinstance(value, dict):
        raise ParamError(f"{source}: expected a JSON object like {{\"x\": [1, 2]}}, got {type(value).__name__}")
    return value


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def run_batch(lines: Iterable[str], out: TextIO) -> int:
    """Answer one {"id", "topic", "params"} JSON object per line; return the number rejected.

    Blank lines are skipped; every other line gets exactly one output line, in order. A line that
    cannot be answered gets {"id", "error"} and the batch goes on.
    """
    rejected = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        ident: Any = None
        try:
            try:
                obj = json.loads(line, parse_constant=_reject_constant)
            except (json.JSONDecodeError, ValueError) as err:
                raise ParamError(f"line {number}: invalid JSON ({err})") from None
            if not isinstance(obj, dict):
                raise ParamError(f"line {number}: expected a JSON object with id, topic and params")
            ident = obj.get("id")
            if "topic" not in obj:
                raise ParamError("topic: missing")
            answer = answer_only(obj["topic"], obj.get("params", {}))
            text = json.dumps({"id": ident, "answer": jsonable(answer)}, allow_nan=False, ensure_ascii=False)
        except ExamprepError as err:
            rejected += 1
            text = json.dumps({"id": ident, "error": str(err)}, ensure_ascii=False)
        except Exception as err:  # a bug must not stop the batch: report it on this line
            rejected += 1
            text = json.dumps({"id": ident, "error": f"internal error: {type(err).__name__}: {err}"}, ensure_ascii=False)
        out.write(text + "\n")
    out.flush()
    return rejected


def topics_json() -> str:
    return json.dumps([{"topic": t.name, "title": t.title,
                        "params": [{"name": p.name, "kind": p.kind,
                                    "default": "required" if p.default is REQUIRED else jsonable(p.default)}
                                   for p in t.params],
                        "answer": list(t.answers)} for t in TOPICS.values()], ensure_ascii=False)


_load_extra_topics()
