"""Attention weights by hand: scaled dot-product scores, softmax weights, the weighted sum of values.

Level 1: two tokens, d_k = 4 (so √d_k = 2). Level 2: three tokens with a causal mask.
Level 3: three tokens, causal, larger entries and a cross-attention setting (queries from the
decoder, keys and values from the encoder). Variant at any level: the lecture's unprojected
self-attention e_ij = x_i·x_j (no scaling), o_i = Σ_j α_ij x_j.
"""
from __future__ import annotations

from fractions import Fraction

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, exact_matmul, generator, steps_from, jsonable
from examprep.exact import softmax_entry, weighted_sum
from examprep.problem import Part, SolutionStep


def _flat_scores(Q: list, K: list, causal: bool) -> bool:
    """A row of equal allowed scores (uniform weights), or no score but 0, decided before the engine call
    (a quarter of the draws): the scores QKᵀ of the drawn integers are integers, exact in plain Python,
    and the scale (1 or 1/√4) keeps equal scores equal and different ones apart — the engine's rule on
    its scaled_scores and allowed mask, to the bit."""
    scores = exact_matmul(Q, [list(col) for col in zip(*K)])
    rows = [row[:i + 1] if causal else row for i, row in enumerate(scores)]
    return any(len(r) >= 2 and min(r) == max(r) for r in rows) or not any(map(any, scores))


@generator("attention", title="Attention weights by hand", syllabus="Transformer: scaled dot-product attention, causal mask",
           version=3)
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
    if _flat_scores(Q.tolist(), K.tolist(), causal):
        raise Degenerate("a row of equal scores")
    params = {"query": jsonable(Q), "key": jsonable(K), "value": jsonable(V), "causal": causal,
              "scale": scale}
    known = solve.mistakes("attention", params)
    tr = known.trace()
    scaled, allowed = tr.scaled_scores, tr.allowed
    tokens = [f"t{i + 1}" for i in range(n)]
    keys = [f"s{j + 1}" for j in range(m)] if cross else tokens

    # the qkv variant asks the contract's scaled_scores (QKᵀ/√d_k); the lecture's unprojected variant the unscaled
    # scores e_ij (its scale is 1, so they are its scaled scores too, the value the weights' ECF rule reads)
    score_id = "scaled_scores" if variant == "qkv" else "scores"
    score_mis = known.of(score_id, jsonable)          # solve's table for attention, as for every other part
    weight_mis = known.of("weights", jsonable)
    out_mis = known.of("output", jsonable)

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

    w_label = r"\alpha"
    if variant == "qkv":
        intro = (f"Queries, keys and values of a single attention head (d_k = {d}). "
                 + ("The queries come from the decoder; keys and values from the encoder output (cross-attention). "
                    if cross else "")
                 + ("A causal mask applies: query $i$ may attend key $j$ only if $j \\le i$. " if causal else "")
                 + "Rows are tokens.")
        statement = [Text(intro), Matrix("Q", jsonable(Q), row_labels=tokens),
                     Matrix("K", jsonable(K), row_labels=keys), Matrix("V", jsonable(V), row_labels=keys)]
        score_prompt = r"The scaled scores $S = QK^\top / \sqrt{d_k}$ (rows: queries, columns: keys)."
        conventions = {"score": "scaled dot-product, QKᵀ/√d_k", "softmax": "over the keys (each row)",
                       "mask": "causal: −∞ before the softmax for j > i" if causal else "none"}
    else:
        intro = ("Self-attention without projections, as in the lecture: $e_{ij} = x_i^\\top x_j$, "
                 "$\\alpha_{ij} = \\mathrm{softmax}_j(e_{ij})$, $o_i = \\sum_j \\alpha_{ij} x_j$ (no scaling). "
                 + ("A causal mask applies: position $i$ attends $j \\le i$ only. " if causal else "")
                 + "Rows of X are the token vectors.")
        statement = [Text(intro), Matrix("X", jsonable(X), row_labels=tokens)]
        score_prompt = r"The score matrix $E$ with $e_{ij} = x_i^\top x_j$."
        conventions = {"score": "unprojected dot product e_ij = x_i·x_j, no scaling", "softmax": "over j (each row)",
                       "mask": "causal: −∞ before the softmax for j > i" if causal else "none"}
    size = scaled.shape
    asked = {"scaled_scores": score_id, "weights": "weights", "output": "output"}
    minutes = 1.0 + 0.5 * scaled.size
    parts = [
        Part(score_id, score_prompt, "matrix", jsonable(scaled), shape=size, points=2, minutes=round(minutes, 1),
             exact=exact_s, misconceptions=score_mis,
             hint="Entry (i, j) is the dot product of query row i with key row j"
                  + (", divided by √d_k." if variant == "qkv" else ".")),
        Part("weights", rf"The attention weights ${w_label}$ (softmax of each row{', masked' if causal else ''}).", "matrix",
             jsonable(tr.weights), shape=size, points=3, minutes=round(2 + 1.0 * scaled.size, 1), exact=exact_w,
             misconceptions=weight_mis, ecf_rule=solve.ecf("attention", "weights", known.params, tr, asked),
             hint="Exponentiate each allowed score, divide by the row's sum; masked entries are 0."),
        Part("output", r"The outputs $O = \alpha V$ (one row per query)." if variant == "qkv"
             else r"The outputs $o_i = \sum_j \alpha_{ij} x_j$ (one row per token).", "matrix",
             jsonable(tr.output), shape=tr.output.shape, points=3, minutes=round(1 + 0.5 * tr.output.size, 1), exact=exact_o,
             misconceptions=out_mis, ecf_rule=solve.ecf("attention", "output", known.params, tr, asked),
             hint="Each output row is the weighted sum of the value rows, with that row's weights."),
    ]
    steps = solve.attention.attention_steps(known.params, tr)
    solution = steps_from(steps.scores, score_id)
    solution += steps_from((steps.scale, steps.mask) if variant == "qkv" else steps.mask, score_id)
    solution += steps_from(steps.softmax, "weights")
    if calculator_free:
        solution.append(SolutionStep("Exact weights", [Math(r"\alpha_{ij} = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}}"),
                                                        Matrix("α (exact)", exact_w)], "weights"))
    solution += steps_from(steps.output, "output")
    return Draft(title="Scaled dot-product attention" if variant == "qkv" else "Self-attention (unprojected)",
                 params={"variant": variant, "cross": cross, **params}, statement=statement, parts=parts,
                 solution=solution, conventions=conventions, variant="cross" if cross else variant)
