"""Activation functions by hand: values and derivatives of sigmoid, tanh and ReLU, and their bounds.

Level 1: σ(x), σ'(x), ReLU(x), ReLU'(x) at one point.
Level 2: tanh, tanh', σ' and ReLU' on three points (ReLU'(0) = 0 as PyTorch), and the largest
values σ' and tanh' can take (1/4 and 1): why stacked sigmoids shrink gradients.
Level 3: leaky ReLU and its derivative, the chain rule through two sigmoids, and the bound (1/4)^n
on the derivative of n stacked sigmoid layers.
Calculator-free: x = ±ln a, so σ(ln a) = a/(1 + a), σ'(ln a) = a/(1 + a)², tanh(ln a) = (a² − 1)/(a² + 1).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.exact import exp_term, frac
from examprep.problem import Misconception, Part, SolutionStep


def _ln(sign: int, a: int) -> str:
    return "0" if a == 1 else ("" if sign > 0 else "-") + f"ln {a}"


@generator("activation", title="Activation functions: values and derivatives",
           syllabus="Activations: sigmoid, tanh, ReLU and their derivatives (σ' ≤ 1/4, tanh' ≤ 1)", version=1)
def activation(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    conventions = {"ReLU'(0)": "0 (PyTorch)", "σ": "logistic 1/(1 + e^(−x))"}
    if difficulty == 3:
        params, statement, parts, solution = _level3(rng, calculator_free)
        return Draft(title="Leaky ReLU, the chain rule through sigmoids, and vanishing slopes", params=params,
                     statement=statement, parts=parts, solution=solution,
                     conventions=conventions | {"leaky ReLU": "x for x > 0, αx otherwise; derivative α at 0 (PyTorch)"})
    exact: dict = {}
    if calculator_free:
        # x = ±ln a: every sigmoid/tanh value is a fraction of a
        n = 1 if difficulty == 1 else 3
        signs = [rng.choice([1, -1]) for _ in range(n)]
        bases = [rng.integer(2, 4) for _ in range(n)]
        if difficulty == 2:
            bases[rng.integer(0, 2)] = 1          # one point at x = 0: the kink and the maxima
        x = np.array([s * np.log(a) for s, a in zip(signs, bases)])
        shown = [_ln(s, a) for s, a in zip(signs, bases)]
        ratios = [Fraction(a) ** s for s, a in zip(signs, bases)]      # e^x
        sig = [r / (1 + r) for r in ratios]
        th = [(r * r - 1) / (r * r + 1) for r in ratios]
        exact = {"sigmoid": [frac(v) for v in sig], "sigmoid_derivative": [frac(v * (1 - v)) for v in sig],
                 "tanh": [frac(v) for v in th], "tanh_derivative": [frac(1 - v * v) for v in th],
                 "relu": [(_ln(s, a) if s > 0 else "0") for s, a in zip(signs, bases)],
                 "relu_derivative": [("1" if s > 0 and a > 1 else "0") for s, a in zip(signs, bases)]}
    else:
        if difficulty == 1:
            x = rng.decimals(-2, 2, 0.5, (1,), nonzero=True)
        else:
            x = np.array(rng.sample([-2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0], 3))
            if difficulty == 2 and rng.chance(1, 2):
                x[rng.integer(0, 2)] = 0.0
        shown = jsonable(x)
    if difficulty == 2 and (np.all(x > 0) or np.all(x < 0)) and not np.any(x == 0):
        raise Degenerate("all points on one side of 0: ReLU' shows nothing")
    scalar = difficulty == 1
    val = (lambda v: float(np.ravel(v)[0])) if scalar else jsonable
    ex = (lambda k: exact[k][0]) if (scalar and exact) else (lambda k: exact.get(k))
    kind, shape = ("number", None) if scalar else ("vector", (len(x),))
    xs = float(x[0]) if scalar else jsonable(x)
    sig = solve.mistakes("activation", {"name": "sigmoid", "x": xs})
    th, rl = sig.at(name="tanh"), sig.at(name="relu")
    st, tt, rt = sig.trace(), th.trace(), rl.trace()
    s, ds = st.output, st.derivative
    t, dt = tt.output, tt.derivative
    r, dr = rt.output, rt.derivative
    steps_of = lambda trace, name: solve.activations.activation_steps(sig.params | {"name": name}, trace)  # noqa: E731
    sig_steps, tanh_steps, relu_steps = steps_of(st, "sigmoid"), steps_of(tt, "tanh"), steps_of(rt, "relu")
    parts, solution = [], []
    statement = [Text("Use the logistic sigmoid $\\sigma(x) = 1/(1 + e^{-x})$, the hyperbolic tangent $\\tanh x$ and "
                      "$\\mathrm{ReLU}(x) = \\max(0, x)$, with PyTorch's $\\mathrm{ReLU}'(0) = 0$ at the kink."),
                 Matrix("x", shown[0] if scalar else shown)]
    if difficulty in (1, 2):
        if difficulty == 1:
            parts.append(Part("sigmoid", r"$\sigma(x)$.", kind, val(s), shape=shape, points=1, minutes=1.5,
                              exact=ex("sigmoid"), misconceptions=sig.of("output", val)))
            solution += steps_from(sig_steps.value, "sigmoid")
        parts.append(Part("sigmoid_derivative", r"$\sigma'(x)$." if scalar else r"$\sigma'(x)$ at each point.", kind, val(ds),
                          shape=shape, points=1, minutes=1.5 if scalar else 3, exact=ex("sigmoid_derivative"),
                          misconceptions=sig.of("derivative", val),
                          ecf_rule=solve.ecf("activation", "derivative", sig.params, st,
                                             {"output": "sigmoid"} if difficulty == 1 else (), jsonable)))
        if scalar:
            solution += steps_from(sig_steps.derivative, "sigmoid_derivative")
        else:
            solution += steps_from(sig_steps.value, None) + steps_from(sig_steps.derivative, "sigmoid_derivative")
    if difficulty == 2:
        parts.insert(0, Part("tanh", r"$\tanh x$ at each point.", kind, val(t), shape=shape, points=1, minutes=3,
                             exact=ex("tanh"), misconceptions=th.of("output", val)))
        parts.insert(1, Part("tanh_derivative", r"$\tanh'(x)$ at each point.", kind, val(dt), shape=shape, points=1,
                             minutes=2, exact=ex("tanh_derivative"),
                             misconceptions=th.of("derivative", val),
                             ecf_rule=solve.ecf("activation", "derivative", th.params, tt, {"output": "tanh"}, jsonable)))
        solution = steps_from(tanh_steps.value, "tanh") + steps_from(tanh_steps.derivative, "tanh_derivative") + solution
    if difficulty in (1, 2):
        if difficulty == 1:
            parts.append(Part("relu", r"$\mathrm{ReLU}(x)$.", kind, val(r), shape=shape, points=1, minutes=0.5,
                              exact=ex("relu"), misconceptions=rl.of("output", val)))
            solution += steps_from(relu_steps.value, "relu")
        parts.append(Part("relu_derivative", r"$\mathrm{ReLU}'(x)$." if scalar else r"$\mathrm{ReLU}'(x)$ at each point.",
                          kind, val(dr), shape=shape, points=1, minutes=0.5 if scalar else 1, exact=ex("relu_derivative"),
                          misconceptions=rl.of("derivative", val)))
        solution += steps_from(relu_steps.derivative, "relu_derivative")
    if difficulty == 2:
        top_s, top_t = st.max_derivative, tt.max_derivative          # reached at x = 0
        parts.append(Part("max_sigmoid_derivative", r"The largest value $\sigma'(x)$ takes over all real $x$.", "number",
                          top_s, points=1, minutes=1.5, exact="1/4", misconceptions=sig.of("max_derivative")))
        parts.append(Part("max_tanh_derivative", r"The largest value $\tanh'(x)$ takes over all real $x$.", "number",
                          top_t, points=1, minutes=1, exact="1", misconceptions=th.of("max_derivative")))
        solution.append(SolutionStep("The largest slopes are at x = 0", [
            Math(r"\sigma'(x) = \sigma(x)(1 - \sigma(x)) \le \tfrac12 \cdot \tfrac12 = \tfrac14 "
                 r"\text{ (at } \sigma = \tfrac12,\ x = 0)"),
            Matrix("max σ'", top_s)], "max_sigmoid_derivative"))
        solution.append(SolutionStep("tanh' = 1 − tanh² is largest where tanh x = 0", [
            Math(r"\tanh'(x) = 1 - \tanh^2 x \le 1 \text{ (at } x = 0)"), Matrix("max tanh'", top_t),
            Text("So each sigmoid layer multiplies a backpropagated gradient by at most 1/4: stacked sigmoids make "
                 "gradients vanish; tanh (slope up to 1) and ReLU (slope exactly 1 where active) shrink them less.")],
            "max_tanh_derivative"))
    if calculator_free:
        asked = [q.id for q in parts if q.exact is not None]
        solution.append(SolutionStep("Exact values", [
            Text(r"With $x = \ln a$: $e^{-x} = 1/a$, so $\sigma(\ln a) = \frac{a}{1 + a}$, $\sigma' = \frac{a}{(1 + a)^2}$ and "
                 r"$\tanh(\ln a) = \frac{a^2 - 1}{a^2 + 1}$."),
            Matrix("exact", [[k, ", ".join(q.exact) if isinstance(q.exact, list) else q.exact]
                             for k, q in ((q.id, q) for q in parts) if k in asked])]))
    return Draft(title="Activation functions and their derivatives", params={"x": xs, "x_shown": shown},
                 statement=statement, parts=parts, solution=solution, conventions=conventions)


def _level3(rng: Stream, calculator_free: bool) -> tuple[dict, list, list, list]:
    """Leaky ReLU on three points, σ(σ(x))' by the chain rule, and the (1/4)^n bound."""
    alpha = rng.choice([0.1, 0.2])
    xl = np.array(rng.sample([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0] if calculator_free
                             else [-2.5, -2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0], 3))
    if np.all(xl > 0) or np.all(xl < 0):
        raise Degenerate("leaky ReLU on one side only")
    if calculator_free:
        a, sign = rng.integer(2, 4), rng.choice([1, -1])
        x0 = sign * float(np.log(a))
        x0_shown = _ln(sign, a)
    else:
        x0 = float(rng.choice([-1.0, -0.5, 0.5, 1.0, 1.5, 2.0]))
        x0_shown = x0
    n_layers = rng.integer(3, 6)
    lk = solve.mistakes("activation", {"name": "leaky-relu", "x": jsonable(xl), "negative_slope": alpha})
    leaky = lk.trace()
    sg = solve.mistakes("activation", {"name": "sigmoid", "x": x0})
    inner = sg.trace()
    outer = sg.trace(x=float(inner.output))
    chain = outer.derivative * inner.derivative           # the chain rule: σ'(σ(x₀))·σ'(x₀)
    stack = solve.mistakes("residual-stack", {"x": x0, "weights": [1.0] * n_layers, "activation": "sigmoid",
                                              "skip": False})
    bound = stack.trace().bound                           # (1/4)^n: each σ' ≤ 1/4
    statement = [Text(f"Leaky ReLU with slope α = {alpha}: $f(x) = x$ for $x > 0$, $\\alpha x$ otherwise. "
                      "The logistic sigmoid $\\sigma(x) = 1/(1 + e^{-x})$."), Matrix("x", jsonable(xl))]
    x0_tex = str(x0_shown).replace("ln", "\\ln")
    statement.append(Text(f"Separately: $y = \\sigma(\\sigma(x_0))$ at $x_0 = {x0_tex}$, and a stack of {n_layers} "
                          "sigmoid layers with weights 1, $y = \\sigma(\\sigma(\\cdots\\sigma(x)))$."))
    exact_chain = None
    if calculator_free:
        r = Fraction(a) ** sign
        q = r / (1 + r)                                  # σ(x0), a fraction
        c = q * (1 - q)                                  # σ'(x0)
        eq = exp_term(-q)
        exact_chain = f"{frac(c)}*{eq}/(1 + {eq})^2"
    parts = [
        Part("leaky_relu", "The leaky ReLU of each point.", "vector", jsonable(leaky.output), shape=(3,), points=1,
             minutes=1.5, exact=[frac(Fraction(v).limit_denominator(1000)) for v in leaky.output] if calculator_free else None,
             misconceptions=lk.of("output", jsonable)),
        Part("leaky_relu_derivative", "Its derivative at each point.", "vector", jsonable(leaky.derivative), shape=(3,),
             points=1, minutes=1,
             exact=[frac(Fraction(v).limit_denominator(1000)) for v in leaky.derivative] if calculator_free else None,
             misconceptions=lk.of("derivative", jsonable)),
        Part("chain_derivative", r"$\frac{d}{dx}\,\sigma(\sigma(x))$ at $x_0$.", "number", float(chain), points=2,
             minutes=4, exact=exact_chain,
             misconceptions=(Misconception("outer-only", float(outer.derivative),
                                           "Chain rule: multiply the outer slope σ'(σ(x₀)) by the inner slope σ'(x₀)."),
                             Misconception("both-at-x0", float(inner.derivative ** 2),
                                           "The outer sigmoid's slope is taken at its own input σ(x₀), not at x₀."))),
        Part("stack_bound", f"An upper bound on $|dy/dx|$ for the stack of {n_layers} sigmoid layers, from the largest "
             r"value of $\sigma'$.", "number", float(bound), points=1, minutes=1.5,
             exact=f"1/{4 ** n_layers}",
             misconceptions=stack.of("bound", float),
             ecf_rule=solve.ecf("residual-stack", "bound", stack.params, stack.trace(), ())),
    ]
    leaky_steps = solve.activations.activation_steps(lk.params, leaky)
    solution = steps_from(leaky_steps.value, "leaky_relu") + steps_from(leaky_steps.derivative, "leaky_relu_derivative")
    # the value and the slope at each sigmoid (not the bound over all x)
    solution += steps_from(solve.activations.activation_steps(sg.params, inner)[:3], None, prefix="Inner: ")
    solution += steps_from(solve.activations.activation_steps(sg.params, outer)[:3], None,
                           prefix="Outer, at σ(x₀): ")
    solution.append(SolutionStep("Chain rule", [Math(r"\frac{dy}{dx} = \sigma'(\sigma(x_0))\,\sigma'(x_0)"),
                                                Matrix("dy/dx", float(chain))]
                                 + ([Matrix("exact", exact_chain)] if exact_chain else []), "chain_derivative"))
    solution.append(SolutionStep("Each layer multiplies by at most σ'(0) = 1/4", [
        Math(rf"\left|\frac{{dy}}{{dx}}\right| = \prod_{{l=1}}^{{{n_layers}}} \sigma'(a_l) "
             rf"\le \left(\tfrac14\right)^{{{n_layers}}}"),
        Matrix("bound", float(bound)),
        Text("The bound shrinks geometrically with depth: the vanishing gradient of deep sigmoid networks.")], "stack_bound"))
    params = {"x": jsonable(xl), "negative_slope": alpha, "x0": x0, "x0_shown": x0_shown, "layers": n_layers}
    return params, statement, parts, solution
