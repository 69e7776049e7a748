"""Solve topics of convolution: conv-output-size, receptive-field, conv2d (forward and backward)."""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Mistake, Param, Refusal, Step, Topic


class OutputSizeSteps(NamedTuple):
    effective_kernel: Step | None  # integer padding
    quotient: Step | None
    output_size: Step
    padding: Step | None           # "same": the pad before and after


def output_size_steps(p: dict[str, Any], t: Trace) -> OutputSizeSteps:
    if p["padding"] == "same":
        return OutputSizeSteps(
            None, None,
            Step("Output size with \"same\" padding", r"o = \lceil n / s \rceil", {"output_size": t.output_size}),
            Step("Total padding, extra at the end (TensorFlow)",
                 r"P = \max((o-1)s + d(k-1) + 1 - n,\ 0),\ p_{\text{before}} = \lfloor P/2 \rfloor",
                 {"pad_before": t.pad_before, "pad_after": t.pad_after}))
    if p["transposed"]:
        return OutputSizeSteps(None, None, Step("Transposed convolution",
                                                r"o = (n-1)s - 2p + d(k-1) + \text{output\_padding} + 1",
                                                {"output_size": t.output_size}), None)
    rnd = r"\left\lceil" if p["ceil_mode"] else r"\left\lfloor"
    rnd_close = r"\right\rceil" if p["ceil_mode"] else r"\right\rfloor"
    return OutputSizeSteps(
        Step("Effective kernel size", r"k_{\text{eff}} = d(k-1) + 1", {"effective_kernel": t.effective_kernel}),
        Step("Exact quotient before rounding", r"\frac{n + 2p - k_{\text{eff}}}{s} + 1", {"quotient": t.quotient}),
        Step("Round " + ("up (ceil_mode), dropping a last window that starts in the right padding"
                         if p["ceil_mode"] else "down"),
             rf"o = {rnd} \frac{{n + 2p - k_{{\text{{eff}}}}}}{{s}} {rnd_close} + 1", {"output_size": t.output_size}),
        None)


def _stride(p: dict[str, Any]) -> Any:
    """The stride the layer uses: given, else 1 for conv and kernel_size for pool (the engine's default)."""
    return p["stride"] if p["stride"] is not None else (p["kernel_size"] if p["op"] == "pool" else 1)


def _plain(p: dict[str, Any]) -> bool:
    """One dimension, an integer padding, rounded down (no "same", no ceil_mode, not transposed): the
    size formula ⌊(n + 2p − d(k−1) − 1)/s⌋ + 1 that the slips below get wrong."""
    return (all(isinstance(p[n], int) for n in ("input_size", "kernel_size", "padding", "dilation"))
            and isinstance(_stride(p), int) and not p["ceil_mode"] and not p["transposed"])


def _rounded_up(p: dict[str, Any], t: Trace) -> Any:
    q = t.quotient
    return math.ceil(q) if q != int(q) else None       # an exact quotient: rounding does not show


def _padded_once(p: dict[str, Any], t: Trace) -> int:
    # the size formula with n + p: written out, because with one side padded the kernel can be larger than
    # the input, which the engine refuses while a student still gets a number
    return math.floor((p["input_size"] + p["padding"] - p["dilation"] * (p["kernel_size"] - 1) - 1) / _stride(p)) + 1


def _same(p: dict[str, Any]) -> bool:
    return p["padding"] == "same"


CONV_OUTPUT_SIZE_MISTAKES = {
    "output_size": (Mistake("no-floor", compute=_rounded_up, when=_plain,
                            why="Output sizes round down: ⌊(n + 2p − d(k−1) − 1)/s⌋ + 1, not up."),
                    Mistake("padding-once", compute=_padded_once, when=lambda p: _plain(p) and p["padding"] != 0,
                            why="Padding is added on both sides: n + 2p."),
                    Mistake("ignored-stride", stride=1, when=lambda p: _plain(p) and _stride(p) > 1,
                            why="You ignored the stride: divide (n + 2p − d(k−1) − 1) by s before adding 1."),
                    Mistake("ignored-dilation", dilation=1, when=_plain,
                            why="With dilation d the kernel spans d(k−1) + 1 inputs."),
                    Mistake("same-means-equal", compute=lambda p, t: p["input_size"],
                            when=lambda p: _same(p) and _stride(p) != 1,
                            why="With stride s, \"same\" gives ⌈n/s⌉, not n.")),
    "pad_before": (Mistake("extra-at-start", compute=lambda p, t: t.pad_after if t.pad_after != t.pad_before else None,
                           when=_same, why="TensorFlow puts the extra zero at the end, not the start."),),
    "pad_after": (Mistake("extra-at-start", compute=lambda p, t: t.pad_before if t.pad_after != t.pad_before else None,
                          when=_same, why="TensorFlow puts the extra zero at the end."),),
}


CONV_OUTPUT_SIZE = Topic(
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
    output_size_steps,
    lambda p: {"rounding": "⌈n/s⌉ (TensorFlow \"same\")" if p["padding"] == "same"
               else "ceil with PyTorch's last-window rule" if p["ceil_mode"] else "floor (PyTorch)",
               "padding": "TensorFlow \"same\": output ⌈n/s⌉, extra pad at the end" if p["padding"] == "same"
               else f"{p['padding']} on each side"},
    answer_names=lambda p, t: [n for n in ("output_size", "pad_before", "pad_after") if n in t],
    mistakes=CONV_OUTPUT_SIZE_MISTAKES,
    refuses=(Refusal("an output size below 1: a kernel larger than the padded input",
                     {"input_size": 3, "kernel_size": 5}),
             Refusal("pooling padding above kernel_size/2 (PyTorch's rule)",
                     {"input_size": 4, "kernel_size": 2, "op": "pool", "padding": 2})),
)


class ReceptiveFieldSteps(NamedTuple):
    effective_kernels: Step
    jumps: Step
    receptive_fields: Step
    receptive_field: Step


def receptive_field_steps(p: dict[str, Any], t: Trace) -> ReceptiveFieldSteps:
    return ReceptiveFieldSteps(
        Step("Effective kernel sizes", r"k_{\text{eff},l} = d_l (k_l - 1) + 1", {"effective_kernels": t.effective_kernels}),
        Step("Jumps (input pixels between neighbouring outputs)", r"j_l = j_{l-1} s_l,\ j_0 = 1", {"jumps": t.jumps}),
        Step("Receptive fields layer by layer", r"r_l = r_{l-1} + (k_{\text{eff},l} - 1)\, j_{l-1},\ r_0 = 1",
             {"receptive_fields": t.receptive_fields}),
        Step("Receptive field of the last layer", r"r_L", {"receptive_field": t.receptive_field, "jump": t.jump}),
    )


def _without(key: str) -> Any:
    """The layers with ``key`` (stride, dilation) left out: every layer at the default 1."""
    return lambda p: [{k: v for k, v in L.items() if k != key} if isinstance(L, dict) else L for L in p["layers"]]


RECEPTIVE_FIELD_MISTAKES = {
    "receptive_field": (
        Mistake("sum-kernels", compute=lambda p, t: sum(L["kernel_size"] for L in p["layers"]),
                why="The receptive field is not the sum of kernel sizes: each layer adds (k_eff − 1)·jump, where jump "
                    "is the product of earlier strides."),
        Mistake("ignored-stride", layers=_without("stride"),
                when=lambda p: any(L.get("stride", 1) != 1 for L in p["layers"]),
                why="Later layers see through earlier strides: multiply (k_eff − 1) by the product of the strides "
                    "before that layer."),
        Mistake("ignored-dilation", layers=_without("dilation"),
                when=lambda p: any(L.get("dilation", 1) != 1 for L in p["layers"]),
                why="A dilated kernel's effective size is d(k−1) + 1.")),
}


RECEPTIVE_FIELD = Topic(
    "receptive-field", "Receptive field of a conv/pool stack",
    (Param("layers", "list of {kernel_size, stride (1), dilation (1)}"),),
    ("receptive_field", "jump", "receptive_fields", "jumps"),
    lambda p: engine.receptive_field(p["layers"]),
    receptive_field_steps,
    mistakes=RECEPTIVE_FIELD_MISTAKES,
    conventions=lambda p: {"recurrence": "r_l = r_{l-1} + (k_eff - 1)·j_{l-1} (Araujo et al. 2019)"},
)


class ConvSteps(NamedTuple):
    pad: Step
    slide: Step
    grad_kernel: Step | None       # with grad_output
    grad_bias: Step | None
    grad_input: Step | None


def conv2d_steps(p: dict[str, Any], t: Trace) -> ConvSteps:
    if np.ndim(p["input"]) == 3:
        return _channel_steps(p, t)
    pad = Step("Pad the input", r"x_{\text{pad}}", {"padded": t.padded})
    slide = Step("Slide the kernel (cross-correlation, no flip)",
                 r"y_{ij} = b + \sum_{u,v} K_{uv}\, x_{\text{pad}}[i s + u d,\ j s + v d]", {"output": t.output})
    if "grad_input" not in t:
        return ConvSteps(pad, slide, None, None, None)
    return ConvSteps(
        pad, slide,
        Step("Kernel gradient",
             r"\frac{\partial L}{\partial K_{uv}} = \sum_{i,j} \delta_{ij}\, x_{\text{pad}}[i s + u d,\ j s + v d]",
             {"grad_kernel": t.grad_kernel}),
        Step("Bias gradient", r"\frac{\partial L}{\partial b} = \sum_{i,j} \delta_{ij}", {"grad_bias": t.grad_bias}),
        Step("Input gradient: scatter δ·K back over each window, crop the padding",
             r"\frac{\partial L}{\partial x} = \sum_{i,j} \delta_{ij}\, K \text{ placed at window } (i,j)",
             {"grad_input": t.grad_input}))


def _spatial_flip(k: Any) -> np.ndarray:
    """A kernel rotated by 180° in its spatial axes (the last two; a 1-D kernel reversed)."""
    a = np.asarray(k, dtype=float)
    return np.flip(a, axis=tuple(range(max(a.ndim - 2, 0), a.ndim)))


def _channel_steps(p: dict[str, Any], t: Trace) -> ConvSteps:
    groups = p["groups"]
    within = (r"\sum_{c \in \text{group}(o)} " if groups > 1 else r"\sum_{c} ")
    pad = Step("Pad each input channel", r"x_{\text{pad}}", {"padded": t.padded})
    slide = Step("Each output channel: sum over its input channels of the kernel slid over them (no flip)"
                 + (f"; {groups} groups, each output channel sees only its group's inputs" if groups > 1 else ""),
                 r"y_{o,i,j} = b_o + " + within + r"\sum_{u,v} K_{o,c,u,v}\, x_{\text{pad}}[c,\ i s + u d,\ j s + v d]",
                 {"output": t.output})
    if "grad_input" not in t:
        return ConvSteps(pad, slide, None, None, None)
    return ConvSteps(
        pad, slide,
        Step("Kernel gradient (per output channel o and input channel c)",
             r"\frac{\partial L}{\partial K_{o,c,u,v}} = \sum_{i,j} \delta_{o,i,j}\, x_{\text{pad}}[c,\ i s + u d,\ j s + v d]",
             {"grad_kernel": t.grad_kernel}),
        Step("Bias gradient (one per output channel)", r"\frac{\partial L}{\partial b_o} = \sum_{i,j} \delta_{o,i,j}",
             {"grad_bias": t.grad_bias}),
        Step("Input gradient: every output channel scatters δ·K back over each window, crop the padding",
             r"\frac{\partial L}{\partial x_c} = \sum_o \sum_{i,j} \delta_{o,i,j}\, K_{o,c} \text{ placed at window } (i,j)",
             {"grad_input": t.grad_input}))


_flipped = lambda p: _spatial_flip(p["kernel"]).tolist()  # noqa: E731

CONV2D_MISTAKES = {
    "output": (Mistake("flipped-kernel", kernel=_flipped,
                       why="PyTorch's conv2d is a cross-correlation: slide the kernel as given, without flipping it."),
               Mistake("ignored-padding", padding=0, grad_output=None, when=lambda p: p["padding"] != 0,
                       why="Pad the input with a border of zeros first."),
               Mistake("no-bias", bias=0.0, why="Add the bias to every output.")),
    "grad_kernel": (Mistake("flipped", compute=lambda p, t: _spatial_flip(t.grad_kernel),
                            why="∂L/∂K[u, v] = Σ δ[i, j] · x at tap (u, v) of window (i, j): no flip for a "
                                "cross-correlation."),),
    "grad_input": (Mistake("flipped-kernel", kernel=_flipped,
                           why="Each δ[i, j] spreads back over its window weighted by the kernel as it was applied "
                               "(K[u, v] onto the input under tap (u, v)) — you flipped it."),),
}


CONV2D = Topic(
    "conv2d", "2-D (or 1-D) convolution forward and backward, one or several channels",
    (Param("input", "matrix (H×W), vector, or C_in×H×W"),
     Param("kernel", "matrix (kH×kW) or vector; C_out×(C_in/groups)×kH×kW for a C_in×H×W input"),
     Param("stride", "int or [s_h, s_w]", 1),
     Param("padding", 'int, [before, after] ([h, w] on C×H×W), [[top, bottom], [left, right]], "same" or "valid"', 0),
     Param("dilation", "int or [d_h, d_w]", 1), Param("bias", "number; a vector (C_out) on C×H×W input", 0.0),
     Param("groups", "int (C×H×W input; groups = C_in is depthwise)", 1),
     Param("grad_output", "∂L/∂output (optional)", None)),
    ("output", "grad_input", "grad_kernel", "grad_bias"),
    lambda p: engine.conv2d(p["input"], p["kernel"], stride=p["stride"], padding=p["padding"],
                            dilation=p["dilation"], bias=p["bias"], groups=p["groups"], grad_output=p["grad_output"]),
    conv2d_steps,
    mistakes=CONV2D_MISTAKES,
    conventions=lambda p: {"operation": "cross-correlation (no kernel flip), as PyTorch"
                           + ("; each output channel sums over its input channels" if np.ndim(p["input"]) == 3 else ""),
               "padding": "TensorFlow \"same\": extra pad at the end" if p["padding"] == "same" else "zeros"},
    answer_names=lambda p, t: [n for n in ("output", "grad_input", "grad_kernel", "grad_bias") if n in t],
    refuses=(Refusal("a kernel larger than the padded input (an output size below 1)",
                     {"input": [1, 2], "kernel": [1, 2, 3]}),),
)
