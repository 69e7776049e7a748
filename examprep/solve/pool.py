"""Solve topic of pooling: max-pool (forward and backward)."""
from __future__ import annotations

from typing import Any, NamedTuple

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Param, Step, Topic


class MaxPoolSteps(NamedTuple):
    maximum: Step
    route: Step | None             # with grad_output


def max_pool_steps(p: dict[str, Any], t: Trace) -> MaxPoolSteps:
    return MaxPoolSteps(
        Step("Maximum of each window", r"y_{ij} = \max_{(u,v) \in \text{window}(i,j)} x_{uv}",
             {"output": t.output, "indices": t.indices}),
        Step("Route each gradient to its window's maximum (ties: the first in row-major order)",
             r"\frac{\partial L}{\partial x_{uv}} = \sum_{(i,j):\ \arg\max = (u,v)} \delta_{ij}", {"grad_input": t.grad_input})
        if "grad_input" in t else None)


MAX_POOL = Topic(
    "max-pool", "Max-pooling forward and backward",
    (Param("input", "vector or matrix (H×W)"), Param("kernel_size", "int or [kH, kW]"),
     Param("stride", "int (= kernel_size)", None), Param("padding", "int (padded with −∞)", 0),
     Param("dilation", "int", 1), Param("ceil_mode", "bool", False),
     Param("grad_output", "∂L/∂output (optional)", None)),
    ("output", "grad_input"),
    lambda p: engine.max_pool(p["input"], p["kernel_size"], stride=p["stride"], padding=p["padding"],
                              dilation=p["dilation"], ceil_mode=p["ceil_mode"], grad_output=p["grad_output"]),
    max_pool_steps,
    lambda p: {"ties": "the first maximum in row-major order gets the gradient (PyTorch)",
               "padding": "−∞ (never selected)"},
    answer_names=lambda p, t: [n for n in ("output", "grad_input") if n in t],
)
