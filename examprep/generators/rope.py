"""Rotary position embedding (RoPE) by hand: rotate each pair of a query or key by position × θ_j, and
see that the attention score then depends only on the relative position.

Level 1: a 2-D vector rotated by its position (θ₀ = 1 rad per position); rotations keep the length.
Level 2: a 4-D vector with base 100 (θ = 1 and 0.1), interleaved pairs (RoFormer) — against the
rotate-half pairing of GPT-NeoX and Llama.
Level 3: a query and a key at positions m and n: the rotated vectors, their score, and the same
score when both positions shift — RoPE's score depends on m − n only.
Cosines and sines of whole radians need a calculator: there is no calculator-free variant.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.problem import EXACT, Misconception, Part, SolutionStep

LENGTH_CHOICES = ("unchanged", "grows with the position", "shrinks with the position")
DEPENDS_CHOICES = ("only m − n", "m and n separately", "only m + n")
ASKED = ("query_rotated", "key_rotated", "score")


@generator("rope", title="Rotary position embedding (RoPE)", syllabus="Transformer: positional information, RoPE",
           version=1, calculator_free=False)
def rope(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    if difficulty == 3:
        return _score(rng)
    d = 2 if difficulty == 1 else 4
    base = 10000 if difficulty == 1 else 100
    x = rng.ints(-2, 2, (d,), nonzero=True)
    m = rng.integer(1, 3) if difficulty == 1 else rng.integer(2, 5)
    params = {"x": jsonable(x), "position": m, "base": base, "style": "interleaved"}
    known = solve.mistakes("rope", params)
    r = known.trace()
    steps = solve.positions.rope_steps(known.params, r)
    out_mis = known.of("output", jsonable)
    statement = [Text(f"Rotary position embedding (RoFormer, Su et al. 2021) rotates each pair of coordinates of a query or "
                      f"key at position m by the angle $m\\theta_j$, with $\\theta_j = \\text{{base}}^{{-2j/d}}$ "
                      f"(base = {base}, d = {d}, j = 0, …, d/2 − 1): "
                      r"$(a, b) \mapsto (a \cos m\theta_j - b \sin m\theta_j,\ a \sin m\theta_j + b \cos m\theta_j)$."
                      + (" Pairs are interleaved: $(x_0, x_1), (x_2, x_3)$." if d == 4 else "")
                      + f" The vector is at position m = {m}."),
                 Matrix("x", jsonable(x))]
    conventions = {"angles": "radians", "pairs": "interleaved (x0,x1),(x2,x3) (RoFormer)" if d == 4 else "one pair"}
    if difficulty == 1:
        parts = [Part("output", "The rotated vector RoPE(x, m).", "vector", jsonable(r.output), shape=(2,), points=2, minutes=3,
                      misconceptions=out_mis, ecf_rule=solve.ecf("rope", "output", known.params, r, ["output"])),
                 Part("length", "Compared with x, the length of RoPE(x, m) is:", "choice", LENGTH_CHOICES[0], tolerance=EXACT,
                      points=1, minutes=0.5, choices=LENGTH_CHOICES,
                      # the wrong options: statement slips (generators/slips.py)
                      misconceptions=(Misconception("grows", LENGTH_CHOICES[1], "A rotation keeps lengths: ‖R x‖ = ‖x‖."),
                                      Misconception("shrinks", LENGTH_CHOICES[2], "A rotation keeps lengths: ‖R x‖ = ‖x‖.")))]
        solution = steps_from(steps, "output")
        solution.append(SolutionStep("A rotation keeps the length", [
            Math(r"\|R(m\theta)\,x\| = \|x\|"), Matrix("‖x‖", float(np.linalg.norm(x))),
            Matrix("‖RoPE(x, m)‖", float(np.linalg.norm(r.output))), Matrix("length", LENGTH_CHOICES[0])], "length"))
        return Draft(title="RoPE: rotate a 2-D vector", params=params, statement=statement, parts=parts, solution=solution,
                     conventions=conventions)
    parts = [
        Part("angles", "The rotation angles $m\\theta_0$ and $m\\theta_1$ (radians).", "vector", jsonable(r.angles), shape=(2,),
             points=1, minutes=1.5, misconceptions=known.of("angles", jsonable)),
        Part("output", "The rotated vector RoPE(x, m).", "vector", jsonable(r.output), shape=(4,), points=3, minutes=4,
             misconceptions=out_mis, ecf_rule=solve.ecf("rope", "output", known.params, r, ["output"])),
    ]
    solution = steps_from((steps.frequencies, steps.angles), "angles") + steps_from(steps.rotate, "output")
    return Draft(title="RoPE: rotate a 4-D vector", params=params, statement=statement, parts=parts, solution=solution,
                 conventions=conventions | {"base": str(base)})


def _score(rng: Stream) -> Draft:
    q = rng.ints(-2, 2, (2,), nonzero=True)
    k = rng.ints(-2, 2, (2,), nonzero=True)
    m, n = rng.integer(1, 4), rng.integer(1, 3)
    shift = rng.integer(2, 5)
    if m == n or abs(q[0] * k[1] - q[1] * k[0]) < 0.5:
        raise Degenerate("same positions, or parallel q and k")
    params = {"query": jsonable(q), "key": jsonable(k), "position_query": m, "position_key": n, "style": "interleaved"}
    known = solve.mistakes("rope-score", params)
    rs = known.trace()
    shifted_p = params | {"position_query": m + shift, "position_key": n + shift}
    shifted = known.at(position_query=m + shift, position_key=n + shift)
    sh = shifted.trace()
    statement = [Text("RoPE rotates the query at position m by the angle mθ and the key at position n by nθ (d = 2, so θ = 1 "
                      r"rad): $(a, b) \mapsto (a \cos\phi - b \sin\phi,\ a \sin\phi + b \cos\phi)$. The attention score is "
                      r"$q' \cdot k'$ (no scaling)." + f" Here m = {m} and n = {n}."),
                 Matrix("q", jsonable(q)), Matrix("k", jsonable(k))]
    parts = [
        Part("query_rotated", "The rotated query $q'$.", "vector", jsonable(rs.query_rotated), shape=(2,), points=1, minutes=2,
             misconceptions=known.of("query_rotated", jsonable),
             ecf_rule=solve.ecf("rope-score", "query_rotated", params, rs, ASKED)),
        Part("key_rotated", "The rotated key $k'$.", "vector", jsonable(rs.key_rotated), shape=(2,), points=1, minutes=2,
             misconceptions=known.of("key_rotated", jsonable),
             ecf_rule=solve.ecf("rope-score", "key_rotated", params, rs, ASKED)),
        Part("score", "The score $q' \\cdot k'$.", "number", rs.score, points=1, minutes=1,
             misconceptions=known.of("score"), ecf_rule=solve.ecf("rope-score", "score", params, rs, ASKED)),
        Part("shifted_score", f"The score when both tokens move {shift} positions later (m + {shift}, n + {shift}).", "number",
             sh.score, points=1, minutes=1,
             misconceptions=(shifted.get("score", "unrotated"),),
             ecf_rule=solve.ecf("rope-score", "score", shifted_p, sh, ())),     # its own positions: not the parts' vectors
        Part("depends_on", "RoPE's score depends on the positions through:", "choice", DEPENDS_CHOICES[0], tolerance=EXACT,
             points=1, minutes=0.5, choices=DEPENDS_CHOICES,
             misconceptions=(Misconception("absolute", DEPENDS_CHOICES[1],     # the wrong options: SLIPS
                                           "q'·k' = qᵀR((n − m)θ)k: only the offset m − n enters, as the shifted score shows."),
                             Misconception("sum", DEPENDS_CHOICES[2], "The rotations subtract: R(mθ)ᵀR(nθ) = R((n − m)θ)."))),
    ]
    steps = solve.positions.rope_score_steps(known.params, rs)
    solution = steps_from(steps.query, "query_rotated") + steps_from(steps.key, "key_rotated") + steps_from(steps.score, "score")
    solution += steps_from(solve.positions.rope_score_steps(known.params | shifted_p, sh), "shifted_score",
                           f"Both {shift} later: ")
    solution.append(SolutionStep("Only the offset matters", [
        Math(r"q' \cdot k' = (R_{m\theta} q)^\top (R_{n\theta} k) = q^\top R_{(n-m)\theta}\, k"),
        Matrix("m − n", m - n), Matrix("depends on", DEPENDS_CHOICES[0])], "depends_on"))
    return Draft(title="RoPE: the score depends on the relative position", params=params | {"shift": shift},
                 statement=statement, parts=parts, solution=solution,
                 conventions={"angles": "radians, θ = 1 for d = 2", "score": "q'·k', unscaled"})
