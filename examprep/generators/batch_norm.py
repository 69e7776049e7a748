"""Batch normalisation by hand (torch.nn.BatchNorm1d on a batch of N examples × C features): the
batch statistics per feature (down each column, not layer norm's axis), the normalised output, the
running statistics, and evaluation mode.

Level 1: training mode on a 4×2 batch: μ and the biased σ² per feature, then x̂ = (x − μ)/√(σ² + ε).
Level 2: with γ and β, and the running statistics after the step: PyTorch's momentum 0.1 weights the
batch, new = 0.9·running + 0.1·batch, and the running variance takes the UNBIASED batch variance.
Level 3: evaluation mode (the running statistics normalise; the batch's are not used), and Keras's
momentum 0.99, which weights the OLD value (PyTorch's 0.01), with its biased running variance.
Calculator-free: each feature's deviations from its mean have a whole σ and ε = 0 (running variances
are perfect squares), so every answer is an exact fraction.
"""
from __future__ import annotations

import functools
import itertools
from fractions import Fraction

import numpy as np

from examprep import solve
from examprep.document import Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, step_per_part, steps_from, jsonable
from examprep.values import allclose
from examprep.exact import frac
from examprep.problem import Part, SolutionStep

N = 4
# Keras's moving mean after a step is level 3's question of momentum conventions: it leaves out the table's
# batch-only (the batch mean itself), which the PyTorch part before it already names
KERAS_SKIPS = ("batch-only",)


@functools.cache
def _whole_sigma_deviations() -> tuple[tuple[int, ...], ...]:
    """Integer deviation vectors of N = 4 values with Σ = 0 and a whole biased σ (Σd² = 4σ², σ = 1, 2, 3)."""
    return tuple(c for c in itertools.combinations_with_replacement(range(-5, 6), N)
                 if not sum(c) and sum(v * v for v in c) in (4, 16, 36))


def _feature(rng: Stream, exact: bool) -> np.ndarray:
    if exact:
        dev = rng.shuffle(rng.choice(_whole_sigma_deviations()))
        return np.array(dev, dtype=float) + rng.integer(-2, 4)
    x = rng.ints(-3, 5, (N,))
    return x if np.ptp(x) > 0 else _feature(rng, exact)


def _fr(v) -> Fraction:
    return Fraction(str(float(v)))


def _isqrt(f: Fraction) -> Fraction:
    num, den = int(round(float(f.numerator) ** 0.5)), int(round(float(f.denominator) ** 0.5))
    if Fraction(num * num, den * den) != f:
        raise Degenerate("not a perfect square")
    return Fraction(num, den)


@generator("batch-norm", title="Batch normalisation: training, running statistics, evaluation",
           syllabus="Batch normalisation: batch statistics, running averages, train vs eval", version=1)
def batch_norm(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    x = np.stack([_feature(rng, calculator_free), _feature(rng, calculator_free)], axis=1)
    eps = 0.0 if calculator_free else 1e-5
    if np.any(x[:, 0] == x[:, 1]):
        raise Degenerate("an example with equal features: layer norm's axis (a named mistake) would divide by 0")
    gamma = rng.decimals(0.5, 2, 0.5, (2,)) if difficulty >= 2 else np.ones(2)
    beta = rng.decimals(-1, 1, 0.5, (2,)) if difficulty >= 2 else np.zeros(2)
    running_mean = rng.ints(-1, 2, (2,)) if difficulty >= 2 else np.zeros(2)
    running_var = np.array([float(rng.choice([1, 4])), float(rng.choice([1, 4, 9]))]) if difficulty >= 2 else np.ones(2)
    params = {"x": jsonable(x), "gamma": jsonable(gamma), "beta": jsonable(beta), "eps": eps, "training": difficulty < 3,
              "running_mean": jsonable(running_mean), "running_var": jsonable(running_var), "momentum": 0.1}
    known = solve.mistakes("batch-norm", params)
    t = known.trace()
    train = known.at(training=True) if difficulty == 3 else known
    tt = train.trace()
    if np.any(np.abs(tt.mean - running_mean) < 1e-9) or allclose(tt.var, running_var):
        raise Degenerate("the batch statistics equal the running ones: eval and training look alike")
    if np.any((np.abs(t.output) < 1e-3) & (np.abs(t.output) > 0)):
        raise Degenerate("an output that ε alone keeps off 0 (it would print as −1.25e−06)")
    ex = _Exact(x, gamma, beta, running_mean, running_var) if calculator_free else None
    parts: list[Part] = []
    solution: list[SolutionStep] = []
    if difficulty < 3:
        steps = solve.norm.batch_norm_steps(known.params, t)
        parts += [
            Part("mean", r"The batch mean $\mu$ of each feature (over the 4 examples).", "vector", jsonable(t.mean),
                 shape=(2,), points=1, minutes=1.5, exact=ex and ex.mean, misconceptions=known.of("mean", jsonable),
                 hint="Average each column: batch norm's statistics are per feature, over the batch."),
            Part("var", r"The batch variance $\sigma^2$ of each feature (biased: divide by m = 4).", "vector",
                 jsonable(t.var), shape=(2,), points=1, minutes=2, exact=ex and ex.var, misconceptions=known.of("var", jsonable),
                 hint="σ² = (1/m) Σ (x − μ)² down each column."),
            Part("output", "The output $y$ (4×2)" + (r", $y = \gamma \hat x + \beta$." if difficulty == 2 else
                                                     r", $y = \hat x$ ($\gamma = 1$, $\beta = 0$)."),
                 "matrix", jsonable(t.output), shape=(N, 2), points=2 + (difficulty == 2), minutes=4, exact=ex and ex.output,
                 misconceptions=known.of("output", jsonable),
                 ecf_rule=solve.ecf("batch-norm", "output", known.params, t, ("mean", "var"))),
        ]
        solution += (step_per_part(steps.statistics, {"mean": "mean", "var": "var"}, titles={"var": "The variance"})
                     + steps_from((steps.normalise, steps.affine), "output"))
    if difficulty == 2:
        parts += [
            Part("running_mean_new", "The running mean after this training step (momentum 0.1, PyTorch).", "vector",
                 jsonable(t.running_mean_new), shape=(2,), points=1, minutes=1.5, exact=ex and ex.running_mean(0.1),
                 misconceptions=known.of("running_mean_new", jsonable),
                 ecf_rule=solve.ecf("batch-norm", "running_mean_new", known.params, t, ("mean", "var")),
                 hint="PyTorch: new = (1 − momentum)·running + momentum·batch."),
            Part("running_var_new", "The running variance after this step (PyTorch).", "vector",
                 jsonable(t.running_var_new), shape=(2,), points=2, minutes=2.5, exact=ex and ex.running_var(0.1, True),
                 misconceptions=known.of("running_var_new", jsonable),
                 ecf_rule=solve.ecf("batch-norm", "running_var_new", known.params, t, ("mean", "var")),
                 hint="PyTorch updates it with the unbiased batch variance m/(m − 1)·σ²."),
        ]
        solution += step_per_part(steps.running, {"running_mean_new": "running_mean_new", "var_unbiased": "running_var_new",
                                                  "running_var_new": "running_var_new"},
                                  titles={"var_unbiased": "The running variance, from the unbiased batch variance"})
    if difficulty == 3:
        steps = solve.norm.batch_norm_steps(known.params, t)
        keras = train.at(momentum=0.99, momentum_convention="keras", running_var_update="biased")
        kt = keras.trace()
        parts += [
            Part("output_eval", r"In evaluation mode (model.eval()), the output $y$ for this batch.", "matrix",
                 jsonable(t.output), shape=(N, 2), points=3, minutes=4, exact=ex and ex.eval_output,
                 misconceptions=known.of("output", jsonable),
                 hint="Evaluation normalises with the running mean and variance; the batch's own statistics are not used."),
            Part("running_mean_new", "Had this batch been a training step instead: the running mean after it in PyTorch "
                 "(momentum 0.1).", "vector", jsonable(tt.running_mean_new), shape=(2,), points=1, minutes=2,
                 exact=ex and ex.running_mean(0.1), misconceptions=train.of("running_mean_new", jsonable),
                 hint="new = 0.9·running + 0.1·(batch mean)."),
            Part("running_mean_keras", "The same step in Keras, BatchNormalization(momentum=0.99): the moving mean "
                 "after it.", "vector", jsonable(kt.running_mean_new), shape=(2,), points=1, minutes=1.5,
                 exact=ex and ex.running_mean(0.01),
                 misconceptions=keras.of("running_mean_new", jsonable, skip=KERAS_SKIPS),
                 hint="Keras: moving = momentum·moving + (1 − momentum)·batch."),
            Part("running_var_keras", "Its moving variance after the step (Keras uses the biased batch variance).",
                 "vector", jsonable(kt.running_var_new), shape=(2,), points=1, minutes=2,
                 exact=ex and ex.running_var(0.01, False),
                 misconceptions=keras.of("running_var_new", jsonable),
                 hint="moving = 0.99·moving + 0.01·σ², σ² the biased batch variance."),
        ]
        ts = solve.norm.batch_norm_steps(train.params, tt)
        ks = solve.norm.batch_norm_steps(keras.params, kt)
        solution += steps_from((steps.statistics, steps.normalise, steps.affine), "output_eval")
        solution += steps_from(ts.statistics, None, prefix="Training step: ")
        solution += steps_from(ts.running, "running_mean_new", prefix="PyTorch: ")
        solution += step_per_part(ks.running, {"running_mean_new": "running_mean_keras",
                                               "running_var_new": "running_var_keras"}, prefix="Keras: ",
                                  titles={"running_var_new": "the moving variance (biased batch variance)"})
    if ex is not None:
        solution.append(SolutionStep("Exact values", [Matrix(p.id, p.exact) for p in parts if p.exact]))
    eps_text = "ε = 0 (to keep the numbers exact)" if calculator_free else "ε = 10⁻⁵ (inside the square root, as PyTorch)"
    intro = {1: "A BatchNorm1d(2) layer in training mode receives a batch of 4 examples with 2 features (rows are examples). "
                f"$\\gamma = 1$, $\\beta = 0$, {eps_text}.",
             2: "A BatchNorm1d(2) layer in training mode (momentum 0.1, PyTorch) receives a batch of 4 examples with 2 "
                f"features (rows are examples), with learned $\\gamma$, $\\beta$ and its current running statistics; "
                f"{eps_text}.",
             3: "A trained BatchNorm1d(2) layer with learned $\\gamma$, $\\beta$ and running statistics receives a batch "
                f"of 4 examples with 2 features (rows are examples); {eps_text}."}[difficulty]
    statement = [Text(intro), Matrix("x", jsonable(x), row_labels=[f"example {i + 1}" for i in range(N)],
                                     col_labels=["feature 1", "feature 2"])]
    if difficulty >= 2:
        statement += [Matrix("γ", jsonable(gamma)), Matrix("β", jsonable(beta)), Matrix("running_mean", jsonable(running_mean)),
                      Matrix("running_var", jsonable(running_var))]
    title = {1: "Batch norm: statistics per feature", 2: "Batch norm: a training step and its running statistics",
             3: "Batch norm: evaluation mode, and Keras's momentum"}[difficulty]
    return Draft(title=title, params=params, statement=statement, parts=parts, solution=solution,
                 conventions={"axis": "statistics per feature, over the batch (down each column)",
                              "variance": "biased (÷ m) to normalise" + ("; unbiased m/(m−1)·σ² for PyTorch's running "
                                                                         "variance" if difficulty > 1 else ""),
                              "eps": ("10⁻⁵" if eps else "0") + " inside the square root"}
                 | ({"momentum": "PyTorch 0.1: new = 0.9·running + 0.1·batch"
                     + ("; Keras 0.99: new = 0.99·moving + 0.01·batch" if difficulty == 3 else "")} if difficulty > 1 else {}))


class _Exact:
    """The calculator-free answers as exact fractions (ε = 0, whole σ, perfect-square running variances)."""

    def __init__(self, x, gamma, beta, running_mean, running_var):
        cols = [[_fr(v) for v in x[:, c]] for c in range(2)]
        self.mu = [sum(c) / N for c in cols]
        self.var_ = [sum((v - m) ** 2 for v in c) / N for c, m in zip(cols, self.mu)]
        sd = [_isqrt(v) for v in self.var_]
        g, b = [_fr(v) for v in gamma], [_fr(v) for v in beta]
        self.rm, self.rv = [_fr(v) for v in running_mean], [_fr(v) for v in running_var]
        self.mean, self.var = [frac(m) for m in self.mu], [frac(v) for v in self.var_]
        self.output = [[frac(g[c] * (cols[c][i] - self.mu[c]) / sd[c] + b[c]) for c in range(2)] for i in range(N)]
        rsd = [_isqrt(v) for v in self.rv]
        self.eval_output = [[frac(g[c] * (cols[c][i] - self.rm[c]) / rsd[c] + b[c]) for c in range(2)] for i in range(N)]

    def running_mean(self, w: float) -> list[str]:
        w = _fr(w)
        return [frac((1 - w) * r + w * m) for r, m in zip(self.rm, self.mu)]

    def running_var(self, w: float, unbiased: bool) -> list[str]:
        w = _fr(w)
        return [frac((1 - w) * r + w * v * (Fraction(N, N - 1) if unbiased else 1)) for r, v in zip(self.rv, self.var_)]
