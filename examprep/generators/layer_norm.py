"""Layer normalisation by hand: mean and variance over the features of each token, the normalised
output, the learned gain and bias, and where ε goes.

Level 1: one token of 4 features — μ, σ² (biased, as PyTorch) and (x − μ)/(σ + ε).
Level 2: two tokens (rows) with γ and β — statistics per token, over the features (not over the
batch, as batch norm would).
Level 3: an exaggerated ε, so the lecture's (x − μ)/(σ + ε) and PyTorch's (x − μ)/√(σ² + ε) differ.
The features are drawn so that σ is a whole number (and √(σ² + ε) a one-decimal number at level 3):
calculator-free answers are exact fractions (with ε = 0 at levels 1 and 2).
"""
from __future__ import annotations

import functools
import itertools
from fractions import Fraction

import numpy as np

from examprep import solve
from examprep.document import Matrix, Text
from examprep.generators.framework import Draft, Stream, generator, nice, steps_from, jsonable
from examprep.exact import frac
from examprep.problem import Part, SolutionStep

# Level 3's two outputs are about where ε goes: each leaves out the table's output mistakes that are not (the
# lecture's keeps the variance one, PyTorch's only the placements)
LECTURE_SKIPS = ("divide-by-variance", "not-centred")
PYTORCH_SKIPS = ("unbiased", "divide-by-variance", "not-centred")

# σ → ε with σ² + ε a perfect square of a one-decimal number: 1 + 0.21 = 1.1², 4 + 0.41 = 2.1², …
EXAGGERATED_EPS = {1: (0.21, 0.44, 0.69), 2: (0.41, 0.84), 3: (0.61,)}


@functools.cache
def _deviations(whole_sigma: bool) -> tuple[tuple[int, ...], ...]:
    """Sorted integer deviation vectors of 4 features with Σ = 0: with a whole-number biased σ (1, 2 or 3), or
    with at least three distinct values and entries in [−4, 4] (σ = √(Σd²/4), exact as a square root)."""
    out = []
    for combo in itertools.combinations_with_replacement(range(-6, 7), 4):
        if sum(combo) or len(set(combo)) < 2:
            continue
        ss = sum(v * v for v in combo)
        if ss in (4, 16, 36) if whole_sigma else (len(set(combo)) > 2 and max(map(abs, combo)) <= 4):
            out.append(combo)
    return tuple(out)


def _token(rng: Stream, half: bool, whole_sigma: bool) -> np.ndarray:
    dev = rng.shuffle(rng.choice(_deviations(whole_sigma)))
    mu = rng.integer(-3, 5) + (0.5 if half and rng.chance(1, 2) else 0.0)
    return np.array(dev, dtype=float) + mu


def _sqrt_parts(n: int) -> tuple[int, int]:
    """√n = a·√b with b square-free."""
    a, b = 1, n
    f = 2
    while f * f <= b:
        while b % (f * f) == 0:
            a, b = a * f, b // (f * f)
        f += 1
    return a, b


def _exact(x: np.ndarray, gamma=None, beta=None) -> list:
    """γ·(x − μ)/σ + β per row with ε = 0, as exact text: σ = √(Σd²/D) = a√b / 2, so each entry is
    (2γd/a)/√b + β (short decimals in x, γ, β are exact fractions)."""
    rows = np.atleast_2d(x)
    out = []
    for row in rows:
        xs = [Fraction(str(v)) for v in row]
        mu = sum(xs) / len(xs)
        devs = [v - mu for v in xs]
        ss = sum(dv * dv for dv in devs)          # an integer: deviations are integers
        a, b = _sqrt_parts(int(ss))
        g = [Fraction(str(v)) for v in (gamma if gamma is not None else [1] * len(xs))]
        be = [Fraction(str(v)) for v in (beta if beta is not None else [0] * len(xs))]
        entries = []
        for dv, gi, bi in zip(devs, g, be):
            c = 2 * gi * dv / a
            if b == 1 or c == 0:
                entries.append(frac(c / (1 if b == 1 else 1) + bi) if b == 1 else frac(bi))
                continue
            term = f"{c.numerator}/sqrt({b})" if c.denominator == 1 else f"{c.numerator}/({c.denominator}*sqrt({b}))"
            entries.append(term if bi == 0 else f"{term} {'+' if bi > 0 else '-'} {frac(abs(bi))}")
        out.append(entries)
    return out if np.ndim(x) == 2 else out[0]


def _exact_eps(x: np.ndarray, denominator: Fraction) -> list:
    """(x − μ)/denominator for one row, exact (level 3: whole σ, ε a short decimal)."""
    xs = [Fraction(str(v)) for v in x]
    mu = sum(xs) / len(xs)
    return [frac((v - mu) / denominator) for v in xs]


@generator("layer-norm", title="Layer normalisation by hand", syllabus="Transformer: layer norm (μ, σ over features, γ, β, ε)",
           version=1)
def layer_norm(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    rows = 2 if difficulty == 2 else 1
    X = np.array([_token(rng, difficulty >= 2, whole_sigma=difficulty == 3 or rng.chance(1, 3)) for _ in range(rows)])
    x = X if rows == 2 else X[0]
    gamma = rng.decimals(0.5, 2, 0.5, (4,)) if difficulty == 2 else np.ones(4)
    beta = rng.decimals(-1, 1, 0.5, (4,)) if difficulty == 2 else np.zeros(4)
    sigma = [float(np.std(r)) for r in X]
    if difficulty == 3:
        eps = rng.choice(EXAGGERATED_EPS[int(round(sigma[0]))])
    else:
        eps = 0.0 if calculator_free else 1e-5
    params = {"x": jsonable(x), "gamma": jsonable(gamma) if difficulty == 2 else 1.0,
              "beta": jsonable(beta) if difficulty == 2 else 0.0, "eps": eps, "eps_placement": "added-to-std",
              "variance": "biased"}
    known = solve.mistakes("layer-norm", params)
    ln = known.trace()
    kind = "matrix" if rows == 2 else "vector"
    shape = (2, 4) if rows == 2 else (4,)
    stat_kind, stat_shape = ("vector", (2,)) if rows == 2 else ("number", None)
    val = jsonable if rows == 2 else float
    if not calculator_free:
        exact = None
    elif difficulty == 3:
        exact = _exact_eps(x, Fraction(int(round(sigma[0]))) + Fraction(str(eps)))
    else:
        exact = _exact(x, gamma if difficulty == 2 else None, beta if difficulty == 2 else None)
    exact_var = None
    if calculator_free:
        variances = [frac(sum((Fraction(str(v)) - sum(Fraction(str(u)) for u in r) / 4) ** 2 for v in r) / 4) for r in X]
        exact_var = variances if rows == 2 else variances[0]
    exact_mean = None
    if calculator_free:
        means = [frac(sum(Fraction(str(v)) for v in r) / 4) for r in X]
        exact_mean = means if rows == 2 else means[0]

    tokens = ["token 1", "token 2"]
    if difficulty == 1:
        intro = "One token's features $x$ (D = 4). Normalise them as the lecture does: "
    elif difficulty == 2:
        intro = ("Two tokens (rows) of D = 4 features each, with learned gain $\\gamma$ and bias $\\beta$. Normalise each "
                 "token as the lecture does: ")
    else:
        intro = "One token's features $x$ (D = 4). "
    eps_text = (f"ε = {nice(eps)} (exaggerated so that where it goes matters)" if difficulty == 3
                else "ε = 0" if calculator_free else "ε = 10⁻⁵")
    formula = (r"$y = \gamma \odot \frac{x - \mu}{\sigma + \epsilon} + \beta$, with $\mu$ and the biased "
               r"$\sigma^2 = \frac{1}{D}\sum_i (x_i - \mu)^2$ over the features")
    statement = [Text(intro + (formula + f"; {eps_text}." if difficulty < 3 else
                               f"The lecture writes layer norm as $y = \\frac{{x - \\mu}}{{\\sigma + \\epsilon}}$, PyTorch "
                               "(torch.nn.LayerNorm) as $y = \\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}}$, both with the "
                               f"biased variance over the features and $\\gamma = 1$, $\\beta = 0$. Here {eps_text}.")),
                 Matrix("x", jsonable(x), row_labels=tokens if rows == 2 else None)]
    if difficulty == 2:
        statement += [Matrix("γ", jsonable(gamma)), Matrix("β", jsonable(beta))]
    asked = ("mean", "var", "output")
    per = " of each token" if rows == 2 else ""
    parts = [
        Part("mean", f"The mean $\\mu${per}.", stat_kind, val(ln.mean), shape=stat_shape, points=1, minutes=1.0 * rows,
             exact=exact_mean, misconceptions=known.of("mean", val)),
        Part("var", f"The (biased) variance $\\sigma^2${per}.", stat_kind, val(ln.var), shape=stat_shape, points=1,
             minutes=1.5 * rows, exact=exact_var, misconceptions=known.of("var", val), hint="σ² = (1/D) Σ (x_i − μ)²."),
    ]
    if difficulty < 3:
        parts.append(Part("output", "The normalised output $y$" + (" (one row per token)." if rows == 2 else "."), kind,
                          jsonable(ln.output), shape=shape, points=2 + rows, minutes=2.0 * rows, exact=exact,
                          misconceptions=known.of("output", jsonable),
                          ecf_rule=solve.ecf("layer-norm", "output", known.params, ln, asked)))
    steps = solve.norm.layer_norm_steps(known.params, ln)
    out_id = "output" if difficulty < 3 else "output_lecture"
    solution = (steps_from(steps.mean, "mean") + steps_from(steps.variance, "var")
                + steps_from((steps.denominator, steps.normalise, steps.affine), out_id))
    conventions = {"axis": "over the features of each token (the last axis)", "variance": "biased (÷ D), as PyTorch",
                   "eps": f"{'0' if eps == 0 else '10⁻⁵'} added to σ (the lecture)" if difficulty < 3 else
                   f"{nice(eps)}: added to σ (lecture) and inside the square root (PyTorch)"}
    if difficulty == 3:
        pytorch = known.at(eps_placement="inside-sqrt")
        pt = pytorch.trace()
        root = Fraction(round(float(np.sqrt(sigma[0] ** 2 + eps) * 10)), 10)
        parts += [
            Part("output_lecture", r"The output with the lecture's $\frac{x - \mu}{\sigma + \epsilon}$.", "vector",
                 jsonable(ln.output), shape=(4,), points=2, minutes=2, exact=exact,
                 misconceptions=known.of("output", jsonable, skip=LECTURE_SKIPS),
                 ecf_rule=solve.ecf("layer-norm", "output", known.params, ln, asked)),
            Part("output_pytorch", r"The output with PyTorch's $\frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}$.", "vector",
                 jsonable(pt.output), shape=(4,), points=2, minutes=2,
                 exact=_exact_eps(x, root) if calculator_free else None,
                 misconceptions=pytorch.of("output", jsonable, skip=PYTORCH_SKIPS),
                 ecf_rule=solve.ecf("layer-norm", "output", pytorch.params, pt, asked)),
        ]
        pt_steps = solve.norm.layer_norm_steps(pytorch.params, pt)
        solution += steps_from((pt_steps.denominator, pt_steps.normalise, pt_steps.affine), "output_pytorch", "PyTorch: ")
        params = params | {"compare_eps_placement": "inside-sqrt"}
    if calculator_free and exact is not None:
        pid = "output" if difficulty < 3 else "output_lecture"
        solution.append(SolutionStep("Exact values", [Text("σ = √(Σ(x − μ)²/D); every entry is exact."),
                                                      Matrix("y (exact)", exact)], pid))
    title = {1: "Layer norm of one token", 2: "Layer norm of two tokens with γ and β", 3: "Layer norm: where ε goes"}[difficulty]
    return Draft(title=title, params=params, statement=statement, parts=parts, solution=solution, conventions=conventions)
