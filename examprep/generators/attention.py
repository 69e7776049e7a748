"""Attention weights by hand: scaled dot-product scores, softmax weights, the weighted sum of values.

Level 1: two tokens, d_k = 4 (so √d_k = 2). Level 2: three tokens with a causal mask.
Level 3: three tokens, causal, larger entries and a cross-attention setting (queries from the
decoder, keys and values from the encoder). Variant at any level: the lecture's unprojected
self-attention e_ij = x_i·x_j (no scaling), o_i = Σ_j α_ij x_j.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from examprep import engine, solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, tolist
from examprep.generators._exact import softmax_entry, weighted_sum
from examprep.problem import Misconception, Part, Recipe, SolutionStep


def _rows_degenerate(scaled: np.ndarray, allowed: np.ndarray) -> bool:
    for row, ok in zip(scaled, allowed.astype(bool)):
        vals = row[ok]
        if len(vals) >= 2 and np.ptp(vals) == 0:
            return True
    return False


@generator("attention", title="Attention weights by hand", syllabus="Transformer: scaled dot-product attention, causal mask",
           version=1)
def attention(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    variant = "self" if rng.chance(1, 3) else "qkv"
    causal = difficulty >= 2
    n = 2 if difficulty == 1 else 3
    cross = difficulty == 3 and variant == "qkv" and rng.chance(1, 2)
    m = 3 if cross else n
    if cross:
        causal = False
    hi = 1 if difficulty == 1 else 2
    if variant == "self":
        d = 2
        X = rng.ints(-hi, hi, (n, d))
        if calculator_free:
            X = rng.ints(-1, 1, (n, d))
        Q = K = V = X
        scale = 1.0
    else:
        d = 4
        if calculator_free:     # even scores: the scaled scores are integers
            Q = 2 * rng.ints(-1, 1, (n, d))
            K = rng.ints(-1, 1, (m, d))
        else:
            Q = rng.ints(-hi, hi, (n, d))
            K = rng.ints(-hi, hi, (m, d))
        V = rng.ints(-2, 3, (m, 2))
        scale = None
    params = {"query": tolist(Q), "key": tolist(K), "value": tolist(V), "causal": causal,
              "scale": scale}
    sol = solve.solve("attention", params)
    tr = engine.attention(Q, K, V, causal=causal, scale=scale)
    if _rows_degenerate(tr.scaled_scores, tr.allowed) or not np.any(tr.scores):
        raise Degenerate("a row of equal scores")
    s = tr.scale
    scaled, allowed = tr.scaled_scores, tr.allowed

    # misconceptions, each through the engine with the mistaken method
    no_scale = engine.attention(Q, K, V, causal=causal, scale=1.0)
    by_dk = engine.attention(Q, K, V, causal=causal, scale=1.0 / K.shape[1])
    wrong_axis_w = engine.masked_softmax(scaled.T, allowed.T.astype(bool)).T
    after_w = engine.softmax(scaled).probs * allowed
    tokens = [f"t{i + 1}" for i in range(n)]
    keys = [f"s{j + 1}" for j in range(m)] if cross else tokens

    score_mis = []
    weight_mis = [Misconception("wrong-axis", tolist(wrong_axis_w),
                                "You normalised each column (over the queries); softmax runs over the keys, along each row.")]
    out_mis = [Misconception("wrong-axis", tolist(wrong_axis_w @ V),
                             "Your weights were normalised over the queries (columns) instead of over the keys (rows).")]
    if variant == "qkv":
        score_mis += [
            Misconception("no-scale", tolist(no_scale.scores),
                          "You forgot to divide by √d_k: scaled dot-product attention uses QKᵀ/√d_k."),
            Misconception("divide-by-dk", tolist(by_dk.scaled_scores),
                          "You divided by d_k; the scale is 1/√d_k."),
            Misconception("transposed", tolist(scaled.T) if n == m else tolist(K @ Q.T * s),
                          "Rows are queries and columns are keys: the score matrix is QKᵀ, not KQᵀ."),
        ]
        weight_mis += [Misconception("no-scale", tolist(no_scale.weights),
                                     "You forgot to divide by √d_k before the softmax."),
                       Misconception("divide-by-dk", tolist(by_dk.weights), "You divided by d_k instead of √d_k.")]
        out_mis += [Misconception("no-scale", tolist(no_scale.output),
                                  "Your weights came from unscaled scores: divide QKᵀ by √d_k before the softmax.")]
    else:
        score_mis += [Misconception("sum-not-dot", tolist(np.add.outer(X.sum(1), X.sum(1))),
                                    "A score is the dot product Σ_k x_ik x_jk, not the sum of all entries.")]
        weight_mis += [Misconception("scaled", tolist(engine.attention(X, X, X, causal=causal).weights),
                                     "The lecture's unprojected self-attention uses e_ij = x_i·x_j with no 1/√d scaling.")]
    if causal:
        weight_mis.append(Misconception("mask-after-softmax", tolist(after_w),
                                        "You zeroed the masked weights after the softmax; "
                                        "set masked scores to −∞ before it so each row still sums to 1."))
        out_mis.append(Misconception("mask-after-softmax", tolist(after_w @ V),
                                     "Your weights were masked after the softmax, so rows no longer sum to 1."))
        weight_mis.append(Misconception("no-mask", tolist(engine.softmax(scaled).probs),
                                        "The causal mask stops token i attending to later tokens j > i."))

    exact_w = exact_o = exact_s = None
    if calculator_free:
        ex = [[Fraction(int(round(v))) for v in row] for row in scaled]
        exact_s = [[str(int(round(v))) for v in row] for row in scaled]
        exact_w, exact_o = [], []
        for i in range(n):
            idx = [j for j in range(m) if allowed[i, j]]
            exps = [ex[i][j] for j in idx]
            exact_w.append([softmax_entry(exps, idx.index(j)) if j in idx else "0" for j in range(m)])
            exact_o.append([weighted_sum(exps, [V[j, c] for j in idx]) for c in range(V.shape[1])])

    mask_args = tolist(allowed)
    w_label = r"\alpha"
    if variant == "qkv":
        intro = (f"Queries, keys and values of a single attention head (d_k = {d}). "
                 + ("The queries come from the decoder; keys and values from the encoder output (cross-attention). "
                    if cross else "")
                 + ("A causal mask applies: query $i$ may attend key $j$ only if $j \\le i$. " if causal else "")
                 + "Rows are tokens.")
        statement = [Text(intro), Matrix("Q", tolist(Q), row_labels=tokens),
                     Matrix("K", tolist(K), row_labels=keys), Matrix("V", tolist(V), row_labels=keys)]
        score_prompt = r"The scaled scores $S = QK^\top / \sqrt{d_k}$ (rows: queries, columns: keys)."
        conventions = {"score": "scaled dot-product, QKᵀ/√d_k", "softmax": "over the keys (each row)",
                       "mask": "causal: −∞ before the softmax for j > i" if causal else "none"}
    else:
        intro = ("Self-attention without projections, as in the lecture: $e_{ij} = x_i^\\top x_j$, "
                 "$\\alpha_{ij} = \\mathrm{softmax}_j(e_{ij})$, $o_i = \\sum_j \\alpha_{ij} x_j$ (no scaling). "
                 + ("A causal mask applies: position $i$ attends $j \\le i$ only. " if causal else "")
                 + "Rows of X are the token vectors.")
        statement = [Text(intro), Matrix("X", tolist(X), row_labels=tokens)]
        score_prompt = r"The score matrix $E$ with $e_{ij} = x_i^\top x_j$."
        conventions = {"score": "unprojected dot product e_ij = x_i·x_j, no scaling", "softmax": "over j (each row)",
                       "mask": "causal: −∞ before the softmax for j > i" if causal else "none"}
    size = scaled.shape
    minutes = 1.0 + 0.5 * scaled.size
    parts = [
        Part("scores", score_prompt, "matrix", tolist(scaled), shape=size, points=2, minutes=round(minutes, 1),
             exact=exact_s, misconceptions=tuple(score_mis),
             hint="Entry (i, j) is the dot product of query row i with key row j"
                  + (", divided by √d_k." if variant == "qkv" else ".")),
        Part("weights", rf"The attention weights ${w_label}$ (softmax of each row{', masked' if causal else ''}).", "matrix",
             tolist(tr.weights), shape=size, points=3, minutes=round(2 + 1.0 * scaled.size, 1), exact=exact_w,
             misconceptions=tuple(weight_mis),
             recipe=Recipe("scaled-masked-softmax", {"scores": {"$ref": "scores"}, "scale": 1.0, "allowed": mask_args}),
             hint="Exponentiate each allowed score, divide by the row's sum; masked entries are 0."),
        Part("output", r"The outputs $O = \alpha V$ (one row per query)." if variant == "qkv"
             else r"The outputs $o_i = \sum_j \alpha_{ij} x_j$ (one row per token).", "matrix",
             tolist(tr.output), shape=tr.output.shape, points=3, minutes=round(1 + 0.5 * tr.output.size, 1), exact=exact_o,
             misconceptions=tuple(out_mis), recipe=Recipe("matmul", {"a": {"$ref": "weights"}, "b": tolist(V)}),
             hint="Each output row is the weighted sum of the value rows, with that row's weights."),
    ]
    steps = sol.steps
    solution = steps_from(steps[:1], "scores")
    solution += steps_from([st for st in steps[1:] if st.title.startswith(("Scale", "Mask") if variant == "qkv" else ("Mask",))],
                           "scores")
    solution += steps_from([st for st in steps if st.title.startswith("Softmax")], "weights")
    if calculator_free:
        solution.append(SolutionStep("Exact weights", [Math(r"\alpha_{ij} = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}}"),
                                                        Matrix("α (exact)", exact_w)], "weights"))
    solution += steps_from([st for st in steps if st.title.startswith("Weighted")], "output")
    return Draft(title="Scaled dot-product attention" if variant == "qkv" else "Self-attention (unprojected)",
                 params={"variant": variant, "cross": cross, **params}, statement=statement, parts=parts,
                 solution=solution, conventions=conventions)
