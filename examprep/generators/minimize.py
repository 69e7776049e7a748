"""Minimising a function by hand over a few optimizer steps, the gradient recomputed at every step (d2l
ch. 12's exercises; the Keras optimizers' docstring examples): the trajectory, not one update.

Level 1: gradient descent on f(x) = a(x − c)² for three steps: x₁, x₂, x₃.
Level 2: SGD with momentum (torch.optim.SGD) on f(x₁, x₂) = a x₁² + b x₂² (d2l's ill-conditioned
quadratic) for two steps: the parameters after each.
Level 3: Nesterov momentum on the same kind of quadratic for two steps, in torch's form and in the
look-ahead form that evaluates the gradient at p − μv (Sutskever et al. 2013).
Hand-computable: quadratics with coefficients 1/2, 1, 2, integer starting points and rates 0.1 or 0.25
(calculator-free: 0.25 only), so every value is a short decimal.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Math, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, jsonable, steps_from
from examprep.problem import Part


@generator("minimize", title="Minimising a function over several optimizer steps: GD, momentum, Nesterov",
           syllabus="Optimisation: gradient descent trajectories, momentum, Nesterov's look-ahead", version=1)
def minimize(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    rates = [0.25] if calculator_free else [0.1, 0.25]
    if difficulty == 1:
        return _descent(rng, rates)
    if difficulty == 2:
        return _momentum(rng, rates)
    return _nesterov(rng, rates)


def _quadratic_2d(rng: Stream) -> tuple[str, float, float]:
    a, b = rng.sample([0.5, 1.0, 2.0], 2)
    return f"{a:g}*x1**2 + {b:g}*x2**2", a, b


def _coef(a: float) -> str:
    return "" if a == 1 else f"{a:g} "


def _start(rng: Stream, names: tuple[str, ...]) -> dict[str, float]:
    return {n: float(v) for n, v in zip(names, rng.ints(-3, 3, (len(names),), nonzero=True))}


def _solution(known, t, parts: dict[str, str | None], prefix: str = "") -> list:
    steps = solve.minimize.minimize_steps(known.params, t)
    out = steps_from(steps.objective, None, prefix=prefix)
    for k, st in enumerate(steps.steps, 1):
        out += steps_from(st, parts.get(f"step_{k}"), prefix=prefix)
    out += steps_from(steps.result, parts.get("result"), prefix=prefix)
    return out + steps_from(steps.trajectory, parts["trajectory"], prefix=prefix) if "trajectory" in parts else out


def _descent(rng: Stream, rates: list[float]) -> Draft:
    a = float(rng.choice([0.5, 1.0, 2.0]))
    c = rng.integer(-2, 2)
    lr = float(rng.choice(rates))
    x0 = rng.integer(-3, 3)
    if x0 == c or 2 * a * lr == 1:
        raise Degenerate("starts at the minimum, or jumps to it in one step")
    objective = f"{a:g}*x**2" if c == 0 else f"{a:g}*(x - {c})**2" if c > 0 else f"{a:g}*(x + {-c})**2"
    params = {"objective": objective, "params": {"x": float(x0)}, "lr": lr, "steps": 3}
    known = solve.mistakes("minimize", params)
    t = known.trace()
    xs = t.params_per_step[:, 0]
    parts = [Part("trajectory", "The values x₁, x₂, x₃ after each of the three steps.", "vector", jsonable(xs),
                  shape=(3,), points=3, minutes=4,
                  misconceptions=known.of("params_per_step", lambda v: jsonable(np.asarray(v)[:, 0])),
                  hint="x ← x − η f'(x), with f'(x) = 2a(x − c) evaluated at the current x each time.")]
    shown = f"{_coef(a)}x^2" if c == 0 else f"{_coef(a)}(x {'-' if c > 0 else '+'} {abs(c)})^2"
    statement = [Text(f"Gradient descent, x ← x − η f′(x), on the function below, from x₀ = {x0} with learning rate "
                      f"η = {lr:g}: three steps."), Math(f"f(x) = {shown}")]
    return Draft(title="Gradient descent: three steps on a quadratic", params=params, statement=statement, parts=parts,
                 solution=_solution(known, t, {"trajectory": "trajectory"}),
                 conventions={"gradient": "f′ at the current x before every step"}, variant="sgd")


def _momentum(rng: Stream, rates: list[float]) -> Draft:
    objective, a, b = _quadratic_2d(rng)
    lr = float(rng.choice(rates))
    mu = float(rng.choice([0.5, 0.9]))
    params = {"objective": objective, "params": _start(rng, ("x1", "x2")), "lr": lr, "steps": 2,
              "optimizer": "momentum", "momentum": mu}
    known = solve.mistakes("minimize", params)
    t = known.trace()
    first = solve.mistakes("minimize", params | {"steps": 1})
    parts = [
        Part("params_1", "The parameters (x₁, x₂) after the first step.", "vector", jsonable(t.params_per_step[0]),
             shape=(2,), points=2, minutes=2, misconceptions=first.of("params_new", jsonable),
             hint="At the first step the velocity is the gradient itself: v₁ = g₁."),
        Part("params_2", "The parameters (x₁, x₂) after the second step.", "vector", jsonable(t.params_new), shape=(2,),
             points=3, minutes=3, misconceptions=known.of("params_new", jsonable),
             hint="The gradient at the new point, then v₂ = μ v₁ + g₂ and p₂ = p₁ − η v₂."),
    ]
    start = params["params"]
    statement = [Text(f"SGD with momentum as torch.optim.SGD(lr={lr:g}, momentum={mu:g}) — v ← μv + g (v₁ = g₁), "
                      f"p ← p − η v — minimises the function below from (x₁, x₂) = ({start['x1']:g}, {start['x2']:g}), "
                      "the gradient evaluated at the current point before each step."),
                 Math(f"f(x_1, x_2) = {_coef(a)}x_1^2 + {_coef(b)}x_2^2")]
    return Draft(title="Momentum on an ill-conditioned quadratic: two steps", params=params, statement=statement,
                 parts=parts, solution=_solution(known, t, {"step_1": "params_1", "step_2": "params_2"}),
                 conventions={"momentum": "v ← μv + g, p ← p − ηv (torch.optim.SGD, dampening 0)"}, variant="momentum")


def _nesterov(rng: Stream, rates: list[float]) -> Draft:
    objective, a, b = _quadratic_2d(rng)
    lr = float(rng.choice(rates))
    mu = 0.5
    torch_form = {"objective": objective, "params": _start(rng, ("x1", "x2")), "lr": lr, "steps": 2,
                  "optimizer": "nesterov", "momentum": mu}
    look = torch_form | {"nesterov_form": "look-ahead"}
    t_known = solve.mistakes("minimize", torch_form)
    tt = t_known.trace()
    l_known = solve.mistakes("minimize", look)
    lt = l_known.trace()
    if np.allclose(tt.params_new, lt.params_new, atol=0.02):
        raise Degenerate("the two forms agree to the answers' precision")
    parts = [
        Part("pytorch_params", "torch's form, torch.optim.SGD(nesterov=True): the parameters after two steps.", "vector",
             jsonable(tt.params_new), shape=(2,), points=3, minutes=4, misconceptions=t_known.of("params_new", jsonable),
             hint="v ← μv + g, p ← p − η(g + μv), with g = ∇f(p)."),
        Part("look_ahead_params", "The look-ahead form: the parameters after two steps.", "vector",
             jsonable(lt.params_new), shape=(2,), points=3, minutes=4, misconceptions=l_known.of("params_new", jsonable),
             hint="The gradient at p − μv: at the first step v = 0, so it is ∇f(p₀)."),
    ]
    start = torch_form["params"]
    statement = [Text(f"Nesterov momentum (μ = {mu:g}, η = {lr:g}) minimises the function below from (x₁, x₂) = "
                      f"({start['x1']:g}, {start['x2']:g}), two steps in each of its two forms:"),
                 Math(f"f(x_1, x_2) = {_coef(a)}x_1^2 + {_coef(b)}x_2^2"),
                 Math(r"\text{torch: } v \leftarrow \mu v + \nabla f(p),\ p \leftarrow p - \eta (\nabla f(p) + \mu v)"),
                 Math(r"\text{look-ahead: } v \leftarrow \mu v + \eta \nabla f(p - \mu v),\ p \leftarrow p - v")]
    solution = (_solution(t_known, tt, {"result": "pytorch_params"}, prefix="torch's form: ")
                + _solution(l_known, lt, {"result": "look_ahead_params"}, prefix="Look-ahead form: "))
    return Draft(title="Nesterov momentum in its two forms", params={"pytorch": torch_form, "look-ahead": look},
                 statement=statement, parts=parts, solution=solution,
                 conventions={"pytorch": "torch.optim.SGD(nesterov=True)",
                              "look-ahead": "gradient at p − μv, v with η inside (Sutskever et al. 2013)"},
                 variant="nesterov")
