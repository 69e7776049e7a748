"""One optimizer step from a given state, as torch.optim takes it after optimizer.state[p] is loaded: the
state printed with torch's keys, step the number of steps already taken (so this update is t = step + 1).

Level 1: SGD with momentum from a given buffer, in torch's convention (v ← μv + g, p ← p − ηv) or with lr
inside the velocity (v ← μv − ηg, p ← p + v; CS231n, Keras): the new velocity and parameters.
Level 2: Adam from a given (step, exp_avg, exp_avg_sq): the new moments, the new step and the parameters,
the bias correction at t = step + 1.
Level 3: AdaMax (u ← max(β₂u, |g| + ε)) or AdaDelta (Zeiler 2012) from a given state: its new state and
the parameters.
Square roots and powers of β need a calculator: no calculator-free variant.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, jsonable, step_per_part, steps_from
from examprep.problem import EXACT, Part
from examprep.values import allclose


@generator("optimizer-state", title="An optimizer step from a given state: momentum buffer, Adam's step count, "
                                    "AdaMax, AdaDelta",
           syllabus="Optimisation: optimizer state (torch.optim's state keys), t = step + 1 in the bias correction, "
                    "velocity conventions, AdaMax, AdaDelta", version=1, calculator_free=False)
def optimizer_state(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    if difficulty == 1:
        return _momentum(rng)
    if difficulty == 2:
        return _adam(rng)
    return _adamax(rng) if rng.chance(1, 2) else _adadelta(rng)


def _vec(rng: Stream, lo: float, hi: float, step: float = 0.5, nonzero: bool = True) -> np.ndarray:
    return rng.decimals(lo, hi, step, (2,), nonzero=nonzero)


def _state_block(state: dict) -> list:
    return [Matrix(key, value) for key, value in state.items() if key != "step"]


def _solution(known, t, parts: dict[str, str], prefix: str) -> list:
    steps = solve.optim.optimizer_steps(known.params, t)
    given, *updates = steps.steps
    return (steps_from(given, None, prefix=prefix) + step_per_part(steps.state, parts, prefix=prefix)
            + steps_from(updates, "params_new", prefix=prefix))


def _momentum(rng: Stream) -> Draft:
    p0, g = _vec(rng, -2, 2), _vec(rng, -2, 2)
    lr, mu = float(rng.choice([0.1, 0.5])), float(rng.choice([0.9, 0.5]))
    inside = rng.chance(1, 2)
    buf = _vec(rng, -2, 2)
    params = {"optimizer": "momentum", "params": jsonable(p0), "grads": jsonable(g), "lr": lr, "momentum": mu,
              "state": {"momentum_buffer": jsonable(np.round(buf * lr, 6) if inside else buf)}}
    if inside:
        params["velocity_convention"] = "lr-inside"
    known = solve.mistakes("optimizer-step", params)
    t = known.trace()
    rule = (r"v \leftarrow \mu v - \eta\, g,\ \ p \leftarrow p + v" if inside else
            r"v \leftarrow \mu v + g,\ \ p \leftarrow p - \eta\, v")
    where = ("with the learning rate inside the velocity (CS231n's notes, Keras's SGD)" if inside else
             f"as torch.optim.SGD(lr={lr:g}, momentum={mu:g}) keeps it in optimizer.state[p]['momentum_buffer']")
    parts = [
        Part("momentum_buffer", "The new velocity v.", "vector", jsonable(t.momentum_buffer), shape=(2,), points=2,
             minutes=1.5, misconceptions=known.of("momentum_buffer", jsonable),
             hint="v ← μ v − η g, starting from the given v." if inside else "v ← μ v + g, starting from the given buffer."),
        Part("params_new", "The parameters after the step.", "vector", jsonable(t.params_new), shape=(2,), points=2,
             minutes=1.5, misconceptions=known.of("params_new", jsonable),
             hint="p ← p + v with the new v." if inside else "p ← p − η v with the new v."),
    ]
    statement = [Text(f"SGD with momentum μ = {mu:g} and learning rate η = {lr:g} has already taken some steps; its "
                      f"velocity v is given, {where}. Take one more step from $p$ with gradient $g$."),
                 Math(rule), Matrix("p", jsonable(p0)), Matrix("g", jsonable(g)),
                 Matrix("v", params["state"]["momentum_buffer"])]
    return Draft(title="SGD with momentum from a given velocity", params=params, statement=statement, parts=parts,
                 solution=_solution(known, t, {"momentum_buffer": "momentum_buffer", "velocity": "momentum_buffer"},
                                    "Momentum: "),
                 conventions={"velocity": known.topic.conventions(known.params)["velocity"]})


def _adam(rng: Stream) -> Draft:
    p0, g = _vec(rng, -2, 2), _vec(rng, -2, 2)
    step = rng.integer(1, 3)
    lr = float(rng.choice([0.1, 0.01]))
    m = _vec(rng, -1, 1, 0.25)
    v = rng.decimals(0.25, 2, 0.25, (2,))
    params = {"optimizer": "adam", "params": jsonable(p0), "grads": jsonable(g), "lr": lr,
              "state": {"step": step, "exp_avg": jsonable(m), "exp_avg_sq": jsonable(v)}}
    known = solve.mistakes("optimizer-step", params)
    t = known.trace()
    wrong_t = known.trace(state={**params["state"], "step": step - 1})
    if allclose(t.params_new, wrong_t.params_new, atol=5e-4):
        raise Degenerate("t = step and t = step + 1 agree to the answers' precision")
    parts = [
        Part("exp_avg", "The new first moment exp_avg (m, stored without the bias correction).", "vector",
             jsonable(t.exp_avg), shape=(2,), points=1, minutes=1, misconceptions=known.of("exp_avg", jsonable)),
        Part("step", "The new value of step.", "number", t.step, tolerance=EXACT, points=1, minutes=0.5,
             misconceptions=known.of("step", lambda x: x)),
        Part("params_new", "The parameters after the step.", "vector", jsonable(t.params_new), shape=(2,), points=3,
             minutes=4, misconceptions=known.of("params_new", jsonable),
             hint=f"This is update t = step + 1 = {step + 1}: m̂ = m/(1 − 0.9^{step + 1}), "
                  f"v̂ = v/(1 − 0.999^{step + 1})."),
    ]
    statement = [Text(f"torch.optim.Adam(lr={lr:g}) — β = (0.9, 0.999), ε = 10⁻⁸ — has already taken steps on $p$; "
                      "its state optimizer.state[p] is printed below (step counts the steps already taken). "
                      "Take one more step with gradient $g$."),
                 Math(r"m \leftarrow \beta_1 m + (1 - \beta_1) g,\ v \leftarrow \beta_2 v + (1 - \beta_2) g^2,\ "
                      r"p \leftarrow p - \eta\, \frac{m / (1 - \beta_1^t)}{\sqrt{v / (1 - \beta_2^t)} + \epsilon}"),
                 Text(f"step = {step}"), Matrix("p", jsonable(p0)), Matrix("g", jsonable(g)),
                 *_state_block(params["state"])]
    return Draft(title="Adam from a given state: t = step + 1", params=params, statement=statement, parts=parts,
                 solution=_solution(known, t, {"step": "step", "exp_avg": "exp_avg", "exp_avg_sq": "exp_avg"}, "Adam: "),
                 conventions={"step": "torch's count of the steps already taken: this update is t = step + 1"})


def _adamax(rng: Stream) -> Draft:
    p0, g = _vec(rng, -2, 2), _vec(rng, -2, 2)
    step = rng.integer(1, 3)
    m = _vec(rng, -1, 1, 0.25)
    u = rng.decimals(0.5, 2, 0.5, (2,))
    if np.all(np.abs(g) > 0.999 * u) or np.all(np.abs(g) < 0.999 * u):
        raise Degenerate("keep one coordinate where |g| wins the max and one where the decayed u does")
    params = {"optimizer": "adamax", "params": jsonable(p0), "grads": jsonable(g), "lr": 0.1,
              "state": {"step": step, "exp_avg": jsonable(m), "exp_inf": jsonable(u)}}
    known = solve.mistakes("optimizer-step", params)
    t = known.trace()
    parts = [
        Part("exp_inf", "The new exp_inf (u).", "vector", jsonable(t.exp_inf), shape=(2,), points=2, minutes=1.5,
             misconceptions=known.of("exp_inf", jsonable)),
        Part("params_new", "The parameters after the step.", "vector", jsonable(t.params_new), shape=(2,), points=3,
             minutes=3, misconceptions=known.of("params_new", jsonable),
             hint=f"t = step + 1 = {step + 1}; p ← p − η/(1 − β₁ᵗ) · m/u."),
    ]
    statement = [Text("torch.optim.Adamax(lr=0.1) — β = (0.9, 0.999), ε = 10⁻⁸ — (Kingma & Ba 2015, Algorithm 2) has "
                      "already taken steps; its state is printed below (step counts the steps already taken). Take "
                      "one more step with gradient $g$."),
                 Math(r"m \leftarrow \beta_1 m + (1 - \beta_1) g,\ u \leftarrow \max(\beta_2 u, |g| + \epsilon),\ "
                      r"p \leftarrow p - \frac{\eta}{1 - \beta_1^t} \frac{m}{u}"),
                 Text(f"step = {step}"), Matrix("p", jsonable(p0)), Matrix("g", jsonable(g)),
                 *_state_block(params["state"])]
    return Draft(title="AdaMax from a given state", params=params, statement=statement, parts=parts,
                 solution=_solution(known, t, {"exp_inf": "exp_inf", "step": "exp_inf", "exp_avg": "exp_inf"},
                                    "AdaMax: "),
                 conventions={"step": "torch's count of the steps already taken: this update is t = step + 1"})


def _adadelta(rng: Stream) -> Draft:
    p0, g = _vec(rng, -2, 2), rng.choice([np.array([1.0, -2.0]), np.array([2.0, 1.0]), np.array([-1.0, 1.0])])
    sq = rng.decimals(0.5, 2, 0.5, (2,))
    acc = rng.decimals(0.25, 1, 0.25, (2,))
    params = {"optimizer": "adadelta", "params": jsonable(p0), "grads": jsonable(g), "lr": 1.0, "rho": 0.5,
              "state": {"square_avg": jsonable(sq), "acc_delta": jsonable(acc)}}
    known = solve.mistakes("optimizer-step", params)
    t = known.trace()
    parts = [
        Part("acc_delta", "The new acc_delta (the running average of squared updates).", "vector",
             jsonable(t.acc_delta), shape=(2,), points=2, minutes=3, misconceptions=known.of("acc_delta", jsonable)),
        Part("params_new", "The parameters after the step.", "vector", jsonable(t.params_new), shape=(2,), points=2,
             minutes=2, misconceptions=known.of("params_new", jsonable), hint="p ← p − η Δ with η = 1."),
    ]
    statement = [Text("torch.optim.Adadelta(lr=1.0, rho=0.5, eps=1e-6) (Zeiler 2012) has already taken steps; its "
                      "state is printed below. Take one more step with gradient $g$ (ε is small enough to drop by "
                      "hand)."),
                 Math(r"s \leftarrow \rho s + (1 - \rho) g^2,\ \Delta = \frac{\sqrt{a + \epsilon}}{\sqrt{s + \epsilon}}\, g,"
                      r"\ a \leftarrow \rho a + (1 - \rho) \Delta^2,\ p \leftarrow p - \eta\, \Delta"),
                 Matrix("p", jsonable(p0)), Matrix("g", jsonable(g)), *_state_block(params["state"])]
    return Draft(title="AdaDelta from a given state", params=params, statement=statement, parts=parts,
                 solution=_solution(known, t, {"acc_delta": "acc_delta", "step": "acc_delta", "square_avg": "acc_delta"},
                                    "AdaDelta: "),
                 conventions={"eps": "inside both square roots (torch.optim.Adadelta)"})
