"""Torch reference of network tables: the real torch.nn layers run on one example, their parameters
counted as sum(p.numel()) and their multiply–accumulates by torch's FLOP counter (FLOPs / 2)."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from examprep.verify._torch import DTYPE, Reference, pick, tf_same


class _Table(nn.Module):
    """A partially connected conv (LeNet-5's C3): one single-map nn.Conv2d per output map on its table's channels."""

    def __init__(self, layer: dict, x: torch.Tensor):
        super().__init__()
        self.rows = layer["connection_table"]
        self.convs = nn.ModuleList(nn.Conv2d(len(r), 1, layer["kernel_size"], layer.get("stride", 1),
                                             layer.get("padding", 0), bias=layer.get("bias", True), dtype=DTYPE)
                                   for r in self.rows)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([conv(x[list(r)]) for conv, r in zip(self.convs, self.rows)], dim=0)


class _LocallyConnected(nn.Module):
    """Keras's LocallyConnected2D (valid padding): an unshared kernel and bias at each output position,
    on torch's unfold."""

    def __init__(self, layer: dict, x: torch.Tensor):
        super().__init__()
        k, s = layer["kernel_size"], layer.get("stride", 1)
        self.k, self.s = (k, k) if isinstance(k, int) else tuple(k), s
        oh, ow = ((x.shape[j + 1] - self.k[j]) // s + 1 for j in range(2))
        self.out = (layer["out_channels"], oh, ow)
        self.weight = nn.Parameter(torch.zeros(oh * ow, layer["out_channels"], x.shape[0] * self.k[0] * self.k[1],
                                               dtype=DTYPE))
        self.bias = nn.Parameter(torch.zeros(self.out, dtype=DTYPE)) if layer.get("bias", True) else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cols = nn.functional.unfold(x[None], self.k, stride=self.s)[0].T[:, :, None]     # positions × C·k·k × 1
        y = torch.bmm(self.weight, cols)[:, :, 0].T.reshape(self.out)
        return y if self.bias is None else y + self.bias


def _module(layer: dict, x: torch.Tensor) -> nn.Module:
    kind = layer["type"]
    if kind == "conv2d" and "connection_table" in layer:
        return _Table(layer, x)
    if kind == "locally-connected":
        return _LocallyConnected(layer, x)
    if kind == "conv2d":
        k = layer["kernel_size"]
        k = (k, k) if isinstance(k, int) else tuple(k)
        s = layer.get("stride", 1)
        s = (s, s) if isinstance(s, int) else tuple(s)
        padding = layer.get("padding", 0)
        conv = nn.Conv2d(x.shape[0], layer["out_channels"], k, s, 0 if isinstance(padding, str) else padding,
                         layer.get("dilation", 1), layer.get("groups", 1), layer.get("bias", True), dtype=DTYPE)
        if padding == "same":       # TensorFlow's rule, as the contract says (not torch's padding="same")
            d = layer.get("dilation", 1)
            d = (d, d) if isinstance(d, int) else tuple(d)
            ph, pw = tf_same(x.shape[1], k[0], s[0], d[0]), tf_same(x.shape[2], k[1], s[1], d[1])
            return nn.Sequential(nn.ZeroPad2d((*pw, *ph)), conv)
        return conv
    if kind in ("max-pool", "avg-pool"):
        cls = nn.MaxPool2d if kind == "max-pool" else nn.AvgPool2d
        return cls(layer["kernel_size"], layer.get("stride"), layer.get("padding", 0), ceil_mode=layer.get("ceil_mode", False))
    if kind == "global-avg-pool":
        return nn.AdaptiveAvgPool2d(1)
    if kind == "batch-norm":
        return (nn.BatchNorm2d if x.ndim == 3 else nn.BatchNorm1d)(x.shape[0], dtype=DTYPE).eval()
    if kind == "flatten":
        return nn.Flatten(0)
    if kind == "linear":
        return nn.Linear(x.shape[0], layer["out_features"], layer.get("bias", True), dtype=DTYPE)
    return {"relu": nn.ReLU(), "sigmoid": nn.Sigmoid(), "tanh": nn.Tanh(), "dropout": nn.Dropout()}[kind].eval()


_DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
           "int8": torch.int8}


def _mult_adds(m: nn.Module, kind: str, out: torch.Tensor) -> int:
    """torchinfo's mult-adds of one module, from its parameters: a conv's every parameter once per output
    position, a linear layer's and batch norm's every parameter once (torchinfo's calculate_macs)."""
    n = sum(q.numel() for q in m.parameters())
    return n * out.shape[1] * out.shape[2] if kind == "conv2d" else n


def ref_network_shapes(p: dict) -> dict:
    """The network run with torch modules, a graph's merges as torch.add and torch.cat over the channels."""
    x0 = torch.zeros(p["input_shape"], dtype=DTYPE)
    outs: dict[str, torch.Tensor] = {"input": x0}
    x = x0
    shapes, params, macs, adds, sizes = [], [], [], [], []
    for i, layer in enumerate(p["layers"]):
        if "inputs" in layer:
            xs = [outs[n] for n in ([layer["inputs"]] if isinstance(layer["inputs"], str) else layer["inputs"])]
            x = xs[0]
        m = None
        if layer["type"] == "add":
            x = torch.stack(xs).sum(0)
        elif layer["type"] == "concat":
            x = torch.cat(xs, dim=0)
        else:
            m = _module(layer, x)
            with FlopCounterMode(display=False) as counter:
                x = m(x[None])[0] if layer["type"] == "batch-norm" else m(x)
        outs[layer.get("name", f"#{i}")] = x
        shapes.append(list(x.shape))
        sizes.append(x.numel())
        count = sum(q.numel() for q in m.parameters()) if m is not None else 0
        if layer["type"] == "batch-norm" and p.get("framework", "pytorch") == "keras":
            count += sum(b.numel() for name, b in m.named_buffers() if name.startswith("running_"))
        params.append(count)
        macs.append(counter.get_total_flops() // 2 if layer["type"] in ("conv2d", "linear", "locally-connected") else 0)
        adds.append(_mult_adds(m, layer["type"], x) if layer["type"] in ("conv2d", "linear", "batch-norm") else
                    macs[-1] + (x.numel() if layer.get("bias", True) else 0) if layer["type"] == "locally-connected" else 0)
    convention = p.get("flops_convention", "macs")
    flops = {"macs": macs, "2macs": [2 * v for v in macs], "macs+bias": adds}[convention]
    batch = p.get("batch_size", 1)
    width = torch.empty((), dtype=_DTYPES[p.get("dtype", "float32")]).element_size()
    counts = [batch * n for n in sizes]
    total = sum(counts) + (batch * x0.numel() if p.get("count_input", True) else 0)
    return {"output_shapes": shapes, "params": params, "total_params": sum(params), "macs": macs, "total_macs": sum(macs),
            "flops": flops, "total_flops": sum(flops), "activation_count": counts,
            "activation_bytes": [width * c for c in counts], "total_activation_count": total,
            "total_activation_bytes": width * total, "training_activation_bytes": 2 * width * total}


def random_network_shapes(rng: np.random.Generator) -> dict:
    """A random valid CNN: conv/pool/norm/activation blocks, then flatten and linear layers."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    size = ri(12, 32)
    layers: list[dict] = []
    for _ in range(ri(1, 3)):
        k = ri(1, 5)
        conv = {"type": "conv2d", "out_channels": ri(1, 8), "kernel_size": k, "stride": ri(1, 2),
                "padding": pick(rng, [0, k // 2, "same"]), "bias": bool(rng.random() < 0.8)}
        layers.append(conv)
        layers += [{"type": "batch-norm"}] if rng.random() < 0.4 else []
        layers.append({"type": pick(rng, ["relu", "tanh", "sigmoid"])})
        if rng.random() < 0.6:
            layers.append({"type": pick(rng, ["max-pool", "avg-pool"]), "kernel_size": 2})
    if rng.random() < 0.3:             # a locally connected layer, or a partial connection table (LeNet's C3)
        layers.append({"type": "locally-connected", "out_channels": ri(1, 4), "kernel_size": ri(1, 3),
                       "stride": ri(1, 2), "bias": bool(rng.random() < 0.7)})
    elif rng.random() < 0.3:
        c_in = next(L["out_channels"] for L in reversed(layers) if L["type"] == "conv2d")
        layers.append({"type": "conv2d", "out_channels": (c := ri(1, 4)), "kernel_size": ri(1, 3), "padding": ri(0, 1),
                       "connection_table": [sorted({int(v) for v in rng.integers(0, c_in, ri(1, c_in))}) for _ in range(c)]})
    layers.append(pick(rng, [{"type": "flatten"}, {"type": "global-avg-pool"}]))
    if layers[-1]["type"] == "global-avg-pool":
        layers.append({"type": "flatten"})
    layers += [{"type": "dropout"}] if rng.random() < 0.3 else []
    layers.append({"type": "linear", "out_features": ri(2, 10)})
    if rng.random() < 0.4:             # a graph: a residual or a concat block after the first conv block
        c = ri(2, 6)
        block = [{"type": "conv2d", "out_channels": c, "kernel_size": 1, "name": "stem"},
                 {"type": "conv2d", "out_channels": c if rng.random() < 0.5 else ri(1, 4), "kernel_size": 3,
                  "padding": 1, "name": "branch"}, {"type": "relu", "name": "act"}]
        merge = "add" if block[1]["out_channels"] == c and rng.random() < 0.6 else "concat"
        block.append({"type": merge, "inputs": ["stem", "act"], "name": "merge"})
        layers = block + layers
    p = {"input_shape": [ri(1, 3), size, size], "layers": layers, "framework": pick(rng, ["pytorch", "pytorch", "keras"]),
         "flops_convention": pick(rng, ["macs", "2macs", "macs+bias"]), "dtype": pick(rng, ["float32", "float16", "float64"]),
         "batch_size": ri(1, 4), "count_input": bool(rng.random() < 0.7)}
    try:
        ref_network_shapes(p)
    except RuntimeError:             # a window larger than what is left: draw again
        return random_network_shapes(rng)
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "network-shapes": Reference(ref_network_shapes, random_network_shapes),
}
