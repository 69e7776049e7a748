"""Small elementary operations that recipes chain between parts (error carried forward).

Each is a pure function of arrays; they exist so a grader can recompute a later part from a
student's own earlier answer (e.g. the attention output from the student's weights).
"""
from __future__ import annotations

import numpy as np

from examprep.engine._core import array, integer, number
from examprep.engine.attention import masked_softmax
from examprep.errors import ShapeError


def matmul(a, b) -> np.ndarray:
    """a @ b (shapes must chain)."""
    A, B = array("a", a, (1, 2)), array("b", b, (1, 2))
    if A.shape[-1] != B.shape[0]:
        raise ShapeError(f"b: expected {A.shape[-1]} rows to multiply, got {B.shape[0]}")
    return A @ B


def scale(x, factor) -> np.ndarray:
    """factor · x."""
    return array("x", x) * number("factor", factor)


def scaled_masked_softmax(scores, scale=1.0, allowed=None) -> np.ndarray:
    """softmax over the last axis of scale·scores where allowed (1) — 0 elsewhere and on empty rows."""
    s = array("scores", scores, (1, 2))
    ok = np.ones(s.shape, dtype=bool) if allowed is None else array("allowed", allowed).astype(bool)
    if ok.shape != s.shape:
        raise ShapeError(f"allowed: expected shape {s.shape}, got {ok.shape}")
    return masked_softmax(s * number("scale", scale), ok)


def nll(probs, target) -> float:
    """−log p[target] of a probability vector."""
    p = array("probs", probs, 1)
    t = integer("target", target, 0)
    if t >= p.shape[0]:
        raise ShapeError(f"target: {t} is outside the {p.shape[0]} probabilities")
    if p[t] <= 0:
        return float("inf")
    return float(-np.log(p[t]))


def mean_nll(probs, target) -> float:
    """Mean over rows of −log p[n, target[n]]."""
    p = array("probs", probs, 2)
    return float(np.mean([nll(row, t) for row, t in zip(p, target)]))


def cross_entropy_from_probs(probs, target_dist, reduction="mean") -> float:
    """−Σ_c q_c log p_c per row, reduced by mean or sum over rows (a vector is one row)."""
    p, q = array("probs", probs, (1, 2)), array("target_dist", target_dist, (1, 2))
    if p.shape != q.shape:
        raise ShapeError(f"probs: expected shape {q.shape}, got {p.shape}")
    with np.errstate(divide="ignore", invalid="ignore"):
        losses = -np.where(q > 0, q * np.log(np.clip(p, 0, None)), 0.0).sum(axis=-1)
    losses = np.atleast_1d(losses)
    return float(losses.mean() if reduction == "mean" else losses.sum())


def gru_candidate(x, h, w_in, w_hn, b_in, b_hn, r, reset="after") -> np.ndarray:
    """n = tanh(W_in x + b_in + r⊙(W_hn h + b_hn)) (reset "after") or tanh(W_in x + b_in + W_hn(r⊙h) + b_hn)."""
    x_, h_ = array("x", x, 1), array("h", h, 1)
    r_ = np.atleast_1d(array("r", r, (0, 1)))
    W_in, W_hn = array("w_in", w_in, 2), array("w_hn", w_hn, 2)
    b_in, b_hn = array("b_in", b_in, 1), array("b_hn", b_hn, 1)
    if r_.shape != h_.shape:
        raise ShapeError(f"r: expected {h_.shape[0]} values, got {r_.shape[0]}")
    if reset == "after":
        return np.tanh(W_in @ x_ + b_in + r_ * (W_hn @ h_ + b_hn))
    return np.tanh(W_in @ x_ + b_in + W_hn @ (r_ * h_) + b_hn)


def minus_target(probs, target_dist, divide_by=1.0) -> np.ndarray:
    """(p − q) / divide_by: the softmax-cross-entropy gradient from given probabilities."""
    p, q = array("probs", probs), array("target_dist", target_dist)
    if p.shape != q.shape:
        raise ShapeError(f"probs: expected shape {q.shape}, got {p.shape}")
    return (p - q) / number("divide_by", divide_by)


def gru_blend(h, z, n, convention="lecture") -> np.ndarray:
    """h' from the gates: lecture (1 − z)⊙h + z⊙n, or pytorch (1 − z)⊙n + z⊙h."""
    h_, z_, n_ = array("h", h), array("z", z), array("n", n)
    return (1 - z_) * h_ + z_ * n_ if convention == "lecture" else (1 - z_) * n_ + z_ * h_


OPS = {"matmul": matmul, "scale": scale, "scaled-masked-softmax": scaled_masked_softmax, "nll": nll,
       "mean-nll": mean_nll, "minus-target": minus_target, "gru-blend": gru_blend,
       "cross-entropy-from-probs": cross_entropy_from_probs, "gru-candidate": gru_candidate}


# ------------------------------------------- backprop, CNN and RNN problems (issue 4, first half)

def _same_shape(name: str, a: np.ndarray, ref: np.ndarray, ref_name: str) -> None:
    if a.shape != ref.shape:
        raise ShapeError(f"{name}: expected the shape of {ref_name} "
                         f"{'×'.join(map(str, ref.shape)) or 'scalar'}, got {'×'.join(map(str, a.shape)) or 'scalar'}")


def add(a, b) -> np.ndarray:
    """a + b, element-wise (same shapes)."""
    A, B = array("a", a), array("b", b)
    _same_shape("b", B, A, "a")
    return A + B


def subtract(a, b) -> np.ndarray:
    """a − b, element-wise (same shapes): e.g. δ = y − t for L = ½‖y − t‖²."""
    A, B = array("a", a), array("b", b)
    _same_shape("b", B, A, "a")
    return A - B


def multiply(a, b) -> np.ndarray:
    """a ⊙ b, element-wise (same shapes)."""
    A, B = array("a", a), array("b", b)
    _same_shape("b", B, A, "a")
    return A * B


def product(values) -> float:
    """Π of all entries: a chain of local derivatives."""
    return float(np.prod(array("values", values)))


def activation_backward(grad_output, x, name="relu", negative_slope=0.01) -> np.ndarray:
    """∂L/∂x = ∂L/∂φ(x) ⊙ φ'(x) for an element-wise activation φ at pre-activation x."""
    from examprep.engine.activations import activation_fn

    g, x_ = array("grad_output", grad_output), array("x", x)
    _same_shape("grad_output", g, x_, "x")
    return g * activation_fn(name, x_, number("negative_slope", negative_slope))[1]


def _mse_parts(predictions, target, loss):
    from examprep.engine._core import choice

    p, t = array("predictions", predictions, 1), array("target", target, 1)
    _same_shape("predictions", p, t, "target")
    return p - t, (2.0 if choice("loss", loss, ("mse", "half-mse")) == "mse" else 1.0)


def mse_loss(predictions, target, loss="mse") -> float:
    """(1/N) Σ (ŷ − y)² ("mse") or (1/2N) Σ (ŷ − y)² ("half-mse")."""
    e, factor = _mse_parts(predictions, target, loss)
    return float(np.mean(e**2) * factor / 2.0)


def mse_grad_w(X, predictions, target, loss="mse") -> np.ndarray:
    """∂L/∂w = (2/N) Xᵀ(ŷ − y) ("mse") or (1/N) Xᵀ(ŷ − y) ("half-mse"); X (N, d) or (N,) for one feature."""
    e, factor = _mse_parts(predictions, target, loss)
    X_ = array("X", X, (1, 2))
    if X_.shape[0] != e.shape[0]:
        raise ShapeError(f"X: expected {e.shape[0]} rows (one per prediction), got {X_.shape[0]}")
    g = factor / e.shape[0] * (X_.T @ e)
    return float(g) if X_.ndim == 1 else g


def mse_grad_b(predictions, target, loss="mse") -> float:
    """∂L/∂b = (2/N) Σ (ŷ − y) ("mse") or (1/N) Σ (ŷ − y) ("half-mse")."""
    e, factor = _mse_parts(predictions, target, loss)
    return float(factor / e.shape[0] * e.sum())


def sgd_step(param, grad, lr) -> np.ndarray:
    """param − lr · grad (one gradient-descent step)."""
    p, g = array("param", param), array("grad", grad)
    _same_shape("grad", g, p, "param")
    out = p - number("lr", lr) * g
    return float(out) if out.ndim == 0 else out


def rnn_jacobian(h_new, weight_hh, nonlinearity="tanh") -> np.ndarray:
    """∂h'/∂h = diag(φ'(a)) W_hh read off the new state: tanh' = 1 − h'², ReLU' = 1[h' > 0]."""
    h, W = array("h_new", h_new, 1), array("weight_hh", weight_hh, 2)
    if W.shape != (h.shape[0], h.shape[0]):
        raise ShapeError(f"weight_hh: expected shape {h.shape[0]}×{h.shape[0]}, got {'×'.join(map(str, W.shape))}")
    der = 1.0 - h**2 if nonlinearity == "tanh" else (h > 0).astype(float)
    return der[:, None] * W


def rnn_local_derivatives(w, hidden, nonlinearity="tanh") -> np.ndarray:
    """w · φ'(a_t) for each state h_t of a one-unit RNN: w(1 − h_t²) for tanh, w·1[h_t > 0] for ReLU."""
    h = array("hidden", hidden, (0, 1)).reshape(-1)
    der = 1.0 - h**2 if nonlinearity == "tanh" else (h > 0).astype(float)
    return number("w", w) * der


def lstm_cell_state(f, c, i, g) -> np.ndarray:
    """c' = f ⊙ c + i ⊙ g."""
    F, C, I_, G = array("f", f), array("c", c), array("i", i), array("g", g)
    for name, v in (("c", C), ("i", I_), ("g", G)):
        _same_shape(name, v, F, "f")
    return F * C + I_ * G


def lstm_hidden(o, c_new) -> np.ndarray:
    """h' = o ⊙ tanh(c')."""
    out_gate, C = array("o", o), array("c_new", c_new)
    _same_shape("c_new", C, out_gate, "o")
    return out_gate * np.tanh(C)


def power(base, exponent) -> float:
    """base ** exponent (a per-step factor compounded over many steps)."""
    return float(number("base", base) ** number("exponent", exponent))


OPS.update({"add": add, "subtract": subtract, "multiply": multiply, "product": product,
            "activation-backward": activation_backward, "mse-loss": mse_loss, "mse-grad-w": mse_grad_w,
            "mse-grad-b": mse_grad_b, "sgd-step": sgd_step, "rnn-jacobian": rnn_jacobian,
            "rnn-local-derivatives": rnn_local_derivatives, "lstm-cell-state": lstm_cell_state,
            "lstm-hidden": lstm_hidden, "power": power})


# ------------------------------------------- Transformer and counting problems (issue 4, second half)

def divide(a, b) -> float:
    """a / b of two numbers: a growth factor or a fraction (b ≠ 0)."""
    from examprep.errors import ParamError

    den = number("b", b)
    if den == 0:
        raise ParamError("b: cannot divide by zero")
    return number("a", a) / den


def dot(a, b) -> float:
    """a · b of two vectors of the same length."""
    A, B = array("a", a, 1), array("b", b, 1)
    if A.shape != B.shape:
        raise ShapeError(f"b: expected a vector of length {A.shape[0]}, got length {B.shape[0]}")
    return float(A @ B)


def matmul_bt(a, b) -> np.ndarray:
    """a @ bᵀ: the raw score matrix Q Kᵀ from Q (n×d) and K (m×d)."""
    A, B = array("a", a, 2), array("b", b, 2)
    if A.shape[1] != B.shape[1]:
        raise ShapeError(f"b: expected {A.shape[1]} columns (as a), got {B.shape[1]}")
    return A @ B.T


def int_product(values) -> int:
    """Π of integer counts (sizes, heads): exact, never rounded through floats."""
    vals = values if isinstance(values, (list, tuple)) else [values]
    out = 1
    for i, v in enumerate(vals):
        out *= integer(f"values[{i}]", v)
    return out


def total(values) -> float:
    """Σ of the given numbers (parameter counts of the parts of a layer)."""
    return float(np.sum(array("values", values, (0, 1))))


def difference_times(a, b, factor=1.0, divisor=1.0) -> float:
    """(a − b) · factor / divisor: e.g. parameters saved × bytes per parameter / 2²⁰ bytes per MiB."""
    from examprep.errors import ParamError

    den = number("divisor", divisor)
    if den == 0:
        raise ParamError("divisor: cannot divide by zero")
    return (number("a", a) - number("b", b)) * number("factor", factor) / den


def layer_norm_from_stats(x, mean, var, eps=1e-5, eps_placement="added-to-std", gamma=1.0, beta=0.0) -> np.ndarray:
    """γ ⊙ (x − μ)/(σ + ε) + β ("added-to-std") or γ ⊙ (x − μ)/√(σ² + ε) + β ("inside-sqrt") from given
    statistics: x (D,) with one mean and variance, or (N, D) with one per row."""
    X = array("x", x, (1, 2))
    mu, v = array("mean", mean, (0, 1)), array("var", var, (0, 1))
    if X.ndim == 2:
        if mu.size != X.shape[0] or v.size != X.shape[0]:
            raise ShapeError(f"mean, var: expected one per row ({X.shape[0]})")
        mu, v = mu.reshape(-1, 1), v.reshape(-1, 1)
    if np.any(v < 0):
        from examprep.errors import ParamError

        raise ParamError("var: a variance cannot be negative")
    e = number("eps", eps)
    denom = np.sqrt(v) + e if eps_placement == "added-to-std" else np.sqrt(v + e)
    with np.errstate(divide="ignore", invalid="ignore"):
        return array("gamma", gamma) * (X - mu) / denom + array("beta", beta)


OPS.update({"divide": divide, "dot": dot, "matmul-bt": matmul_bt, "int-product": int_product, "total": total,
            "difference-times": difference_times, "layer-norm-from-stats": layer_norm_from_stats})


def sigmoid_derivative_from_output(output) -> np.ndarray:
    """σ'(x) = σ(x)(1 − σ(x)) from the value s = σ(x)."""
    s = array("output", output)
    return s * (1.0 - s)


def tanh_derivative_from_output(output) -> np.ndarray:
    """tanh'(x) = 1 − tanh²(x) from the value t = tanh(x)."""
    t = array("output", output)
    return 1.0 - t**2


OPS.update({"sigmoid-derivative-from-output": sigmoid_derivative_from_output,
            "tanh-derivative-from-output": tanh_derivative_from_output})


def clip_by_norm(grad, max_norm) -> np.ndarray:
    """g · min(1, c/‖g‖₂): gradient clipping by norm (torch.nn.utils.clip_grad_norm_, up to its 1e-6)."""
    g = array("grad", grad)
    c = number("max_norm", max_norm)
    norm = float(np.sqrt(np.sum(g**2)))
    out = g * min(1.0, c / norm) if norm > 0 else g
    return float(out) if out.ndim == 0 else out


OPS.update({"clip-by-norm": clip_by_norm})
