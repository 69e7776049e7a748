"""Vanishing and exploding gradients by hand, on a one-unit RNN h_t = φ(w h_{t−1} + x_t):
∂h_T/∂h_0 is the product of T local derivatives w·φ'(a_t).

Level 1: tanh with |w| < 1 over three steps: the local derivatives, their product, the bound |w|^T
(tanh' ≤ 1), and what happens over a long sequence (it vanishes).
Level 2: ReLU with w > 1 and positive inputs: every factor is w, the gradient w^T explodes; its
value after 20 steps and after clipping its norm.
Level 3: tanh with |w| > 1: the bound |w|^T grows, but saturated units (tanh' ≈ 0) can still make
the product shrink — |w| > 1 is necessary for exploding, not sufficient.
Needs tanh values (a calculator): there is no calculator-free variant.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.problem import EXACT, Misconception, Part, SolutionStep



@generator("vanishing-gradient", title="Vanishing and exploding gradients in an RNN", calculator_free=False,
           syllabus="RNN: vanishing/exploding gradients, the product of w·tanh'(a_t), the role of tanh", version=1)
def vanishing_gradient(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    nl = "relu" if difficulty == 2 else "tanh"
    T = 4 if difficulty == 2 else 3
    if difficulty == 1:
        w = float(rng.choice([-0.8, -0.5, 0.5, 0.6, 0.8]))
        x = rng.decimals(-1, 1, 0.5, (T,), nonzero=True)
    elif difficulty == 2:
        w = float(rng.choice([1.5, 2.0, 1.25]))
        x = rng.decimals(0.5, 2, 0.5, (T,))
    else:
        w = float(rng.choice([-2.0, -1.5, 1.5, 2.0]))
        x = rng.decimals(-2, 2, 0.5, (T,), nonzero=True)
    params = {"w": w, "x": jsonable(x), "u": 1.0, "h0": 0.0, "b": 0.0, "nonlinearity": nl}
    known = solve.mistakes("vanishing-gradient", params)
    t = known.trace()
    if nl == "tanh" and np.any(np.abs(t.local_derivatives) < 1e-3):
        raise Degenerate("a fully saturated step: the product is ~0 whatever else happens")
    steps = solve.rnn.vanishing_steps(known.params, t)
    local, grad, bound = t.local_derivatives, t.gradient, t.bound
    phi_name = "\\tanh" if nl == "tanh" else "\\mathrm{ReLU}"
    asked = ["hidden", "local_derivatives", "gradient"] + (["bound"] if difficulty in (1, 3) else [])
    parts = [
        Part("hidden", f"The hidden states $h_1$ to $h_{T}$.", "vector", jsonable(t.hidden), shape=(T,), points=2,
             minutes=1.0 * T, misconceptions=known.of("hidden", jsonable),
             ecf_rule=solve.ecf("vanishing-gradient", "hidden", known.params, t, asked)),
        Part("local_derivatives", r"The local derivatives $\partial h_t / \partial h_{t-1} = w\,\phi'(a_t)$, one per step.",
             "vector", jsonable(local), shape=(T,), points=2, minutes=1.0 * T,
             misconceptions=known.of("local_derivatives", jsonable),
             ecf_rule=solve.ecf("vanishing-gradient", "local_derivatives", known.params, t, asked)),
        Part("gradient", rf"$\partial h_{T} / \partial h_0$.", "number", float(grad), points=1, minutes=1,
             misconceptions=known.of("gradient"),
             ecf_rule=solve.ecf("vanishing-gradient", "gradient", known.params, t, asked)),
    ]
    solution = steps_from(steps.forward, "hidden") + steps_from(steps.activation_derivatives, None)
    solution += steps_from(steps.local_derivatives, "local_derivatives")
    solution += steps_from(steps.product, "gradient")
    if difficulty in (1, 3):
        parts.append(Part("bound", rf"The bound $|w|^{T}$ on $|\partial h_{T} / \partial h_0|$ that follows from $\tanh' \le 1$.",
                          "number", float(bound), points=1, minutes=1, misconceptions=known.of("bound"),
                          ecf_rule=solve.ecf("vanishing-gradient", "bound", known.params, t, asked)))
        solution += steps_from(steps.bound, "bound")
    if difficulty == 1:
        long_x = jsonable(np.concatenate([x, np.zeros(47)]))
        long = known.trace(x=long_x)
        fate = "vanishes" if abs(long.gradient) < 1e-3 else ("explodes" if abs(long.gradient) > 1e3 else "stays moderate")
        parts.append(Part("long_run", "The inputs are 0 after step 3 and the sequence runs to T = 50. What does "
                          r"$\partial h_{50} / \partial h_0$ do?", "choice", fate,
                          choices=("vanishes", "explodes", "stays moderate"), tolerance=EXACT, points=1, minutes=1,
                          misconceptions=(Misconception("explodes", "explodes" if fate != "explodes" else "vanishes",
                                                        "Every factor is at most |w| < 1 in size: the product shrinks "
                                                        "geometrically."),)))
        solution += steps_from(solve.rnn.vanishing_steps(known.params | {"x": long_x}, long).product, None, prefix="T = 50: ")
        solution.append(SolutionStep("Long sequences", [
            Math(rf"|\partial h_{{50}} / \partial h_0| \le |w|^{{50}} = {abs(w) ** 50:.3g}"), Matrix("answer", fate),
            Text("tanh' ≤ 1 and |w| < 1: each step multiplies the gradient by less than 1, so information from early "
                 "inputs stops reaching the weights — the vanishing gradient that LSTM and GRU gates were built to avoid.")],
            "long_run"))
    elif difficulty == 2:
        c = 5.0
        # the same network over twenty positive inputs, its gradient clipped: every ReLU stays active (w > 0), so
        # ∂h_20/∂h_0 = w^20 is the topic's bound over those inputs, with the bound's mistake and ECF rule
        long = known.at(x=jsonable(np.concatenate([x, np.full(16, 1.0)])), max_norm=c)
        t20 = long.trace()
        g20, clipped = t20.gradient, t20.clipped
        parts20 = {"bound": "gradient_20", "gradient": "gradient_20", "clipped": "clipped"}
        parts.append(Part("gradient_20", r"The same network over $T = 20$ positive inputs: $\partial h_{20} / \partial h_0$.",
                          "number", float(g20), points=1, minutes=1, misconceptions=(long.get("bound", "w-times-t"),),
                          ecf_rule=solve.ecf("vanishing-gradient", "bound", long.params, t20, parts20)))
        parts.append(Part("clipped", rf"That gradient after clipping its norm to at most {c:g} "
                          "(as torch.nn.utils.clip_grad_norm_).",
                          "number", float(clipped), points=1, minutes=1, misconceptions=long.of("clipped"),
                          ecf_rule=solve.ecf("vanishing-gradient", "clipped", long.params, t20, parts20)))
        solution.append(SolutionStep("Twenty steps: every active ReLU step multiplies by w", [
            Math(r"\frac{\partial h_{20}}{\partial h_0} = w^{20}"), Matrix("∂h20/∂h0", float(g20))], "gradient_20"))
        solution.append(SolutionStep("Clip by norm", [
            Math(rf"g \leftarrow g \cdot \min\left(1, \frac{{{c:g}}}{{\lVert g \rVert}}\right)"),
            Matrix("clipped", float(clipped)),
            Text("With |w| > 1 and units that stay active, gradients grow geometrically with the sequence length "
                 "(exploding); clipping caps the step size without changing its direction.")], "clipped"))
    else:
        fate = "shrinks" if abs(grad) < 1 else "grows"
        parts.append(Part("verdict", f"Over these {T} steps, does the gradient shrink (|∂h_T/∂h_0| < 1) or grow?", "choice",
                          fate, choices=("shrinks", "grows"), tolerance=EXACT, points=1, minutes=1,
                          misconceptions=(Misconception("bound-decides", "grows" if fate == "shrinks" else "shrinks",
                                                        "The bound |w|^T only caps the size: saturated tanh units (h² near 1) "
                                                        "multiply by 1 − h² ≈ 0, so |w| > 1 does not guarantee growth."
                                                        if fate == "shrinks" else
                                                        "Compare the actual product with 1: here the factors w(1 − h_t²) are "
                                                        "large enough for it to grow."),)))
        solution.append(SolutionStep("Bound against the actual product", [
            Math(rf"|\partial h_{T} / \partial h_0| = {abs(grad):.4g} \quad\text{{vs}}\quad |w|^{T} = {bound:.4g}"),
            Matrix("verdict", fate),
            Text("tanh keeps the states in (−1, 1), but a saturated state has slope 1 − h² close to 0: large weights "
                 "push units into saturation, which damps the gradient instead of exploding it.")], "verdict"))
    statement = [Text(f"A one-unit RNN $h_t = {phi_name}(w\\,h_{{t-1}} + x_t)$ with $h_0 = 0$ and no bias, run over "
                      f"{T} inputs. By the chain rule "
                      f"$\\partial h_{T} / \\partial h_0 = \\prod_t \\partial h_t / \\partial h_{{t-1}}$."),
                 Matrix("w", w), Matrix("x", jsonable(x), col_labels=[f"t={i + 1}" for i in range(T)])]
    return Draft(title="Vanishing and exploding gradients through time", params=params, statement=statement, parts=parts,
                 solution=solution,
                 conventions={"recurrence": f"h_t = {nl}(w h_(t−1) + x_t), h_0 = 0",
                              "local derivative": "∂h_t/∂h_(t−1) = w·φ'(a_t)" + (", tanh' = 1 − h_t²" if nl == "tanh" else ""),
                              **({"clipping": "by norm: g·min(1, c/‖g‖)"} if difficulty == 2 else {})})
