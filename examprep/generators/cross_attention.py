"""Cross-attention by hand: queries from the decoder, keys and values from the encoder output — the
shapes that follow (n decoder positions × m encoder positions) and a small numeric example.

Level 1: where Q and K, V come from; the shapes of the score matrix and of the output.
Level 2: a numeric cross-attention: Q = X W_Q from two decoder states, K = Z W_K and V = Z W_V from
three encoder states; the scores, the weights over the encoder positions and the output.
Level 3: as level 2 with a padded source sentence: the key-padding mask hides the last encoder
position (and no causal mask applies to cross-attention).
Calculator-free: d_k = 4 (√d_k = 2) and even queries, so the scaled scores are integers and the weights
exact e^a/(e^a + …) forms.
"""
from __future__ import annotations

from fractions import Fraction


from examprep import solve
from examprep.document import Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, exact_matmul, generator, steps_from, jsonable
from examprep.exact import softmax_entry, weighted_sum
from examprep.problem import EXACT, Misconception, Part, SolutionStep

SOURCES = ("the decoder", "the encoder output")
SENTENCES = (("the", "girl", "kicked", "the", "ball"), ("I", "am", "a", "student"), ("the", "cat", "sleeps"),
             ("we", "love", "music"), ("she", "reads", "a", "book"))


def _shape(pid: str, prompt: str, value: list, mis: list) -> Part:
    return Part(pid, prompt + " Answer as [rows, columns].", "vector", value, tolerance=EXACT, points=1, minutes=1,
                shape=(2,), misconceptions=tuple(mis))


def _refuse_zero_or_flat(X: list, Z: list, W_Q: list, W_K: list, W_V: list, allowed: int) -> None:
    """Refuse a draw with a zero projection, or a query whose scores over the first ``allowed`` encoder
    positions (the mask's) are equal, before the engine call (a fifth of the draws that reach here):
    Q = X W_Q, K = Z W_K, V = Z W_V and QKᵀ are integers, exact in plain Python, and the scale 1/√4
    keeps equal scores equal and different ones apart — the engine's rule on its values, to the bit."""
    Q, K, V = exact_matmul(X, W_Q), exact_matmul(Z, W_K), exact_matmul(Z, W_V)
    if not any(map(any, Q)) or not any(map(any, K)) or not any(map(any, V)):
        raise Degenerate("a zero projection")
    for row in exact_matmul(Q, [list(col) for col in zip(*K)]):
        if min(row[:allowed]) == max(row[:allowed]):
            raise Degenerate("equal scores over the allowed encoder positions")


# the level-1 parts that ask multi-head-shapes' answers (the others carry solve recipes)
_ANSWERS = {pid: ("multi-head-shapes", pid) for pid in ("scores_shape", "output_shape")}


@generator("cross-attention", title="Cross-attention: Q from the decoder, K and V from the encoder",
           syllabus="Transformer decoder: cross-attention (encoder-decoder attention)", version=1,
           answers=lambda problem: _ANSWERS)
def cross_attention(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    if difficulty == 1:
        return _roles(rng)
    n, m = 2, 3
    X = rng.ints(-1, 1, (n, 2))
    Z = rng.ints(-1, 1, (m, 2))
    W_Q = rng.ints(-1, 1, (2, 4)) * (2 if calculator_free else 1)
    W_K = rng.ints(-1, 1, (2, 4))
    W_V = rng.ints(-1, 2, (2, 2))
    (a, b), (c, d) = X.tolist()
    if a * d - b * c == 0 or len({tuple(r) for r in Z}) < m:     # det X of integers, exact (numpy's LU gives the same)
        raise Degenerate("decoder states parallel, or repeated encoder states")
    mask = None
    if difficulty == 3:
        mask = [[1] * (m - 1) + [0] for _ in range(n)]
    _refuse_zero_or_flat(X.tolist(), Z.tolist(), W_Q.tolist(), W_K.tolist(), W_V.tolist(), m - 1 if mask else m)
    params = {"decoder_states": jsonable(X), "encoder_output": jsonable(Z), "w_query": jsonable(W_Q), "w_key": jsonable(W_K),
              "w_value": jsonable(W_V), "mask": mask, "layout": "x-w"}
    known = solve.mistakes("cross-attention", params)
    tr = known.trace()
    allowed = tr.allowed.astype(bool)
    enc = [f"s{j + 1}" for j in range(m)]
    dec = [f"t{i + 1}" for i in range(n)]
    exact_w = exact_o = None
    if calculator_free:
        ints = [[int(round(v)) for v in row] for row in tr.scaled_scores]
        exact_w, exact_o = [], []
        for i in range(n):
            idx = [j for j in range(m) if allowed[i, j]]
            exps = [Fraction(ints[i][j]) for j in idx]
            exact_w.append([softmax_entry(exps, idx.index(j)) if j in idx else "0" for j in range(m)])
            exact_o.append([weighted_sum(exps, [tr.value[j, c] for j in idx]) for c in range(tr.value.shape[1])])
    asked = ("query", "key", "value", "scores", "weights", "output")
    parts = [
        Part("query", "The queries $Q = X W_Q$.", "matrix", jsonable(tr.query), shape=tr.query.shape, points=1, minutes=2,
             misconceptions=known.of("query", jsonable)),
        Part("key", "The keys $K = Z W_K$.", "matrix", jsonable(tr.key), shape=tr.key.shape, points=1, minutes=2.5,
             misconceptions=known.of("key", jsonable)),
        Part("value", "The values $V = Z W_V$.", "matrix", jsonable(tr.value), shape=tr.value.shape, points=1, minutes=2,
             misconceptions=known.of("value", jsonable)),
        Part("scores", r"The raw scores $Q K^\top$ (rows: decoder positions, columns: encoder positions).", "matrix",
             jsonable(tr.scores), shape=tr.scores.shape, points=1, minutes=2,
             misconceptions=known.of("scores", jsonable),
             ecf_rule=solve.ecf("cross-attention", "scores", known.params, tr, asked)),
        Part("weights", r"The attention weights $\alpha = \mathrm{softmax}(QK^\top/\sqrt{d_k})$" + (", masked" if mask else "")
             + ", one row per decoder position.", "matrix", jsonable(tr.weights), shape=tr.weights.shape, points=2, minutes=4,
             exact=exact_w, misconceptions=known.of("weights", jsonable),
             ecf_rule=solve.ecf("cross-attention", "weights", known.params, tr, asked)),
        Part("output", r"The output $O = \alpha V$.", "matrix", jsonable(tr.output), shape=tr.output.shape, points=2, minutes=2,
             exact=exact_o, misconceptions=known.of("output", jsonable),
             ecf_rule=solve.ecf("cross-attention", "output", known.params, tr, asked)),
    ]
    steps = solve.decoder.cross_attention_steps(known.params, tr)
    solution = (steps_from(steps.query, "query") + steps_from(steps.key, "key") + steps_from(steps.value, "value")
                + steps_from(steps.scores, "scores") + steps_from((steps.scale, steps.mask, steps.softmax), "weights"))
    if exact_w:
        solution.append(SolutionStep("Exact weights", [Matrix("α (exact)", exact_w)], "weights"))
    solution += steps_from(steps.output, "output")
    if exact_o:
        solution.append(SolutionStep("Exact output", [Matrix("O (exact)", exact_o)], "output"))
    source = "Three encoder states $Z$ (rows s1–s3" + (", where s3 is the padding token [PAD]" if mask else "") + ")"
    statement = [Text("Single-head cross-attention in a Transformer decoder: two decoder states $X$ (rows t1, t2) attend "
                      f"to the encoder output. {source}. Projections multiply on the right: $Q = X W_Q$, $K = Z W_K$, "
                      "$V = Z W_V$ ($W$ is $d_{model} \\times d_k$, as in Vaswani et al.), $d_k = 4$."
                      + (" A key-padding mask hides [PAD]; no other mask applies." if mask else "")),
                 Matrix("X", jsonable(X), row_labels=dec), Matrix("Z", jsonable(Z), row_labels=enc),
                 Matrix("W_Q", jsonable(W_Q)), Matrix("W_K", jsonable(W_K)), Matrix("W_V", jsonable(W_V))]
    conventions = {"roles": "queries from the decoder, keys and values from the encoder output",
                   "projections": "x W with W of shape d_model × d_k (Vaswani et al. 2017)", "scale": "1/√d_k = 1/2",
                   "mask": "key padding: [PAD] gets weight 0; no causal mask in cross-attention" if mask else "none"}
    return Draft(title="Cross-attention by hand" + (" with a padded source" if mask else ""), params=params,
                 statement=statement, parts=parts, solution=solution, conventions=conventions)


def _roles(rng: Stream) -> Draft:
    source = rng.choice(SENTENCES)
    m = len(source)
    n = rng.choice([k for k in (2, 3, 4, 6) if k != m])
    d, h = rng.choice([(64, 1), (128, 2), (256, 4), (512, 8)])
    params = {"n": n, "m": m, "d_model": d, "num_heads": h}
    shapes = solve.mistakes("multi-head-shapes", params)
    mh = shapes.trace()
    statement = [Text(f"An encoder-decoder Transformer translates the {m}-token source sentence \"{' '.join(source)}\". The "
                      f"decoder has produced {n} tokens so far and its cross-attention layer ($d_{{model}}$ = {d}, "
                      f"{h} head{'s' if h > 1 else ''}, $d_k$ = {mh.d_k}) now runs on them.")]
    parts = [      # the two choices' explanations: the statement's own question (examprep.generators.slips)
        Part("queries_from", "The queries of cross-attention come from:", "choice", SOURCES[0], tolerance=EXACT, points=1,
             minutes=0.5, choices=SOURCES,
             misconceptions=(Misconception("swapped-roles", SOURCES[1],
                                           "The decoder asks the questions: its states give the queries."),)),
        Part("keys_values_from", "The keys and values come from:", "choice", SOURCES[1], tolerance=EXACT, points=1,
             minutes=0.5, choices=SOURCES,
             misconceptions=(Misconception("swapped-roles", SOURCES[0],
                                           "Keys and values carry the source: they come from the encoder output."),)),
        _shape("scores_shape", "The shape of one head's score matrix $QK^\\top$.", mh.scores_shape,
               shapes.of("scores_shape")),
        _shape("output_shape", "The shape of the layer's output.", mh.output_shape,
               shapes.of("output_shape")),
    ]
    solution = [SolutionStep("Roles in cross-attention", [
        Text("The decoder's states are the queries (\"what am I looking for in the source?\"); the encoder output gives the "
             "keys and the values (\"what the source offers\"), so every decoder position can read the whole source "
             "without a single fixed-length bottleneck vector."),
        Matrix("queries from", SOURCES[0]), Matrix("keys and values from", SOURCES[1])], "queries_from"),
        SolutionStep("Keys and values", [Matrix("keys and values from", SOURCES[1])], "keys_values_from")]
    steps = solve.attention.multi_head_steps(shapes.params, mh)
    solution += steps_from((steps.projections, steps.scores), "scores_shape") + steps_from(steps.output, "output_shape")
    return Draft(title="Cross-attention: who provides Q, K and V", params=params, statement=statement, parts=parts,
                 solution=solution, conventions={"shapes": "rows are tokens: n decoder positions, m encoder positions"})
