"""Solve topics of convolution: conv-output-size, receptive-field, conv2d (forward and backward)."""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Ecf, Mistake, Param, Ref, Refusal, Step, Topic


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


# ------------------------------------------------------------------ what conv2d's mistakes read

def _channels(p: dict[str, Any]) -> bool:
    """A C_in×H×W input: filters over channels."""
    return np.ndim(p["input"]) == 3


def _c_in(p: dict[str, Any]) -> int:
    return int(np.shape(p["input"])[0])


def _c_out(p: dict[str, Any]) -> int:
    return int(np.shape(p["kernel"])[0])


def _one_by_one(p: dict[str, Any]) -> bool:
    return tuple(np.shape(p["kernel"])[-2:]) == (1, 1)


def _full_filters(p: dict[str, Any]) -> bool:
    """Filters spanning every input channel (groups = 1) over two or more of them."""
    return _channels(p) and p["groups"] == 1 and _c_in(p) >= 2


def _depthwise(p: dict[str, Any]) -> bool:
    """groups = C_in > 1: each input channel convolved alone."""
    return _channels(p) and p["groups"] == _c_in(p) > 1


def _has_grad(p: dict[str, Any]) -> bool:
    return p["grad_output"] is not None


def _first_channel_only(p: dict[str, Any]) -> list:
    x = np.asarray(p["input"], dtype=float)
    return np.concatenate([x[:1], np.zeros_like(x[1:])]).tolist()


def _filters_swapped(p: dict[str, Any]) -> dict[str, Any]:
    b = p["bias"]
    return {"kernel": np.asarray(p["kernel"], dtype=float)[::-1].tolist(),
            "bias": np.asarray(b, dtype=float)[::-1].tolist() if np.ndim(b) else b}


def _summed_over_channels(p: dict[str, Any]) -> dict[str, Any]:
    """A depthwise kernel read as a full one: each filter over every input channel (groups = 1)."""
    return {"kernel": np.repeat(np.asarray(p["kernel"], dtype=float), p["groups"], axis=1).tolist(),
            "groups": 1}


def _delta_is_output(p: dict[str, Any], t: Trace) -> bool:
    """δ = y: the loss ½ Σ y² (its gradient is the output itself)."""
    return _has_grad(p) and np.shape(p["grad_output"]) == np.shape(t.output) and bool(
        np.allclose(np.asarray(p["grad_output"], dtype=float), t.output))


def _ones_delta(p: dict[str, Any]) -> list:
    return np.ones_like(np.asarray(p["grad_output"], dtype=float)).tolist()


def _delta_ones(p: dict[str, Any], t: Trace) -> Any:
    """The weight gradient with δ = 1 everywhere: where δ is the output (L = ½ Σ y²) or over channels."""
    if not (_channels(p) and _has_grad(p) or _delta_is_output(p, t)):
        return None
    return engine.conv2d(p["input"], p["kernel"], stride=p["stride"], padding=p["padding"], dilation=p["dilation"],
                         bias=p["bias"], groups=p["groups"], grad_output=_ones_delta(p)).grad_kernel


def _positions(t: Trace) -> int:
    """The output positions of one channel: every output shares its channel's bias."""
    shape = np.shape(t.output)
    return int(np.prod(shape[-2:] if len(shape) >= 2 else shape))


def _padded_border_kept(p: dict[str, Any], t: Trace) -> Any:
    """The input gradient of the zero-padded input, cropped at the start only: the padding's share at the
    end kept."""
    pad = p["padding"]
    g = engine.conv2d(np.pad(np.asarray(p["input"], dtype=float), pad), p["kernel"], stride=p["stride"],
                      dilation=p["dilation"], grad_output=p["grad_output"]).grad_input
    return g[pad:, pad:]


def _one_position(p: dict[str, Any], t: Trace) -> Any:
    """A 1×1 conv's weight gradient from its first position alone: δ[:, 0, 0] x[:, 0, 0]ᵀ."""
    d, x = np.asarray(p["grad_output"], dtype=float), np.asarray(p["input"], dtype=float)
    return np.outer(d[:, 0, 0], x[:, 0, 0])[:, :, None, None]


CONV2D_MISTAKES = {
    "output": (Mistake("flipped-kernel", kernel=_flipped,
                       why="PyTorch's conv2d is a cross-correlation: slide the kernel as given, without flipping it."),
               Mistake("ignored-stride", stride=1, grad_output=None, when=lambda p: np.any(np.asarray(p["stride"]) != 1),
                       why="With stride s the window moves s positions at a time."),
               Mistake("ignored-padding", padding=0, grad_output=None, when=lambda p: p["padding"] != 0,
                       why="Pad the input with a border of zeros first."),
               Mistake("no-bias", bias=0.0, why="Add the bias to every output."),
               Mistake("filters-swapped", kernel=lambda p: _filters_swapped(p)["kernel"],
                       bias=lambda p: _filters_swapped(p)["bias"], when=lambda p: _channels(p) and p["groups"] == 1,
                       why="Output channel o uses row o of W (filter o, K[o]) and bias b[o]."),
               Mistake("one-channel", input=_first_channel_only, when=_full_filters,
                       why="A filter spans every input channel: add the cross-correlations of each x[c] with K[o, c] "
                           "(for a 1×1 filter, Σ_c W[o, c] x[c, i, j]), then the bias."),
               Mistake("channels-swapped", input=lambda p: np.asarray(p["input"], dtype=float)[::-1].tolist(),
                       when=lambda p: _full_filters(p) and _c_in(p) == 2,
                       why="K[0, c] slides over input channel c: K[0, 0] over x[0], K[0, 1] over x[1]."),
               Mistake("summed-over-channels", kernel=lambda p: _summed_over_channels(p)["kernel"], groups=1,
                       when=_depthwise,
                       why="A depthwise conv (groups = C) does not sum over channels: y[c] = x[c] ⋆ K[c, 0]."),
               Mistake("one-kernel", kernel=lambda p: np.repeat(np.asarray(p["kernel"], dtype=float)[:1], _c_out(p),
                                                                axis=0).tolist(),
                       when=_depthwise, why="Each channel has its own kernel: K[c, 0] for channel c."),
               Mistake("kernels-swapped", kernel=lambda p: np.asarray(p["kernel"], dtype=float)[::-1].tolist(),
                       when=_depthwise, why="Channel c uses its own kernel, K[c, 0].")),
    "grad_kernel": (Mistake("flipped", compute=lambda p, t: _spatial_flip(t.grad_kernel),
                            why="∂L/∂K[u, v] = Σ δ[i, j] · x at tap (u, v) of window (i, j): no flip for a "
                                "cross-correlation."),
                    Mistake("other-channel", compute=lambda p, t: t.grad_kernel[:, ::-1],
                            when=lambda p: _full_filters(p) and _c_in(p) == 2 and _has_grad(p),
                            why="∂L/∂K[o, c] pairs δ with input channel c, the one this slice sees."),
                    Mistake("delta-ones", compute=_delta_ones,
                            why="Weight each window by its δ = ∂L/∂y (δ = y for L = ½ Σ y²), not by 1."),
                    Mistake("transposed", compute=lambda p, t: np.transpose(t.grad_kernel, (1, 0, 2, 3)),
                            when=lambda p: _channels(p) and p["groups"] == 1 and _one_by_one(p) and _has_grad(p),
                            why="∂L/∂W has W's shape, C_out × C_in: Σ_ij δ[:, i, j] x[:, i, j]ᵀ."),
                    Mistake("one-position", compute=_one_position,
                            when=lambda p: _channels(p) and p["groups"] == 1 and _one_by_one(p) and _has_grad(p),
                            why="W is shared by every position: sum δ xᵀ over all of them.")),
    "grad_bias": (Mistake("one", compute=lambda p, t: np.ones_like(np.asarray(t.grad_bias, dtype=float)),
                          when=lambda p: _has_grad(p) and (not _channels(p) or _c_out(p) == 1),
                          why="∂L/∂b = Σ_ij δ_ij · 1: sum the upstream gradient."),
                  Mistake("mean", compute=lambda p, t: np.asarray(t.grad_bias, dtype=float) / _positions(t), when=_has_grad,
                          why="The bias is added to every output, so its gradient is the sum of δ, not the mean."),
                  Mistake("per-channel", compute=lambda p, t: _c_in(p) * np.asarray(t.grad_bias, dtype=float),
                          when=lambda p: _has_grad(p) and _full_filters(p) and _c_out(p) == 1,
                          why="One bias per output channel, added once at each position: Σ δ, not once per input "
                              "channel."),
                  Mistake("all-summed", compute=lambda p, t: np.full(_c_out(p), float(np.sum(p["grad_output"]))),
                          when=lambda p: _has_grad(p) and _channels(p), why="∂L/∂b[o] sums only output channel o's δ.")),
    "grad_input": (Mistake("flipped-kernel", kernel=_flipped,
                           why="Each δ[i, j] spreads back over its window weighted by the kernel as it was applied "
                               "(K[u, v] onto the input under tap (u, v)) — you flipped it."),
                   Mistake("padded-border-kept", compute=_padded_border_kept,
                           when=lambda p: _has_grad(p) and not _channels(p) and isinstance(p["padding"], int)
                           and p["padding"] > 0,
                           why="The gradient that lands on the zero padding is dropped: crop it off, keep the "
                               "input's own positions."),
                   Mistake("summed-over-channels", kernel=lambda p: _summed_over_channels(p)["kernel"], groups=1,
                           when=lambda p: _depthwise(p) and _has_grad(p),
                           why="Only output channel c read x[c], so only δ[c] flows back to it."),
                   Mistake("kernels-swapped", kernel=lambda p: np.asarray(p["kernel"], dtype=float)[::-1].tolist(),
                           when=lambda p: _depthwise(p) and _has_grad(p),
                           why="δ[c] flows back through channel c's own kernel K[c, 0].")),
}


def _conv_args(p: dict[str, Any], t: Trace, answer: str) -> dict[str, Any]:
    """The recipe of an answer: the layer as a problem states it (input, kernel, stride, padding and bias;
    dilation and groups where not 1), with δ where a gradient is asked — the student's own output where
    δ is the output (the loss ½ Σ y²)."""
    args = {k: p[k] for k in ("input", "kernel", "stride", "padding", "bias")}
    args |= {k: p[k] for k in ("dilation", "groups") if p[k] != 1}
    if answer != "output":
        args["grad_output"] = Ref("output") if _delta_is_output(p, t) else p["grad_output"]
    return args


def _conv_ecf(answer: str) -> tuple[Ecf, ...]:
    # the first where δ is the output and the output part is asked; else the second, δ as given
    plain = Ecf("solve:conv2d", lambda p, t: {**_conv_args(p, t, answer), **({} if answer == "output" else
                                                                             {"grad_output": p["grad_output"]})}, answer)
    return (Ecf("solve:conv2d", lambda p, t: _conv_args(p, t, answer), answer), plain)


CONV2D_ECF = {answer: _conv_ecf(answer) for answer in ("output", "grad_kernel", "grad_bias", "grad_input")}


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
    ecf=CONV2D_ECF,
    conventions=lambda p: {"operation": "cross-correlation (no kernel flip), as PyTorch"
                           + ("; each output channel sums over its input channels" if np.ndim(p["input"]) == 3 else ""),
               "padding": "TensorFlow \"same\": extra pad at the end" if p["padding"] == "same" else "zeros"},
    answer_names=lambda p, t: [n for n in ("output", "grad_input", "grad_kernel", "grad_bias") if n in t],
    refuses=(Refusal("a kernel larger than the padded input (an output size below 1)",
                     {"input": [1, 2], "kernel": [1, 2, 3]}),),
)
