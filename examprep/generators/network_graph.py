"""A block that is not a chain, by hand: a residual block (He et al. 2016) or an Inception-style concat
block (Szegedy et al. 2015): the merged output's shape, the block's parameters and its activation memory.

Level 1: a basic residual block on C×n×n: two 3×3 convs (padding 1) with a ReLU between, added to the
input (the identity shortcut), then a ReLU; float32 activation memory of one example, the input counted.
Level 2: an Inception-style block: a 1×1 conv, a 3×3 conv (padding 1) and a 3×3 max-pool (stride 1,
padding 1) side by side on the input, their outputs concatenated along the channels.
Level 3: a downsampling residual block: a 3×3 conv with stride 2 doubling the channels, a 3×3 conv, and a
1×1 conv with stride 2 (no bias) on the shortcut so the add's shapes agree; the training memory of its
activations under the CS231n convention (every output kept and its gradient: 2× the forward).
Every answer is an integer (calculator-free at every level; that variant keeps the sizes smaller).
"""
from __future__ import annotations

from typing import Any

from examprep import solve
from examprep.document import Table, Text
from examprep.generators.framework import Draft, Stream, generator, steps_from
from examprep.problem import EXACT, Misconception, Part


def _shape(s: list[int]) -> str:
    return "×".join(map(str, s))


def _conv(name: str, c: int, k: int, s: int = 1, p: int = 0, inputs: str | None = None, bias: bool = True) -> dict:
    layer = {"type": "conv2d", "out_channels": c, "kernel_size": k, "name": name}
    layer |= ({"stride": s} if s != 1 else {}) | ({"padding": p} if p else {}) | ({} if bias else {"bias": False})
    return layer | ({"inputs": [inputs]} if inputs else {})


def _draw(rng: Stream, difficulty: int, small: bool) -> tuple[list[int], list[dict[str, Any]]]:
    c = rng.choice([2, 4] if small else [4, 8, 16])
    n = rng.choice([4, 6, 8] if small else [8, 14, 16])
    if difficulty == 1:
        return [c, n, n], [_conv("conv1", c, 3, p=1), {"type": "relu", "name": "relu1"}, _conv("conv2", c, 3, p=1),
                           {"type": "add", "inputs": ["conv2", "input"], "name": "add"}, {"type": "relu", "name": "relu2"}]
    if difficulty == 2:
        a, b = rng.choice([2, 4, 8] if small else [8, 16]), rng.choice([4, 6] if small else [8, 12, 24])
        return [c, n, n], [_conv("branch1x1", a, 1, inputs="input"), _conv("branch3x3", b, 3, p=1, inputs="input"),
                           {"type": "max-pool", "kernel_size": 3, "stride": 1, "padding": 1, "name": "pool", "inputs": ["input"]},
                           {"type": "concat", "inputs": ["branch1x1", "branch3x3", "pool"], "name": "concat"}]
    return [c, n, n], [_conv("conv1", 2 * c, 3, s=2, p=1), {"type": "relu", "name": "relu1"}, _conv("conv2", 2 * c, 3, p=1),
                       _conv("shortcut", 2 * c, 1, s=2, inputs="input", bias=False),
                       {"type": "add", "inputs": ["conv2", "shortcut"], "name": "add"}, {"type": "relu", "name": "relu2"}]


def _config(layer: dict[str, Any]) -> str:
    kind = layer["type"]
    reads = ", ".join(layer.get("inputs", [])) or "the layer above"
    if kind == "conv2d":
        k = layer["kernel_size"]
        return (f"{layer['out_channels']} filters {k}×{k}, stride {layer.get('stride', 1)}, padding {layer.get('padding', 0)}"
                + ("" if layer.get("bias", True) else ", no bias") + f"; reads {reads}")
    if kind == "max-pool":
        return f"3×3, stride 1, padding 1; reads {reads}"
    if kind in ("add", "concat"):
        return ("sum of " if kind == "add" else "concatenation (channels) of ") + reads
    return f"reads {reads}"


def _of(known: solve.Mistakes, answer: str, read, right: Any) -> tuple[Misconception, ...]:
    """The table's mistakes of ``answer`` as the part reads it (``read``), those that read as the right
    value aside (Mistakes.of leaves out a method the engine refuses for this block)."""
    return tuple(m for m in known.of(answer, read) if m.value != right)


@generator("network-graph", title="A residual or concat block: shapes, parameters and activation memory",
           syllabus="CNNs beyond a chain: residual adds and concatenation; parameters and activation memory", version=1)
def network_graph(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    input_shape, layers = _draw(rng, difficulty, calculator_free)
    params = {"input_shape": input_shape, "layers": layers}
    known = solve.mistakes("network-shapes", params)
    t = known.trace()
    steps = solve.network.network_steps(known.params, t)
    merge = next(i for i, L in enumerate(layers) if L["type"] in ("add", "concat"))
    memory = "training_activation_bytes" if difficulty == 3 else "total_activation_bytes"
    parts = [
        Part("merge_shape", f"The output shape of {layers[merge]['name']}, as [C, H, W].", "vector",
             list(t.output_shapes[merge]), tolerance=EXACT, shape=(3,), points=1, minutes=1.5,
             misconceptions=_of(known, "output_shapes", lambda v: list(v[merge]), list(t.output_shapes[merge])),
             hint="An add keeps its inputs' (equal) shape; a concat stacks the channels: C = ΣC_i."),
        Part("total_params", "The number of learnable parameters of the block.", "integer", int(t.total_params),
             tolerance=EXACT, points=1, minutes=2, misconceptions=_of(known, "total_params", int, int(t.total_params)),
             hint="Each conv: C_out·C_in·k·k weights (+ C_out biases); pooling, ReLU, add and concat have none."),
        Part(memory, "The activation memory in bytes (float32, one example): every layer's output and the input"
             + (", for training: each output kept for the backward pass and its gradient (CS231n)." if difficulty == 3
                else ", for one forward pass."), "integer", int(t[memory]), tolerance=EXACT, points=1, minutes=2,
             misconceptions=_of(known, memory, int, int(t[memory])),
             hint="Count each layer's output values C·H·W, add the input's, × 4 bytes" + (", × 2 for training." if
                                                                                         difficulty == 3 else ".")),
    ]
    solution = []
    for i, st in enumerate(steps.layers):
        solution += steps_from(st, "merge_shape" if i == merge else None)
    solution += steps_from(steps.totals, "total_params") + steps_from(steps.memory, memory)
    rows = [["input", "", _shape(input_shape)]] + [[L["name"], _config(L), "?" if i == merge else ""]
                                                   for i, L in enumerate(layers)]
    intro = ("A block of a CNN (PyTorch layers, channels first, one example); each layer reads the layer above it "
             "unless the table names its inputs. Convolutions have a bias unless the table says otherwise.")
    titles = {1: "A residual block", 2: "An Inception-style concat block", 3: "A downsampling residual block"}
    return Draft(title=titles[difficulty], params=params, statement=[Text(intro), Table(["layer", "configuration",
                                                                                         "output shape"], rows)],
                 parts=parts, solution=solution,
                 conventions={"layout": "channels first, one example: [C, H, W]",
                              "parameters": "trainable weights and biases",
                              "activations": "every layer's output and the input, float32 (4 bytes)"
                              + ("; training: 2× (outputs and their gradients, CS231n)" if difficulty == 3 else "")})
