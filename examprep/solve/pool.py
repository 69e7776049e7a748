"""Solve topics of pooling: max-pool and avg-pool (forward and backward)."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Mistake, Param, Refusal, Step, Topic


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
    lambda p: {"ties": "the first maximum in row-major order gets the gradient (PyTorch)",
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
                       why="Average pooling takes the mean of each window, not its maximum.")),
    "grad_input": (Mistake("max-routing", compute=_max_routing, when=_has_grad,
                           why="That is max-pooling's routing: average pooling spreads δ evenly, δ/N to every cell "
                               "of the window."),
                   Mistake("undivided", compute=_undivided, when=_has_grad,
                           why="Each cell gets δ divided by the window's size N: the average scales every input by 1/N."),
                   Mistake("padding-counted", count_include_pad=lambda p: not p["count_include_pad"], when=_padded,
                           why="Divide by the same N as the forward pass (count_include_pad decides it).")),
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
