"""A Problem's worked steps as every renderer shows them: where a step's formula is printed with its
result only, the formula again with the problem's numbers put in (a display-side addition: the
Problem, its key and the golden files stay as they are, and a key made before shows the same).

receptive-field: each layer's effective kernel, exact quotient and rounded size with the layer's
n, p, k_eff and s; the per-layer effective kernels, jumps and receptive fields; the "same" layer's
⌈n/s⌉ and its total padding. The numbers are the problem's parameters (``params``: input_size,
layers, same) and the values of its own steps and parts, never computed again here.
"""
from __future__ import annotations

from typing import Any, Callable

from examprep.document import Math, Matrix
from examprep.problem import Problem, SolutionStep


def worked_steps(problem: Problem) -> list[SolutionStep]:
    """``problem.solution``, with the numbers put into the formulas of the generators listed in
    _SUBSTITUTED; a step whose numbers are not all in the Problem (another version) as stored."""
    fill = _SUBSTITUTED.get(problem.generator)
    return list(problem.solution) if fill is None else fill(problem)


def _values(step: SolutionStep) -> dict[str, Any]:
    return {b.name: b.values for b in step.blocks if isinstance(b, Matrix)}


def _with(step: SolutionStep, extend: str = "", below: str = "") -> SolutionStep:
    """``step`` with its first formula extended by `` = extend`` or followed by the formula ``below``."""
    blocks, done = [], False
    for b in step.blocks:
        if isinstance(b, Math) and not done:
            done = True
            blocks.append(Math(f"{b.latex} = {extend}") if extend else b)
            if below:
                blocks.append(Math(below))
        else:
            blocks.append(b)
    return SolutionStep(step.title, blocks, step.part) if done else step


def _receptive_field(problem: Problem) -> list[SolutionStep]:
    params = problem.params
    layers, n0 = params.get("layers"), params.get("input_size")
    sizes = {p.id: p.expected for p in problem.parts}
    keff: dict[int, Any] = {}               # per layer (from 1), from its effective-kernel step
    rf: dict[str, Any] = {}                 # the receptive-field steps' values, in order
    out = []
    for step in problem.solution:
        values = _values(step)
        try:
            out.append(_receptive_field_step(step, values, layers, n0, sizes, keff, rf, params.get("same")))
        except (KeyError, IndexError, TypeError, ValueError):      # a Problem of another shape: as stored
            out.append(step)
    return out


def _receptive_field_step(step: SolutionStep, values: dict, layers: list, n0: int, sizes: dict, keff: dict,
                          rf: dict, same: dict | None) -> SolutionStep:
    part = step.part or ""
    if part.startswith("size_") and part[5:].isdigit():
        i = int(part[5:])
        layer = layers[i - 1]
        n = n0 if i == 1 else sizes[f"size_{i - 1}"]
        k, s, p, d = layer["kernel_size"], layer["stride"], layer["padding"], layer["dilation"]
        if "effective_kernel" in values:
            keff[i] = values["effective_kernel"]
            return _with(step, rf"{d} \cdot ({k} - 1) + 1")
        fraction = rf"\frac{{{n} + 2 \cdot {p} - {keff[i]}}}{{{s}}}"
        if "quotient" in values:
            return _with(step, f"{fraction} + 1")
        if "output_size" in values:
            return _with(step, rf"\left\lfloor {fraction} \right\rfloor + 1")
        return step
    if part == "receptive_field":
        rf.update(values)
        count = range(1, len(layers) + 1)
        at = [None] + layers                                       # at[i]: layer i, from 1
        if "effective_kernels" in values:
            return _with(step, below=r",\quad ".join(
                rf"k_{{\text{{eff}},{i}}} = {at[i]['dilation']} \cdot ({at[i]['kernel_size']} - 1) + 1" for i in count))
        if "jumps" in values:
            j = [1] + list(values["jumps"])
            return _with(step, below=r",\quad ".join(rf"j_{{{i}}} = {j[i - 1]} \cdot {at[i]['stride']}" for i in count))
        if "receptive_fields" in values:
            j, k, r = [1] + list(rf["jumps"]), [None] + list(rf["effective_kernels"]), [1] + list(values["receptive_fields"])
            return _with(step, below=r",\quad ".join(rf"r_{{{i}}} = {r[i - 1]} + ({k[i]} - 1) \cdot {j[i - 1]}"
                                                      for i in count))
        return step
    if same is not None and part == "same_output" and "output_size" in values:
        return _with(step, rf"\lceil {same['input_size']} / {same['stride']} \rceil")
    if same is not None and part == "pad_before" and "pad_before" in values:
        o, s, k, n = sizes["same_output"], same["stride"], same["kernel_size"], same["input_size"]
        return _with(step, below=rf"P = \max(({o} - 1) \cdot {s} + {same.get('dilation', 1)} \cdot ({k} - 1) + 1 - {n},\ 0)")
    return step


_SUBSTITUTED: dict[str, Callable[[Problem], list[SolutionStep]]] = {"receptive-field": _receptive_field}
