"""Residual connections by hand: the gradient through y = x + F(x) and its "+1" path.

Level 1: one feature, F(x) = ReLU(w x + b): y, dy/dx = 1 + F'(x) and ∂L/∂x — also when the ReLU
is dead and F' = 0, the skip still passes the gradient.
Level 2: two features and a two-layer branch F(x) = W₂ ReLU(W₁ x + b₁): the branch's share of the
input gradient, ∂L/∂x = δ + (∂F/∂x)ᵀ δ, and the Jacobian I + ∂F/∂x.
Level 3: a stack of L one-unit layers with and without skips: the product of local derivatives,
∏ w_l φ'(a_l) against ∏ (1 + w_l φ'(a_l)), and which stack keeps its gradient.
Calculator-free: integers, and ReLU layers at level 3, so every answer is exact.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Table, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.problem import EXACT, Misconception, Part, EcfRule, SolutionStep


def _dead_or_kinked(x: list, w1: list, b1: list, w2: list, delta: list) -> bool:
    """The engine's refusal of a level-2 draw (a pre-activation at the kink, no active unit, or no
    gradient through the branch) before its call, in plain Python: on integers and halves every sum
    below is exact — the engine's branch_pre and grad_branch to the bit (half of the draws fail it)."""
    a = [sum(w * v for w, v in zip(row, x)) + b for row, b in zip(w1, b1)]                # W₁x + b₁
    if 0 in a or max(a) < 0:
        return True
    grad_pre = [sum(w2[i][j] * delta[i] for i in range(len(delta))) if a[j] > 0 else 0.0 for j in range(len(a))]
    return not any(sum(w1[i][j] * grad_pre[i] for i in range(len(a))) for j in range(len(x)))   # W₁ᵀ(W₂ᵀδ ⊙ ReLU'(a))


@generator("residual", title="Residual connection: the gradient through y = x + F(x)",
           syllabus="Residual connections: gradient flow through the skip (the +1 path)", version=2)
def residual(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    if difficulty == 3:
        return _stack(rng, calculator_free)
    conventions = {"skip": "identity, y = x + F(x) (He et al. 2016)", "ReLU'(0)": "0 (PyTorch)"}
    if difficulty == 1:
        x = float(rng.choice([-2, -1, 1, 2, 3]))
        w = float(rng.choice([-2, -1, 1, 2, 3] if calculator_free else [-1.5, -1, -0.5, 0.5, 1, 1.5, 2]))
        b = float(rng.integer(-2, 2))
        delta = float(rng.choice([-2, -1, 1, 2, 3]))
        if w * x + b == 0:                 # the engine's branch_pre, exact: refused before its call
            raise Degenerate("pre-activation at the ReLU kink")
        params = {"x": x, "w1": w, "b1": [b], "activation": "relu", "grad_output": delta}
        known = solve.mistakes("residual", params)
        t = known.trace()
        kind, shape, val = "number", None, float
        statement = [Text("A residual unit with one feature: $y = x + F(x)$, $F(x) = \\mathrm{ReLU}(w x + b)$ "
                          "(the worked solution writes $W_1 = w$, $b_1 = b$). "
                          "Backpropagation has delivered $\\delta = \\partial L / \\partial y$."),
                     Table(["x", "w", "b", "δ"], [[x, w, b, delta]])]
    else:
        x = rng.ints(-2, 2, (2,), nonzero=True)
        w1 = rng.ints(-1, 1, (2, 2)) if calculator_free else rng.decimals(-1, 1, 0.5, (2, 2))
        b1 = rng.ints(-1, 1, (2,))
        w2 = rng.ints(-1, 1, (2, 2), nonzero=True) if calculator_free else rng.decimals(-1, 1, 0.5, (2, 2), nonzero=True)
        delta = rng.ints(-2, 2, (2,), nonzero=True)
        if _dead_or_kinked(x.tolist(), w1.tolist(), b1.tolist(), w2.tolist(), delta.tolist()):
            raise Degenerate("kink, dead branch or zero branch gradient: the two paths do not both show")
        params = {"x": jsonable(x), "w1": jsonable(w1), "b1": jsonable(b1), "w2": jsonable(w2), "activation": "relu",
                  "grad_output": jsonable(delta)}
        known = solve.mistakes("residual", params)
        t = known.trace()
        kind, shape, val = "vector", (2,), jsonable
        statement = [Text("A residual block with a two-layer branch: $y = x + F(x)$, "
                          "$F(x) = W_2\\,\\mathrm{ReLU}(W_1 x + b_1)$ (no bias after $W_2$; weights out×in). "
                          "Backpropagation has delivered $\\delta = \\partial L / \\partial y$."),
                     Matrix("x", jsonable(x)), Matrix("W_1", jsonable(w1)), Matrix("b_1", jsonable(b1)),
                     Matrix("W_2", jsonable(w2)), Matrix("δ", jsonable(delta))]
    steps = solve.residual.residual_steps(known.params, t)
    asked = ("branch", "output", "jacobian", "grad_input") + (("grad_branch",) if difficulty == 2 else ())

    def ecf(answer: str) -> EcfRule | None:
        return solve.ecf("residual", answer, known.params, t, asked, jsonable)
    parts = [
        Part("branch", "The branch output $F(x)$.", kind, val(t.branch), shape=shape, points=1, minutes=2 if shape else 1,
             misconceptions=known.of("branch", val)),
        Part("output", "The block's output $y = x + F(x)$.", kind, val(t.output), shape=shape, points=1, minutes=0.5,
             misconceptions=known.of("output", val), ecf_rule=ecf("output")),
    ]
    solution = steps_from(steps.branch_pre, None)
    solution += steps_from((steps.activation, steps.branch_output), "branch")
    solution += steps_from(steps.skip, "output")
    if difficulty == 1:
        parts.append(Part("jacobian", "The local derivative $dy/dx$.", "number", float(t.jacobian), points=1, minutes=1.5,
                          misconceptions=known.of("jacobian", float), ecf_rule=ecf("jacobian")))
        parts.append(Part("grad_input", r"$\partial L / \partial x$.", "number", float(t.grad_input), points=2, minutes=1.5,
                          misconceptions=known.of("grad_input", float), ecf_rule=ecf("grad_input")))
        solution += steps_from((steps.activation_derivative, steps.jacobian), "jacobian")
        solution += steps_from(steps.grad_input, "grad_input")
        if np.all(np.atleast_1d(t.branch_pre) < 0):
            solution.append(SolutionStep("A dead branch still lets the gradient through", [Text(
                "The ReLU is off (w x + b < 0), so F'(x) = 0 — in a plain layer the gradient would stop here. "
                "The skip's derivative 1 carries δ to x unchanged.")]))
    else:
        parts.append(Part("grad_branch", r"The branch's share of the input gradient, $(\partial F / \partial x)^\top \delta$.",
                          "vector", jsonable(t.grad_branch), shape=(2,), points=2, minutes=4,
                          misconceptions=known.of("grad_branch", jsonable), ecf_rule=ecf("grad_branch")))
        parts.append(Part("grad_input", r"$\partial L / \partial x$.", "vector", jsonable(t.grad_input), shape=(2,), points=1,
                          minutes=1, misconceptions=known.of("grad_input", jsonable), ecf_rule=ecf("grad_input")))
        parts.append(Part("jacobian", r"The Jacobian $\partial y / \partial x$ (2×2).", "matrix", jsonable(t.jacobian),
                          shape=(2, 2), points=2, minutes=3,
                          misconceptions=known.of("jacobian", jsonable), ecf_rule=ecf("jacobian")))
        solution += steps_from(steps.activation_derivative, None)
        solution += steps_from((steps.back_w2, steps.through_activation), None)
        solution += steps_from(steps.branch_share, "grad_branch")
        solution += steps_from(steps.grad_input, "grad_input")
        solution += steps_from(steps.jacobian, "jacobian")
    solution.append(SolutionStep("Why the skip helps", [Text(
        "Whatever the branch does, ∂y/∂x contains the identity: the gradient reaches x at least through the skip. "
        "In a deep stack of such blocks the product of Jacobians keeps a path of 1s, so gradients do not vanish "
        "the way they do through a chain of small local derivatives.")]))
    return Draft(title="Gradient through a residual connection", params=params, statement=statement, parts=parts,
                 solution=solution, conventions=conventions)


def _stack(rng: Stream, calculator_free: bool) -> Draft:
    L = rng.integer(3, 4)
    act = "relu" if calculator_free else "tanh"
    w = np.array([float(rng.choice([0.25, 0.5] if calculator_free else [0.5, 1.0, 1.5])) for _ in range(L)])
    x = float(rng.choice([1, 2] if calculator_free else [0.5, 1.0]))
    params = {"x": x, "weights": jsonable(w), "activation": act}
    known = solve.mistakes("residual-stack", params)
    res = known.trace()                                  # skip connections (the default)
    flat = known.at(skip=False)
    plain = flat.trace()
    if abs(abs(plain.gradient) - abs(res.gradient)) < 1e-9:
        raise Degenerate("both stacks pass the same gradient")
    phi = r"\mathrm{ReLU}" if act == "relu" else r"\tanh"
    larger = "residual" if abs(res.gradient) > abs(plain.gradient) else "plain"
    statement = [Text(f"Two stacks of {L} one-unit layers with the same weights and no biases, input $x = y_0 = {x:g}$:"),
                 Math(rf"\text{{plain: }} y_l = {phi}(w_l\, y_{{l-1}}),\quad "
                      rf"\text{{residual: }} y_l = y_{{l-1}} + {phi}(w_l\, y_{{l-1}})"),
                 Matrix("w", jsonable(w), col_labels=[f"l={i + 1}" for i in range(L)])]
    parts = [
        Part("local_plain", r"The plain stack's local derivatives $\partial y_l / \partial y_{l-1}$, $l = 1..L$.", "vector",
             jsonable(plain.local_derivatives), shape=(L,), points=2, minutes=5,
             misconceptions=flat.of("local_derivatives", jsonable)),
        Part("gradient_plain", r"$\partial y_L / \partial x$ for the plain stack.", "number", float(plain.gradient),
             points=1, minutes=1,
             misconceptions=flat.of("gradient", float),
             ecf_rule=solve.ecf("residual-stack", "gradient", flat.params, plain, {"local_derivatives": "local_plain"})),
        Part("local_residual", r"The residual stack's local derivatives $\partial y_l / \partial y_{l-1}$.", "vector",
             jsonable(res.local_derivatives), shape=(L,), points=2, minutes=5,
             misconceptions=known.of("local_derivatives", jsonable)),
        Part("gradient_residual", r"$\partial y_L / \partial x$ for the residual stack.", "number", float(res.gradient),
             points=1, minutes=1,
             misconceptions=known.of("gradient", float),
             ecf_rule=solve.ecf("residual-stack", "gradient", known.params, res, {"local_derivatives": "local_residual"})),
        Part("larger", "Which stack passes the larger gradient back to its input?", "choice", larger,
             choices=("plain", "residual"), tolerance=EXACT, points=1, minutes=0.5,
             misconceptions=(Misconception("wrong-stack", "plain" if larger == "residual" else "residual",
                                           "Compare the two products: every residual factor is 1 + w_l φ'(a_l)."),)),
    ]
    ps = solve.residual.stack_steps(known.params | {"skip": False}, plain)
    rs = solve.residual.stack_steps(known.params | {"skip": True}, res)
    solution = (steps_from((ps.forward, ps.activation_derivatives), None, prefix="Plain: ")
                + steps_from(ps.local_derivatives, "local_plain", prefix="Plain: ")
                + steps_from(ps.chain, "gradient_plain", prefix="Plain: ")
                + steps_from((rs.forward, rs.activation_derivatives), None, prefix="Residual: ")
                + steps_from(rs.local_derivatives, "local_residual", prefix="Residual: ")
                + steps_from(rs.chain, "gradient_residual", prefix="Residual: "))
    solution.append(SolutionStep("Compare", [
        Math(r"\prod_l w_l \phi'(a_l) \quad\text{vs}\quad \prod_l \left(1 + w_l \phi'(a_l)\right)"),
        Matrix("larger", larger),
        Text("Each plain factor is at most |w_l| (φ' ≤ 1), so with small weights the product shrinks geometrically "
             "with depth; each residual factor keeps the skip's 1, so the gradient cannot vanish that way.")], "larger"))
    return Draft(title="Gradient through deep stacks, with and without skips", params=params | {"layers": L},
                 statement=statement, parts=parts, solution=solution,
                 conventions={"layers": "one unit each, no biases", "activation": act,
                              "local derivative": "plain w_l φ'(a_l); residual 1 + w_l φ'(a_l)"})
