"""Self-attention with learned projections by hand (Vaswani et al. 2017, row vectors): Q = X W_Q,
K = X W_K, V = X W_V, the scaled scores, the softmax weights, the heads, their concatenation and W_O.

Level 1: one head, two tokens, d_k = 4 (so √d_k = 2): the projections, QKᵀ/√d_k, the weights, αV.
Level 2: two heads on two tokens: the columns of Q, K and V split into two blocks of one, each head
scaled by its own √(d_k/h) = 1; the heads' outputs concatenated.
Level 3: two heads on three tokens with a causal mask, and the output projection W_O.
Calculator-free: W_Q is even at level 1 (the scaled scores are integers) and every head's key size is
1 at levels 2 and 3, so the weights are exact e^a/(e^a + e^b) forms.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from examprep import solve
from examprep.document import Matrix, Text
from examprep.generators.framework import (Degenerate, Draft, Stream, exact_matmul, generator, step_per_part, steps_from,
                                          jsonable)
from examprep.exact import softmax_entry, weighted_sum
from examprep.problem import Part, SolutionStep


def _exact_rows(scaled: np.ndarray, allowed: np.ndarray, values: np.ndarray) -> tuple[list, list]:
    """Exact weights and α·values of one head with integer scaled scores."""
    n = scaled.shape[0]
    weights, out = [], []
    for i in range(n):
        idx = [j for j in range(n) if allowed[i, j]]
        if len(idx) == 1:                  # one key allowed: weight 1, its value row as it is
            weights.append(["1" if j == idx[0] else "0" for j in range(n)])
            out.append([str(int(values[idx[0], c])) for c in range(values.shape[1])])
            continue
        exps = [Fraction(int(round(scaled[i, j]))) for j in idx]
        weights.append([softmax_entry(exps, idx.index(j)) if j in idx else "0" for j in range(n)])
        out.append([weighted_sum(exps, [values[j, c] for j in idx]) for c in range(values.shape[1])])
    return weights, out


def _refuse_flat_or_spread_scores(Q: list, K: list, heads: int, causal: bool) -> None:
    """The engine's check below, on the drawn integers before the engine is called (two draws in
    three fail it): each head's scores QₕKₕᵀ are integers and its scale 1/√(d_k/h) is 1/2 or 1, so
    the scaled spread c·ptp is exact and the same draws are refused. Plain Python on the rows (lists):
    ten draws a problem are refused here."""
    n, d_k = len(Q), len(Q[0])
    c = 1.0 / math.sqrt(d_k / heads)
    size = d_k // heads
    for h in range(heads):
        lo, hi = h * size, (h + 1) * size
        for i in range(n):
            q = Q[i][lo:hi]
            row = [sum(a * b for a, b in zip(q, K[j][lo:hi])) for j in range(i + 1 if causal else n)]
            if len(row) > 1 and not 0 < c * (max(row) - min(row)) <= 4:
                raise Degenerate("a row of equal scores (uniform weights), or one so spread that a weight is ~0")


@generator("self-attention", title="Self-attention with projections: heads, concat and W_O",
           syllabus="Transformer: self-attention with Q/K/V projections, multi-head attention", version=1)
def self_attention(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    n = 3 if difficulty == 3 else 2
    heads = 1 if difficulty == 1 else 2
    d_k = 4 if heads == 1 else 2
    X = rng.ints(-1, 1, (n, 2)) if heads > 1 else rng.ints(-1, 2, (n, 2))
    if calculator_free and heads == 1:
        w_q = 2 * rng.ints(-1, 1, (2, d_k))
    else:
        w_q = rng.ints(-1, 1, (2, d_k))
    w_k = rng.ints(-1, 1, (2, d_k))
    rows = X.tolist()                               # the checks before the engine call in plain Python (exact
    Q, K = exact_matmul(rows, w_q.tolist()), exact_matmul(rows, w_k.tolist())     # integers): a redraw costs no engine work
    if len({tuple(r) for r in rows}) < n or not any(map(any, Q)) or not any(map(any, K)):
        raise Degenerate("repeated tokens or a zero projection")
    _refuse_flat_or_spread_scores(Q, K, heads, difficulty == 3)
    # W_V and W_O come next in the stream: drawn only for a draw whose scores passed (nine in ten fail)
    w_v = rng.ints(-1, 2, (2, 2))
    w_o = rng.ints(-1, 1, (2, 2), nonzero=True) if difficulty == 3 else None
    if all(a == b for a, b in w_v.tolist()):
        raise Degenerate("both heads would read the same values")
    params = {"x": jsonable(X), "w_query": jsonable(w_q), "w_key": jsonable(w_k), "w_value": jsonable(w_v), "num_heads": heads,
              "w_output": jsonable(w_o) if w_o is not None else None, "causal": difficulty == 3}
    known = solve.mistakes("self-attention", params)
    t = known.trace()
    scaled = t.scaled_scores if heads > 1 else t.scaled_scores[None]
    for h_scores in scaled:
        for row, ok in zip(h_scores, t.allowed):
            if ok.sum() > 1 and not 0 < np.ptp(row[ok]) <= 4:
                raise Degenerate("a row of equal scores (uniform weights), or one so spread that a weight is ~0")
    cf = calculator_free
    tokens = [f"t{i + 1}" for i in range(n)]
    parts = [
        Part("query", r"The queries $Q = X W_Q$.", "matrix", jsonable(t.query), shape=t.query.shape, points=1,
             minutes=0.3 * t.query.size, misconceptions=known.of("query", jsonable),
             hint="Row i of Q is token i's row of X times W_Q."),
        Part("key", r"The keys $K = X W_K$.", "matrix", jsonable(t.key), shape=t.key.shape, points=1,
             minutes=0.3 * t.key.size, misconceptions=known.of("key", jsonable)),
        Part("value", r"The values $V = X W_V$.", "matrix", jsonable(t.value), shape=t.value.shape, points=1,
             minutes=0.3 * t.value.size, misconceptions=known.of("value", jsonable)),
    ]
    asked = {"query": "query", "key": "key", "value": "value"}
    steps = solve.attention.self_attention_steps(known.params, t)
    solution = step_per_part(steps.projections, {"query": "query", "key": "key", "value": "value"},
                             titles={"key": "Keys", "value": "Values"})
    if heads == 1:
        exact_w, exact_o = _exact_rows(t.scaled_scores, t.allowed, t.value) if cf else (None, None)
        asked |= {"scaled_scores": "scaled_scores", "weights": "weights"}
        parts += [
            Part("scaled_scores", r"The scaled scores $S = QK^\top / \sqrt{d_k}$ (rows: queries, columns: keys).", "matrix",
                 jsonable(t.scaled_scores), shape=(n, n), points=2, minutes=3,
                 exact=[[str(int(round(v))) for v in row] for row in t.scaled_scores] if cf else None,
                 misconceptions=known.of("scaled_scores", jsonable)),
            Part("weights", r"The attention weights $\alpha = \mathrm{softmax}(S)$ (each row).", "matrix", jsonable(t.weights),
                 shape=(n, n), points=2, minutes=3, exact=exact_w, misconceptions=known.of("weights", jsonable),
                 ecf_rule=solve.ecf("self-attention", "weights", known.params, t, asked)),
            Part("output", r"The output $O = \alpha V$.", "matrix", jsonable(t.output), shape=t.output.shape, points=2,
                 minutes=2, exact=exact_o, misconceptions=known.of("output", jsonable),
                 ecf_rule=solve.ecf("self-attention", "output", known.params, t, asked)),
        ]
        solution += steps_from((steps.scores, steps.scale), "scaled_scores") + steps_from(steps.softmax, "weights")
        solution += steps_from(steps.heads, "output")
    else:
        exact = [_exact_rows(scaled[h], t.allowed, t.value[:, h:h + 1]) for h in range(2)] if cf else None
        for h in range(2):
            parts.append(Part(f"weights_{h}", f"Head {h}'s attention weights $\\alpha_{h}$ (each row"
                              + (", causal" if difficulty == 3 else "") + ").", "matrix", jsonable(t.weights[h]),
                              shape=(n, n), points=2, minutes=1 + 0.5 * int(t.allowed.sum()),
                              exact=exact[h][0] if exact else None,
                              misconceptions=known.of("weights", lambda v, h=h: jsonable(np.asarray(v)[h])),
                              hint=f"Head {h} takes column {h} of Q, K and V; scale by 1/√(d_k/h) = 1."))
        concat_exact = ([[exact[h][1][i][0] for h in range(2)] for i in range(n)] if exact else None)
        parts.append(Part("concat", r"The heads' outputs concatenated, $[\alpha_0 V_0,\ \alpha_1 V_1]$ "
                          f"({n}×2).", "matrix", jsonable(t.concat), shape=(n, 2), points=2, minutes=0.8 * n,
                          exact=concat_exact,
                          misconceptions=known.of("concat", jsonable)))
        solution += steps_from((steps.scores, steps.scale, steps.mask), None)
        solution += step_per_part(steps.softmax, {"weights[0]": "weights_0", "weights[1]": "weights_1"},
                                  titles={"weights[1]": "The same for head 1"})
        solution += step_per_part(steps.heads, {"heads[0]": "concat", "heads[1]": "concat"})
        if difficulty == 3:
            parts.append(Part("output", r"The layer's output $O = [\alpha_0 V_0,\ \alpha_1 V_1]\, W_O$.", "matrix",
                              jsonable(t.output), shape=t.output.shape, points=2, minutes=0.8 * n,
                              misconceptions=known.of("output", jsonable),
                              ecf_rule=solve.ecf("self-attention", "output", known.params, t, {"concat": "concat"})))
            solution += step_per_part(steps.output, {"concat": "concat", "output": "output"},
                                      titles={"output": "Project with W_O"})
        else:
            solution += steps_from(steps.output, "concat")
    if cf and any(q.exact for q in parts):
        solution.append(SolutionStep("Exact values", [Matrix(q.id, q.exact) for q in parts if q.exact and q.kind == "matrix"
                                                      and q.id != "scaled_scores"]))
    intro = ("Self-attention with learned projections, row vectors as in Vaswani et al. (2017): $Q = X W_Q$, $K = X W_K$, "
             "$V = X W_V$; rows of X are tokens. "
             + ("One head, $d_k = 4$: $\\alpha = \\mathrm{softmax}(QK^\\top / \\sqrt{d_k})$, $O = \\alpha V$."
                if heads == 1 else
                "Two heads: head $h$ takes column block $h$ of Q, K and V (here one column each, so each head's "
                "$d_k/h = 1$ and its scale is $1/\\sqrt{1} = 1$), computes $\\alpha_h = \\mathrm{softmax}(Q_h K_h^\\top)$ "
                "and $\\alpha_h V_h$; the heads are concatenated"
                + (" and multiplied by $W_O$. A causal mask applies: token i attends tokens j ≤ i." if difficulty == 3
                   else ".")))
    statement = [Text(intro), Matrix("X", jsonable(X), row_labels=tokens), Matrix("W_Q", jsonable(w_q)),
                 Matrix("W_K", jsonable(w_k)), Matrix("W_V", jsonable(w_v))]
    if w_o is not None:
        statement.append(Matrix("W_O", jsonable(w_o)))
    return Draft(title={1: "Self-attention with projections", 2: "Two-head self-attention",
                        3: "Two-head causal self-attention with W_O"}[difficulty], params=params, statement=statement,
                 parts=parts, solution=solution,
                 conventions={"layout": "row vectors: Q = X W_Q (Vaswani et al. 2017)",
                              "heads": "head h takes column block h of Q, K, V" if heads > 1 else "one head",
                              "scale": "1/√(d_k/h), the per-head key size",
                              "mask": "causal: j ≤ i" if difficulty == 3 else "none"})
