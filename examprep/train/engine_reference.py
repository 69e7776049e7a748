"""Independent torch implementations of the engine's topics, and random valid instances.

The tests and `examprep verify` both check the numpy engine against these. Wherever torch has
the operation, it is used as torch users would use it (torch.nn modules, torch.nn.functional and
autograd); conventions torch lacks (the lecture's GRU blend, ε added to σ) are written here in
torch from their papers' formulas, separately from the engine.

``REFERENCES[topic](params)`` takes a solve-contract params dict (defaults as the contract) and
returns {answer name: numpy value}. ``random_params(topic, rng)`` draws a valid params dict.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

DTYPE = torch.float64


def _t(x: Any, grad: bool = False) -> torch.Tensor:
    return torch.tensor(np.asarray(x, dtype=np.float64), dtype=DTYPE, requires_grad=grad)


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


# ----------------------------------------------------------------------------- softmax, losses

def ref_softmax(p: dict) -> dict:
    return {"probs": _np(torch.softmax(_t(p["logits"]), dim=-1))}


def ref_activation(p: dict) -> dict:
    x = _t(p["x"], grad=True)
    name = p["name"]
    if name == "sigmoid":
        y = torch.sigmoid(x)
    elif name == "tanh":
        y = torch.tanh(x)
    elif name == "relu":
        y = F.relu(x)
    elif name == "leaky-relu":
        y = F.leaky_relu(x, p.get("negative_slope", 0.01))
    else:
        y = F.gelu(x, approximate=p.get("approximate", "none"))
    (g,) = torch.autograd.grad(y.sum(), x)
    return {"output": _np(y), "derivative": _np(g)}


def ref_cross_entropy(p: dict) -> dict:
    z = _t(p["logits"], grad=True)
    single = z.ndim == 1
    target = torch.tensor([p["target"]] if single else p["target"], dtype=torch.long)
    zz = z[None, :] if single else z
    red = p.get("reduction", "mean")
    loss = F.cross_entropy(zz, target, reduction=red, label_smoothing=p.get("label_smoothing", 0.0))
    (g,) = torch.autograd.grad(loss.sum(), z)
    out_loss = loss[0] if (single and red == "none") else loss
    return {"loss": _np(out_loss), "probs": _np(torch.softmax(z, -1)), "grad_logits": _np(g)}


# ------------------------------------------------------------------------------ dense, MLP, LR

def ref_dense(p: dict) -> dict:
    x = _t(p["x"], grad=True)
    w = _t(p["weight"], grad=True)
    b = _t(p["bias"] if p.get("bias") is not None else np.zeros(w.shape[0]), grad=True)
    y = F.linear(x, w, b)
    out = {"output": _np(y)}
    if p.get("grad_output") is not None:
        gx, gw, gb = torch.autograd.grad(y, (x, w, b), _t(p["grad_output"]))
        out.update(grad_weight=_np(gw), grad_bias=_np(gb), grad_input=_np(gx))
    return out


_ACTS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": F.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh,
    "leaky-relu": lambda a: F.leaky_relu(a, 0.01), "gelu": F.gelu,
}


def ref_mlp_backprop(p: dict) -> dict:
    x = _t(p["x"], grad=True)
    w1, b1, w2, b2 = (_t(p[n], grad=True) for n in ("w1", "b1", "w2", "b2"))
    a = F.linear(x, w1, b1)
    a.retain_grad()
    h = _ACTS[p.get("activation", "relu")](a)
    h.retain_grad()
    z = F.linear(h, w2, b2)
    z.retain_grad()
    loss = F.cross_entropy(z[None, :], torch.tensor([p["target"]]))
    loss.backward()
    return {"hidden_pre": _np(a), "hidden": _np(h), "logits": _np(z), "probs": _np(torch.softmax(z, -1)),
            "loss": _np(loss), "grad_logits": _np(z.grad), "grad_w2": _np(w2.grad), "grad_b2": _np(b2.grad),
            "grad_hidden": _np(h.grad), "grad_hidden_pre": _np(a.grad), "grad_w1": _np(w1.grad),
            "grad_b1": _np(b1.grad), "grad_x": _np(x.grad)}


def ref_linear_regression(p: dict) -> dict:
    X = _t(p["X"])
    X2 = X[:, None] if X.ndim == 1 else X
    w = _t(np.atleast_1d(p["w"]), grad=True)
    b = _t(p.get("b", 0.0), grad=True)
    pred = X2 @ w + b
    loss = F.mse_loss(pred, _t(p["y"]))
    if p.get("loss", "mse") == "half-mse":
        loss = loss / 2
    gw, gb = torch.autograd.grad(loss, (w, b))
    lr = p["lr"]
    scalar_w = np.ndim(p["w"]) == 0
    fix = (lambda v: float(v[0])) if scalar_w else (lambda v: v)
    return {"predictions": _np(pred), "loss": _np(loss), "grad_w": fix(_np(gw)), "grad_b": _np(gb),
            "w_new": fix(_np(w - lr * gw)), "b_new": _np(b - lr * gb)}


# ------------------------------------------------------------------------------ conv and pooling

def _dims(v: Any, n: int) -> list[int]:
    return list(v) if isinstance(v, (list, tuple)) else [v] * n


def ref_conv_output_size(p: dict) -> dict:
    """Runs the real torch layer on a zero input and reads the output shape."""
    sizes = _dims(p["input_size"], 1) if not isinstance(p["input_size"], (list, tuple)) else list(p["input_size"])
    n = len(sizes)
    k = _dims(p["kernel_size"], n)
    op = p.get("op", "conv")
    stride = _dims(p.get("stride") if p.get("stride") is not None else (k if op == "pool" else 1), n)
    dil = _dims(p.get("dilation", 1), n)
    x = torch.zeros((1, 1, *sizes), dtype=DTYPE)
    padding = p.get("padding", 0)
    out: dict[str, Any] = {}
    if padding == "same":
        # TensorFlow's rule, stated independently: output ⌈n/s⌉ and the least total padding giving it
        pads_before, pads_after = [], []
        for i in range(n):
            want = -(-sizes[i] // stride[i])
            total = 0
            while (sizes[i] + total - dil[i] * (k[i] - 1) - 1) // stride[i] + 1 < want:
                total += 1
            pads_before.append(total // 2)
            pads_after.append(total - total // 2)
        flat = [v for i in reversed(range(n)) for v in (pads_before[i], pads_after[i])]
        x = F.pad(x, flat)
        padding = 0
        out.update(pad_before=pads_before if n > 1 else pads_before[0],
                   pad_after=pads_after if n > 1 else pads_after[0])
    elif padding == "valid":
        padding = 0
    pad = _dims(padding, n)
    conv = {1: (F.conv1d, F.conv_transpose1d, F.max_pool1d), 2: (F.conv2d, F.conv_transpose2d, F.max_pool2d)}[n]
    kernel = torch.zeros((1, 1, *k), dtype=DTYPE)
    if op == "pool":
        y = conv[2](x, k, stride=stride, padding=pad, dilation=dil, ceil_mode=p.get("ceil_mode", False))
    elif p.get("transposed", False):
        y = conv[1](x, kernel, stride=stride, padding=pad, dilation=dil,
                    output_padding=_dims(p.get("output_padding", 0), n))
    else:
        y = conv[0](x, kernel, stride=stride, padding=pad, dilation=dil)
    shape = list(y.shape[2:])
    out["output_size"] = shape if isinstance(p["input_size"], (list, tuple)) else shape[0]
    return out


def ref_receptive_field(p: dict) -> dict:
    """Receptive field measured by autograd: the input positions one output depends on, through
    a real stack of torch conv1d layers with all-ones kernels."""
    layers = p["layers"]
    rfs = []
    for depth in range(1, len(layers) + 1):
        stack = layers[:depth]
        length = 1
        for L in reversed(stack):            # the input length that yields exactly one output
            length = (length - 1) * L.get("stride", 1) + L.get("dilation", 1) * (L["kernel_size"] - 1) + 1
        x = torch.ones((1, 1, length + 8), dtype=DTYPE, requires_grad=True)
        y = x
        for L in stack:
            w = torch.ones((1, 1, L["kernel_size"]), dtype=DTYPE)
            y = F.conv1d(y, w, stride=L.get("stride", 1), dilation=L.get("dilation", 1))
        (g,) = torch.autograd.grad(y[0, 0, 0], x)
        nz = torch.nonzero(g[0, 0]).flatten()
        rfs.append(int(nz.max() - nz.min() + 1))
    jumps = list(np.cumprod([L.get("stride", 1) for L in layers]).astype(int))
    return {"receptive_field": rfs[-1], "receptive_fields": rfs, "jump": int(jumps[-1]), "jumps": [int(j) for j in jumps]}


def _pad_pairs(padding: Any, n: int) -> list[tuple[int, int]]:
    if isinstance(padding, (list, tuple)):
        if all(isinstance(q, (list, tuple)) for q in padding):
            return [tuple(q) for q in padding]
        return [tuple(padding)] * n
    return [(padding, padding)] * n


def ref_conv2d(p: dict) -> dict:
    x = _t(p["input"], grad=True)
    k = _t(p["kernel"], grad=True)
    b = _t([p.get("bias", 0.0)], grad=True)
    n = x.ndim
    stride, dil = _dims(p.get("stride", 1), n), _dims(p.get("dilation", 1), n)
    padding = p.get("padding", 0)
    if padding == "same":
        pairs = []
        for i in range(n):
            want = -(-x.shape[i] // stride[i])
            total = max((want - 1) * stride[i] + dil[i] * (k.shape[i] - 1) + 1 - x.shape[i], 0)
            pairs.append((total // 2, total - total // 2))
    elif padding == "valid":
        pairs = [(0, 0)] * n
    else:
        pairs = _pad_pairs(padding, n)
    flat = [v for i in reversed(range(n)) for v in pairs[i]]
    xp = F.pad(x[None, None], flat)
    fn = F.conv1d if n == 1 else F.conv2d
    y = fn(xp, k[None, None], b, stride=stride, dilation=dil)[0, 0]
    out = {"output": _np(y)}
    if p.get("grad_output") is not None:
        gx, gk, gb = torch.autograd.grad(y, (x, k, b), _t(p["grad_output"]))
        out.update(grad_input=_np(gx), grad_kernel=_np(gk), grad_bias=float(gb[0]))
    return out


def ref_max_pool(p: dict) -> dict:
    x = _t(p["input"], grad=True)
    n = x.ndim
    fn = F.max_pool1d if n == 1 else F.max_pool2d
    ks = _dims(p["kernel_size"], n)
    stride = p.get("stride")
    y = fn(x[None, None], ks, stride=_dims(stride, n) if stride is not None else None,
           padding=_dims(p.get("padding", 0), n), dilation=_dims(p.get("dilation", 1), n),
           ceil_mode=p.get("ceil_mode", False))[0, 0]
    out = {"output": _np(y)}
    if p.get("grad_output") is not None:
        (gx,) = torch.autograd.grad(y, x, _t(p["grad_output"]))
        out["grad_input"] = _np(gx)
    return out


# ------------------------------------------------------------------------------- recurrent cells

def _cell(module: nn.Module, p: dict) -> nn.Module:
    with torch.no_grad():
        module.weight_ih.copy_(_t(p["weight_ih"]))
        module.weight_hh.copy_(_t(p["weight_hh"]))
        for name in ("bias_ih", "bias_hh"):
            getattr(module, name).copy_(_t(p[name]) if p.get(name) is not None else torch.zeros_like(getattr(module, name)))
    return module


def ref_rnn_cell(p: dict) -> dict:
    x, h = _t(p["x"]), _t(p["h"])
    cell = _cell(nn.RNNCell(x.shape[0], h.shape[0], nonlinearity=p.get("nonlinearity", "tanh"), dtype=DTYPE), p)
    with torch.no_grad():
        return {"h_new": _np(cell(x[None], h[None])[0])}


def ref_lstm_cell(p: dict) -> dict:
    x, h, c = _t(p["x"]), _t(p["h"]), _t(p["c"])
    H = h.shape[0]
    cell = _cell(nn.LSTMCell(x.shape[0], H, dtype=DTYPE), p)
    with torch.no_grad():
        h1, c1 = cell(x[None], (h[None], c[None]))
        gates = F.linear(x, cell.weight_ih, cell.bias_ih) + F.linear(h, cell.weight_hh, cell.bias_hh)
    i, f, g, o = gates.chunk(4)
    return {"i": _np(torch.sigmoid(i)), "f": _np(torch.sigmoid(f)), "g": _np(torch.tanh(g)),
            "o": _np(torch.sigmoid(o)), "c_new": _np(c1[0]), "h_new": _np(h1[0])}


def ref_gru_cell(p: dict) -> dict:
    """torch.nn.GRUCell for PyTorch's convention. For the others, gates from torch ops and the
    identity lecture = h + n − pytorch (the two blends sum to h + n)."""
    x, h = _t(p["x"]), _t(p["h"])
    H = h.shape[0]
    cell = _cell(nn.GRUCell(x.shape[0], H, dtype=DTYPE), p)
    with torch.no_grad():
        gi = F.linear(x, cell.weight_ih, cell.bias_ih)
        w_hh, b_hh = cell.weight_hh, cell.bias_hh
        r = torch.sigmoid(gi[:H] + F.linear(h, w_hh[:H], b_hh[:H]))
        z = torch.sigmoid(gi[H:2 * H] + F.linear(h, w_hh[H:2 * H], b_hh[H:2 * H]))
        if p.get("reset", "after") == "after":
            h_torch = cell(x[None], h[None])[0]
            n = torch.tanh(gi[2 * H:] + r * F.linear(h, w_hh[2 * H:], b_hh[2 * H:]))
            assert torch.allclose(h_torch, (1 - z) * n + z * h, rtol=1e-10, atol=1e-12)
        else:   # Cho et al. 2014 eq. 8: reset applied to h before the product
            n = torch.tanh(gi[2 * H:] + F.linear(r * h, w_hh[2 * H:], b_hh[2 * H:]))
            h_torch = (1 - z) * n + z * h
        h_new = h_torch if p.get("convention", "lecture") == "pytorch" else h + n - h_torch
    return {"r": _np(r), "z": _np(z), "n": _np(n), "h_new": _np(h_new)}


# ---------------------------------------------------------------------------- parameter counts

def ref_param_count(p: dict) -> dict:
    """Counts sum(p.numel()) of the real torch module (PyTorch) or Keras's documented formulas."""
    layer = p["layer"]
    bias = p.get("bias", True)
    fw = p.get("framework", "pytorch")
    nl = p.get("num_layers", 1)
    if fw == "keras" and layer in ("rnn", "lstm", "gru"):
        g = {"rnn": 1, "lstm": 4, "gru": 3}[layer]
        n_in, H = p["input_size"], p["hidden_size"]
        dirs = 2 if p.get("bidirectional", False) else 1
        nb = (2 if (layer == "gru" and p.get("reset_after", True)) else 1) if bias else 0
        total = 0
        for lyr in range(nl):
            inp = n_in if lyr == 0 else H * dirs
            total += dirs * (g * H * (inp + H) + nb * g * H)   # kernel + recurrent_kernel + bias
        return {"count": total}
    d = p.get("d_model")
    if layer == "linear":
        m = nn.Linear(p["in_features"], p["out_features"], bias=bias)
    elif layer == "conv2d":
        m = nn.Conv2d(p["in_channels"], p["out_channels"], p["kernel_size"], groups=p.get("groups", 1), bias=bias)
    elif layer in ("rnn", "lstm", "gru"):
        cls = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}[layer]
        m = cls(p["input_size"], p["hidden_size"], num_layers=nl, bias=bias, bidirectional=p.get("bidirectional", False))
        nl = 1
    elif layer == "embedding":
        m = nn.Embedding(p["num_embeddings"], p["embedding_dim"])
    elif layer == "layer-norm":
        m = nn.LayerNorm(p["normalized_shape"], bias=bias)
    elif layer == "multi-head-attention":
        m = nn.MultiheadAttention(d, p["num_heads"], bias=bias)
    elif layer == "transformer-encoder-layer":
        m = nn.TransformerEncoderLayer(d, p["num_heads"], p.get("dim_feedforward", 2048), bias=bias)
    else:
        m = nn.TransformerDecoderLayer(d, p["num_heads"], p.get("dim_feedforward", 2048), bias=bias)
    return {"count": nl * sum(q.numel() for q in m.parameters())}


# ------------------------------------------------------------------------- normalisation, positions

def ref_layer_norm(p: dict) -> dict:
    x = _t(p["x"])
    gamma = _t(p.get("gamma", 1.0)) * torch.ones(x.shape[-1], dtype=DTYPE)
    beta = _t(p.get("beta", 0.0)) * torch.ones(x.shape[-1], dtype=DTYPE)
    eps = p.get("eps", 1e-5)
    unbiased = p.get("variance", "biased") == "unbiased"
    mean = x.mean(-1)
    var = x.var(-1, unbiased=unbiased)
    if p.get("eps_placement", "added-to-std") == "inside-sqrt" and not unbiased:
        y = F.layer_norm(x, (x.shape[-1],), gamma, beta, eps)
    elif p.get("eps_placement", "added-to-std") == "inside-sqrt":
        y = gamma * (x - mean[..., None]) / torch.sqrt(var[..., None] + eps) + beta
    else:   # The Annotated Transformer's LayerNorm: a_2 * (x - mean) / (std + eps) + b_2
        y = gamma * (x - mean[..., None]) / (x.std(-1, unbiased=unbiased, keepdim=True) + eps) + beta
    return {"output": _np(y), "mean": _np(mean), "var": _np(var)}


def ref_positional_encoding(p: dict) -> dict:
    """The Annotated Transformer's PositionalEncoding table (div_term via exp/log)."""
    d = p["d_model"]
    pos = p["position"]
    positions = torch.tensor(pos if isinstance(pos, list) else [pos], dtype=DTYPE)[:, None]
    div_term = torch.exp(torch.arange(0, d, 2, dtype=DTYPE) * -(math.log(p.get("base", 10000.0)) / d))
    pe = torch.zeros((positions.shape[0], d), dtype=DTYPE)
    pe[:, 0::2] = torch.sin(positions * div_term)
    pe[:, 1::2] = torch.cos(positions * div_term)[:, : d // 2]
    return {"encoding": _np(pe if isinstance(pos, list) else pe[0])}


def ref_rope(p: dict) -> dict:
    """Interleaved: Meta's Llama reference (complex multiplication, torch.polar); rotate-half:
    GPT-NeoX / Hugging Face's rotate_half."""
    x = _t(p["x"])
    single = x.ndim == 1
    rows = x[None] if single else x
    pos = torch.tensor([p["position"]] if single else p["position"], dtype=DTYPE)
    d = rows.shape[-1]
    inv = 1.0 / (p.get("base", 10000.0) ** (torch.arange(0, d, 2, dtype=DTYPE) / d))
    ang = pos[:, None] * inv[None]
    if p.get("style", "interleaved") == "interleaved":
        xc = torch.view_as_complex(rows.reshape(rows.shape[0], -1, 2).contiguous())
        out = torch.view_as_real(xc * torch.polar(torch.ones_like(ang), ang)).reshape(rows.shape)
    else:
        cos, sin = torch.cat([ang.cos(), ang.cos()], -1), torch.cat([ang.sin(), ang.sin()], -1)
        half = torch.cat([-rows[:, d // 2:], rows[:, : d // 2]], -1)
        out = rows * cos + half * sin
    return {"output": _np(out[0] if single else out)}


# ------------------------------------------------------------------------------------ attention

def ref_attention(p: dict) -> dict:
    q = _t(p["query"])
    single = q.ndim == 1
    q2 = q[None] if single else q
    k, v = _t(p["key"]), _t(p["value"])
    score = p.get("score", "scaled-dot")
    n, m = q2.shape[0], k.shape[0]
    allowed = torch.ones((n, m), dtype=torch.bool)
    if p.get("mask") is not None:
        allowed &= _t(p["mask"]).reshape(n, m).bool()
    if p.get("causal", False):
        allowed &= torch.ones((n, m), dtype=torch.bool).tril()
    if score == "scaled-dot":
        raw = q2 @ k.T
        scale = p.get("scale")
        out = F.scaled_dot_product_attention(q2[None], k[None], v[None], attn_mask=allowed[None], scale=scale)[0]
        s = 1 / math.sqrt(k.shape[1]) if scale is None else scale
    else:
        if score == "dot":
            raw = q2 @ k.T
        elif score == "bilinear":
            raw = q2 @ _t(p["weight"]) @ k.T
        else:
            raw = torch.tanh((q2 @ _t(p["w_query"]).T)[:, None, :] + (k @ _t(p["w_key"]).T)[None]) @ _t(p["v"])
        s = p.get("scale") if p.get("scale") is not None else 1.0
        out = None
    # weights: softmax of the masked scores, 0 for rows with nothing allowed (torch's SDPA convention)
    scores = (raw * s).masked_fill(~allowed, float("-inf"))
    w = torch.softmax(scores, -1).nan_to_num(0.0)
    if out is None:
        out = w @ v
    if single:
        return {"scores": _np(raw[0]), "weights": _np(w[0]), "output": _np(out[0])}
    return {"scores": _np(raw), "weights": _np(w), "output": _np(out)}


# ---------------------------------------------------------------------------------- LoRA, scaling

class _LoRALinear(nn.Module):
    """A frozen nn.Linear(k → d) plus trainable B (d×r) A (r×k), as in the PEFT library."""

    def __init__(self, d: int, k: int, r: int):
        super().__init__()
        self.base = nn.Linear(k, d, bias=False)
        self.base.weight.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.zeros(r, k))
        self.lora_B = nn.Parameter(torch.zeros(d, r))


def ref_lora(p: dict) -> dict:
    mods = [_LoRALinear(p["d"], p["k"], p["r"]) for _ in range(p.get("num_matrices", 1))]
    trainable = sum(q.numel() for m in mods for q in m.parameters() if q.requires_grad)
    full = sum(m.base.weight.numel() for m in mods)
    return {"trainable_params": trainable, "full_params": full, "fraction": trainable / full}


REFERENCES: dict[str, Callable[[dict], dict]] = {
    "softmax": ref_softmax, "activation": ref_activation, "cross-entropy": ref_cross_entropy,
    "dense": ref_dense, "mlp-backprop": ref_mlp_backprop, "linear-regression": ref_linear_regression,
    "conv-output-size": ref_conv_output_size, "receptive-field": ref_receptive_field, "conv2d": ref_conv2d,
    "max-pool": ref_max_pool, "rnn-cell": ref_rnn_cell, "lstm-cell": ref_lstm_cell, "gru-cell": ref_gru_cell,
    "param-count": ref_param_count, "layer-norm": ref_layer_norm, "positional-encoding": ref_positional_encoding,
    "rope": ref_rope, "attention": ref_attention, "lora": ref_lora,
}


# ------------------------------------------------------------------------------ random instances

def _m(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> list:
    return (rng.standard_normal(shape) * scale).round(6).tolist()


def _pick(rng: np.random.Generator, options: list) -> Any:
    return options[int(rng.integers(len(options)))]


def random_params(topic: str, rng: np.random.Generator) -> dict:
    """A random valid instance of a topic (sizes small, values of order 1)."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    if topic == "softmax":
        return {"logits": _m(rng, ri(2, 6), scale=3) if rng.random() < 0.5 else _m(rng, ri(1, 4), ri(2, 5), scale=3)}
    if topic == "activation":
        name = _pick(rng, ["sigmoid", "tanh", "relu", "leaky-relu", "gelu"])
        p = {"name": name, "x": _m(rng, ri(1, 6), scale=2)}
        if name == "leaky-relu":
            p["negative_slope"] = float(round(rng.uniform(0.01, 0.3), 3))
        if name == "gelu":
            p["approximate"] = _pick(rng, ["none", "tanh"])
        return p
    if topic == "cross-entropy":
        c = ri(2, 6)
        p = {"reduction": _pick(rng, ["mean", "sum", "none"]), "label_smoothing": _pick(rng, [0.0, 0.0, 0.1, 0.25])}
        if rng.random() < 0.5:
            p.update(logits=_m(rng, c, scale=2), target=ri(0, c - 1))
        else:
            n = ri(1, 4)
            p.update(logits=_m(rng, n, c, scale=2), target=[ri(0, c - 1) for _ in range(n)])
        return p
    if topic == "dense":
        i, o = ri(1, 4), ri(1, 4)
        batch = rng.random() < 0.5
        x = _m(rng, ri(1, 3), i) if batch else _m(rng, i)
        p = {"x": x, "weight": _m(rng, o, i), "bias": _m(rng, o)}
        p["grad_output"] = _m(rng, len(x), o) if batch else _m(rng, o)
        return p
    if topic == "mlp-backprop":
        i, h, c = ri(1, 4), ri(1, 4), ri(2, 4)
        return {"x": _m(rng, i), "target": ri(0, c - 1), "w1": _m(rng, h, i), "b1": _m(rng, h),
                "w2": _m(rng, c, h), "b2": _m(rng, c), "activation": _pick(rng, ["relu", "sigmoid", "tanh"])}
    if topic == "linear-regression":
        n, d = ri(1, 5), ri(1, 3)
        return {"X": _m(rng, n, d), "y": _m(rng, n), "w": _m(rng, d), "b": float(round(rng.standard_normal(), 4)),
                "lr": float(_pick(rng, [0.01, 0.1, 0.5])), "loss": _pick(rng, ["mse", "half-mse"])}
    if topic == "conv-output-size":
        op = _pick(rng, ["conv", "pool"])
        dims = ri(1, 2)
        n = [ri(10, 40) for _ in range(dims)]
        k = ri(1, 5)
        p: dict[str, Any] = {"input_size": n if dims > 1 else n[0], "kernel_size": k, "op": op, "stride": ri(1, 3),
                             "dilation": ri(1, 2)}
        if op == "pool":
            p["padding"] = ri(0, k // 2)
            p["ceil_mode"] = bool(rng.random() < 0.5)
        else:
            mode = _pick(rng, ["int", "same", "transposed"])
            if mode == "int":
                p["padding"] = ri(0, 3)
            elif mode == "same":
                p["padding"] = "same"
            else:
                p.update(transposed=True, padding=ri(0, 1), output_padding=ri(0, p["stride"] - 1))
        return p
    if topic == "receptive-field":
        return {"layers": [{"kernel_size": ri(1, 4), "stride": ri(1, 2), "dilation": ri(1, 3)} for _ in range(ri(1, 4))]}
    if topic == "conv2d":
        if rng.random() < 0.3:
            x = _m(rng, ri(5, 8))
            k = _m(rng, ri(1, 3))
        else:
            x = _m(rng, ri(5, 7), ri(5, 7))
            k = _m(rng, ri(1, 3), ri(1, 3))
        p = {"input": x, "kernel": k, "stride": ri(1, 2), "dilation": ri(1, 2), "bias": float(round(rng.standard_normal(), 3)),
             "padding": _pick(rng, [0, 1, "same", [0, 1]])}
        out = ref_conv2d(p)["output"]
        p["grad_output"] = np.round(rng.standard_normal(out.shape), 4).tolist()
        return p
    if topic == "max-pool":
        x = _m(rng, ri(4, 9)) if rng.random() < 0.3 else _m(rng, ri(3, 7), ri(3, 7))
        k = ri(1, 3)
        p = {"input": x, "kernel_size": k, "stride": ri(1, 3), "padding": ri(0, k // 2), "ceil_mode": bool(rng.random() < 0.5)}
        out = ref_max_pool(p)["output"]
        p["grad_output"] = np.round(rng.standard_normal(out.shape), 4).tolist()
        return p
    if topic in ("rnn-cell", "lstm-cell", "gru-cell"):
        g = {"rnn-cell": 1, "lstm-cell": 4, "gru-cell": 3}[topic]
        i, h = ri(1, 4), ri(1, 4)
        p = {"x": _m(rng, i), "h": _m(rng, h), "weight_ih": _m(rng, g * h, i), "weight_hh": _m(rng, g * h, h),
             "bias_ih": _m(rng, g * h), "bias_hh": _m(rng, g * h)}
        if topic == "lstm-cell":
            p["c"] = _m(rng, h)
        if topic == "gru-cell":
            p.update(convention=_pick(rng, ["lecture", "pytorch"]), reset=_pick(rng, ["after", "before"]))
        if topic == "rnn-cell":
            p["nonlinearity"] = _pick(rng, ["tanh", "relu"])
        return p
    if topic == "param-count":
        layer = _pick(rng, ["linear", "conv2d", "rnn", "lstm", "gru", "embedding", "layer-norm",
                            "multi-head-attention", "transformer-encoder-layer", "transformer-decoder-layer"])
        p = {"layer": layer, "bias": bool(rng.random() < 0.7)}
        if layer == "linear":
            p.update(in_features=ri(1, 50), out_features=ri(1, 50))
        elif layer == "conv2d":
            g = ri(1, 2)
            p.update(in_channels=g * ri(1, 4), out_channels=g * ri(1, 4), kernel_size=ri(1, 5), groups=g)
        elif layer in ("rnn", "lstm", "gru"):
            p.update(input_size=ri(1, 20), hidden_size=ri(1, 20), num_layers=ri(1, 3),
                     bidirectional=bool(rng.random() < 0.3), framework=_pick(rng, ["pytorch", "keras"]))
            if layer == "gru" and p["framework"] == "keras":
                p["reset_after"] = bool(rng.random() < 0.5)
        elif layer == "embedding":
            p = {"layer": layer, "num_embeddings": ri(1, 100), "embedding_dim": ri(1, 32)}
        elif layer == "layer-norm":
            p.update(normalized_shape=ri(1, 64))
        else:
            h = ri(1, 4)
            p.update(d_model=h * ri(1, 8), num_heads=h)
            if layer.startswith("transformer"):
                p["dim_feedforward"] = ri(1, 64)
        return p
    if topic == "layer-norm":
        d = ri(2, 6)
        x = _m(rng, d, scale=2) if rng.random() < 0.5 else _m(rng, ri(1, 3), d, scale=2)
        return {"x": x, "gamma": _m(rng, d), "beta": _m(rng, d), "eps": _pick(rng, [1e-5, 1e-6, 0.1]),
                "eps_placement": _pick(rng, ["added-to-std", "inside-sqrt"]), "variance": _pick(rng, ["biased", "unbiased"])}
    if topic == "positional-encoding":
        pos = ri(0, 100) if rng.random() < 0.5 else [ri(0, 100) for _ in range(ri(1, 4))]
        return {"position": pos, "d_model": 2 * ri(1, 8), "base": _pick(rng, [10000, 10000, 100])}
    if topic == "rope":
        d = 2 * ri(1, 4)
        if rng.random() < 0.5:
            p = {"x": _m(rng, d), "position": ri(0, 50)}
        else:
            n = ri(1, 3)
            p = {"x": _m(rng, n, d), "position": [ri(0, 50) for _ in range(n)]}
        p.update(style=_pick(rng, ["interleaved", "rotate-half"]), base=_pick(rng, [10000, 100]))
        return p
    if topic == "attention":
        n, m, dk, dv = ri(1, 4), ri(1, 4), ri(1, 4), ri(1, 3)
        score = _pick(rng, ["scaled-dot", "scaled-dot", "dot", "bilinear", "additive"])
        dq = dk if score in ("scaled-dot", "dot") else ri(1, 4)
        p = {"query": _m(rng, n, dq), "key": _m(rng, m, dk), "value": _m(rng, m, dv), "score": score}
        if rng.random() < 0.4:
            p["mask"] = rng.integers(0, 2, (n, m)).tolist()
        if rng.random() < 0.4:
            p["causal"] = True
        if rng.random() < 0.3:
            p["scale"] = float(_pick(rng, [0.5, 1.0, 2.0]))
        if score == "bilinear":
            p["weight"] = _m(rng, dq, dk)
        if score == "additive":
            da = ri(1, 3)
            p.update(w_query=_m(rng, da, dq), w_key=_m(rng, da, dk), v=_m(rng, da))
        return p
    if topic == "lora":
        return {"d": ri(1, 64), "k": ri(1, 64), "r": ri(1, 8), "num_matrices": ri(1, 4)}
    raise KeyError(topic)


# ------------------------------------------ gradient flow (issue 4: residual, BPTT, vanishing)

def _scalarise(value: np.ndarray, scalar: bool) -> Any:
    return float(value.reshape(-1)[0]) if scalar and value.size == 1 else value


def ref_residual(p: dict) -> dict:
    """y = x + F(x) by autograd: the branch's share of ∂L/∂x is the gradient of δ·F(x) alone."""
    scalar = np.ndim(p["x"]) == 0
    x = _t(np.atleast_1d(p["x"]), grad=True)
    w1 = _t(np.atleast_2d(p["w1"]), grad=True)
    b1 = _t(p["b1"] if p.get("b1") is not None else np.zeros(w1.shape[0]), grad=True)
    b1 = b1.reshape(-1).detach().requires_grad_(True)
    act = p.get("activation", "relu")
    phi = (lambda a: F.leaky_relu(a, p.get("negative_slope", 0.01))) if act == "leaky-relu" else _ACTS[act]
    two = p.get("w2") is not None
    h = phi(F.linear(x, w1, b1))
    leaves = [x, w1, b1]
    if two:
        w2 = _t(np.atleast_2d(p["w2"]), grad=True)
        b2 = _t(np.reshape(p["b2"], -1) if p.get("b2") is not None else np.zeros(w2.shape[0]), grad=True)
        branch = F.linear(h, w2, b2)
        leaves += [w2, b2]
    else:
        branch = h
    y = x + branch
    H = w1.shape[0]
    one = lambda v: _scalarise(v, scalar and H == 1)  # noqa: E731
    out = {"branch": _scalarise(_np(branch), scalar), "output": _scalarise(_np(y), scalar)}

    def forward(xx: torch.Tensor) -> torch.Tensor:
        hh = phi(F.linear(xx, w1.detach(), b1.detach()))
        return xx + (F.linear(hh, w2.detach(), b2.detach()) if two else hh)

    out["jacobian"] = _scalarise(_np(torch.autograd.functional.jacobian(forward, x.detach())), scalar)
    if p.get("grad_output") is not None:
        delta = _t(np.atleast_1d(p["grad_output"]))
        (gb,) = torch.autograd.grad(branch, x, delta, retain_graph=True)
        grads = torch.autograd.grad(y, leaves, delta)
        out.update(grad_branch=_scalarise(_np(gb), scalar), grad_input=_scalarise(_np(grads[0]), scalar),
                   grad_w1=one(_np(grads[1])), grad_b1=one(_np(grads[2])))
        if two:
            out.update(grad_w2=one(_np(grads[3])), grad_b2=_scalarise(_np(grads[4]), scalar))
    return out


def ref_residual_stack(p: dict) -> dict:
    act = p.get("activation", "tanh")
    phi = (lambda a: F.leaky_relu(a, 0.01)) if act == "leaky-relu" else _ACTS[act]
    skip = p.get("skip", True)
    w = np.reshape(p["weights"], -1)
    b = np.reshape(p["biases"], -1) if p.get("biases") is not None else np.zeros_like(w)
    x = _t(p["x"], grad=True)
    y, outs, local = x, [], []
    for wl, bl in zip(w, b):
        prev = y.detach().requires_grad_(True)
        nxt = (prev + phi(wl * prev + bl)) if skip else phi(wl * prev + bl)
        (d,) = torch.autograd.grad(nxt, prev)
        local.append(float(d))
        y = (y + phi(wl * y + bl)) if skip else phi(wl * y + bl)
        outs.append(float(y.detach()))
    (g,) = torch.autograd.grad(y, x)
    return {"outputs": np.array(outs), "local_derivatives": np.array(local), "gradient": float(g)}


def _rnn_module(n_in: int, H: int, p: dict) -> nn.RNN:
    rnn = nn.RNN(n_in, H, nonlinearity=p.get("nonlinearity", "tanh"), dtype=DTYPE)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(_t(p["weight_ih"]))
        rnn.weight_hh_l0.copy_(_t(p["weight_hh"]))
        for ours, theirs in (("bias_ih", "bias_ih_l0"), ("bias_hh", "bias_hh_l0")):
            getattr(rnn, theirs).copy_(_t(p[ours]) if p.get(ours) is not None else torch.zeros(H, dtype=DTYPE))
    return rnn


def ref_rnn_unroll(p: dict) -> dict:
    """torch.nn.RNN over the whole sequence; ∂h_T/∂h_0 by torch.autograd.functional.jacobian."""
    xs = np.asarray(p["x"], dtype=np.float64)
    xs = xs[:, None] if xs.ndim == 1 else xs
    H = np.shape(p["weight_hh"])[0]
    rnn = _rnn_module(xs.shape[1], H, p)
    x = _t(xs)[:, None, :]
    h0 = _t(p["h0"] if p.get("h0") is not None else np.zeros(H))
    last = lambda h: rnn(x, h[None, None, :])[1][0, 0]  # noqa: E731
    out = {"hidden": _np(rnn(x, h0[None, None, :])[0][:, 0, :]),
           "jacobian": _np(torch.autograd.functional.jacobian(last, h0))}
    if p.get("grad_output") is not None:
        hh = h0.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(last(hh), hh, _t(p["grad_output"]))
        out["grad_h0"] = _np(g)
    return out


def ref_vanishing_gradient(p: dict) -> dict:
    """A one-unit torch.nn.RNN; each local derivative ∂h_t/∂h_{t−1} and the whole ∂h_T/∂h_0 by autograd."""
    xs = np.reshape(p["x"], -1)
    rnn = _rnn_module(1, 1, {"weight_ih": [[p.get("u", 1.0)]], "weight_hh": [[p["w"]]], "bias_ih": [p.get("b", 0.0)],
                             "nonlinearity": p.get("nonlinearity", "tanh")})
    cell = nn.RNNCell(1, 1, nonlinearity=p.get("nonlinearity", "tanh"), dtype=DTYPE)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, name).copy_(getattr(rnn, name + "_l0"))
    h0 = _t([[[p.get("h0", 0.0)]]], grad=True)
    seq, hT = rnn(_t(xs)[:, None, None], h0)
    (g,) = torch.autograd.grad(hT.sum(), h0)
    hidden = seq[:, 0, 0].detach()
    prev = torch.cat([h0.detach().reshape(1), hidden[:-1]])
    local = []
    for xt, hp in zip(_t(xs), prev):
        hp = hp.reshape(1, 1).clone().requires_grad_(True)
        (d,) = torch.autograd.grad(cell(xt.reshape(1, 1), hp).sum(), hp)
        local.append(float(d))
    return {"hidden": _np(hidden), "local_derivatives": np.array(local), "gradient": float(g),
            "bound": abs(float(p["w"])) ** len(xs)}


REFERENCES.update({"residual": ref_residual, "residual-stack": ref_residual_stack, "rnn-unroll": ref_rnn_unroll,
                   "vanishing-gradient": ref_vanishing_gradient})


def _random_gradient_flow(topic: str, rng: np.random.Generator) -> dict:
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    if topic == "residual":
        act = _pick(rng, ["relu", "tanh", "sigmoid", "leaky-relu"])
        if rng.random() < 0.25:                        # one feature: numbers in and out
            p = {"x": float(_m(rng, 1)[0]), "w1": float(_m(rng, 1)[0]), "b1": _m(rng, 1)}
        else:
            d = ri(1, 3)
            two = rng.random() < 0.6
            H = ri(1, 4) if two else d
            p = {"x": _m(rng, d), "w1": _m(rng, H, d), "b1": _m(rng, H)}
            if two:
                p.update(w2=_m(rng, d, H), b2=_m(rng, d))
        p["activation"] = act
        p["grad_output"] = float(_m(rng, 1)[0]) if np.ndim(p["x"]) == 0 else _m(rng, len(p["x"]))
        return p
    if topic == "residual-stack":
        L = ri(1, 6)
        return {"x": float(_m(rng, 1)[0]), "weights": _m(rng, L), "biases": _m(rng, L, scale=0.5),
                "activation": _pick(rng, ["tanh", "sigmoid", "relu"]), "skip": bool(rng.random() < 0.5)}
    if topic == "rnn-unroll":
        T, n_in, H = ri(1, 5), ri(1, 3), ri(1, 3)
        p = {"x": _m(rng, T, n_in), "weight_ih": _m(rng, H, n_in), "weight_hh": _m(rng, H, H), "bias_ih": _m(rng, H),
             "bias_hh": _m(rng, H), "nonlinearity": _pick(rng, ["tanh", "relu"]), "grad_output": _m(rng, H)}
        if rng.random() < 0.7:
            p["h0"] = _m(rng, H)
        return p
    if topic == "vanishing-gradient":
        T = ri(1, 12)
        return {"w": float(_m(rng, 1, scale=1.5)[0]), "x": _m(rng, T), "u": float(_m(rng, 1)[0]),
                "h0": float(_m(rng, 1)[0]), "b": float(_m(rng, 1, scale=0.3)[0]),
                "nonlinearity": _pick(rng, ["tanh", "relu"])}
    raise KeyError(topic)


_GRADIENT_FLOW_TOPICS = ("residual", "residual-stack", "rnn-unroll", "vanishing-gradient")
_random_params_before_gradient_flow = random_params


def random_params(topic: str, rng: np.random.Generator) -> dict:  # noqa: F811  (extends the one above)
    """A random valid instance of a topic (sizes small, values of order 1)."""
    if topic in _GRADIENT_FLOW_TOPICS:
        return _random_gradient_flow(topic, rng)
    return _random_params_before_gradient_flow(topic, rng)


# ------------------------------------------ Transformer bookkeeping (issue 4, Transformer half)

_DTYPE_OF_BYTES = {2: torch.bfloat16, 4: torch.float32, 8: torch.float64}


def ref_multi_head_shapes(p: dict) -> dict:
    """Runs torch.nn.MultiheadAttention on the meta device (shapes only, so long sequences cost nothing):
    shapes from its tensors, multiply-adds from torch's FlopCounterMode (FLOPs / 2), memory from the
    attention-weight tensor in the asked dtype."""
    from torch.utils.flop_counter import FlopCounterMode

    n, d, h = p["n"], p["d_model"], p["num_heads"]
    m, b = p.get("m") or n, p.get("batch", 1)
    mha = nn.MultiheadAttention(d, h, batch_first=True, dtype=DTYPE, device="meta")
    x, z = torch.zeros(b, n, d, dtype=DTYPE, device="meta"), torch.zeros(b, m, d, dtype=DTYPE, device="meta")
    with FlopCounterMode(display=False) as fc:
        out, w = mha(x, z, z, need_weights=True, average_attn_weights=False)       # w: (b, h, n, m)
    counts = {str(k): v for k, v in fc.get_flop_counts()["Global"].items()}
    dk = mha.head_dim
    q_heads = F.linear(x, mha.in_proj_weight[:d]).reshape(b, n, h, dk).transpose(1, 2)   # (b, h, n, d_k)
    k_heads = F.linear(z, mha.in_proj_weight[d:2 * d]).reshape(b, m, h, dk).transpose(1, 2)
    with FlopCounterMode(display=False) as one:
        q_heads[0, 0] @ k_heads[0, 0].T
    per_head = one.get_total_flops() // 2
    with FlopCounterMode(display=False) as scores:
        q_heads @ k_heads.transpose(-1, -2)
    score_macs = scores.get_total_flops() // 2
    w_typed = w.to(_DTYPE_OF_BYTES[p.get("bytes_per_value", 4)])
    return {"d_k": dk, "query_shape": list(q_heads.shape[-2:]), "key_shape": list(k_heads.shape[-2:]),
            "value_shape": list(k_heads.shape[-2:]), "scores_shape": list(w.shape[-2:]),
            "head_output_shape": [n, dk], "output_shape": list(out.shape[1:]),
            "score_macs_per_head": per_head, "score_macs": score_macs,
            "weighted_sum_macs": counts["aten.bmm"] // 2 - score_macs,
            "projection_macs": (counts.get("aten.mm", 0) + counts.get("aten.addmm", 0)) // 2,
            "score_entries": w_typed.numel(), "score_bytes": w_typed.numel() * w_typed.element_size(),
            "score_mib": w_typed.numel() * w_typed.element_size() / 2 ** 20}


def ref_cross_attention(p: dict) -> dict:
    """Projections by torch (x @ W, or F.linear as nn.Linear), attention by scaled_dot_product_attention;
    the weights are SDPA applied to the identity as values."""
    x, z = _t(p["decoder_states"]), _t(p["encoder_output"])
    proj = (lambda a, w: a @ _t(w)) if p.get("layout", "x-w") == "x-w" else (lambda a, w: F.linear(a, _t(w)))
    q, k, v = proj(x, p["w_query"]), proj(z, p["w_key"]), proj(z, p["w_value"])
    mask = None if p.get("mask") is None else _t(p["mask"]).bool()
    sdpa = lambda values: F.scaled_dot_product_attention(q[None], k[None], values[None], attn_mask=mask,  # noqa: E731
                                                         scale=p.get("scale"))[0].nan_to_num(0.0)
    return {"query": _np(q), "key": _np(k), "value": _np(v), "scores": _np(q @ k.T),
            "weights": _np(sdpa(torch.eye(k.shape[0], dtype=DTYPE))), "output": _np(sdpa(v))}


def ref_causal_mask(p: dict) -> dict:
    """torch's CausalBias (causal_upper_left = is_causal, causal_lower_right) given to
    scaled_dot_product_attention with q = scores, k = v = I, so that q kᵀ = scores and the output
    is the weight matrix."""
    from torch.nn.attention.bias import causal_lower_right, causal_upper_left

    s = _t(p["scores"])
    s = s[None] if s.ndim == 1 else s
    n, m = s.shape
    bias = (causal_upper_left if p.get("alignment", "top-left") == "top-left" else causal_lower_right)(n, m)
    eye = torch.eye(m, dtype=DTYPE)[None]
    weights = F.scaled_dot_product_attention(s[None], eye, eye, attn_mask=bias, scale=p.get("scale", 1.0))[0]
    allowed = bias._materialize()
    return {"allowed": _np(allowed.long()), "weights": _np(weights.nan_to_num(0.0)),
            "masked_count": int((~allowed).sum())}


def ref_rope_score(p: dict) -> dict:
    common = {"base": p.get("base", 10000.0), "style": p.get("style", "interleaved")}
    q = torch.tensor(ref_rope({"x": p["query"], "position": p["position_query"], **common})["output"])
    k = torch.tensor(ref_rope({"x": p["key"], "position": p["position_key"], **common})["output"])
    return {"query_rotated": _np(q), "key_rotated": _np(k), "score": float(q @ k)}


def ref_positional_encoding_relative(p: dict) -> dict:
    pos, k, d, base = p["position"], p["offset"], p["d_model"], p.get("base", 10000.0)
    table = torch.tensor(ref_positional_encoding({"position": [pos, pos + k], "d_model": d, "base": base})["encoding"])
    div_term = torch.exp(torch.arange(0, d, 2, dtype=DTYPE) * -(math.log(base) / d))
    return {"encoding": _np(table[0]), "shifted": _np(table[1]), "dot": float(table[0] @ table[1]),
            "wavelengths": _np(2 * math.pi / div_term)}


def _training_bytes(params: list, optimizer: str) -> int:
    """One real optimizer step, then the bytes of every gradient and optimizer state kept for ``params``."""
    if optimizer == "adam":
        opt = torch.optim.Adam(params, lr=1e-3)
    else:
        opt = torch.optim.SGD(params, lr=1e-3, momentum=0.9 if optimizer == "sgd-momentum" else 0.0)
    sum(q.float().square().sum() for q in params).backward()
    opt.step()
    total = 0
    for q in params:
        total += q.grad.numel() * q.grad.element_size()
        for state in opt.state[q].values():
            if torch.is_tensor(state) and state.shape == q.shape:    # not Adam's scalar step counter
                total += state.numel() * state.element_size()
    return total


def ref_lora_memory(p: dict) -> dict:
    """PEFT-style modules in the asked dtype; the bytes are measured after a real optimizer step."""
    dtype = _DTYPE_OF_BYTES[p.get("bytes_per_value", 4)]
    opt = p.get("optimizer", "adam")
    mods = [_LoRALinear(p["d"], p["k"], p["r"]).to(dtype) for _ in range(p.get("num_matrices", 1))]
    trainable = [q for mod in mods for q in mod.parameters() if q.requires_grad]
    full = [nn.Parameter(mod.base.weight.detach().clone()) for mod in mods]
    n_train, n_full = sum(q.numel() for q in trainable), sum(q.numel() for q in full)
    full_bytes, lora_bytes = _training_bytes(full, opt), _training_bytes(trainable, opt)
    return {"trainable_params": n_train, "full_params": n_full, "fraction": n_train / n_full,
            "full_training_bytes": full_bytes, "lora_training_bytes": lora_bytes, "saved_bytes": full_bytes - lora_bytes,
            "saved_mib": (full_bytes - lora_bytes) / 2 ** 20}


REFERENCES.update({"multi-head-shapes": ref_multi_head_shapes, "cross-attention": ref_cross_attention,
                   "causal-mask": ref_causal_mask, "rope-score": ref_rope_score,
                   "positional-encoding-relative": ref_positional_encoding_relative, "lora-memory": ref_lora_memory})

_random_params_before_transformer = random_params


def random_params(topic: str, rng: np.random.Generator) -> dict:  # noqa: F811  (extends the one above)
    """A random valid instance of a topic, including the Transformer-bookkeeping topics."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    if topic == "multi-head-shapes":
        h = ri(1, 4)
        p = {"n": ri(1, 6), "d_model": h * ri(1, 4), "num_heads": h, "batch": ri(1, 3),
             "bytes_per_value": _pick(rng, [2, 4, 8])}
        if rng.random() < 0.5:
            p["m"] = ri(1, 6)
        return p
    if topic == "cross-attention":
        n, m, dd, de, dk, dv = ri(1, 4), ri(1, 4), ri(1, 4), ri(1, 4), ri(1, 4), ri(1, 3)
        layout = _pick(rng, ["x-w", "linear"])
        shape = (lambda a, b: (a, b)) if layout == "x-w" else (lambda a, b: (b, a))
        p = {"decoder_states": _m(rng, n, dd), "encoder_output": _m(rng, m, de), "w_query": _m(rng, *shape(dd, dk)),
             "w_key": _m(rng, *shape(de, dk)), "w_value": _m(rng, *shape(de, dv)), "layout": layout}
        if rng.random() < 0.4:
            p["mask"] = rng.integers(0, 2, (n, m)).tolist()
        if rng.random() < 0.3:
            p["scale"] = float(_pick(rng, [0.5, 1.0, 2.0]))
        return p
    if topic == "causal-mask":
        n = ri(1, 5)
        m = n if rng.random() < 0.5 else ri(n, 6)
        return {"scores": _m(rng, n, m, scale=2), "alignment": _pick(rng, ["top-left", "bottom-right"]),
                "scale": float(_pick(rng, [1.0, 1.0, 0.5]))}
    if topic == "rope-score":
        d = 2 * ri(1, 4)
        return {"query": _m(rng, d), "key": _m(rng, d), "position_query": ri(0, 50), "position_key": ri(0, 50),
                "style": _pick(rng, ["interleaved", "rotate-half"]), "base": _pick(rng, [10000, 100])}
    if topic == "positional-encoding-relative":
        pos = ri(0, 100)
        return {"position": pos, "offset": ri(-pos, 50), "d_model": 2 * ri(1, 8), "base": _pick(rng, [10000, 10000, 100])}
    if topic == "lora-memory":
        return {"d": ri(1, 48), "k": ri(1, 48), "r": ri(1, 8), "num_matrices": ri(1, 3),
                "bytes_per_value": _pick(rng, [2, 4, 8]), "optimizer": _pick(rng, ["adam", "sgd-momentum", "sgd"])}
    return _random_params_before_transformer(topic, rng)
