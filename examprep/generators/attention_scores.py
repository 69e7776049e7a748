"""Attention score forms by hand on the same inputs: dot product sᵀh, bilinear sᵀWh, additive (Bahdanau)
vᵀ tanh(W₁h + W₂s), and the reduced-rank bilinear W = u vᵀ — then the weights and the context vector.

A decoder state s (the query) attends three encoder states h₁, h₂, h₃ (keys and values), as in the
lecture's encoder-decoder attention.
Level 1: dot and bilinear scores; the weights and context vector of the dot scores.
Level 2: dot and additive scores; the weights and context of the additive scores (tanh needs a
calculator; calculator-free uses the bilinear form instead).
Level 3: a rank-1 bilinear W = u vᵀ, its scores and weights, the parameters a low-rank factorisation
saves, and which form has no parameters.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from examprep import solve
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, exact_matmul, generator, steps_from, jsonable
from examprep.exact import softmax_entry, weighted_sum
from examprep.problem import EXACT, Misconception, Part, EcfRule, SolutionStep

NO_PARAMS = ("dot product", "bilinear", "additive")
FORM_TEXT = {"dot": r"$e_j = s^\top h_j$", "bilinear": r"$e_j = s^\top W h_j$",
             "additive": r"$e_j = v^\top \tanh(W_1 h_j + W_2 s)$"}


_STATES = [(a, b) for a in range(-1, 3) for b in range(-1, 3) if (a, b) != (0, 0)]


def _check_spread(scores) -> None:
    """The softmaxed scores (an engine vector, or the exact list of them computed before the engine
    call) must differ (else uniform weights) but not by more than 4 (else one-hot weights)."""
    if not 0.5 <= max(scores) - min(scores) <= 4:
        raise Degenerate("scores too close (uniform weights) or too far apart (one-hot weights)")


def _scores(s: list, W: list | None, H: list) -> list:
    """sᵀ h_j, or sᵀ W h_j, for each row h_j of H: exact (small integers), before any engine call."""
    query = exact_matmul([s], W) if W is not None else [s]
    return exact_matmul(query, [list(col) for col in zip(*H)])[0]


def _score_part(pid: str, prompt: str, value, mis: list, ecf_rule: EcfRule | None = None) -> Part:
    return Part(pid, prompt, "vector", jsonable(value), shape=(3,), points=1, minutes=2, misconceptions=tuple(mis),
                ecf_rule=ecf_rule)


@generator("attention-scores", title="Attention score forms: dot, bilinear, additive",
           syllabus="Attention: dot-product, bilinear, additive (Bahdanau) scores", version=1)
def attention_scores(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    s = rng.ints(-1, 2, (2,), nonzero=True)
    H = np.array(rng.sample(_STATES, 3), dtype=float)        # three different encoder states
    # each level's draws, taken here where they fall in the stream anyway (nothing is drawn in between), so
    # that its integer scores' spread is checked before any engine call: half of the draws fail it
    sv, hv = s.tolist(), H.tolist()
    if difficulty == 1 or (difficulty == 2 and calculator_free):
        W = rng.ints(-1, 1, (2, 2))
        if W[0, 1] == W[1, 0]:           # a symmetric W would hide the transposition mistake
            W[0, 1] = -W[1, 0] if W[1, 0] else 1.0
        _check_spread(_scores(sv, W.tolist() if difficulty == 2 else None, hv))
    elif difficulty == 2:
        W1 = rng.decimals(-1, 1, 0.5, (2, 2))
        W2 = rng.decimals(-1, 1, 0.5, (2, 2))
        v = rng.decimals(-2, 2, 0.5, (2,), nonzero=True)
        if not np.any(W1) or not np.any(W2) or np.array_equal(W1, W2):
            raise Degenerate("a zero or repeated additive weight")
    else:
        u = rng.ints(-1, 1, (2,), nonzero=True)
        w = rng.ints(-1, 1, (2,), nonzero=True)
        _check_spread(_scores(sv, exact_matmul([[a] for a in u.tolist()], [w.tolist()]), hv))
        d_big, r = rng.choice([256, 512, 1024]), rng.choice([8, 16, 32])
    base = {"query": jsonable(s), "key": jsonable(H), "value": jsonable(H)}
    # every score form below through the engine, its mistakes and ECF rules from attention's tables (the reduced-rank
    # W = u wᵀ and its parameter count at level 3 excepted: see below)
    known = solve.mistakes("attention", base | {"score": "dot"})
    dot = known.trace()
    steps_of = lambda trace, **form: solve.attention.attention_steps(known.params | form, trace)  # noqa: E731
    statement = [Text("A decoder state $s$ (the query) attends three encoder states $h_1, h_2, h_3$ (rows of $H$; they are "
                      "both keys and values). The weights are $\\alpha = \\mathrm{softmax}(e)$ and the context vector is "
                      "$c = \\sum_j \\alpha_j h_j$. No scaling is applied to any score."),
                 Matrix("s", jsonable(s)), Matrix("H", jsonable(H), row_labels=["h1", "h2", "h3"])]
    parts: list[Part] = [_score_part("dot_scores", "The dot-product scores " + FORM_TEXT["dot"] + ".", dot.scores,
                                     known.of("scores", jsonable))]
    solution = steps_from(steps_of(dot).scores, "dot_scores", "Dot product: ")
    conventions = {"scores": "unscaled; softmax over the three encoder states", "context": "c = Σ_j α_j h_j"}
    form, form_known = "dot", known
    extra: dict = {}

    if difficulty == 1 or (difficulty == 2 and calculator_free):
        bil_p = base | {"score": "bilinear", "weight": jsonable(W)}
        bil_known = known.at(score="bilinear", weight=jsonable(W))
        bil = bil_known.trace()
        _check_spread(dot.scores if difficulty == 1 else bil.scores)
        parts.append(_score_part("bilinear_scores", "The bilinear scores " + FORM_TEXT["bilinear"] + ".", bil.scores,
                                 bil_known.of("scores", jsonable), solve.ecf("attention", "scores", bil_p, bil, {})))
        statement.append(Matrix("W", jsonable(W)))
        solution += steps_from(steps_of(bil, score="bilinear", weight=jsonable(W)).scores, "bilinear_scores", "Bilinear: ")
        extra = {"score": "bilinear", "weight": jsonable(W)}
        if difficulty == 2:
            form, form_known = "bilinear", bil_known
    elif difficulty == 2:
        add_p = base | {"score": "additive", "w_query": jsonable(W2), "w_key": jsonable(W1), "v": jsonable(v)}
        add_known = known.at(**{k: add_p[k] for k in ("score", "w_query", "w_key", "v")})
        add = add_known.trace()
        _check_spread(add.scores)
        parts.append(_score_part("additive_scores", "The additive (Bahdanau) scores " + FORM_TEXT["additive"] + ".", add.scores,
                                 add_known.of("scores", jsonable), solve.ecf("attention", "scores", add_p, add, {})))
        statement += [Matrix("W_1", jsonable(W1)), Matrix("W_2", jsonable(W2)), Matrix("v", jsonable(v))]
        solution += steps_from(steps_of(add, **{k: add_p[k] for k in ("score", "w_query", "w_key", "v")}).scores,
                               "additive_scores", "Additive: ")
        extra = {k: add_p[k] for k in ("score", "w_query", "w_key", "v")}
        form, form_known = "additive", add_known
        conventions["additive"] = "W₁ on the encoder state h_j, W₂ on the decoder state s (the lecture's e = bᵀtanh(W₁h + W₂s))"
    else:
        # W = u wᵀ is LoRA's rank-1 update B A (B = u, A = wᵀ) and the factors' count is lora's: both asked with
        # lora's mistakes; the choice's options are slips of this statement (examprep.generators.slips)
        rank_one = solve.mistakes("lora", {"d": 2, "k": 2, "r": 1, "lora_B": [[x] for x in jsonable(u)],
                                           "lora_A": [jsonable(w)]})
        W = rank_one.trace().delta_weight                              # u wᵀ, the outer product
        bil_p = base | {"score": "bilinear", "weight": jsonable(W)}
        bil_known = known.at(score="bilinear", weight=jsonable(W))
        bil = bil_known.trace()
        _check_spread(bil.scores)
        factors = solve.mistakes("lora", {"d": d_big, "k": d_big, "r": r})
        counts = factors.trace()                         # the same low-rank bookkeeping: r(d + k) against d·k
        statement += [Matrix("u", jsonable(u)), Matrix("w", jsonable(w)),
                      Text(f"A reduced-rank bilinear score uses $W = u w^\\top$ (rank 1). For the counting part, take query "
                           f"and key size d = {d_big} and rank r = {r}: $W = U V^\\top$ with U and V of shape {d_big}×{r}.")]
        parts += [
            Part("W", r"The matrix $W = u w^\top$.", "matrix", jsonable(W), shape=(2, 2), points=1, minutes=1,
                 misconceptions=rank_one.of("delta_weight", jsonable)),    # no earlier part: nothing to carry
            _score_part("bilinear_scores", r"The bilinear scores $e_j = s^\top W h_j$.", bil.scores,
                        bil_known.of("scores", jsonable), solve.ecf("attention", "scores", bil_p, bil, {"weight": "W"})),
            Part("factor_params", f"How many parameters does the rank-{r} factorisation of a {d_big}×{d_big} W have?",
                 "integer", counts.trainable_params, tolerance=EXACT, points=1, minutes=1,
                 misconceptions=factors.of("trainable_params"),
                 ecf_rule=EcfRule("solve:lora", {"d": d_big, "k": d_big, "r": r}, "trainable_params")),
            Part("no_params", "Which score form has no learned parameters?", "choice", NO_PARAMS[0], tolerance=EXACT, points=1,
                 minutes=0.5, choices=NO_PARAMS,
                 misconceptions=(Misconception("bilinear", NO_PARAMS[1], "The bilinear form learns W."),
                                 Misconception("additive", NO_PARAMS[2], "The additive form learns W₁, W₂ and v."))),
        ]
        solution += [SolutionStep("Outer product", [Math(r"W_{ik} = u_i w_k"), Matrix("W", jsonable(W))], "W")]
        solution += steps_from(steps_of(bil, score="bilinear", weight=jsonable(W)).scores, "bilinear_scores", "Bilinear: ")
        solution.append(SolutionStep("Low-rank factors U and V (d×r each) against the full d×d matrix", [
            Math(r"r\,(d_q + d_k)\ \text{vs}\ d_q d_k"), Matrix("factor_params", counts.trainable_params),
            Matrix("full W", counts.full_params)], "factor_params"))
        solution.append(SolutionStep("Parameters of each form", [
            Text("Dot product: none (s and h must have the same size). Bilinear: W (d_q × d_k), or r(d_q + d_k) when "
                 "factorised. Additive: W₁, W₂ and v."), Matrix("no parameters", NO_PARAMS[0])], "no_params"))
        extra = {k: bil_p[k] for k in ("score", "weight")}
        form, form_known = "bilinear", bil_known
    # the weights and context of one form, with that form's mistakes
    att = form_known.trace()                                                    # the form's trace, computed above
    exact_w = exact_c = None
    if calculator_free:
        exps = [Fraction(int(round(x))) for x in att.scores]
        exact_w = [softmax_entry(exps, j) for j in range(3)]
        exact_c = [weighted_sum(exps, [H[j, c] for j in range(3)]) for c in range(2)]
    name = {"dot": "dot-product", "bilinear": "bilinear", "additive": "additive"}[form]
    parts += [
        Part("weights", f"The attention weights $\\alpha$ from the {name} scores.", "vector", jsonable(att.weights), shape=(3,),
             points=2, minutes=2, exact=exact_w, misconceptions=form_known.of("weights", jsonable),
             ecf_rule=solve.ecf("attention", "weights", form_known.params, att, {"scores": f"{form}_scores"})),
        Part("context", r"The context vector $c = \sum_j \alpha_j h_j$.", "vector", jsonable(att.output), shape=(2,), points=2,
             minutes=2, exact=exact_c, misconceptions=form_known.of("output", jsonable),
             ecf_rule=solve.ecf("attention", "output", form_known.params, att, {"weights": "weights"})),
    ]
    wsteps = steps_of(att, **(extra if form != "dot" else {}))
    solution += steps_from(wsteps.softmax, "weights")
    if exact_w:
        solution.append(SolutionStep("Exact weights", [Matrix("α (exact)", exact_w)], "weights"))
    solution += steps_from(wsteps.output, "context")
    if exact_c:
        solution.append(SolutionStep("Exact context vector", [Matrix("c (exact)", exact_c)], "context"))
    params = base | extra | {"score": "dot" if form == "dot" else extra["score"]}     # "score": the form the weights use
    title = {1: "Dot-product and bilinear attention scores", 2: "Additive (Bahdanau) attention scores"
             if not calculator_free else "Bilinear attention scores", 3: "Reduced-rank bilinear attention"}[difficulty]
    return Draft(title=title, params=params, statement=statement, parts=parts, solution=solution, conventions=conventions)
