"""Solve topics of pooling: max-pool and avg-pool (forward and backward)."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Ecf, Mistake, Param, Refusal, Step, Topic, stated_params


class MaxPoolSteps(NamedTuple):
    padding: Step | None           # with "same"
    maximum: Step
    route: Step | None             # with grad_output


def max_pool_steps(p: dict[str, Any], t: Trace) -> MaxPoolSteps:
    return MaxPoolSteps(
        Step("\"Same\" padding (TensorFlow): output ⌈n/s⌉, the extra −∞ at the end",
             r"P = \max((o-1)s + d(k-1) + 1 - n,\ 0),\ p_{\text{before}} = \lfloor P/2 \rfloor",
             {"pad_before": t.pad_before, "pad_after": t.pad_after}) if "pad_before" in t else None,
        Step("Maximum of each window" + (", channel by channel" if np.ndim(p["input"]) == 3 else ""),
             r"y_{ij} = \max_{(u,v) \in \text{window}(i,j)} x_{uv}", {"output": t.output, "indices": t.indices}),
        Step("Route each gradient to its window's maximum (ties: the first in row-major order)",
             r"\frac{\partial L}{\partial x_{uv}} = \sum_{(i,j):\ \arg\max = (u,v)} \delta_{ij}", {"grad_input": t.grad_input})
        if "grad_input" in t else None)


def _pads(p: dict[str, Any], t: Trace) -> list[tuple[int, int]]:
    """The padding of each spatial dimension, (before, after): "same"'s from the trace, else the integer's."""
    spatial = 1 if np.ndim(p["input"]) == 1 else 2
    if p["padding"] == "same":
        return list(zip(np.ravel(t.pad_before).tolist(), np.ravel(t.pad_after).tolist()))
    pad = 0 if p["padding"] == "valid" else p["padding"]
    return [(int(v), int(v)) for v in np.broadcast_to(pad, (spatial,))]


def _spatial_pad(x: Any, pads: list[tuple[int, int]], value: float) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    return np.pad(a, [(0, 0)] * (a.ndim - len(pads)) + pads, constant_values=value)


def _crop(g: np.ndarray, pads: list[tuple[int, int]]) -> np.ndarray:
    return g[(...,) + tuple(slice(b, g.shape[g.ndim - len(pads) + i] - a) for i, (b, a) in enumerate(pads))]


def _has_padding(p: dict[str, Any]) -> bool:
    return p["padding"] == "same" or (p["padding"] != "valid" and bool(np.any(np.asarray(p["padding"]) != 0)))


def _unpadded_kwargs(p: dict[str, Any]) -> dict[str, Any]:
    return {"stride": p["stride"], "dilation": p["dilation"], "ceil_mode": p["ceil_mode"]}


def _zero_padded(p: dict[str, Any], t: Trace, answer: str) -> Any:
    """Max-pooling over a zero padding (a padded 0 beats negative inputs), the gradient cropped to the input."""
    pads = _pads(p, t)
    z = engine.max_pool(_spatial_pad(p["input"], pads, 0.0), p["kernel_size"], grad_output=p["grad_output"],
                        **_unpadded_kwargs(p))
    return z.output if answer == "output" else _crop(z.grad_input, pads)


def _extra_before(p: dict[str, Any], t: Trace) -> Any:
    """"Same" padding with the odd cell at the start (a finite floor no input comes near stands for −∞)."""
    pads = [(a, b) for b, a in _pads(p, t)]
    if pads == _pads(p, t):
        return None
    return engine.max_pool(_spatial_pad(p["input"], pads, _FLOOR), p["kernel_size"], **_unpadded_kwargs(p)).output


_FLOOR = -1000.0


def _average_spread(p: dict[str, Any], t: Trace) -> Any:
    """Average pooling's backward over the same windows (zero padding, every cell of a window counted)."""
    pads = _pads(p, t)
    g = engine.avg_pool(_spatial_pad(p["input"], pads, 0.0), p["kernel_size"], stride=p["stride"],
                        ceil_mode=p["ceil_mode"], grad_output=p["grad_output"]).grad_input
    return _crop(g, pads)


def _plain_windows(p: dict[str, Any]) -> bool:
    """No padding, dilation or ceil_mode, a 2-D input with a gradient: engine.max_pool_backward's windows."""
    return (not _has_padding(p) and p["dilation"] == 1 and not p["ceil_mode"] and np.ndim(p["input"]) == 2
            and p["grad_output"] is not None)


def _ties(rule: str, field: str) -> Any:
    def compute(p: dict[str, Any], t: Trace) -> Any:
        r = engine.max_pool_backward(p["input"], p["kernel_size"], p["grad_output"], stride=p["stride"], ties=rule)
        return r[field] if np.any(r.ties_count > 1) else None
    return compute


def _swapped_sides(side: str) -> Any:
    """The other side's padding where the two differ (the odd cell put first), else no mistake."""
    other = "pad_after" if side == "pad_before" else "pad_before"
    return lambda p, t: t[other] if np.any(np.asarray(t.pad_before) != np.asarray(t.pad_after)) else None


def _all_after(side: str) -> Any:
    """All of P at the end: nothing before, P = before + after after."""
    return lambda p, t: (np.zeros_like(np.asarray(t.pad_before)) if side == "pad_before"
                         else np.asarray(t.pad_before) + np.asarray(t.pad_after))


def _pad_mistakes(side: str) -> tuple[Mistake, ...]:
    return (Mistake("stride-1-padding", stride=1, grad_output=None, when=_same,
                    why="With stride s the output is ⌈n/s⌉ and P = (o − 1)s + k − n; k − 1 is the padding of stride 1."),
            Mistake("extra-before", compute=_swapped_sides(side), when=_same,
                    why="TensorFlow puts the odd cell of padding at the END (bottom, right)."),
            Mistake("all-after", compute=_all_after(side), when=_same,
                    why="TensorFlow splits P between the two ends: ⌊P/2⌋ before, the rest after."))


def _same(p: dict[str, Any]) -> bool:
    return p["padding"] == "same"


MAX_POOL_MISTAKES = {
    "output": (Mistake("average", when=lambda p: p["padding"] != "same",
                       compute=lambda p, t: engine.avg_pool(p["input"], p["kernel_size"], stride=p["stride"],
                                                            padding=p["padding"], ceil_mode=p["ceil_mode"]).output,
                       why="Max-pooling keeps each window's largest value, not its mean."),
               Mistake("stride-1", stride=1, grad_output=None,
                       when=lambda p: p["padding"] != "same" and p["kernel_size"] == 2 and p["stride"] in (2, None),
                       why="The windows do not overlap: stride 2 moves them 2 positions at a time."),
               Mistake("valid-padding", padding="valid", grad_output=None, when=lambda p: p["padding"] == "same",
                       why='"Same" pads the input so that the output is ⌈n/s⌉ per side; you pooled without padding.'),
               Mistake("zero-padding", compute=lambda p, t: _zero_padded(p, t, "output"), when=_has_padding,
                       why="Max-pooling pads with −∞ (padded cells never win); a 0 would beat negative inputs."),
               Mistake("extra-before", compute=_extra_before, when=lambda p: p["padding"] == "same",
                       why="TensorFlow puts the odd cell of padding at the end: the last window hangs over it.")),
    "grad_input": (Mistake("zero-padding", compute=lambda p, t: _zero_padded(p, t, "grad_input"),
                           when=lambda p: _has_padding(p) and p["grad_output"] is not None,
                           why="A padded cell is never the maximum: every δ goes to an input cell."),
                   # one wording per kind of problem: the built-in problems keep theirs (sweep.json holds them)
                   Mistake("average-spread", compute=_average_spread,
                           when=lambda p: p["grad_output"] is not None and p["padding"] != "same",
                           why="That is average-pooling's backward pass; max-pooling sends all of δ to the maximum."),
                   Mistake("average-spread", compute=_average_spread,
                           when=lambda p: p["grad_output"] is not None and p["padding"] == "same",
                           why="That is average-pooling's backward pass; max-pooling sends all of δ to the window's "
                               "maximum."),
                   Mistake("ones", grad_output=lambda p: np.ones_like(np.asarray(p["grad_output"], dtype=float)).tolist(),
                           when=lambda p: p["grad_output"] is not None,
                           why="The maximum receives the upstream gradient δ, not 1."),
                   Mistake("ties-split", compute=_ties("split", "grad_input"), when=_plain_windows,
                           why="PyTorch does not share δ between tied maxima: the first in row-major order takes all "
                               "of it."),
                   Mistake("ties-all", compute=_ties("all", "grad_input"), when=_plain_windows,
                           why="Only one of the tied maxima receives δ (the first in row-major order), not each of "
                               "them."),
                   Mistake("ties-last", compute=_ties("last", "grad_input"), when=_plain_windows,
                           why="Ties go to the first maximum in row-major order (PyTorch), not the last.")),
    "indices": (Mistake("ties-last", compute=_ties("last", "indices"), when=_plain_windows,
                        why="Ties go to the first maximum in row-major order, not the last."),),
    # "same" padding's amounts, per spatial dimension: each mistake gives both sides (a part asking one
    # side's [before, after] pair reads pad_before's and pad_after's values of one id)
    "pad_before": _pad_mistakes("pad_before"),
    "pad_after": _pad_mistakes("pad_after"),
}


# Each answer recomputed from the problem's own parameters (no earlier part to carry forward).
MAX_POOL_ECF = {
    "output": (Ecf("solve:max-pool", lambda p, t: stated_params("max-pool", p, drop=("grad_output",)), "output"),),
    "grad_input": (Ecf("solve:max-pool", lambda p, t: stated_params("max-pool", p), "grad_input"),),
}


MAX_POOL = Topic(
    "max-pool", "Max-pooling forward and backward",
    (Param("input", "vector, matrix (H×W) or C×H×W (each channel pooled alone)"), Param("kernel_size", "int or [kH, kW]"),
     Param("stride", "int (= kernel_size)", None),
     Param("padding", 'int (padded with −∞), "same" (TensorFlow) or "valid"', 0),
     Param("dilation", "int", 1), Param("ceil_mode", "bool", False),
     Param("grad_output", "∂L/∂output (optional)", None)),
    ("output", "grad_input", "pad_before", "pad_after"),
    lambda p: engine.max_pool(p["input"], p["kernel_size"], stride=p["stride"], padding=p["padding"],
                              dilation=p["dilation"], ceil_mode=p["ceil_mode"], grad_output=p["grad_output"]),
    max_pool_steps,
    mistakes=MAX_POOL_MISTAKES,
    ecf=MAX_POOL_ECF,
    conventions=lambda p: {"ties": "the first maximum in row-major order gets the gradient (PyTorch)",
               "padding": "TensorFlow \"same\": output ⌈n/s⌉, −∞ padding, the extra at the end"
               if p["padding"] == "same" else "−∞ (never selected)"},
    answer_names=lambda p, t: [n for n in ("output", "grad_input", "pad_before", "pad_after") if n in t],
    refuses=(Refusal("padding above kernel_size/2 (PyTorch's rule)", {"input": [1, 2, 3, 4], "kernel_size": 2, "padding": 2}),
             Refusal("ceil_mode with \"same\" padding (\"valid\" is padding 0: ceil_mode applies to it as to 0)",
                     {"input": [1, 2, 3, 4], "kernel_size": 2, "padding": "same", "ceil_mode": True}),
             Refusal("an output size below 1: a window larger than the padded input (ceil_mode's rule can still give "
                     "one window: [[3, 1]], kernel 2, ceil_mode → [[3]])", {"input": [1, 2], "kernel_size": 3})),
)


class AvgPoolSteps(NamedTuple):
    divisors: Step
    average: Step
    route: Step | None             # with grad_output


def avg_pool_steps(p: dict[str, Any], t: Trace) -> AvgPoolSteps:
    counted = ("cells inside the zero-padded input" if p["count_include_pad"] else "cells inside the input (not the padding)")
    return AvgPoolSteps(
        Step(f"Divisor of each window: the {counted}", r"N_{ij} = |\text{window}(i,j)|", {"divisors": t.divisors}),
        Step("Average of each window" + (", channel by channel" if np.ndim(p["input"]) == 3 else ""),
             r"y_{ij} = \frac{1}{N_{ij}} \sum_{(u,v) \in \text{window}(i,j)} x_{uv}", {"output": t.output}),
        Step("Spread each gradient evenly over its window (overlapping windows add)",
             r"\frac{\partial L}{\partial x_{uv}} = \sum_{(i,j):\ (u,v) \in \text{window}(i,j)} \frac{\delta_{ij}}{N_{ij}}",
             {"grad_input": t.grad_input}) if "grad_input" in t else None)


def _pool_kwargs(p: dict[str, Any]) -> dict[str, Any]:
    return {"stride": p["stride"], "padding": p["padding"], "ceil_mode": p["ceil_mode"]}


def _max_routing(p: dict[str, Any], t: Trace) -> Any:
    return engine.max_pool(p["input"], p["kernel_size"], grad_output=p["grad_output"], **_pool_kwargs(p)).grad_input


def _undivided(p: dict[str, Any], t: Trace) -> Any:
    """Each cell of a window given the window's whole gradient: δ scaled back up by the divisor."""
    scaled = np.asarray(p["grad_output"], dtype=float) * t.divisors
    return engine.avg_pool(p["input"], p["kernel_size"], count_include_pad=p["count_include_pad"], grad_output=scaled,
                           **_pool_kwargs(p)).grad_input


def _padded(p: dict[str, Any]) -> bool:
    return bool(np.any(np.asarray(p["padding"]) != 0))


def _has_grad(p: dict[str, Any]) -> bool:
    return p["grad_output"] is not None


AVG_POOL_MISTAKES = {
    "output": (Mistake("padding-counted", count_include_pad=lambda p: not p["count_include_pad"], when=_padded,
                       why="Count the divisor as the layer does: with count_include_pad the zero padding counts, "
                           "without it only the input's own cells do."),
               Mistake("max-not-average", compute=lambda p, t: engine.max_pool(p["input"], p["kernel_size"],
                                                                             **_pool_kwargs(p)).output,
                       why="Average pooling takes the mean of each window, not its maximum."),
               Mistake("sum-not-mean", compute=lambda p, t: t.output * t.divisors,
                       why="Average pooling divides each window's sum by its number of cells.")),
    "grad_input": (Mistake("max-routing", compute=_max_routing, when=_has_grad,
                           why="That is max-pooling's routing: average pooling spreads δ evenly, δ/N to every cell "
                               "of the window."),
                   Mistake("undivided", compute=_undivided, when=_has_grad,
                           why="Each cell gets δ divided by the window's size N: the average scales every input by 1/N."),
                   Mistake("padding-counted", count_include_pad=lambda p: not p["count_include_pad"], when=_padded,
                           why="Divide by the same N as the forward pass (count_include_pad decides it)."),
                   Mistake("delta-ignored", when=_has_grad,
                           grad_output=lambda p: np.ones_like(np.asarray(p["grad_output"], dtype=float)).tolist(),
                           why="Each cell receives its window's δ divided by N, not 1/N.")),
}


AVG_POOL = Topic(
    "avg-pool", "Average pooling forward and backward",
    (Param("input", "vector, matrix (H×W) or C×H×W (each channel pooled alone)"), Param("kernel_size", "int or [kH, kW]"),
     Param("stride", "int (= kernel_size)", None), Param("padding", "int (zeros)", 0),
     Param("count_include_pad", "bool: the zero padding counts in the divisor (PyTorch's default)", True),
     Param("ceil_mode", "bool", False), Param("grad_output", "∂L/∂output (optional)", None)),
    ("output", "grad_input"),
    lambda p: engine.avg_pool(p["input"], p["kernel_size"], stride=p["stride"], padding=p["padding"],
                              count_include_pad=p["count_include_pad"], ceil_mode=p["ceil_mode"],
                              grad_output=p["grad_output"]),
    avg_pool_steps,
    mistakes=AVG_POOL_MISTAKES,
    conventions=lambda p: {"divisor": "window cells inside the zero-padded input (count_include_pad, PyTorch's default)"
                           if p["count_include_pad"] else "window cells inside the input only",
                           "padding": "zeros"},
    answer_names=lambda p, t: [n for n in ("output", "grad_input") if n in t],
    refuses=(Refusal("padding above kernel_size/2 (PyTorch's rule)", {"input": [1, 2, 3, 4], "kernel_size": 2, "padding": 2}),
             Refusal("an output size below 1: a window larger than the padded input", {"input": [1, 2], "kernel_size": 3})),
)
