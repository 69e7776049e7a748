"""Solve topics of recurrent networks: rnn-cell, lstm-cell, gru-cell, rnn-unroll (backprop through time)
and vanishing-gradient."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine import ops
from examprep.engine.activations import tanh_derivative_from_output
from examprep.engine._core import Trace, choice
from examprep.solve.contract import Ecf, Mistake, Param, Ref, Step, Topic

_RNN_PARAMS = (Param("x", "vector (I)"), Param("h", "vector (H)"))


def _bias_params(g: str) -> tuple[Param, ...]:
    return (Param("bias_ih", f"vector ({g}H); zeros when omitted", None),
            Param("bias_hh", f"vector ({g}H); zeros when omitted", None))


# -------------------------------------------------------------------------------------- rnn-cell

class RNNSteps(NamedTuple):
    input_part: Step
    hidden_part: Step
    pre_activation: Step
    h_new: Step


def rnn_steps(p: dict[str, Any], t: Trace) -> RNNSteps:
    return RNNSteps(
        Step("Input part", r"W_{ih} x + b_{ih}", {"input_part": t.input_part}),
        Step("Hidden part", r"W_{hh} h + b_{hh}", {"hidden_part": t.hidden_part}),
        Step("Pre-activation", r"a = W_{ih} x + b_{ih} + W_{hh} h + b_{hh}", {"pre_activation": t.pre_activation}),
        Step("New hidden state", rf"h' = \{p['nonlinearity'] if p['nonlinearity'] == 'tanh' else 'mathrm{ReLU}'}(a)",
             {"h_new": t.h_new}))


def _transposed(m: Any) -> Any:
    return np.asarray(m, dtype=float).T.tolist()


NO_RECURRENCE_WHY = "The previous state enters too: add W_hh h to W_ih x."


def _square_asymmetric(p: dict[str, Any]) -> bool:
    w = np.asarray(p["weight_ih"], dtype=float)
    return w.shape[0] == w.shape[1] and not np.array_equal(w, w.T)


RNN_MISTAKES = {
    "pre_activation": (
        Mistake("no-recurrence", weight_hh=lambda p: np.zeros_like(np.asarray(p["weight_hh"], dtype=float)).tolist(),
                why="Add the recurrent term W_hh h."),
        Mistake("one-bias", bias_hh=None, why="Both biases are added: b_ih and b_hh.")),
    "h_new": (
        Mistake("no-recurrence", weight_hh=lambda p: np.zeros_like(np.asarray(p["weight_hh"], dtype=float)).tolist(),
                why=NO_RECURRENCE_WHY),
        Mistake("sigmoid", why="A vanilla RNN squashes with tanh (range −1..1), not the sigmoid.",
                compute=lambda p, t: engine.activation("sigmoid", t.pre_activation).output,
                when=lambda p: p["nonlinearity"] == "tanh"),
        Mistake("tanh", nonlinearity="tanh", why="This cell uses ReLU, not tanh."),
        Mistake("one-bias", bias_hh=None, why="PyTorch's RNN cell has two bias vectors: add both b_ih and b_hh."),
        Mistake("transposed-weights", weight_ih=lambda p: _transposed(p["weight_ih"]),
                weight_hh=lambda p: _transposed(p["weight_hh"]), when=_square_asymmetric,
                why="Weights are out×in (H×I): row i of W_ih dots x to give unit i."),
        Mistake("no-tanh", why="h' = tanh(a): squash the pre-activation.", compute=lambda p, t: t.pre_activation,
                when=lambda p: p["nonlinearity"] == "tanh")),
}

RNN_ECF = {"h_new": (Ecf("solve:activation", lambda p, t: {"name": p["nonlinearity"], "x": Ref("pre_activation")},
                         "output"),)}


RNN_CELL = Topic(
    "rnn-cell", "Vanilla (Elman) RNN step",
    _RNN_PARAMS + (Param("weight_ih", "matrix (H×I)"), Param("weight_hh", "matrix (H×H)")) + _bias_params("")
    + (Param("nonlinearity", '"tanh" or "relu"', "tanh"),),
    ("h_new",),
    lambda p: engine.rnn_cell(p["x"], p["h"], p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"],
                              nonlinearity=p["nonlinearity"]),
    rnn_steps,
    lambda p: {"biases": "two bias vectors b_ih, b_hh (PyTorch)", "nonlinearity": p["nonlinearity"]},
    mistakes=RNN_MISTAKES,
    ecf=RNN_ECF,
)


# ------------------------------------------------------------------------------------- lstm-cell

class LSTMSteps(NamedTuple):
    pre_activations: Step
    gates: Step                    # i, f, o
    candidate: Step                # g
    cell: Step                     # c_new
    hidden: Step                   # h_new
    backward: Step | None          # cell_gradient, grad_c (with grad_c_new)


def lstm_steps(p: dict[str, Any], t: Trace) -> LSTMSteps:
    return LSTMSteps(
        Step("Gate pre-activations (row blocks i, f, g, o)", r"W_{ih} x + b_{ih} + W_{hh} h + b_{hh}",
             {"pre_i": t.pre_i, "pre_f": t.pre_f, "pre_g": t.pre_g, "pre_o": t.pre_o}),
        Step("Input, forget and output gates", r"i = \sigma(\cdot),\ f = \sigma(\cdot),\ o = \sigma(\cdot)",
             {"i": t.i, "f": t.f, "o": t.o}),
        Step("Candidate", r"g = \tanh(\cdot)", {"g": t.g}),
        Step("New cell state", r"c' = f \odot c + i \odot g", {"c_new": t.c_new}),
        Step("New hidden state", r"h' = o \odot \tanh(c')", {"tanh_c_new": t.tanh_c_new, "h_new": t.h_new}),
        Step("Backwards along the cell state (no weight, no tanh on this path)",
             r"\frac{\partial c'}{\partial c} = \mathrm{diag}(f),\quad "
             r"\frac{\partial L}{\partial c} = f \odot \frac{\partial L}{\partial c'}",
             {"cell_gradient": t.cell_gradient, "grad_c": t.grad_c}) if "grad_c" in t else None)


def _act(name: str, x: Any) -> Any:
    return engine.activation(name, x).output


_LSTM_GATE_TANH = "Gates use the sigmoid σ (values in 0..1), not tanh."

LSTM_MISTAKES = {
    "i": (Mistake("tanh-gate", why=_LSTM_GATE_TANH, compute=lambda p, t: _act("tanh", t.pre_i)),),
    "f": (Mistake("tanh-gate", why=_LSTM_GATE_TANH, compute=lambda p, t: _act("tanh", t.pre_f)),
          # TensorFlow's tf.compat.v1 LSTMCell stacks i, j (= g), f, o: the same rows read in that order
          Mistake("row-order", why="Rows are stacked [i; f; g; o] (PyTorch): the second block is the forget gate; "
                                   "i, g, f, o is TensorFlow's order.", compute=lambda p, t: _act("sigmoid", t.pre_g))),
    "g": (Mistake("sigmoid-candidate", why="The candidate uses tanh (values in −1..1), not σ.",
                  compute=lambda p, t: _act("sigmoid", t.pre_g)),
          Mistake("row-order", why="The third row block is the candidate g: rows are [i; f; g; o].",
                  compute=lambda p, t: _act("tanh", t.pre_f))),
    "o": (Mistake("tanh-gate", why=_LSTM_GATE_TANH, compute=lambda p, t: _act("tanh", t.pre_o)),),
    "c_new": (Mistake("no-forget", why="The old cell state is scaled by f first.",
                      compute=lambda p, t: engine.rnn.lstm_cell_state(np.ones_like(t.f), p["c"], t.i, t.g)),
              Mistake("no-input-gate", why="The candidate is scaled by i.",
                      compute=lambda p, t: engine.rnn.lstm_cell_state(t.f, p["c"], np.ones_like(t.i), t.g)),
              Mistake("coupled", why="That couples the gates like a GRU; the LSTM uses its own input gate i.",
                      compute=lambda p, t: engine.rnn.lstm_cell_state(t.f, p["c"], 1 - t.f, t.g))),
    "h_new": (Mistake("no-tanh", why="Squash the cell state first: h' = o ⊙ tanh(c').",
                      compute=lambda p, t: ops.multiply(t.o, t.c_new)),
              Mistake("tanh-outside", why="tanh applies to c' alone, then the output gate scales it.",
                      compute=lambda p, t: _act("tanh", ops.multiply(t.o, t.c_new)))),
    # backwards along the cell state (with grad_c_new)
    "cell_gradient": (Mistake("one", why="c' = f ⊙ c + i ⊙ g: the old state is scaled by f, so the derivative is f.",
                              compute=lambda p, t: np.ones_like(t.f)),
                      Mistake("tanh-slope", why="Along the cell path there is no tanh: ∂c'/∂c = f (tanh only enters h').",
                              compute=lambda p, t: ops.multiply(t.f, tanh_derivative_from_output(t.tanh_c_new)))),
    "grad_c": (Mistake("unchanged", why="The gradient is scaled by the forget gate on its way back: f ⊙ ∂L/∂c'.",
                       compute=lambda p, t: np.asarray(p["grad_c_new"], dtype=float)),),
}

LSTM_ECF = {
    # a gate from the forward step's parameters (∂L/∂c' is no input of the gates)
    **{k: (Ecf("solve:lstm-cell", lambda p, t: {n: v for n, v in p.items() if n != "grad_c_new"}, k),)
       for k in ("i", "f", "g", "o")},
    "c_new": (Ecf("lstm-cell-state", lambda p, t: {"f": Ref("f"), "c": np.asarray(p["c"], dtype=float), "i": Ref("i"),
                                                    "g": Ref("g")}),),
    "h_new": (Ecf("lstm-hidden", lambda p, t: {"o": Ref("o"), "c_new": Ref("c_new")}),),
    "cell_gradient": (Ecf("scale", lambda p, t: {"x": Ref("f"), "factor": 1.0}),),
    "grad_c": (Ecf("multiply", lambda p, t: {"a": Ref("cell_gradient"), "b": p["grad_c_new"]}),),
}

_LSTM_ANSWERS = ("i", "f", "g", "o", "c_new", "h_new", "cell_gradient", "grad_c")


LSTM_CELL = Topic(
    "lstm-cell", "LSTM step",
    _RNN_PARAMS + (Param("c", "vector (H)"), Param("weight_ih", "matrix (4H×I), rows i, f, g, o"),
                   Param("weight_hh", "matrix (4H×H)")) + _bias_params("4")
    + (Param("grad_c_new", "∂L/∂c' (H), no gradient through h' (optional)", None),),
    _LSTM_ANSWERS,
    lambda p: engine.lstm_cell(p["x"], p["h"], p["c"], p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"],
                               grad_c_new=p["grad_c_new"]),
    lstm_steps,
    lambda p: {"layout": "rows i, f, g, o; two bias vectors (torch.nn.LSTMCell)"}
    | ({} if p["grad_c_new"] is None else {"backward": "along the cell state: ∂c'/∂c = f, ∂L/∂c = f ⊙ ∂L/∂c'"}),
    answer_names=lambda p, t: [n for n in _LSTM_ANSWERS if n in t],
    mistakes=LSTM_MISTAKES,
    ecf=LSTM_ECF,
)


# -------------------------------------------------------------------------------------- gru-cell

_GRU_BLEND = {"lecture": r"h' = (1 - z) \odot h + z \odot n", "pytorch": r"h' = (1 - z) \odot n + z \odot h"}
_GRU_RESET = {"after": r"n = \tanh(W_{in} x + b_{in} + r \odot (W_{hn} h + b_{hn}))",
              "before": r"n = \tanh(W_{in} x + b_{in} + W_{hn} (r \odot h) + b_{hn})",
              "none": r"n = \tanh(W_{in} x + b_{in} + W_{hn} h + b_{hn})"}


class GRUSteps(NamedTuple):
    reset: Step                    # r
    update: Step                   # z
    candidate: Step                # n
    blend: Step                    # h_new


def gru_steps(p: dict[str, Any], t: Trace) -> GRUSteps:
    return GRUSteps(
        Step("Reset gate", r"r = \sigma(W_{ir} x + b_{ir} + W_{hr} h + b_{hr})", {"pre_r": t.pre_r, "r": t.r}),
        Step("Update gate", r"z = \sigma(W_{iz} x + b_{iz} + W_{hz} h + b_{hz})", {"pre_z": t.pre_z, "z": t.z}),
        Step("Candidate (reset applied " + p["reset"] + " the hidden product)", _GRU_RESET[p["reset"]],
             {"hidden_n": t.hidden_n, "pre_n": t.pre_n, "n": t.n}),
        Step(f"New hidden state ({p['convention']} convention)", _GRU_BLEND[p["convention"]], {"h_new": t.h_new}))


def _block(rows: Any, block: int, size: int) -> Any:
    """Row block ``block`` (0 r, 1 z, 2 n) of a stacked weight matrix or bias (zeros when omitted)."""
    return [0.0] * size if rows is None else rows[block * size: (block + 1) * size]


def _gru_candidate_args(p: dict[str, Any], t: Trace) -> dict[str, Any]:
    H = len(p["h"])
    args = {"x": p["x"], "h": p["h"], "w_in": _block(p["weight_ih"], 2, H), "w_hn": _block(p["weight_hh"], 2, H),
            "b_in": _block(p["bias_ih"], 2, H), "b_hn": _block(p["bias_hh"], 2, H), "r": Ref("r")}
    return args if p["reset"] == "after" else args | {"reset": p["reset"]}


_GATE_TANH = "Gates use the sigmoid σ, not tanh."


def _rz_swapped(name: str) -> Any:
    """A stacked weight or bias of the problem with its r and z row blocks swapped (the cell read with
    the rows [z; r; n]): None stays None."""
    def swap(p: dict[str, Any]) -> Any:
        rows, H = p[name], len(p["h"])
        return None if rows is None else [*rows[H:2 * H], *rows[:H], *rows[2 * H:]]
    return swap


def _swapped_gates(why: str) -> Mistake:
    return Mistake("swapped-gates", why=why, **{k: _rz_swapped(k) for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")})


GRU_MISTAKES = {
    "r": (_swapped_gates("Rows are stacked [r; z; n]: the first block of W_ih and W_hh is the reset gate."),
          Mistake("tanh-gate", why=_GATE_TANH, compute=lambda p, t: engine.activation("tanh", t.pre_r).output)),
    "z": (_swapped_gates("Rows are stacked [r; z; n]: the second block is the update gate."),
          Mistake("tanh-gate", why=_GATE_TANH, compute=lambda p, t: engine.activation("tanh", t.pre_z).output)),
    "n": (Mistake("reset-before", reset="before",
                  why="In this convention the reset multiplies (W_hn h + b_hn), after the product — not h before it."),
          Mistake("reset-after", reset="after",
                  why="In this convention the reset multiplies h before the product: W_hn (r⊙h) + b_hn."),
          Mistake("no-reset", reset="none", why="You left out the reset gate r in the candidate."),
          Mistake("sigmoid-candidate", why="The candidate uses tanh, not σ.",
                  compute=lambda p, t: engine.activation("sigmoid", t.pre_n).output)),
    "h_new": (Mistake("swapped-blend", convention="pytorch",
                      why="You blended with z on the old state — that is PyTorch's convention; the lecture's is "
                          "h' = (1 − z)⊙h + z⊙n."),
              Mistake("lecture-blend", convention="lecture",
                      why="That is the lecture's blend; PyTorch weights the old state by z."),
              Mistake("reset-before", reset="before",
                      why="The reset was applied before W_hn; here it multiplies (W_hn h + b_hn)."),
              Mistake("reset-after", reset="after", why="The reset was applied after W_hn; here it multiplies h first."),
              Mistake("no-reset", reset="none", why="You left out the reset gate r in the candidate.")),
}

GRU_ECF = {
    "n": (Ecf("gru-candidate", _gru_candidate_args),),
    "h_new": (Ecf("gru-blend", lambda p, t: {"h": p["h"], "z": Ref("z"), "n": Ref("n"), "convention": p["convention"]}),),
}


def _gru_contract(p: dict[str, Any]) -> None:
    # the contract's resets are "after" and "before"; the engine's "none" computes a mistake, not a convention
    choice("convention", p["convention"], engine.rnn.GRU_CONVENTIONS)
    choice("reset", p["reset"], ("after", "before"))


GRU_CELL = Topic(
    "gru-cell", "GRU step",
    _RNN_PARAMS + (Param("weight_ih", "matrix (3H×I), rows r, z, n"), Param("weight_hh", "matrix (3H×H)"))
    + _bias_params("3")
    + (Param("convention", '"lecture": h\' = (1−z)⊙h + z⊙n; "pytorch": h\' = (1−z)⊙n + z⊙h', "lecture"),
       Param("reset", '"after": r⊙(W_hn h + b_hn); "before": W_hn (r⊙h) + b_hn', "after")),
    ("r", "z", "n", "h_new"),
    lambda p: engine.gru_cell(p["x"], p["h"], p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"],
                              convention=p["convention"], reset=p["reset"]),
    gru_steps,
    lambda p: {"convention": p["convention"] + ": "
               + {"lecture": "h' = (1−z)⊙h + z⊙n (course notes; Chung et al. 2014)",
                  "pytorch": "h' = (1−z)⊙n + z⊙h (torch.nn.GRUCell)"}.get(p["convention"], ""),
               "reset": p["reset"] + ": " + {"after": "r⊙(W_hn h + b_hn) (PyTorch, the notes)",
                                             "before": "W_hn (r⊙h) + b_hn (Cho et al. 2014)"}.get(p["reset"], "")},
    check=_gru_contract,
    mistakes=GRU_MISTAKES,
    ecf=GRU_ECF,
)


# ------------------------------------------------------------------------------------ rnn-unroll

class UnrollSteps(NamedTuple):
    time_steps: list[Step]         # a_t and h_t, one per time step
    jacobians: list[Step]          # ∂h_t/∂h_{t−1}, one per time step
    product: Step                  # ∂h_T/∂h_0
    grad_h0: Step | None           # with grad_output


def unroll_steps(p: dict[str, Any], t: Trace) -> UnrollSteps:
    phi = r"\tanh" if p["nonlinearity"] == "tanh" else r"\mathrm{ReLU}"
    der = r"1 - h_t^2" if p["nonlinearity"] == "tanh" else r"\mathbb{1}[a_t > 0]"
    time_steps = []
    for i, (a, h) in enumerate(zip(t.pre_activations, t.hidden), 1):
        time_steps.append(Step(f"Time step {i}",
                               rf"a_{i} = W_{{ih}} x_{i} + b_{{ih}} + W_{{hh}} h_{i - 1} + b_{{hh}},\ h_{i} = {phi}(a_{i})",
                               {f"a_{i}": a, f"h_{i}": h}))
    jacobians = []
    for i, J in enumerate(t.jacobians, 1):
        der_i = der.replace("_t", f"_{i}")
        jacobians.append(Step(f"Jacobian of step {i}",
                              rf"\frac{{\partial h_{i}}}{{\partial h_{i - 1}}} = \mathrm{{diag}}({der_i})\, W_{{hh}}",
                              {f"phi_prime_{i}": t.activation_derivatives[i - 1], f"jacobian_{i}": J}))
    T = len(t.jacobians)
    product = Step("Backprop through time multiplies them",
                   rf"\frac{{\partial h_{T}}}{{\partial h_0}} = " + r" ".join(
                       rf"\frac{{\partial h_{i}}}{{\partial h_{i - 1}}}" for i in range(T, 0, -1)),
                   {"hidden": t.hidden, "jacobian": t.jacobian})
    grad_h0 = (Step("Gradient at the initial state",
                    rf"\frac{{\partial L}}{{\partial h_0}} = \left(\frac{{\partial h_{T}}}{{\partial h_0}}\right)^\top \delta",
                    {"grad_h0": t.grad_h0})
               if "grad_h0" in t else None)
    return UnrollSteps(time_steps, jacobians, product, grad_h0)


def _chain(matrices: Any) -> Any:
    """The product of the matrices in the order given: M_1 M_2 ⋯ M_T."""
    total = matrices[0]
    for m in matrices[1:]:
        total = total @ m
    return total


def _from_h0(p: dict[str, Any], t: Trace) -> Any:
    """Every step restarted from h₀: h_t = φ(W_ih x_t + b_ih + W_hh h₀ + b_hh) (the first is the right one)."""
    xs = np.asarray(p["x"], dtype=float)
    xs = xs[:, None] if xs.ndim == 1 else xs
    h0 = np.zeros(len(p["weight_hh"])) if p["h0"] is None else p["h0"]
    return np.array([t.hidden[0]] + [engine.rnn_cell(x, h0, p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"],
                                                     nonlinearity=p["nonlinearity"]).h_new for x in xs[1:]])


# the same mistake in rnn-bptt's table (one wording)
REUSE_H0_WHY = ("Each step continues from the previous step's state, not from h₀: the recurrence feeds each new state "
                "into the next step.")

RNN_UNROLL_MISTAKES = {
    "hidden": (Mistake("reuse-h0", why=REUSE_H0_WHY, compute=_from_h0),
               Mistake("no-recurrence", weight_hh=lambda p: np.zeros_like(np.asarray(p["weight_hh"], dtype=float)).tolist(),
                       why=NO_RECURRENCE_WHY)),
    "jacobian": (
        Mistake("weights-only", compute=lambda p, t: _chain([np.asarray(p["weight_hh"], dtype=float)] * len(t.jacobians)),
                why="Backwards through the nonlinearity multiply row i by φ'(a_i): each step's factor is diag(φ'(a_t)) W_hh."),
        # diag(φ') on the wrong side of each factor: W_hh diag(φ'(a_t))
        Mistake("columns-scaled", why="φ'(a_t) scales the rows (the output units), not the columns: diag(φ'(a_t)) W_hh.",
                compute=lambda p, t: _chain([np.asarray(p["weight_hh"], dtype=float) * d[None, :]
                                             for d in t.activation_derivatives[::-1]])),
        Mistake("transposed", compute=lambda p, t: t.jacobian.T,
                why="Row i holds the derivatives of unit i of the later state, ∂h_t,i/∂h_t−1,j = φ'(a_t,i) W_hh[i, j]: "
                    "no transpose."),
        Mistake("reversed-order", compute=lambda p, t: _chain(list(t.jacobians)), when=lambda p: np.shape(p["x"])[0] > 1,
                why="The chain rule puts the latest step's Jacobian on the left: ∂h_T/∂h_0 = J_T ⋯ J_1, not J_1 ⋯ J_T.")),
    "grad_h0": (Mistake("not-transposed", compute=lambda p, t: t.jacobian @ np.asarray(p["grad_output"], dtype=float),
                        why="∂L/∂h_0 = (∂h_T/∂h_0)ᵀ δ: multiply δ by the transposed Jacobian."),),
}

RNN_UNROLL_ECF = {
    "jacobian": (Ecf("rnn-jacobian", lambda p, t: {"h_new": Ref("hidden"), "weight_hh": p["weight_hh"],
                                                   "nonlinearity": p["nonlinearity"]}),),
    "grad_h0": (Ecf("matmul", lambda p, t: {"a": p["grad_output"], "b": Ref("jacobian")}),),
}


RNN_UNROLL = Topic(
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
    unroll_steps,
    lambda p: {"biases": "two bias vectors b_ih, b_hh (torch.nn.RNN)", "nonlinearity": str(p["nonlinearity"]),
               "jacobian": "∂h_t/∂h_{t−1} = diag(φ'(a_t)) W_hh (Pascanu et al. 2013)"},
    answer_names=lambda p, t: [n for n in ("hidden", "jacobian", "grad_h0") if n in t],
    mistakes=RNN_UNROLL_MISTAKES,
    ecf=RNN_UNROLL_ECF,
)


# ---------------------------------------------------------------------------- vanishing-gradient

class VanishingSteps(NamedTuple):
    forward: Step
    activation_derivatives: Step
    local_derivatives: Step
    product: Step                  # ∂h_T/∂h_0
    bound: Step                    # |w|^T
    clipped: Step | None           # with max_norm


def vanishing_steps(p: dict[str, Any], t: Trace) -> VanishingSteps:
    tanh = p["nonlinearity"] == "tanh"
    T = t.steps
    return VanishingSteps(
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
        Step("Clip by norm", r"g \leftarrow g \cdot \min\left(1, \frac{c}{\lVert g \rVert}\right)", {"clipped": t.clipped})
        if "clipped" in t else None)


def _tanh(p: dict[str, Any]) -> bool:
    return p["nonlinearity"] == "tanh"


VANISHING_MISTAKES = {
    "hidden": (Mistake("no-recurrence", w=0.0, why="Each state feeds the next: a_t = w h_{t−1} + x_t."),),
    "local_derivatives": (
        Mistake("weights-only", why="Include the slope of tanh at each step: w·(1 − h_t²).", when=_tanh,
                compute=lambda p, t: np.full(len(t.local_derivatives), float(p["w"]))),
        Mistake("slope-only", why="∂h_t/∂h_{t−1} = w·φ'(a_t): the chain rule through a_t = w h_{t−1} + x_t brings the "
                                  "factor w.", compute=lambda p, t: t.activation_derivatives)),
    "gradient": (
        Mistake("added", why="Backprop through time multiplies the local derivatives; it does not add them.",
                compute=lambda p, t: ops.total(t.local_derivatives)),
        Mistake("last-only", why="That is only the last step's factor: multiply all T of them.",
                compute=lambda p, t: float(t.local_derivatives[-1]))),
    "bound": (
        Mistake("w-times-t", why="Each step contributes a factor: |w|^T, not |w|·T.",
                compute=lambda p, t: abs(p["w"]) * t.steps),
        Mistake("sigmoid-bound", why="tanh' ≤ 1 (σ' ≤ 1/4 is the sigmoid's): the bound is |w|^T.", when=_tanh,
                compute=lambda p, t: float((abs(p["w"]) / 4) ** t.steps))),
    "clipped": (Mistake("unclipped", why="Clipping rescales g to norm c when ‖g‖ > c: g·c/‖g‖.",
                        compute=lambda p, t: t.gradient),),
}

VANISHING_ECF = {
    # the forward pass from the parameters (the clipping is no input of it)
    "hidden": (Ecf("solve:vanishing-gradient", lambda p, t: {n: v for n, v in p.items() if n != "max_norm"}, "hidden"),),
    "local_derivatives": (Ecf("rnn-local-derivatives", lambda p, t: {"w": p["w"], "hidden": Ref("hidden"),
                                                                     "nonlinearity": p["nonlinearity"]}),),
    "gradient": (Ecf("product", lambda p, t: {"values": Ref("local_derivatives")}),),
    "bound": (Ecf("power", lambda p, t: {"base": abs(p["w"]), "exponent": t.steps}),),
    "clipped": (Ecf("clip-by-norm", lambda p, t: {"grad": Ref("gradient"), "max_norm": p["max_norm"]}),),
}

_VANISHING_ANSWERS = ("hidden", "local_derivatives", "gradient", "bound", "clipped")


VANISHING_GRADIENT = Topic(
    "vanishing-gradient", "The vanishing (or exploding) gradient of a one-unit RNN: Π w·φ'(a_t)",
    (Param("w", "number: the recurrent weight"), Param("x", "vector (T): the inputs"),
     Param("u", "number: the input weight", 1.0), Param("h0", "number", 0.0), Param("b", "number", 0.0),
     Param("nonlinearity", '"tanh" or "relu"', "tanh"),
     Param("max_norm", "number c > 0: the gradient clipped by norm, g·min(1, c/|g|) (optional)", None)),
    _VANISHING_ANSWERS,
    lambda p: engine.vanishing_gradient(p["w"], p["x"], u=p["u"], h0=p["h0"], b=p["b"], nonlinearity=p["nonlinearity"],
                                        max_norm=p["max_norm"]),
    vanishing_steps,
    lambda p: {"recurrence": f"h_t = {p['nonlinearity']}(w h_(t−1) + u x_t + b)",
               "gradient": "∂h_T/∂h_0 = Π_t w·φ'(a_t) (Pascanu et al. 2013)"}
    | ({} if p["max_norm"] is None else {"clipping": "by norm: g·min(1, c/‖g‖) (torch.nn.utils.clip_grad_norm_)"}),
    answer_names=lambda p, t: [n for n in _VANISHING_ANSWERS if n in t],
    mistakes=VANISHING_MISTAKES,
    ecf=VANISHING_ECF,
)
