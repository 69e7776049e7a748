"""Average pooling by hand: the forward pass and the gradient's routing, against max-pooling's.

Level 1: a 4×4 input, 2×2 windows with stride 2: each output is a window's mean; backward, every cell
of a window gets δ/4 — where max-pooling (asked too, for the same δ) sends all of δ to one cell.
Level 2: overlapping windows (2×2, stride 1) on a 3×3 input: a cell in several windows collects a
quarter of each one's δ; and global average pooling of the same input (one mean, δ/9 everywhere).
Level 3: 3×3 windows, stride 2, zero padding 1 on a 4×4 input: the divisor with the padding counted
(PyTorch's count_include_pad=True, 9 everywhere) and without it (4, 6 or 9 cells of the input).
Calculator-free: integer inputs and gradients; every answer is a fraction, given exactly where it is
not a short decimal.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from examprep import solve
from examprep.document import Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.exact import frac
from examprep.problem import Part, SolutionStep


def _exact(numerators: np.ndarray, divisors: np.ndarray) -> list | None:
    """Entry-wise numerator/divisor as exact text, or None where every entry is a short decimal."""
    fr = [[Fraction(int(round(n)), int(d)) for n, d in zip(rn, rd)] for rn, rd in zip(numerators, divisors)]
    if all(f.denominator in (1, 2, 4, 5, 8) for row in fr for f in row):
        return None
    return [[frac(f) for f in row] for row in fr]


def _grad_exact(x_shape: tuple[int, ...], kernel: int, stride: int, padding: int, delta: np.ndarray,
                divisors: np.ndarray) -> list | None:
    """∂L/∂x of an average pool as exact fractions (each window's δ/N added onto its cells), or None where
    every entry is a short decimal."""
    h, w = x_shape
    out = [[Fraction(0)] * w for _ in range(h)]
    for i in range(delta.shape[0]):
        for j in range(delta.shape[1]):
            share = Fraction(int(delta[i, j]), int(divisors[i, j]))
            for u in range(kernel):
                for v in range(kernel):
                    r, c = i * stride + u - padding, j * stride + v - padding
                    if 0 <= r < h and 0 <= c < w:
                        out[r][c] += share
    if all(f.denominator in (1, 2, 4, 5, 8) for row in out for f in row):
        return None
    return [[frac(f) for f in row] for row in out]


# max_grad_input compares max-pooling's routing with averaging: max-pool's table less its tie rules (the
# prompt states PyTorch's), which the level-1 draws do not avoid.
MAX_TIES = ("ties-split", "ties-all", "ties-last")


@generator("avg-pool", title="Average pooling forward and backward (against max-pooling)",
           syllabus="CNNs: average pooling, global average pooling, forward and backward", version=1)
def avg_pool(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    if difficulty == 1:
        x, kernel, stride, padding = rng.ints(-3, 6, (4, 4)), 2, 2, 0
    elif difficulty == 2:
        x, kernel, stride, padding = rng.ints(-3, 6, (3, 3)), 2, 1, 0
    else:
        x, kernel, stride, padding = rng.ints(-2, 4, (4, 4)), 3, 2, 1
    out_n = (x.shape[0] + 2 * padding - kernel) // stride + 1
    delta = rng.ints(-4, 4, (out_n, out_n), nonzero=True)
    params = {"input": jsonable(x), "kernel_size": kernel, "stride": stride, "padding": padding,
              "grad_output": jsonable(delta)}
    known = solve.mistakes("avg-pool", params)
    t = known.trace()
    if len(set(np.ravel(t.output))) < 3 or np.count_nonzero(t.grad_input) < x.size // 2:
        raise Degenerate("too few distinct averages, or a mostly zero gradient")
    sums = t.output * t.divisors
    out_mis = known.of("output", jsonable)
    # level 1 asks max-pooling's routing of the same δ as a part too
    maxed = solve.mistakes("max-pool", {"input": jsonable(x), "kernel_size": kernel, "stride": stride,
                                        "grad_output": jsonable(delta)}) if difficulty == 1 else None
    mx = maxed.trace() if maxed is not None else None
    grad_mis = known.of("grad_input", jsonable)
    cf = calculator_free
    parts = [Part("output", "The pooled output $y$" + (" (PyTorch's default, count_include_pad=True: the zero "
                                                        "padding counts in the divisor)." if padding else "."),
                  "matrix", jsonable(t.output), shape=t.output.shape, points=2, minutes=0.6 * t.output.size + 1,
                  exact=_exact(sums, t.divisors) if cf else None, misconceptions=out_mis,
                  hint="Add the window's cells (padding counts as 0) and divide by the divisor N.")]
    solution = []
    steps = solve.pool.avg_pool_steps(known.params, t)
    if padding:
        excluded = known.at(count_include_pad=False)
        excl = excluded.trace()
        solution += steps_from((steps.divisors, steps.average), "output")
        parts.append(Part("output_exclude_pad", "The pooled output with count_include_pad=False (only the input's own "
                          "cells count in the divisor).", "matrix", jsonable(excl.output), shape=excl.output.shape, points=2,
                          minutes=2.5, exact=_exact(excl.output * excl.divisors, excl.divisors) if cf else None,
                          # which cells count is this part's point: the sums are the output part's
                          misconceptions=excluded.of("output", jsonable, skip={"sum-not-mean"}),
                          hint="Divide each window's sum by how many of its cells lie inside the 4×4 input."))
        ex = solve.pool.avg_pool_steps(known.params | {"count_include_pad": False}, excl)
        solution += steps_from((ex.divisors, ex.average), "output_exclude_pad", prefix="count_include_pad=False: ")
    else:                                       # every divisor is k²: no step of its own
        solution += steps_from(steps.average, "output")
    parts.append(Part("grad_input", r"$\partial L / \partial x$ (the input's shape)" + (" (count_include_pad=True)."
                                                                                        if padding else "."),
                      "matrix", jsonable(t.grad_input), shape=x.shape, points=3 if difficulty > 1 else 2,
                      minutes=0.4 * x.size + 1,
                      exact=_grad_exact(x.shape, kernel, stride, padding, delta, t.divisors) if cf else None,
                      misconceptions=grad_mis,
                      hint="Every cell of a window gets δ/N of that window; a cell in several windows adds them up; "
                           "what lands on the padding is dropped."))
    solution += steps_from(steps.route, "grad_input")
    if mx is not None:
        if np.array_equal(mx.grad_input, t.grad_input) or np.any(np.asarray(mx.indices) < 0):
            raise Degenerate("max routing equals average routing")
        parts.append(Part("max_grad_input", r"For comparison: $\partial L / \partial x$ if the layer were a 2×2 "
                          "max-pool with stride 2 (same δ; ties to the first maximum in row-major order).", "matrix",
                          jsonable(mx.grad_input), shape=x.shape, points=1, minutes=2,
                          misconceptions=maxed.of("grad_input", jsonable, skip=MAX_TIES),
                          hint="All of δ goes to the window's maximum; the other three cells get 0."))
        mp = solve.pool.max_pool_steps(maxed.params, mx)
        solution += steps_from(mp.route, "max_grad_input", prefix="Max-pooling: ")
    if difficulty == 2:
        gap_delta = float(rng.choice([-9, 9, 18, -18] if cf else [1, -1, 2, 4.5, -4.5]))
        pooled = solve.mistakes("avg-pool", {"input": jsonable(x), "kernel_size": 3, "grad_output": [[gap_delta]]})
        gap = pooled.trace()
        mean = float(gap.output[0, 0])
        gap_exact = frac(Fraction(int(round(np.sum(x))), 9))
        parts.append(Part("gap", "Global average pooling of the same x (one value: torch.nn.AdaptiveAvgPool2d(1)).",
                          "number", mean, points=1, minutes=1, exact=gap_exact if cf else None,
                          misconceptions=pooled.of("output", lambda v: float(np.ravel(v)[0]))))
        parts.append(Part("gap_grad", rf"Its gradient $\partial L / \partial x$ when $\partial L / \partial y = "
                          rf"{gap_delta:g}$.", "matrix", jsonable(gap.grad_input), shape=x.shape, points=1, minutes=1,
                          # the spread of one δ is this part's point: δ itself is given in its prompt
                          misconceptions=pooled.of("grad_input", jsonable, skip={"delta-ignored"})))
        gs = solve.pool.avg_pool_steps(pooled.params, gap)
        solution += steps_from(gs.average, "gap", prefix="Global average pooling: ")
        solution += steps_from(gs.route, "gap_grad", prefix="Global average pooling: ")
    if cf and any(p.exact for p in parts):
        solution.append(SolutionStep("Exact values", [Matrix(p.id, p.exact) for p in parts if p.exact]))
    statement = [Text(f"Average pooling with {kernel}×{kernel} windows and stride {stride}"
                      + (f", zero padding {padding} on every side" if padding else ", no padding")
                      + (" (the windows overlap)" if stride < kernel else "")
                      + ". Backpropagation has delivered $\\delta = \\partial L / \\partial y$."),
                 Matrix("x", jsonable(x)), Matrix("δ", jsonable(delta))]
    return Draft(title={1: "Average pooling against max-pooling", 2: "Average pooling: overlapping windows and global "
                        "average pooling", 3: "Average pooling with padding: which cells count"}[difficulty],
                 params=params, statement=statement, parts=parts, solution=solution,
                 conventions={"window": f"{kernel}×{kernel}, stride {stride}" + (f", zero padding {padding}"
                                                                                   if padding else ""),
                              "divisor": "count_include_pad=True (PyTorch's default): padding cells count"
                              if padding else "the window's k² cells",
                              "backward": "each cell of a window gets δ/N; overlapping windows add"})
