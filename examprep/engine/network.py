"""A network's layer-by-layer output shapes, parameters and multiply-accumulates (the exam's fill-in table)."""
from __future__ import annotations

import math

from examprep.engine._core import Trace, boolean, choice, int_tuple, integer, number
from examprep.engine.conv import pool_output_size, same_padding
from examprep.errors import ParamError, ShapeError

LAYER_TYPES = ("conv2d", "max-pool", "avg-pool", "global-avg-pool", "batch-norm", "relu", "sigmoid", "tanh",
               "dropout", "flatten", "linear", "add", "concat", "locally-connected")
MERGES = ("add", "concat")            # layers that read two or more named inputs (a residual sum, a channel concat)
FLOPS_CONVENTIONS = ("macs", "2macs", "macs+bias")
DTYPE_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}
TRAINING_CONVENTIONS = ("cs231n",)
_KEYS = {
    "conv2d": {"out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "bias", "connection_table"},
    "locally-connected": {"out_channels", "kernel_size", "stride", "bias"},
    "max-pool": {"kernel_size", "stride", "padding", "dilation", "ceil_mode"},
    "avg-pool": {"kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"},
    "linear": {"out_features", "bias"},
    "dropout": {"p"},
}


def _int(where: str, key: str, value, minimum: int) -> int:
    """integer(f"{where}.{key}", …), the name written only when the value is wrong: a table of
    eighteen layers builds ~100 such names per call, and mistakes call it a dozen times a problem."""
    if type(value) is int and value >= minimum:
        return value
    return integer(f"{where}.{key}", value, minimum)


def _pair(where: str, key: str, value, minimum: int) -> tuple[int, ...]:
    """int_tuple(f"{where}.{key}", value, 2, minimum), the name written only when needed."""
    if type(value) is int and value >= minimum:
        return (value, value)
    return int_tuple(f"{where}.{key}", value, 2, minimum=minimum)


def _bool(where: str, key: str, value) -> bool:
    if value is True or value is False:
        return value
    return boolean(f"{where}.{key}", value)


def _inputs(where: str, layer: dict, i: int, index: dict[str, int]) -> list[int | None]:
    """The layers a layer reads, as indices into shapes (None: the network's input). No "inputs": the
    layer before (a chain); "inputs": names of earlier layers, or "input"."""
    kind = layer["type"]
    if "inputs" not in layer:
        if kind in MERGES:
            raise ParamError(f"{where}: needs \"inputs\", the names of the two or more layers it merges")
        return [i - 1 if i else None]
    names = layer["inputs"]
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, (list, tuple)) or not names or not all(isinstance(n, str) for n in names):
        raise ParamError(f"{where}.inputs: expected a list of layer names (or \"input\"), got {names!r}")
    if kind in MERGES and len(names) < 2:
        raise ParamError(f"{where}.inputs: {kind} merges two or more layers, got {len(names)}")
    if kind not in MERGES and len(names) != 1:
        raise ParamError(f"{where}.inputs: a {kind} layer reads one input, got {len(names)}")
    out = []
    for n in names:
        if n == "input":
            out.append(None)
        elif index.get(n, -1) >= 0:
            out.append(index[n])
        elif n in index:
            raise ParamError(f"{where}.inputs: {n!r} names two layers; give them different names")
        else:
            raise ParamError(f"{where}.inputs: {n!r} names no earlier layer (the names so far: "
                             f"{', '.join(['input', *index]) or 'input'})")
    return out


def _table(where: str, table, c_in: int, c_out: int, groups: int) -> list[int]:
    """A partial connection table (LeNet-5's C3): for each output map, the input channels it reads.
    Returns how many each reads."""
    if groups != 1:
        raise ParamError(f"{where}: connection_table and groups do not go together")
    if not isinstance(table, (list, tuple)) or len(table) != c_out:
        raise ParamError(f"{where}.connection_table: expected {c_out} lists (one per output map) of input channels")
    reads = []
    for o, row in enumerate(table):
        if (not isinstance(row, (list, tuple)) or not row or len(set(row)) != len(row)
                or not all(type(c) is int and 0 <= c < c_in for c in row)):
            raise ParamError(f"{where}.connection_table[{o}]: expected distinct input channels in 0..{c_in - 1}, got {row!r}")
        reads.append(len(row))
    return reads


def _merge(where: str, kind: str, shapes: list[list[int]]) -> list[int]:
    """add: every input the same shape; concat: the same but for the channel axis (dim 0), channels summed."""
    text = ", ".join("[" + ", ".join(map(str, s)) + "]" for s in shapes)
    if kind == "add":
        if any(s != shapes[0] for s in shapes):
            raise ShapeError(f"{where}: add needs inputs of one shape, got {text}")
        return list(shapes[0])
    if any(len(s) != len(shapes[0]) or s[1:] != shapes[0][1:] for s in shapes):
        raise ShapeError(f"{where}: concat joins along the channels; the other sizes must agree, got {text}")
    return [sum(s[0] for s in shapes)] + list(shapes[0][1:])


def network_shapes(input_shape, layers, *, framework: str = "pytorch", count_input_channels: bool = True,
                   padding_sides: int = 2, flops_convention: str = "macs", dtype: str = "float32",
                   batch_size: int = 1, count_input: bool = True, training_convention: str = "cs231n") -> Trace:
    """Output shape, parameter count and multiply–accumulates of each layer of a CNN/MLP.

    input_shape: [C, H, W] (one example, PyTorch's channels-first layout), or [F] for an MLP.
    layers: a list of {"type": …} objects, PyTorch's modules and argument names:
      conv2d {out_channels, kernel_size, stride (1), padding (0, [h, w] or "same" as TensorFlow),
              dilation (1), groups (1), bias (true)}:  out = ⌊(n + 2p − d(k − 1) − 1)/s⌋ + 1,
              params C_out·(C_in/groups)·kH·kW (+ C_out), MACs = output elements · (C_in/groups)·kH·kW
      max-pool, avg-pool {kernel_size, stride (= kernel_size), padding (0, or "same" as TensorFlow),
              ceil_mode (false)}: no
              parameters; "global-avg-pool" → [C, 1, 1] (torch.nn.AdaptiveAvgPool2d(1))
      batch-norm: 2C parameters (γ, β) on [C, H, W], 2F after flatten or linear; framework "keras"
              counts its moving mean and variance too, 4C, as Keras's model summary total does
      relu, sigmoid, tanh, dropout: shape unchanged, no parameters
      flatten → [C·H·W];  linear {out_features, bias (true)} on [F]: params F·out (+ out), MACs F·out
      conv2d's connection_table: for each output map the input channels it reads (LeNet-5's C3: 1,516
              parameters); params Σ|row|·kH·kW (+ C_out), MACs output positions · Σ|row|·kH·kW
      locally-connected {out_channels, kernel_size, stride (1), bias (true)}: Keras's LocallyConnected2D,
              valid padding, an unshared kernel and bias at each output position: o_h·o_w·(C_out·C_in·kH·kW + C_out)
      add {inputs: [names]} → the common shape of its inputs (a residual sum; no parameters, no MACs)
      concat {inputs: [names]} → the inputs joined along the channels (DenseNet, Inception): C = ΣC_i
    A graph: a layer reads the layer before it (the chain form), or the layers its "inputs" names (each
    an earlier layer's "name", or "input" for the network's input); the network's output is the last layer.
    flops_convention: "macs" (flops = MACs), "2macs" (a multiply and an add each: 2·MACs), "macs+bias"
    (torchinfo's mult-adds: a conv's (weights + bias)·H_out·W_out, a linear layer's weights + bias, batch
    norm's 2C; others 0).
    Activation memory (the values a layer outputs): activation_count = batch_size · output elements per
    layer; total_activation_count adds them (and the input, count_input true, as the CS231n notes count
    VGG's memory); activation_bytes = count · bytes of dtype; training_activation_bytes under the
    training_convention "cs231n": every output kept for backward and a gradient of the same size, 2× the
    forward total ("only forward! ~*2 for bwd").
    Mistaken methods a misconception needs (the defaults are right): count_input_channels false gives a
    conv kernel C_out·kH·kW weights (the input channels forgotten); padding_sides 1 counts a conv's
    padding on one side only, out = ⌊(n + p − d(k − 1) − 1)/s⌋ + 1.
    Returns output_shapes (after each layer), params, macs, flops, activation_count, activation_bytes
    (per layer), their totals (total_params, total_macs, total_flops, total_activation_count,
    total_activation_bytes), training_activation_bytes, layer_names ("conv2d 1", …) for a worked table and
    input_shapes (the shapes each layer reads).
    Raises ParamError/ShapeError naming the layer (its index and type) whose options are wrong or
    whose output would have no size.
    """
    framework = choice("framework", framework, ("pytorch", "keras"))
    flops_convention = choice("flops_convention", flops_convention, FLOPS_CONVENTIONS)
    value_bytes = DTYPE_BYTES[choice("dtype", dtype, tuple(DTYPE_BYTES))]
    batch_size = integer("batch_size", batch_size, 1)
    count_input = boolean("count_input", count_input)
    choice("training_convention", training_convention, TRAINING_CONVENTIONS)
    count_input_channels = boolean("count_input_channels", count_input_channels)
    if padding_sides not in (1, 2):
        raise ParamError(f"padding_sides: expected 1 or 2, got {padding_sides!r}")
    if not isinstance(input_shape, (list, tuple)) or len(input_shape) not in (1, 3):
        raise ShapeError(f"input_shape: expected [C, H, W] (or [F] for an MLP), got {input_shape!r}")
    first = [integer(f"input_shape[{i}]", v, 1) for i, v in enumerate(input_shape)]
    if not isinstance(layers, (list, tuple)) or not layers:
        raise ParamError("layers: expected a non-empty list of {\"type\": …} objects")
    shapes, params, macs, flops, names, read = [], [], [], [], [], []
    counter: dict[str, int] = {}
    index: dict[str, int] = {}
    for i, layer in enumerate(layers):
        if not isinstance(layer, dict) or "type" not in layer:
            raise ParamError(f"layers[{i}]: expected an object with a \"type\" ({', '.join(LAYER_TYPES)}), got {layer!r}")
        kind = layer["type"]
        if type(kind) is not str or kind not in LAYER_TYPES:
            kind = choice(f"layers[{i}].type", kind, LAYER_TYPES)
        where = f"layers[{i}] ({kind})"
        unknown = set(layer) - {"type", "name", "inputs"} - _KEYS.get(kind, set())
        if unknown:
            allowed = sorted(_KEYS.get(kind, set()))
            raise ParamError(f"{where}: unknown option {sorted(unknown)[0]!r}"
                             + (f" (it takes {', '.join(allowed)})" if allowed else " (it takes no options)"))
        counter[kind] = counter.get(kind, 0) + 1
        names.append(layer.get("name") or f"{kind} {counter[kind]}")
        if names[-1] == "input":
            raise ParamError(f"{where}: the name \"input\" is the network's input; name the layer otherwise")
        sources = _inputs(where, layer, i, index)
        index[names[-1]] = -1 if names[-1] in index else i      # a name two layers share is no input
        read.append([list(first) if j is None else list(shapes[j]) for j in sources])
        shape = read[-1][0]
        n_params = n_macs = n_extra = 0
        if kind in MERGES:
            shape = _merge(where, kind, read[-1])
        if kind in ("conv2d", "locally-connected", "max-pool", "avg-pool", "global-avg-pool"):
            if len(shape) != 3:
                raise ShapeError(f"{where}: expects a C×H×W input, got [{', '.join(map(str, shape))}] "
                                 "(it comes after a flatten or linear layer)")
        if kind in ("conv2d", "locally-connected"):
            c_in = shape[0]
            for key in ("out_channels", "kernel_size"):
                if key not in layer:
                    raise ParamError(f"{where}: missing {key}")
            c_out = _int(where, "out_channels", layer["out_channels"], 1)
            k = _pair(where, "kernel_size", layer["kernel_size"], 1)
            s = _pair(where, "stride", layer.get("stride", 1), 1)
            d = _pair(where, "dilation", layer.get("dilation", 1), 1)
            groups = _int(where, "groups", layer.get("groups", 1), 1)
            bias = _bool(where, "bias", layer.get("bias", True))
            if c_in % groups or c_out % groups:
                raise ParamError(f"{where}: groups {groups} must divide the input channels ({c_in}) and out_channels "
                                 f"({c_out})")
            padding = layer.get("padding", 0)
            out_hw = []
            if isinstance(padding, str):
                padding = choice(f"{where}.padding", padding, ("same", "valid"))
                if padding == "same":
                    out_hw = [same_padding(shape[j + 1], k[j], s[j], d[j])[0] for j in range(2)]
                else:
                    padding = 0
            if not out_hw:
                p = _pair(where, "padding", padding, 0)
                for j in range(2):
                    eff = d[j] * (k[j] - 1) + 1
                    span = shape[j + 1] + padding_sides * p[j]
                    if eff > span:
                        size = f"{k[j]}" + (f", {eff} with dilation {d[j]}" if d[j] > 1 else "")
                        raise ShapeError(f"{where}: the kernel ({size}) is larger than its padded input ({span}): "
                                         "the output would be empty")
                    out_hw.append((span - eff) // s[j] + 1)
            per_out = ((c_in // groups) if count_input_channels else 1) * k[0] * k[1]
            reads = [c_in // groups] * c_out        # the input channels each output map reads
            if "connection_table" in layer:
                reads = _table(where, layer["connection_table"], c_in, c_out, groups)
                per_out = sum(reads) // c_out if count_input_channels else k[0] * k[1]
            n_params = (sum(reads) * k[0] * k[1] if count_input_channels else c_out * per_out) + (c_out if bias else 0)
            shape = [c_out] + out_hw
            n_macs = out_hw[0] * out_hw[1] * sum(reads) * k[0] * k[1]
            n_extra = c_out * out_hw[0] * out_hw[1] if bias else 0      # torchinfo: the bias's adds
            if kind == "locally-connected":        # Keras's LocallyConnected2D: weights (and a bias) per position
                n_params = out_hw[0] * out_hw[1] * n_params
        elif kind in ("max-pool", "avg-pool"):
            if "kernel_size" not in layer:
                raise ParamError(f"{where}: missing kernel_size")
            k = _pair(where, "kernel_size", layer["kernel_size"], 1)
            s = _pair(where, "stride", layer.get("stride", list(k)), 1)
            d = _pair(where, "dilation", layer.get("dilation", 1), 1)
            ceil_mode = _bool(where, "ceil_mode", layer.get("ceil_mode", False))
            if "count_include_pad" in layer:
                boolean(f"{where}.count_include_pad", layer["count_include_pad"])
            padding = layer.get("padding", 0)
            if isinstance(padding, str):
                padding = choice(f"{where}.padding", padding, ("same", "valid"))
                if padding == "same" and ceil_mode:
                    raise ParamError(f"{where}: ceil_mode has no meaning with padding \"same\"")
            if padding == "same":       # TensorFlow's pooling: out = ⌈n/s⌉
                shape = [shape[0]] + [same_padding(shape[j + 1], k[j], s[j], d[j])[0] for j in range(2)]
                shapes.append(list(shape))
                params.append(0)
                macs.append(0)
                flops.append(0)
                continue
            p = _pair(where, "padding", 0 if padding == "valid" else padding, 0)
            out_hw = []
            for j in range(2):
                if p[j] > k[j] // 2:
                    raise ParamError(f"{where}: padding {p[j]} is more than half the kernel size {k[j]} (PyTorch refuses it)")
                o = pool_output_size(shape[j + 1], k[j], s[j], p[j], d[j], ceil_mode)
                if o < 1:
                    raise ShapeError(f"{where}: the window ({k[j]}) does not fit its input "
                                     f"({shape[j + 1]} + 2·{p[j]} padding): the output would be empty")
                out_hw.append(o)
            shape = [shape[0]] + out_hw
        elif kind == "global-avg-pool":
            shape = [shape[0], 1, 1]
        elif kind == "batch-norm":
            n_params = (4 if framework == "keras" else 2) * shape[0]
            n_extra = 2 * shape[0]                                        # torchinfo: γ and β, once per example
        elif kind == "flatten":
            size = 1
            for v in shape:
                size *= v
            shape = [size]
        elif kind == "linear":
            if len(shape) != 1:
                raise ShapeError(f"{where}: expects a flat input of F features, got [{', '.join(map(str, shape))}]; "
                                 "add {\"type\": \"flatten\"} before it")
            if "out_features" not in layer:
                raise ParamError(f"{where}: missing out_features")
            out_f = _int(where, "out_features", layer["out_features"], 1)
            bias = _bool(where, "bias", layer.get("bias", True))
            n_params = shape[0] * out_f + (out_f if bias else 0)
            n_macs = shape[0] * out_f
            n_extra = out_f if bias else 0
            shape = [out_f]
        elif kind == "dropout" and "p" in layer:
            pv = number(f"{where}.p", layer["p"])
            if not 0 <= pv <= 1:
                raise ParamError(f"{where}: p must be a probability in [0, 1], got {pv:g}")
        shapes.append(list(shape))
        params.append(n_params)
        macs.append(n_macs)
        flops.append(2 * n_macs if flops_convention == "2macs" else
                     n_macs + n_extra if flops_convention == "macs+bias" else n_macs)
    counts = [batch_size * math.prod(s) for s in shapes]
    total_count = sum(counts) + (batch_size * math.prod(first) if count_input else 0)
    return Trace(layer_names=names, input_shapes=read, output_shapes=shapes, params=params, macs=macs, flops=flops,
                 total_params=sum(params), total_macs=sum(macs), total_flops=sum(flops), activation_count=counts,
                 activation_bytes=[c * value_bytes for c in counts], total_activation_count=total_count,
                 total_activation_bytes=total_count * value_bytes, training_activation_bytes=2 * total_count * value_bytes,
                 bytes_per_value=value_bytes)


def layer_output_shape(input_shape, layer) -> list[int]:
    """The output shape of one layer of network_shapes on ``input_shape`` (an ECF rule: a layer's
    shape from a student's own shape of the layer before it)."""
    return network_shapes(input_shape, [layer]).output_shapes[0]
