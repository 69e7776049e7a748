"""Solve topics of backpropagation through time: rnn-bptt (an RNN, LSTM or GRU over T steps) and
rnn-bptt-output (the same with an output layer y_t = ψ(W_y h_t + b_y) and a loss on every step)."""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine import ops
from examprep.engine._core import Trace
from examprep.errors import ParamError
from examprep.solve.contract import Mistake, Param, Refusal, Step, Topic
from examprep.solve.rnn import REUSE_H0_WHY

_CELL = {"rnn": r"h_t = \phi(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})",
         "lstm": r"c_t = f_t \odot c_{t-1} + i_t \odot g_t,\ \ h_t = o_t \odot \tanh c_t",
         "gru": {"lecture": r"h_t = (1 - z_t) \odot h_{t-1} + z_t \odot n_t",
                 "pytorch": r"h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}"}}


class BPTTSteps(NamedTuple):
    forward: list[Step]            # one per time step: h_t (and c_t)
    backward: list[Step]           # from t = T down to 1: the gradient reaching h_t
    weights: Step                  # grad_weight_ih, grad_weight_hh: sums over the steps
    biases: Step                   # grad_bias_ih, grad_bias_hh
    inputs: Step                   # grad_x, grad_h0 (and grad_c0)


def bptt_steps(p: dict[str, Any], t: Trace) -> BPTTSteps:
    cell = p["cell"]
    formula = _CELL[cell][p["convention"]] if cell == "gru" else _CELL[cell]
    T = len(t.hidden)
    forward = []
    for k, step in enumerate(t.steps, 1):
        values = {f"h_{k}": step.h_new}
        if cell == "lstm":
            values = {f"c_{k}": step.c_new, f"h_{k}": step.h_new}
        forward.append(Step(f"Forward, step {k}", formula.replace("_t", f"_{{{k}}}").replace("_{t-1}", f"_{{{k - 1}}}"),
                            values))
    backward = [Step(f"Gradient reaching h_{k}" + (" (its own loss only)" if k == T else " (its own loss + what step "
                                                                                       f"{k + 1} sends back)"),
                     r"\frac{\partial L}{\partial h_t} = \delta_t + \left(\frac{\partial h_{t+1}}{\partial h_t}\right)^\top "
                     r"\frac{\partial L}{\partial h_{t+1}}", {f"grad_h_{k}": t.grad_h[k - 1]})
                for k in range(T, 0, -1)]
    inputs = {"grad_x": t.grad_x, "grad_h0": t.grad_h0}
    if cell == "lstm":
        inputs["grad_c0"] = t.grad_c0
    return BPTTSteps(
        forward, backward,
        Step("Weight gradients: the same weights act at every step, so their gradients are summed over time",
             r"\frac{\partial L}{\partial W} = \sum_{t=1}^{T} \frac{\partial L}{\partial W}|_t",
             {"grad_weight_ih": t.grad_weight_ih, "grad_weight_hh": t.grad_weight_hh}),
        Step("Bias gradients, summed over time", r"\frac{\partial L}{\partial b} = \sum_t \frac{\partial L}{\partial b}|_t",
             {"grad_bias_ih": t.grad_bias_ih, "grad_bias_hh": t.grad_bias_hh}),
        Step("Gradients of the inputs and the initial state",
             r"\frac{\partial L}{\partial x_t},\ \frac{\partial L}{\partial h_0}", inputs))


def _several_steps(p: dict[str, Any]) -> bool:
    return np.ndim(p["x"]) >= 1 and np.shape(p["x"])[0] > 1


def _last_step_only(name: str) -> Mistake:
    return Mistake("last-step-only", compute=lambda p, t: t[f"{name}_steps"][-1], when=_several_steps,
                   why="The same weights and biases act at every step: sum the gradient contributions of all T steps, "
                       "not only the last one.")


def _no_recurrence() -> Mistake:
    return Mistake("no-recurrence", truncation=1, when=_several_steps,
                   why="Each step's gradient must also flow back through h_{t−1} to earlier steps (∂h_t/∂h_{t−1}); you "
                       "stopped it at each step.")


_OTHER_BLEND = Mistake("other-blend", convention=lambda p: "pytorch" if p["convention"] == "lecture" else "lecture",
                       when=lambda p: p["cell"] == "gru",
                       why="Blend as this problem's convention says: the lecture's h' = (1 − z)⊙h + z⊙n, PyTorch's "
                           "h' = (1 − z)⊙n + z⊙h.")


def _xs(p: dict[str, Any]) -> np.ndarray:
    """x as T×I rows (a vector is T steps of one input)."""
    v = np.asarray(p["x"], dtype=float)
    return v[:, None] if v.ndim == 1 else v


def _own(p: dict[str, Any], T: int, H: int) -> np.ndarray:
    """grad_hidden as T×H rows: each step's own δ_t (an H-vector is the last step's, none is zeros)."""
    if p["grad_hidden"] is None:
        return np.zeros((T, H))
    v = np.asarray(p["grad_hidden"], dtype=float)
    return v if v.ndim == 2 else np.vstack([np.zeros((T - 1, H)), v[None]])


def _step(p: dict[str, Any], x: Any, h: Any, c: Any) -> Trace:
    """One step of the problem's cell from state h (and c)."""
    w = (p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"])
    if p["cell"] == "rnn":
        return engine.rnn_cell(x, h, *w, nonlinearity=p["nonlinearity"])
    if p["cell"] == "lstm":
        return engine.lstm_cell(x, h, c, *w)
    return engine.gru_cell(x, h, *w, convention=p["convention"], reset=p["reset"])


def _from_h0(p: dict[str, Any], t: Trace) -> np.ndarray:
    """Every step restarted from h₀ (and c₀); the first step is the right one."""
    H = t.hidden.shape[1]
    h0 = np.zeros(H) if p["h0"] is None else p["h0"]
    c0 = np.zeros(H) if p["c0"] is None else p["c0"]
    return np.array([t.hidden[0]] + [_step(p, x, h0, c0).h_new for x in _xs(p)[1:]])


def _no_slope(p: dict[str, Any], t: Trace) -> np.ndarray:
    """∂L/∂h_t = δ_t + W_hhᵀ ∂L/∂h_{t+1}: what step t + 1 sends back without its activation's slope."""
    T, H = t.grad_h.shape
    own = t.grad_hidden_own if "grad_hidden_own" in t else _own(p, T, H)
    w_hh = np.asarray(p["weight_hh"], dtype=float)
    return np.array([ops.add(own[k], ops.matmul(w_hh.T, t.grad_h[k + 1])) for k in range(T - 1)] + [t.grad_h[-1]])


def _current_state(p: dict[str, Any], t: Trace) -> Any:
    """Σ_t ∂L/∂a_t h_tᵀ: each step's share paired with the state it makes, not the one it reads."""
    hidden = np.asarray(t.hidden)
    der = (1 - hidden**2 if p["nonlinearity"] == "tanh"
           else np.array([(s.pre_activation > 0).astype(float) for s in t.steps]))
    d = t.grad_h * der
    return functools.reduce(ops.add, [np.outer(d[k], hidden[k]) for k in range(len(hidden))])


_RNN = lambda p: p["cell"] == "rnn"  # noqa: E731

RNN_BPTT_MISTAKES = {
    "hidden": (_OTHER_BLEND, Mistake("reuse-h0", why=REUSE_H0_WHY, compute=_from_h0)),
    "grad_h": (_no_recurrence(),
               Mistake("no-tanh-derivative", compute=_no_slope, when=lambda p: _RNN(p) and _several_steps(p),
                       why="∂h_{t+1}/∂h_t = diag(φ'(a_{t+1})) W_hh: multiply by the activation's derivative at the later "
                           "step (tanh: 1 − h_{t+1}²).")),
    "grad_weight_hh": (_last_step_only("grad_weight_hh"), _no_recurrence(), _OTHER_BLEND,
                       Mistake("current-state", compute=_current_state, when=_RNN,
                               why="W_hh multiplies the PREVIOUS state: step t's share pairs ∂L/∂a_t with h_{t−1}, not h_t.")),
    "grad_weight_ih": (_last_step_only("grad_weight_ih"), _no_recurrence(), _OTHER_BLEND),
    "grad_bias_ih": (_last_step_only("grad_bias_ih"), _no_recurrence(), _OTHER_BLEND),
    "grad_bias_hh": (_last_step_only("grad_bias_hh"), _no_recurrence(), _OTHER_BLEND),
    "grad_h0": (_OTHER_BLEND,),
}

_ANSWERS = ("hidden", "cell", "grad_h", "grad_weight_ih", "grad_weight_hh", "grad_bias_ih", "grad_bias_hh", "grad_h0",
            "grad_c0", "grad_x")


RNN_BPTT = Topic(
    "rnn-bptt", "Backpropagation through time: an RNN, LSTM or GRU over a few steps",
    (Param("cell", '"rnn", "lstm" or "gru"'), Param("x", "matrix (T×I): row t is the input at step t"),
     Param("h0", "vector (H); zeros when omitted", None), Param("c0", "vector (H), lstm only; zeros when omitted", None),
     Param("weight_ih", "matrix (G·H×I): rows as rnn-cell, lstm-cell (i, f, g, o) or gru-cell (r, z, n)"),
     Param("weight_hh", "matrix (G·H×H)"),
     Param("bias_ih", "vector (G·H); zeros when omitted", None), Param("bias_hh", "vector (G·H); zeros when omitted", None),
     Param("nonlinearity", '"tanh" or "relu" (rnn)', "tanh"),
     Param("convention", '"lecture" or "pytorch" (gru blend)', "lecture"),
     Param("reset", '"after" or "before" (gru)', "after"),
     Param("grad_hidden", "T×H: ∂L/∂h_t from outside the recurrence; an H-vector is the last step alone", None),
     Param("truncation", "int: truncated BPTT, each loss flows back at most this many steps (default: all)", None)),
    _ANSWERS,
    lambda p: engine.rnn_bptt(p["cell"], p["x"], p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"], h0=p["h0"],
                              c0=p["c0"], nonlinearity=p["nonlinearity"], convention=p["convention"], reset=p["reset"],
                              grad_hidden=p["grad_hidden"], truncation=p["truncation"]),
    bptt_steps,
    mistakes=RNN_BPTT_MISTAKES,
    conventions=lambda p: {"cell": {"rnn": f"Elman RNN, {p['nonlinearity']} (torch.nn.RNN)",
                                    "lstm": "LSTM, rows i, f, g, o (torch.nn.LSTM)",
                                    "gru": f"GRU, {p['convention']} blend, reset {p['reset']} (rows r, z, n)"}[p["cell"]],
                           "gradient": "∂L/∂h_t from each step's own loss plus what the next step sends back; weight "
                                       "gradients summed over the steps"
                           + ("" if p["truncation"] is None else f"; truncated to {p['truncation']} step(s)")},
    answer_names=lambda p, t: [n for n in _ANSWERS if n in t],
)


# rnn-bptt-output: the same cells with an output layer and a stated loss on every step

def _reduction(p: dict[str, Any]) -> str:
    return p["reduction"] or engine.bptt._DEFAULT_REDUCTION[p["loss"]]


def _averaged_over_more_than_one(p: dict[str, Any]) -> bool:
    """A mean divides by something other than 1: several steps (or output units for a squared loss)."""
    T = np.shape(p["x"])[0] if np.ndim(p["x"]) >= 1 else 1
    n_out = np.shape(p["weight_y"])[0]
    return T > 1 or (n_out > 1 and p["loss"] != "cross-entropy")


_SUM_VS_MEAN = Mistake("sum-vs-mean", reduction=lambda p: "mean" if _reduction(p) == "sum" else "sum",
                       when=_averaged_over_more_than_one,
                       why="Reduce the per-step losses as the question states: a mean divides the sum over the steps "
                           "(and, for MSE, over the output units too) by their count, and so does every gradient; a sum "
                           "does not.")


def _no_output_derivative(p: dict[str, Any], t: Trace) -> np.ndarray:
    """Σ_t ∂L/∂y_t h_tᵀ: the output activation's slope ψ' left out."""
    return functools.reduce(ops.add, [np.outer(t.grad_output[k], t.hidden[k]) for k in range(len(t.hidden))])


_NO_PSI = Mistake("no-output-derivative", compute=_no_output_derivative,
                  when=lambda p: p["output_activation"] != "identity",
                  why="y_t = ψ(W_y h_t + b_y): multiply ∂L/∂y_t by ψ' (σ: y(1 − y), tanh: 1 − y²) before pairing it "
                      "with h_tᵀ.")

RNN_BPTT_OUTPUT_MISTAKES = {
    "hidden": RNN_BPTT_MISTAKES["hidden"],
    "loss": (_SUM_VS_MEAN,),
    "grad_output": (_SUM_VS_MEAN,),
    "grad_w_y": (_last_step_only("grad_w_y"), _NO_PSI, _SUM_VS_MEAN),
    "grad_b_y": (Mistake("last-step-only", compute=lambda p, t: t.grad_logits[-1], when=_several_steps,
                         why="b_y acts at every step: sum ∂L/∂(W_y h_t + b_y) over all T steps, not only the last."),
                 _SUM_VS_MEAN),
    "grad_h": RNN_BPTT_MISTAKES["grad_h"] + (_SUM_VS_MEAN,),
    "grad_weight_hh": RNN_BPTT_MISTAKES["grad_weight_hh"] + (_SUM_VS_MEAN,),
    "grad_weight_ih": RNN_BPTT_MISTAKES["grad_weight_ih"],
    "grad_bias_ih": RNN_BPTT_MISTAKES["grad_bias_ih"],
    "grad_bias_hh": RNN_BPTT_MISTAKES["grad_bias_hh"],
    "grad_h0": RNN_BPTT_MISTAKES["grad_h0"],
}

_OUTPUT_ANSWERS = ("hidden", "cell", "output", "loss", "grad_output", "grad_w_y", "grad_b_y", "grad_h", "grad_weight_ih",
                   "grad_weight_hh", "grad_bias_ih", "grad_bias_hh", "grad_h0", "grad_c0", "grad_x")

_PSI = {"identity": r"y_t = W_y h_t + b_y", "sigmoid": r"y_t = \sigma(W_y h_t + b_y)",
        "tanh": r"y_t = \tanh(W_y h_t + b_y)"}


def _psi(p: dict[str, Any]) -> str:
    """The output layer's formula as the problem has it: without b_y where it has no output bias."""
    text = _PSI[p["output_activation"]]
    return text if p["bias_y"] is not None else text.replace(" + b_y", "")
_LOSS = {("half-sse", "sum"): r"L = \tfrac12 \sum_t \sum_k (y_{tk} - \hat y_{tk})^2",
         ("half-sse", "mean"): r"L = \tfrac{1}{2TO} \sum_t \sum_k (y_{tk} - \hat y_{tk})^2",
         ("mse", "mean"): r"L = \tfrac{1}{TO} \sum_t \sum_k (y_{tk} - \hat y_{tk})^2",
         ("mse", "sum"): r"L = \sum_t \sum_k (y_{tk} - \hat y_{tk})^2",
         ("cross-entropy", "mean"): r"L = -\tfrac1T \sum_t \log \mathrm{softmax}(y_t)_{c_t}",
         ("cross-entropy", "sum"): r"L = -\sum_t \log \mathrm{softmax}(y_t)_{c_t}"}


class BPTTOutputSteps(NamedTuple):
    forward: list[Step]            # one per time step: h_t (and c_t)
    output: Step                   # y_t for every step
    loss: Step
    grad_output: Step              # ∂L/∂y_t, and δ_t = W_yᵀ(∂L/∂y_t ⊙ ψ')
    output_layer: Step             # grad_w_y, grad_b_y
    backward: list[Step]           # from t = T down to 1: the gradient reaching h_t
    weights: Step
    biases: Step
    inputs: Step


def bptt_output_steps(p: dict[str, Any], t: Trace) -> BPTTOutputSteps:
    inner = bptt_steps(p, t)
    T = len(t.hidden)
    return BPTTOutputSteps(
        inner.forward,
        Step("Outputs at every step", _psi(p), {"output": t.output}),
        Step("The loss over all steps" + ("" if T == 1 else f" (step shares {', '.join(f'{v:.4g}' for v in t.losses)})"),
             _LOSS[(p["loss"], _reduction(p))], {"loss": t.loss}),
        Step("What each step's own loss sends into h_t", r"\delta_t = W_y^\top \left(\frac{\partial L}{\partial y_t} "
             r"\odot \psi'\right)", {"grad_output": t.grad_output, "grad_hidden_own": t.grad_hidden_own}),
        Step("Output-layer gradients, summed over the steps",
             r"\frac{\partial L}{\partial W_y} = \sum_t \left(\frac{\partial L}{\partial y_t} \odot \psi'\right) h_t^\top,"
             r"\ \frac{\partial L}{\partial b_y} = \sum_t \frac{\partial L}{\partial y_t} \odot \psi'",
             {"grad_w_y": t.grad_w_y, "grad_b_y": t.grad_b_y}),
        inner.backward, inner.weights, inner.biases, inner.inputs)


_REFUSAL_EXAMPLE = {"cell": "rnn", "x": [[1.0], [0.5]], "weight_ih": [[0.5]], "weight_hh": [[-1.0]], "weight_y": [[2.0]],
                    "target": [[1.0], [0.0]]}


def _check_output(p: dict[str, Any]) -> None:
    if p["grad_hidden"] is not None:
        raise ParamError("grad_hidden: rnn-bptt-output derives ∂L/∂h_t from its output layer and loss; "
                                "use rnn-bptt to give it directly")


RNN_BPTT_OUTPUT = Topic(
    "rnn-bptt-output", "Backpropagation through time with an output layer and a loss on every step",
    RNN_BPTT.params[:-2] + (
        Param("weight_y", "matrix (O×H): the output layer y_t = ψ(W_y h_t + b_y)"),
        Param("bias_y", "vector (O); zeros when omitted", None),
        Param("output_activation", '"identity", "sigmoid" or "tanh" (ψ; cross-entropy: identity)', "identity"),
        Param("loss", '"half-sse" (½Σ(y − target)²), "mse" (torch.nn.MSELoss) or "cross-entropy" '
                      "(torch.nn.CrossEntropyLoss over the steps)", "half-sse"),
        Param("target", "T×O targets (a T-vector when O = 1); T class indices for cross-entropy"),
        Param("reduction", '"sum" or "mean" over the steps (mse: over the T·O values); default: half-sse sums, '
                           "mse and cross-entropy average", None),
        Param("grad_hidden", "not taken: ∂L/∂h_t comes from the output layer (refused)", None),
        RNN_BPTT.params[-1]),
    _OUTPUT_ANSWERS,
    lambda p: engine.rnn_bptt_output(
        p["cell"], p["x"], p["target"], p["weight_ih"], p["weight_hh"], p["weight_y"], p["bias_ih"], p["bias_hh"],
        p["bias_y"], h0=p["h0"], c0=p["c0"], nonlinearity=p["nonlinearity"], convention=p["convention"],
        reset=p["reset"], output_activation=p["output_activation"], loss=p["loss"], reduction=p["reduction"],
        truncation=p["truncation"]),
    bptt_output_steps,
    mistakes=RNN_BPTT_OUTPUT_MISTAKES,
    check=_check_output,
    conventions=lambda p: RNN_BPTT.conventions(p) | {
        "output": _psi(p).replace("\\sigma", "σ").replace("\\tanh", "tanh"),
        "loss": {"half-sse": "½Σ(y − target)²", "mse": "squared error (torch.nn.MSELoss)",
                 "cross-entropy": "cross-entropy of softmax(y_t) per step (torch.nn.CrossEntropyLoss)"}[p["loss"]]
        + ("; summed over the steps" if _reduction(p) == "sum" else
           "; averaged over the steps" + (" and output units" if p["loss"] != "cross-entropy" else ""))},
    answer_names=lambda p, t: [n for n in _OUTPUT_ANSWERS if n in t],
    refuses=(Refusal("grad_hidden: the output layer and the loss give ∂L/∂h_t (rnn-bptt takes it directly)",
                     _REFUSAL_EXAMPLE | {"grad_hidden": [1.0]}),
             Refusal("an output activation other than identity with cross-entropy (the loss takes the logits)",
                     _REFUSAL_EXAMPLE | {"loss": "cross-entropy", "target": [0, 1], "output_activation": "sigmoid",
                                         "weight_y": [[1.0], [-1.0]]}),
             Refusal("a class index outside [0, O)", _REFUSAL_EXAMPLE | {"loss": "cross-entropy", "target": [0, 2],
                                                                         "weight_y": [[1.0], [-1.0]]})),
)
