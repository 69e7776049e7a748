"""Scaling laws by hand: training compute C = 6ND, Chinchilla's compute-optimal split with 20 tokens per
parameter, and the training time a compute budget takes on a cluster.

Level 1: C from N and D; tokens per parameter against the compute-optimal 20.
Level 2: the compute-optimal N and D for a budget C (C = 6·N·20N = 120N²), and how N grows with C.
Level 3: C for a model, the cluster's sustained throughput and the training time (days; seconds
when calculator-free).
Every number is a small mantissa times a power of ten, so the calculator-free variant is exact.
"""
from __future__ import annotations

import math

from examprep import solve
from examprep.document import Math, Matrix, Table, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, nice, steps_from
from examprep.problem import EXACT, Misconception, Part, SolutionStep

OPTIMAL = ("params", "tokens")
TRAINING_CHOICES = ("fewer tokens than compute-optimal", "about compute-optimal", "more tokens than compute-optimal")


def sci(x: float) -> str:
    """x as inline LaTeX a \\times 10^{k} (a with at most 3 significant digits)."""
    if x == 0:
        return "0"
    k = math.floor(math.log10(abs(x)))
    a = x / 10 ** k
    if round(a, 6) >= 10:      # float rounding put us one decade low
        k, a = k + 1, a / 10
    return f"{nice(a)} \\times 10^{{{k}}}"


def _close(x: float, y: float) -> bool:
    return math.isclose(x, y, rel_tol=1e-9)


@generator("scaling-law", title="Scaling laws: compute, compute-optimal split, training time",
           syllabus="Scaling laws (Kaplan 2020, Chinchilla 2022)", version=1)
def scaling_law(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    conventions = {"compute": "C = 6·N·D FLOPs: 2ND forward + 4ND backward (Kaplan et al. 2020)",
                   "compute-optimal": "20 tokens per parameter (Hoffmann et al. 2022, Chinchilla)"}
    if difficulty == 2:
        return _optimal(rng, calculator_free, conventions)
    n_param = rng.choice([1, 2, 3, 5, 7]) * 10 ** (rng.integer(8, 10) if difficulty == 1 else rng.integer(9, 10))
    ratio = rng.choice([2, 5, 10, 20, 50, 100, 200]) if difficulty == 1 else 20
    tokens = n_param * ratio
    params = {"params": float(n_param), "tokens": float(tokens)}
    known = solve.mistakes("scaling-law", params)
    law = known.trace()
    statement = [Text(f"A language model with $N = {sci(n_param)}$ parameters is trained on $D = {sci(tokens)}$ tokens.")]
    parts = [Part("compute", "The training compute $C$ in FLOPs.", "number", law.compute, points=1, minutes=1.5,
                  misconceptions=known.of("compute"),
                  ecf_rule=solve.ecf("scaling-law", "compute", known.params, law, ["compute"]),
                  hint="C = 6·N·D.")]
    solution = steps_from(solve.counts.scaling_law_steps(known.params, law), "compute")
    if difficulty == 1:
        tpp = law.tokens_per_param_used
        label = TRAINING_CHOICES[0] if tpp < 20 * 0.8 else TRAINING_CHOICES[2] if tpp > 20 * 1.25 else TRAINING_CHOICES[1]
        wrong = [c for c in TRAINING_CHOICES if c != label]
        parts += [
            Part("tokens_per_param", "The number of training tokens per parameter, $D/N$.", "number", tpp, points=1,
                 minutes=1, misconceptions=known.of("tokens_per_param_used"),
                 ecf_rule=solve.ecf("scaling-law", "tokens_per_param_used", known.params, law, ["compute"])),
            Part("regime", "Compared with Chinchilla's compute-optimal 20 tokens per parameter, this model is trained on:",
                 "choice", label, tolerance=EXACT, points=1, minutes=1, choices=TRAINING_CHOICES,
                 # the wrong options: statement slips (generators/slips.py)
                 misconceptions=tuple(Misconception("wrong-direction" if c != TRAINING_CHOICES[1] else "ignores-ratio", c,
                                                    "Compare D/N with 20: below 20 the model is large for its data "
                                                    "(under-trained), above 20 it has seen more tokens than "
                                                    "compute-optimal (as Llama, for cheaper inference).") for c in wrong)),
        ]
        solution += [SolutionStep("Tokens per parameter", [Math(r"D / N"), Matrix("D/N", tpp)], "tokens_per_param"),
                     SolutionStep("Against the compute-optimal ratio", [
                         Text(f"D/N = {nice(tpp)} against 20 (Chinchilla): {label}."), Matrix("regime", label)], "regime")]
        return Draft(title="Training compute C = 6ND", params=params, statement=statement, parts=parts,
                     solution=solution, conventions=conventions)
    # level 3: training time on a cluster
    gpus = rng.choice([64, 256, 1024, 4096]) if not calculator_free else rng.choice([10, 100, 1000])
    peak = rng.choice([1, 2, 3, 5]) * 1e14 if not calculator_free else rng.choice([1, 2, 5]) * 1e14
    util = rng.choice([0.3, 0.4, 0.5]) if not calculator_free else 0.5
    tparams = {"params": float(n_param), "tokens": float(tokens), "num_gpus": gpus, "peak_flops": peak,
               "utilization": util}
    timing = solve.mistakes("training-time", tparams)
    tt = timing.trace()
    unit = "seconds" if calculator_free else "days"
    value = tt.seconds if calculator_free else tt.days
    if not calculator_free and not 1 <= value <= 500:
        raise Degenerate("a run of under a day or over 500 days: not a realistic plan")
    statement.append(Text(f"It is trained on {gpus} accelerators with a peak of ${sci(peak)}$ FLOP/s each, at a model "
                          f"FLOPs utilisation (MFU) of {nice(util)} (the fraction of the peak actually achieved)."))
    statement.append(Table(["N (parameters)", "D (tokens)", "accelerators", "peak FLOP/s", "utilisation"],
                           [[f"${sci(n_param)}$", f"${sci(tokens)}$", gpus, f"${sci(peak)}$", nice(util)]]))
    parts += [
        Part("throughput", "The cluster's sustained throughput in FLOP/s.", "number", tt.throughput, points=1, minutes=1,
             misconceptions=timing.of("throughput"),
             ecf_rule=solve.ecf("training-time", "throughput", timing.params, tt, ["compute"])),
        Part("time", f"The training time in {unit}.", "number", value, points=2, minutes=2, misconceptions=timing.of(unit),
             ecf_rule=solve.ecf("training-time", unit, timing.params, tt, ["compute"])),
    ]
    tsteps = solve.counts.training_time_steps(timing.params, tt)
    solution += steps_from(tsteps.throughput, "throughput") + steps_from(tsteps.time, "time")
    conventions["time"] = f"C / (accelerators × peak × utilisation), in {unit}"
    return Draft(title="Training compute and time", params=tparams, statement=statement, parts=parts, solution=solution,
                 conventions=conventions)


def _optimal(rng: Stream, calculator_free: bool, conventions: dict) -> Draft:
    mant = rng.choice([1, 2, 3, 5, 7] if not calculator_free else [1, 2, 3, 5])
    n_opt = mant * 10 ** rng.integer(8, 10)
    compute = 120.0 * n_opt * n_opt
    growth = rng.choice([4, 9, 16, 100])
    params = {"compute": compute}
    known = solve.mistakes("scaling-law", params)
    law = known.trace()
    if not _close(law.params, n_opt):
        raise Degenerate("float rounding of the budget")      # never for these mantissas; a guard
    bigger = known.trace(compute=compute * growth)
    statement = [Text(f"A lab has a training budget of $C = {sci(compute)}$ FLOPs and wants the compute-optimal model: "
                      "training compute $C = 6ND$, with $D = 20N$ tokens as Chinchilla found (Hoffmann et al. 2022).")]
    parts = [
        Part("params", "The compute-optimal number of parameters $N$.", "number", law.params, points=2, minutes=2.5,
             misconceptions=known.of("params"), ecf_rule=solve.ecf("scaling-law", "params", known.params, law, OPTIMAL),
             hint="Substitute D = 20N into C = 6ND."),
        Part("tokens", "The number of training tokens $D$ for that model.", "number", law.tokens, points=1, minutes=1,
             misconceptions=known.of("tokens"), ecf_rule=solve.ecf("scaling-law", "tokens", known.params, law, OPTIMAL)),
        Part("growth", f"If the budget grows {growth}-fold, by what factor does the compute-optimal $N$ grow?", "number",
             bigger.params / law.params, points=1, minutes=1,
             misconceptions=(Misconception("linear", float(growth),      # the statement's growth factor: SLIPS
                                           f"N = √(C/120) grows as √C: a {growth}× budget gives √{growth} = "
                                           f"{nice(math.sqrt(growth))}× the parameters (and as many times the tokens)."),)),
    ]
    steps = solve.counts.scaling_law_steps(known.params, law)
    solution = steps_from(steps.optimal, "params")
    solution.append(SolutionStep("Tokens: twenty per parameter", [Math(r"D = 20 N"), Matrix("tokens", law.tokens)], "tokens"))
    solution += steps_from(steps.compute, "tokens")
    solution.append(SolutionStep("Growth with the budget: N ∝ √C", [
        Math(rf"\frac{{N'}}{{N}} = \sqrt{{\frac{{C'}}{{C}}}} = \sqrt{{{growth}}}"),
        Matrix("N' (for the larger budget)", bigger.params), Matrix("N'/N", bigger.params / law.params)], "growth"))
    return Draft(title="The compute-optimal model for a budget", params=params | {"growth": growth}, statement=statement,
                 parts=parts, solution=solution, conventions=conventions)
