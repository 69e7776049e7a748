"""A convolution over channels by hand (PyTorch's layout: input C_in × H × W, kernel
C_out × C_in/groups × k × k): forward and backward, a 1×1 convolution and a depthwise one.

Level 1: two input channels and one 2×2 filter spanning both, with a bias: the output adds the two
channels' cross-correlations; ∂L/∂K has one slice per input channel, ∂L/∂b sums δ.
Level 2: a 1×1 convolution from three channels to two: at every position a linear map across the
channels (y[:, i, j] = W x[:, i, j] + b); ∂L/∂W = Σ_ij δ[:, i, j] x[:, i, j]ᵀ.
Level 3: a depthwise convolution (groups = C_in = 2): each channel its own kernel, no sum over
channels; ∂L/∂x per channel; and the parameters of a depthwise-separable layer against a standard one.
Calculator-free: integer kernels (every answer is an integer); otherwise halves.
Values with channels are shown one matrix per channel, named as PyTorch indexes them: x[0] is input
channel 0, K[1, 0] the kernel of output channel 1 over input channel 0.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import (
    Degenerate, Draft, Stream, generator, step_per_part, steps_from, jsonable, value_blocks,
)
from examprep.problem import EXACT, Misconception, Part, SolutionStep


_NEXT_CHANNEL = {"output[1]": "The same for output channel 1", "grad_input[1]": "The same for input channel 1"}


def _channel(v, c: int) -> list:
    return jsonable(np.asarray(v)[c])


def _kernel(rng: Stream, shape: tuple[int, ...], calculator_free: bool) -> np.ndarray:
    return rng.ints(-1, 1, shape, nonzero=True) if calculator_free else rng.decimals(-1, 1, 0.5, shape, nonzero=True)


def _flip(k: np.ndarray) -> np.ndarray:
    return np.flip(k, axis=(-2, -1))


@generator("conv2d-channels", title="Convolution over channels: forward, backward, 1×1 and depthwise",
           syllabus="CNNs: multi-channel convolution, 1×1 convolution, depthwise convolution", version=1)
def conv2d_channels(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    if difficulty == 1:
        return _two_channels(rng, calculator_free)
    if difficulty == 2:
        return _pointwise(rng, calculator_free)
    return _depthwise(rng, calculator_free)


def _statement_input(x: np.ndarray) -> list:
    return value_blocks("x", jsonable(x))


def _two_channels(rng: Stream, calculator_free: bool) -> Draft:
    x = rng.ints(-2, 2, (2, 3, 3))
    k = _kernel(rng, (1, 2, 2, 2), calculator_free)
    b = float(rng.choice([-1, 1]))
    delta = rng.ints(-2, 2, (1, 2, 2), nonzero=True)
    if any(np.array_equal(k[0, c], _flip(k[0, c])) for c in range(2)):
        raise Degenerate("a symmetric kernel hides the flip")
    params = {"input": jsonable(x), "kernel": jsonable(k), "bias": [b], "grad_output": jsonable(delta)}
    known = solve.mistakes("conv2d", params)
    t = known.trace()
    if np.count_nonzero(t.output) < 3 or np.any(np.all(t.grad_kernel[0] == 0, axis=(1, 2))):
        raise Degenerate("a mostly zero output or a zero kernel gradient")
    y = lambda v: _channel(v, 0)  # noqa: E731   the single output channel as a matrix
    parts = [Part("output", "The output $y$ (its one channel, 2×2).", "matrix", y(t.output), shape=(2, 2), points=2,
                  minutes=4, misconceptions=known.of("output", y),
                  hint="y = b + Σ_c (x[c] ⋆ K[0, c]): one 2×2 cross-correlation per channel, added.")]
    for c in range(2):
        parts.append(Part(f"grad_kernel_{c}", rf"$\partial L / \partial K[0, {c}]$, the slice over input channel {c}.",
                          "matrix", jsonable(t.grad_kernel[0, c]), shape=(2, 2), points=2, minutes=3,
                          misconceptions=known.of("grad_kernel", lambda v, c=c: jsonable(np.asarray(v)[0, c])),
                          hint=f"Entry (u, v) sums δ[i, j] · x[{c}][i + u, j + v] over the 2×2 outputs."))
    parts.append(Part("grad_bias", r"$\partial L / \partial b$.", "number", float(t.grad_bias[0]), points=1, minutes=1,
                      misconceptions=known.of("grad_bias", lambda v: float(np.ravel(v)[0]))))
    steps = solve.conv.conv2d_steps(known.params, t)
    solution = (steps_from(steps.slide, "output")
                + step_per_part(steps.grad_kernel, {"grad_kernel[0, 0]": "grad_kernel_0", "grad_kernel[0, 1]":
                                                    "grad_kernel_1"}, titles={"grad_kernel[0, 1]": "The same for the "
                                                                                                 "slice over channel 1"})
                + steps_from(steps.grad_bias, "grad_bias"))
    statement = [Text("A convolution layer with two input channels and one filter (PyTorch's Conv2d(2, 1, 2): "
                      "cross-correlation, no kernel flip), stride 1, no padding, bias $b = " + f"{b:g}" + "$. The filter "
                      "has one 2×2 slice per input channel: K[0, c] slides over x[c]. Backpropagation has delivered "
                      r"$\delta = \partial L / \partial y$."),
                 *_statement_input(x), *value_blocks("K", jsonable(k)), Matrix("δ", jsonable(delta[0]))]
    return Draft(title="Convolution over two channels", params=params, statement=statement, parts=parts,
                 solution=solution, conventions=_conventions("one filter over both channels"))


def _pointwise(rng: Stream, calculator_free: bool) -> Draft:
    x = rng.ints(-2, 2, (3, 2, 2))
    w = _kernel(rng, (2, 3), calculator_free)
    b = rng.ints(-1, 1, (2,))
    delta = rng.ints(-1, 2, (2, 2, 2), nonzero=True)
    if np.array_equal(w[0], w[1]) or len({tuple(x[:, i, j]) for i in range(2) for j in range(2)}) < 3:
        raise Degenerate("two equal filters, or too few distinct pixels")
    params = {"input": jsonable(x), "kernel": jsonable(w[:, :, None, None]), "bias": jsonable(b), "grad_output": jsonable(delta)}
    known = solve.mistakes("conv2d", params)
    t = known.trace()
    if not np.any(t.grad_kernel) or np.count_nonzero(t.output) < 5:
        raise Degenerate("a zero weight gradient or a mostly zero output")
    parts = []
    for o in range(2):
        parts.append(Part(f"output_{o}", f"Output channel {o}, $y[{o}]$ (2×2).", "matrix", _channel(t.output, o),
                          shape=(2, 2), points=2, minutes=2.5,
                          misconceptions=known.of("output", lambda v, o=o: _channel(v, o)),
                          hint=f"At each position (i, j): y[{o}, i, j] = Σ_c W[{o}, c] · x[c, i, j] + b[{o}]."))
    gw = t.grad_kernel[:, :, 0, 0]
    parts.append(Part("grad_weight", r"$\partial L / \partial W$ (2×3: row $o$ is filter $o$, column $c$ input channel "
                      r"$c$).", "matrix", jsonable(gw), shape=(2, 3), points=3, minutes=4,
                      misconceptions=known.of("grad_kernel", lambda v: jsonable(np.asarray(v)[:, :, 0, 0])),
                      hint="A 1×1 conv is a linear layer applied at every position: ∂L/∂W = Σ_ij δ[:, i, j] x[:, i, j]ᵀ."))
    parts.append(Part("grad_bias", r"$\partial L / \partial b$ (one entry per output channel).", "vector",
                      jsonable(t.grad_bias), shape=(2,), points=1, minutes=1,
                      misconceptions=known.of("grad_bias", jsonable),
                      ecf_rule=solve.ecf("conv2d", "grad_bias", known.params, t, ())))
    layer = solve.mistakes("param-count", {"layer": "conv2d", "in_channels": 3, "out_channels": 2, "kernel_size": 1})
    count = layer.trace()
    parts.append(Part("params", "The layer's number of parameters (weights and biases).", "integer", int(count["count"]),
                      tolerance=EXACT, points=1, minutes=0.5,
                      misconceptions=layer.of("count", int) + (      # a slip of this statement's 2×2 image (SLIPS)
                          Misconception("per-position", int(count["count"]) * 4,
                                        "The weights are shared across positions: they do not grow with H·W."),),
                      ecf_rule=solve.ecf("param-count", "count", layer.params, count, ())))
    steps = solve.conv.conv2d_steps(known.params, t)
    solution = [SolutionStep("A 1×1 convolution is a linear layer at every position", [
        Math(r"y[:, i, j] = W\, x[:, i, j] + b"), Matrix("W", jsonable(w), row_labels=["filter 0", "filter 1"],
                                                        col_labels=["x[0]", "x[1]", "x[2]"])])]
    solution += step_per_part(steps.slide, {"output[0]": "output_0", "output[1]": "output_1"}, titles=_NEXT_CHANNEL)
    solution.append(SolutionStep(steps.grad_kernel.title, [
        Math(r"\frac{\partial L}{\partial W} = \sum_{i,j} \delta[:, i, j]\, x[:, i, j]^\top"),
        Matrix("grad_weight", jsonable(gw), row_labels=["filter 0", "filter 1"], col_labels=["x[0]", "x[1]", "x[2]"])],
        "grad_weight"))
    solution += steps_from(steps.grad_bias, "grad_bias")
    solution.append(SolutionStep("Parameters", [Math(r"C_{out} C_{in} \cdot 1 \cdot 1 + C_{out}"),
                                                Matrix("params", int(count["count"]))], "params"))
    statement = [Text("A 1×1 convolution (PyTorch's Conv2d(3, 2, kernel_size=1)) maps three input channels to two. "
                      "Its weight has shape 2×3×1×1; below, W[o, c] is filter o's weight on input channel c. "
                      r"Backpropagation has delivered $\delta = \partial L / \partial y$ (two channels)."),
                 *_statement_input(x), Matrix("W", jsonable(w), row_labels=["filter 0", "filter 1"],
                                              col_labels=["x[0]", "x[1]", "x[2]"]),
                 Matrix("b", jsonable(b)), *value_blocks("δ", jsonable(delta))]
    return Draft(title="A 1×1 convolution", params=params, statement=statement, parts=parts, solution=solution,
                 conventions=_conventions("1×1 kernels: a linear map across the channels at each position"))


def _depthwise(rng: Stream, calculator_free: bool) -> Draft:
    x = rng.ints(-2, 2, (2, 3, 3))
    k = _kernel(rng, (2, 1, 2, 2), calculator_free)
    delta = rng.ints(-1, 2, (2, 2, 2), nonzero=True)
    if np.array_equal(k[0], k[1]) or any(np.array_equal(k[c, 0], _flip(k[c, 0])) for c in range(2)):
        raise Degenerate("equal or symmetric kernels")
    params = {"input": jsonable(x), "kernel": jsonable(k), "groups": 2, "grad_output": jsonable(delta)}
    known = solve.mistakes("conv2d", params)
    t = known.trace()
    if np.count_nonzero(t.output) < 5 or np.count_nonzero(t.grad_input) < 8:
        raise Degenerate("a mostly zero output or input gradient")
    parts = []
    for c in range(2):
        parts.append(Part(f"output_{c}", f"Output channel {c}, $y[{c}]$ (2×2).", "matrix", _channel(t.output, c),
                          shape=(2, 2), points=2, minutes=2.5,
                          misconceptions=known.of("output", lambda v, c=c: _channel(v, c)),
                          hint=f"y[{c}] = x[{c}] ⋆ K[{c}, 0]: one 2×2 cross-correlation, channel {c} alone."))
    for c in range(2):
        parts.append(Part(f"grad_input_{c}", rf"$\partial L / \partial x[{c}]$ (3×3).", "matrix", _channel(t.grad_input, c),
                          shape=(3, 3), points=2, minutes=3.5,
                          misconceptions=known.of("grad_input", lambda v, c=c: _channel(v, c)),
                          hint=f"Scatter each δ[{c}, i, j] · K[{c}, 0] back onto its window of x[{c}]; windows overlap and add."))
    big = {"in": rng.choice([16, 32, 64]), "k": 3}
    big["out"] = 2 * big["in"]
    sep = {"input_shape": [big["in"], 8, 8], "layers": [
        {"type": "conv2d", "out_channels": big["in"], "kernel_size": 3, "padding": 1, "groups": big["in"],
         "name": "depthwise 3×3"},
        {"type": "conv2d", "out_channels": big["out"], "kernel_size": 1, "name": "pointwise 1×1"}]}
    counts = solve.mistakes("network-shapes", sep)
    separable = counts.trace()
    standard_known = solve.mistakes("network-shapes", {"input_shape": sep["input_shape"], "layers": [
        {"type": "conv2d", "out_channels": big["out"], "kernel_size": 3, "padding": 1}]})
    standard = standard_known.trace()
    parts.append(Part("separable_params", f"A depthwise-separable layer from {big['in']} to {big['out']} channels: a "
                      f"depthwise 3×3 conv (groups = {big['in']}) then a 1×1 conv, both with biases. Its number of "
                      "parameters.", "integer", int(separable.total_params), tolerance=EXACT, points=1, minutes=2,
                      misconceptions=counts.of("total_params", int)
                      + (Misconception("standard-conv", int(standard.total_params),       # the next part's answer (SLIPS)
                                       "That is a standard 3×3 conv: the separable layer replaces it."),)))
    parts.append(Part("standard_params", f"A standard 3×3 conv from {big['in']} to {big['out']} channels with bias: its "
                      "number of parameters.", "integer", int(standard.total_params), tolerance=EXACT, points=1, minutes=1,
                      misconceptions=standard_known.of("total_params", int)))
    steps = solve.conv.conv2d_steps(known.params, t)
    net = solve.network.network_steps(counts.params, separable)
    solution = (step_per_part(steps.slide, {"output[0]": "output_0", "output[1]": "output_1"}, titles=_NEXT_CHANNEL)
                + step_per_part(steps.grad_input, {"grad_input[0]": "grad_input_0", "grad_input[1]": "grad_input_1"},
                                titles=_NEXT_CHANNEL)
                + steps_from(net.layers, None) + steps_from(net.totals, "separable_params", prefix="Depthwise-separable: "))
    solution.append(SolutionStep("Standard 3×3 conv", [Math(r"C_{out} C_{in} k^2 + C_{out}"),
                                                        Matrix("params", int(standard.total_params))], "standard_params"))
    statement = [Text("A depthwise convolution (PyTorch's Conv2d(2, 2, 2, groups=2)): each input channel has its own 2×2 "
                      "kernel and makes one output channel, K[c, 0] sliding over x[c] (cross-correlation, no flip); "
                      r"stride 1, no padding, no bias. Backpropagation has delivered $\delta = \partial L / \partial y$."),
                 *_statement_input(x), *value_blocks("K", jsonable(k)), *value_blocks("δ", jsonable(delta))]
    return Draft(title="A depthwise convolution", params=params, statement=statement, parts=parts, solution=solution,
                 conventions=_conventions("depthwise: groups = C_in, each channel its own kernel"))


def _conventions(what: str) -> dict[str, str]:
    return {"operation": "cross-correlation, no kernel flip (PyTorch)", "layout": "input C×H×W, kernel C_out×C_in/groups×k×k",
            "channels": what}
