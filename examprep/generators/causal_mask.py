"""The causal mask by hand: which entries are masked, the masked attention weights, what the mask
prevents, teacher forcing with the right shift, and the mask's alignment when decoding with a cache.

Level 1: a decoder's self-attention scores (n = 3 or 4) — the mask, the number of masked entries,
the masked weights and what the mask prevents.
Level 2: the same with teacher forcing: the right-shifted decoder input of a target sentence and how
many inputs each prediction may see.
Level 3: generation with a key/value cache — n new queries against m ≥ n keys: the bottom-right
aligned mask, the weights, and what torch's top-left is_causal would wrongly allow.
Calculator-free: integer scores, so the weights are exact e^a/(e^a + e^b …) forms.
"""
from __future__ import annotations

import numpy as np

from examprep import solve
from examprep.document import Heatmap, Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, jsonable
from examprep.exact import softmax_entry
from examprep.problem import EXACT, Misconception, Part, SolutionStep

PREVENTS = ("attending to later positions", "attending to earlier positions", "attending to padding tokens",
            "attending to itself")
SENTENCES = (("je", "suis", "étudiant"), ("le", "chat", "dort"), ("il", "fait", "beau"), ("elle", "lit", "un", "livre"),
             ("nous", "aimons", "la", "musique"), ("the", "girl", "kicked", "the", "ball"), ("ich", "bin", "müde"),
             ("the", "cat", "sat", "down"))
BOS = "[GO]"


def _exact_weights(scores: np.ndarray, allowed: np.ndarray) -> list:
    out = []
    for row, ok in zip(scores, allowed.astype(bool)):
        idx = [j for j in range(len(row)) if ok[j]]
        exps = [int(row[j]) for j in idx]
        out.append([softmax_entry(exps, idx.index(j)) if ok[j] else "0" for j in range(len(row))])
    return out


def _check_rows(scores: list, alignment: str) -> None:
    """Refuse a row of equal allowed scores (uniform weights) before the engine call (a fifth of the
    draws): query i may attend keys j ≤ i, or j ≤ i + (m − n) bottom-right aligned — the engine's causal
    mask — and the drawn scores are integers, compared exactly."""
    n, m = len(scores), len(scores[0])
    shift = m - n if alignment == "bottom-right" else 0
    for i, row in enumerate(scores):
        ok = row[:max(0, min(m, i + shift + 1))]
        if len(ok) >= 2 and min(ok) == max(ok):
            raise Degenerate("a row of equal allowed scores")


@generator("causal-mask", title="The causal mask and teacher forcing",
           syllabus="Transformer decoder: causal mask, teacher forcing",
           version=1)
def causal_mask(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    if difficulty == 3:
        n, m, alignment = 2, rng.choice([3, 4, 5]), "bottom-right"
    else:
        n = m = rng.choice([3, 4]) if difficulty == 1 else 3
        alignment = "top-left"
    S = rng.ints(-2, 2, (n, m))
    _check_rows(S.tolist(), alignment)
    params = {"scores": jsonable(S), "alignment": alignment, "scale": 1.0}
    known = solve.mistakes("causal-mask", params)
    tr = known.trace()
    top_left = known.trace(alignment="top-left")
    queries = [f"q{m - n + i + 1}" for i in range(n)]       # absolute positions: the new tokens come last
    keys = [f"k{j + 1}" for j in range(m)]
    exact_w = _exact_weights(S, tr.allowed) if calculator_free else None
    asked = {"allowed": "mask", "masked_count": "masked_count", "weights": "weights"}
    parts = [
        Part("mask", "The mask $M$ (1 = may attend, 0 = masked), rows queries and columns keys.", "matrix", jsonable(tr.allowed),
             tolerance=EXACT, shape=(n, m), points=1, minutes=1, misconceptions=known.of("allowed", jsonable),
             ecf_rule=solve.ecf("causal-mask", "allowed", known.params, tr, asked)),
    ]
    if difficulty == 1:
        parts.append(Part("masked_count", "How many of the scores are masked?", "integer", tr.masked_count, tolerance=EXACT,
                          points=1, minutes=0.5, misconceptions=known.of("masked_count"),
                          ecf_rule=solve.ecf("causal-mask", "masked_count", known.params, tr, asked)))
    parts.append(Part("weights", r"The attention weights $\alpha$ after the mask (softmax of each row).", "matrix",
                      jsonable(tr.weights), shape=(n, m), points=3, minutes=1.0 + 0.7 * int(tr.allowed.sum()), exact=exact_w,
                      misconceptions=known.of("weights", jsonable),
                      ecf_rule=solve.ecf("causal-mask", "weights", known.params, tr, asked),
                      hint="Masked scores become −∞, so e^(−∞) = 0; normalise the allowed entries of each row."))
    steps = solve.decoder.causal_mask_steps(known.params, tr)
    solution = steps_from(steps.mask, "mask")
    if difficulty == 1:
        solution.append(SolutionStep("Count the masked entries: the strict upper triangle",
                                     [Math(r"\frac{n(n-1)}{2}"), Matrix("masked_count", tr.masked_count)], "masked_count"))
    solution += steps_from((steps.masked_scores, steps.weights), "weights")
    solution.append(SolutionStep("Attention map", [Heatmap("α", jsonable(tr.weights), queries, keys)], "weights"))
    if exact_w:
        solution.append(SolutionStep("Exact weights", [Matrix("α (exact)", exact_w)], "weights"))
    conventions = {"mask": "1 = may attend; masked scores are −∞ before the softmax",
                   "alignment": "top-left: query i attends keys j ≤ i" if alignment == "top-left"
                   else "bottom-right: query i attends keys j ≤ i + (m − n), the new queries being the last positions"}
    if difficulty == 1:
        statement = [Text(f"A decoder's masked self-attention over n = {n} tokens. The scaled scores "
                          "$S = QK^\\top/\\sqrt{d_k}$ "
                          "are given (rows: queries, columns: keys). The causal mask lets query i attend key j only if "
                          "$j \\le i$.")]
        # its options' explanations: the statement's own question (examprep.generators.slips)
        parts.append(Part("prevents", "In training, what does the causal mask prevent?", "choice", PREVENTS[0], tolerance=EXACT,
                          points=1, minutes=1, choices=PREVENTS,
                          misconceptions=(Misconception("past", PREVENTS[1], "The past is visible; the future is hidden."),
                                          Misconception("padding", PREVENTS[2], "That is the padding mask, a different mask."),
                                          Misconception("itself", PREVENTS[3], "The diagonal is allowed: a token sees itself."))))
        solution.append(SolutionStep("What the mask is for", [
            Text("Each position is trained to predict the next token; if it could attend to later positions it would read "
                 "the answer (\"cheating\"). The mask keeps training auto-regressive while every position is computed in "
                 "parallel."), Matrix("prevents", PREVENTS[0])], "prevents"))
    elif difficulty == 2:
        tokens = list(rng.choice([s for s in SENTENCES if len(s) == n]))
        forcing = solve.mistakes("teacher-forcing", {"tokens": tokens, "bos": BOS})
        tf = forcing.trace()
        as_text = lambda tokens: " ".join(map(str, tokens))      # noqa: E731  (the choices show token lists as text)
        shifted = as_text(tf.decoder_input)
        input_mis = forcing.of("decoder_input", as_text)       # the unshifted and the left-shifted input
        choices = tuple(rng.shuffle([shifted, *(m.value for m in input_mis)]))
        t = rng.integer(2, n)
        row = known.at(position=t)
        statement = [Text(f"A decoder is trained with teacher forcing on the target sentence \"{' '.join(tokens)}\" (n = {n} "
                          f"tokens; the start token is {BOS}). Its masked self-attention scores are given (rows: queries, "
                          "columns: keys); query i may attend key j only if $j \\le i$.")]
        parts += [
            Part("decoder_input", "Which sequence is the decoder's input?", "choice", shifted, tolerance=EXACT, points=1,
                 minutes=1, choices=choices, misconceptions=input_mis),
            Part("visible", f"The prediction at position {t} (1-based) may attend to how many decoder inputs?", "integer",
                 row.trace().visible, tolerance=EXACT, points=1, minutes=1, misconceptions=row.of("visible")),
        ]
        solution += steps_from(solve.decoder.teacher_forcing_steps(forcing.params, tf), "decoder_input")
        solution.append(SolutionStep("Decoder input, shown as text", [Matrix("decoder input", shifted)], "decoder_input"))
        solution.append(SolutionStep(f"Visible inputs at position {t}", [
            Text(f"Row {t} of the mask has ones in columns 1 … {t}: the inputs {', '.join(map(str, tf.decoder_input[:t]))} — "
                 f"never \"{tokens[t - 1]}\", the token it predicts."),
            Matrix("visible", int(tr.allowed[t - 1].sum()))], "visible"))
        params = params | {"tokens": tokens, "bos": BOS, "position": t}
        conventions["teacher forcing"] = f"decoder input = target shifted right by one, starting with {BOS}"
    else:
        cached = m - n
        plural = "s" if cached > 1 else ""
        statement = [Text(f"Generating with a key/value cache: the keys and values of {cached} earlier token{plural} are "
                          f"cached and {n} new tokens are processed now, so n = {n} queries meet m = {m} keys; the new "
                          f"tokens are positions {m - n + 1} and {m}. The scaled scores are given (rows: the new queries, "
                          "columns: all keys). Causally, the token at position p may attend every position up to p.")]
        tl_count = top_left.visible               # the last query's, as torch's top-left is_causal would have it
        parts.append(Part("top_left_visible", "With torch's is_causal=True (top-left alignment, j ≤ i), how many keys could "
                                              "the last query attend?", "integer", tl_count, tolerance=EXACT, points=1, minutes=1,
                          misconceptions=known.at(alignment="top-left").of("visible")))
        tl_steps = solve.decoder.causal_mask_steps(known.params | {"alignment": "top-left"}, top_left)
        solution += steps_from(tl_steps.mask, "top_left_visible", "Top-left (wrong here): ")
        solution.append(SolutionStep("Why the alignment matters", [
            Text("Top-left alignment treats the new queries as positions 1 … n, hiding cached keys they are entitled to; "
                 "use causal_lower_right (or an explicit mask) when n < m."),
            Matrix("keys visible to the last query (top-left)", tl_count)], "top_left_visible"))
    statement.append(Matrix("S", jsonable(S), row_labels=queries, col_labels=keys))
    return Draft(title=("Masked self-attention", "Teacher forcing and the causal mask",
                        "The causal mask with a KV cache")[difficulty - 1],
                 params=params, statement=statement, parts=parts, solution=solution, conventions=conventions)
