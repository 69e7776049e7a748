"""Optimizer updates by hand, exactly as torch.optim computes them: SGD with momentum, RMSprop, Adam
with its bias correction at steps 1 and 2, and AdamW's decoupled weight decay against Adam with L2.

Level 1: SGD with momentum μ = 0.9 for two steps (v ← μv + g, p ← p − ηv): the parameters after each
step and the velocity.
Level 2: one RMSprop step (α = 0.99) and two Adam steps (β = 0.9, 0.999): at step 1 the bias correction
makes Adam move each parameter by about η; m and v after step 2 and its corrected step.
Level 3: one step of AdamW (p ← p − ηλp, then Adam) against Adam with L2 (λp added to the gradient).
Square roots need a calculator: no calculator-free variant.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, step_per_part, steps_from, jsonable
from examprep.values import allclose
from examprep.problem import EXACT, Misconception, Part, EcfRule, SolutionStep

_CHOICES = ("AdamW", "Adam with L2 (weight_decay in torch.optim.Adam)")


def _first(p: dict) -> dict:
    """The same problem stopped after its first gradient step."""
    return p | {"grads": p["grads"][0]}


@generator("optimizer-step", title="Optimizer updates: momentum, RMSprop, Adam's bias correction, AdamW",
           syllabus="Optimisation: SGD with momentum, RMSprop, Adam (bias correction), AdamW vs L2", version=1,
           calculator_free=False)
def optimizer_step(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    if difficulty == 1:
        return _momentum(rng)
    if difficulty == 2:
        return _adaptive(rng)
    return _decay(rng)


def _draw(rng: Stream, steps: int) -> tuple[np.ndarray, np.ndarray]:
    params = rng.decimals(-2, 2, 0.5, (2,), nonzero=True)
    grads = rng.decimals(-2, 2, 0.5, (steps, 2), nonzero=True)
    return params, grads


def _momentum(rng: Stream) -> Draft:
    p0, g = _draw(rng, 2)
    lr = float(rng.choice([0.1, 0.5]))
    params = {"optimizer": "momentum", "params": jsonable(p0), "grads": jsonable(g), "lr": lr, "momentum": 0.9}
    known = solve.mistakes("optimizer-step", params)
    t = known.trace()
    first = solve.mistakes("optimizer-step", _first(params))
    parts = [
        Part("params_1", r"The parameters after step 1.", "vector", jsonable(t.params_per_step[0]), shape=(2,), points=1,
             minutes=1.5, misconceptions=first.of("params_new", jsonable),
             hint="At step 1 the velocity is the gradient itself: v₁ = g₁."),
        Part("velocity", r"The velocity $v_2$ after step 2.", "vector", jsonable(t.velocity), shape=(2,), points=2,
             minutes=2, misconceptions=known.of("velocity", jsonable),
             hint="v₂ = μ v₁ + g₂ with μ = 0.9."),
        Part("params_2", r"The parameters after step 2.", "vector", jsonable(t.params_new), shape=(2,), points=2, minutes=1.5,
             misconceptions=known.of("params_new", jsonable),
             ecf_rule=EcfRule("sgd-step", {"param": {"$ref": "params_1"}, "grad": {"$ref": "velocity"}, "lr": lr})),
    ]
    steps = solve.optim.optimizer_steps(known.params, t)
    solution = []
    for k, st in enumerate(steps.steps, 1):
        solution += steps_from(st, f"params_{k}", prefix="Momentum: ")
    solution += steps_from(steps.state, "velocity")
    statement = [Text(f"SGD with momentum, as torch.optim.SGD(lr={lr:g}, momentum=0.9): $v \\leftarrow \\mu v + g$ "
                      "(with $v_1 = g_1$), $p \\leftarrow p - \\eta v$. Two steps from $p_0$ with the gradients below."),
                 Matrix("p_0", jsonable(p0)), Matrix("g", jsonable(g), row_labels=["step 1", "step 2"])]
    return Draft(title="SGD with momentum: two steps", params=params, statement=statement, parts=parts, solution=solution,
                 conventions={"momentum": "v ← μv + g, p ← p − ηv (torch.optim.SGD, dampening 0)"})


def _adaptive(rng: Stream) -> Draft:
    p0, g = _draw(rng, 2)
    if np.any(np.sign(g[0]) != np.sign(g[1])) and rng.chance(1, 2):
        raise Degenerate("keep most draws with steady gradient signs, as a real loss gives")
    lr = float(rng.choice([0.1, 0.01]))
    rms = {"optimizer": "rmsprop", "params": jsonable(p0), "grads": jsonable(g[0]), "lr": lr}
    adam = {"optimizer": "adam", "params": jsonable(p0), "grads": jsonable(g), "lr": lr}
    r_known = solve.mistakes("optimizer-step", rms)
    rt = r_known.trace()
    known = solve.mistakes("optimizer-step", adam)
    t = known.trace()
    first = solve.mistakes("optimizer-step", _first(adam))
    parts = [
        Part("rmsprop_params", "RMSprop (torch.optim.RMSprop, α = 0.99, ε = 10⁻⁸): the parameters after one step with "
             "the first gradient.", "vector", jsonable(rt.params_new), shape=(2,), points=2, minutes=2.5,
             misconceptions=r_known.of("params_new", jsonable),
             hint="s₁ = (1 − α) g₁², p₁ = p₀ − η g₁ / (√s₁ + ε)."),
        Part("adam_params_1", "Adam (β₁ = 0.9, β₂ = 0.999, ε = 10⁻⁸): the parameters after step 1.", "vector",
             jsonable(t.params_per_step[0]), shape=(2,), points=2, minutes=2.5,
             misconceptions=first.of("params_new", jsonable),
             hint="m̂₁ = m₁/(1 − β₁) = g₁ and v̂₁ = v₁/(1 − β₂) = g₁²: the first step is about η per parameter."),
        Part("adam_exp_avg", r"Adam's first moment $m_2$ after step 2 (before the bias correction).", "vector",
             jsonable(t.exp_avg), shape=(2,), points=1, minutes=1.5,
             misconceptions=known.of("exp_avg", jsonable)),
        Part("adam_params_2", "Adam: the parameters after step 2.", "vector", jsonable(t.params_new), shape=(2,), points=3,
             minutes=4, misconceptions=known.of("params_new", jsonable),
             hint="m̂₂ = m₂/(1 − 0.9²), v̂₂ = v₂/(1 − 0.999²), p₂ = p₁ − η m̂₂/(√v̂₂ + ε)."),
    ]
    if allclose(rt.params_new, t.params_per_step[0], atol=5e-3):
        raise Degenerate("RMSprop's and Adam's first steps agree to the answers' precision")
    rs = solve.optim.optimizer_steps(r_known.params, rt)
    steps = solve.optim.optimizer_steps(known.params, t)
    solution = steps_from(rs.steps, "rmsprop_params", prefix="RMSprop: ") + steps_from(rs.state, None, prefix="RMSprop: ")
    for k, st in enumerate(steps.steps, 1):
        solution += steps_from(st, f"adam_params_{k}", prefix="Adam: ")
    solution += step_per_part(steps.state, {"exp_avg": "adam_exp_avg"}, prefix="Adam: ")
    statement = [Text(f"Two optimizers start from the same $p_0$ with learning rate η = {lr:g} (torch.optim defaults "
                      "otherwise). RMSprop takes one step with $g_1$; Adam takes two, with $g_1$ then $g_2$."),
                 Math(r"\text{RMSprop: } s \leftarrow \alpha s + (1 - \alpha) g^2,\ p \leftarrow p - \eta\, "
                      r"\frac{g}{\sqrt{s} + \epsilon}"),
                 Math(r"\text{Adam: } m \leftarrow \beta_1 m + (1 - \beta_1) g,\ v \leftarrow \beta_2 v + (1 - \beta_2) g^2,"
                      r"\ \hat m = \frac{m}{1 - \beta_1^t},\ \hat v = \frac{v}{1 - \beta_2^t},\ "
                      r"p \leftarrow p - \eta\, \frac{\hat m}{\sqrt{\hat v} + \epsilon}"),
                 Matrix("p_0", jsonable(p0)), Matrix("g", jsonable(g), row_labels=["step 1", "step 2"])]
    return Draft(title="RMSprop and Adam: the bias correction at steps 1 and 2", params={"rmsprop": rms, "adam": adam},
                 statement=statement, parts=parts, solution=solution,
                 conventions={"rmsprop": "α = 0.99, ε = 10⁻⁸ outside the root (torch.optim.RMSprop)",
                              "adam": "β = (0.9, 0.999), ε = 10⁻⁸ after the bias correction (torch.optim.Adam)"})


def _decay(rng: Stream) -> Draft:
    p0, g = _draw(rng, 1)
    p0 = p0 * 2                                     # larger weights: the decay shows
    lr = 0.1
    lam = float(rng.choice([0.1, 0.5]))
    adamw = {"optimizer": "adamw", "params": jsonable(p0), "grads": jsonable(g[0]), "lr": lr, "weight_decay": lam}
    l2 = {"optimizer": "adam", "params": jsonable(p0), "grads": jsonable(g[0]), "lr": lr, "weight_decay": lam}
    w_known = solve.mistakes("optimizer-step", adamw)
    wt = w_known.trace()
    l_known = solve.mistakes("optimizer-step", l2)
    lt = l_known.trace()
    if allclose(wt.params_new, lt.params_new, atol=0.02):
        raise Degenerate("the two decays agree to the answers' precision")
    parts = [
        Part("adamw_params", f"AdamW (torch.optim.AdamW, weight_decay λ = {lam:g}): the parameters after one step.",
             "vector", jsonable(wt.params_new), shape=(2,), points=3, minutes=3,
             misconceptions=w_known.of("params_new", jsonable),
             hint="p ← p(1 − ηλ), then Adam's step; at step 1 Adam's step is about η·sign(g)."),
        Part("adam_l2_params", f"Adam with L2 (torch.optim.Adam, weight_decay λ = {lam:g}): the parameters after one step.",
             "vector", jsonable(lt.params_new), shape=(2,), points=3, minutes=3,
             misconceptions=l_known.of("params_new", jsonable),
             hint="g' = g + λp, then Adam's first step with g'."),
        Part("decoupled", "Which of the two shrinks every weight by the same factor 1 − ηλ, however large its gradient?",
             "choice", _CHOICES[0], tolerance=EXACT, points=1, minutes=1, choices=_CHOICES,
             misconceptions=(Misconception("l2-is-decoupled", _CHOICES[1],
                                           "Adam divides g + λp by √v̂: the decay is rescaled per weight. AdamW applies "
                                           "p ← p − ηλp outside the adaptive step (Loshchilov & Hutter 2019)."),)),
    ]
    ws = solve.optim.optimizer_steps(w_known.params, wt)
    ls = solve.optim.optimizer_steps(l_known.params, lt)
    solution = (steps_from(ws.steps, "adamw_params", prefix="AdamW: ") + steps_from(ws.state, None, prefix="AdamW: ")
                + steps_from(ls.steps, "adam_l2_params", prefix="Adam + L2: ")
                + steps_from(ls.state, None, prefix="Adam + L2: "))
    solution += [SolutionStep(
        "Decoupled weight decay", [Text("AdamW multiplies every weight by 1 − ηλ before and outside the adaptive step; "
                                        "Adam's weight_decay adds λp to the gradient, which Adam then divides by √v̂, so "
                                        "a weight with large gradients is barely decayed."),
                                   Matrix("decoupled", _CHOICES[0])], "decoupled")]
    statement = [Text(f"One step from $p_0$ with gradient $g$, learning rate η = {lr:g}, β = (0.9, 0.999), ε = 10⁻⁸, "
                      f"weight decay λ = {lam:g} — once with AdamW, once with Adam and L2 regularisation."),
                 Math(r"\text{AdamW: } p \leftarrow p - \eta \lambda p,\ \text{then Adam's step with } g"),
                 Math(r"\text{Adam + L2: } g' = g + \lambda p,\ \text{then Adam's step with } g'"),
                 Matrix("p_0", jsonable(p0)), Matrix("g", jsonable(g[0]))]
    return Draft(title="AdamW against Adam with L2", params={"adamw": adamw, "adam": l2}, statement=statement, parts=parts,
                 solution=solution, conventions={"adamw": "decoupled decay first, p ← p − ηλp (Loshchilov & Hutter 2019)",
                                                 "adam": "weight_decay adds λp to the gradient (torch.optim.Adam)"})
