"""Bahdanau attention of a trained model: the additive scores e_j = vᵀ tanh(W_1 h_j + W_2 s) of an
RNN encoder–decoder (`examprep train --arch rnn-seq2seq --attention additive`) at its first output
step, for a short input.

The weights are read by the trainer's torch-free checkpoint reader (examprep.checkpoints.stored) and the
model run in numpy with the engine's gru_cell / lstm_cell: the encoder's annotations h_j (S, D) and
the decoder's first state s_0 = tanh(W_b [→h_S; ←h_1] + b_b) are the model's own, in full
precision, as are the projections k_j = W_1 h_j and q = W_2 s_0 over all D dimensions. The problem
keeps a few source positions, the attention units a where v_a tanh(k_ja + q_a) varies most over
them, and two dimensions of the annotations as values, rounded to two decimals; the solution ends
with the weights the model itself gives all source positions (every unit). The checkpoint's SHA-256
is part of the parameters.
"""
from __future__ import annotations

import numpy as np

from examprep import engine, solve
from examprep.document import Matrix, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, jsonable, plain_array, steps_from
from examprep.generators.gru_from_model import decoder_start, draw_source, encoder_states, load_rnn
from examprep.problem import EcfRule, Misconception, Part, SolutionStep

HINT = ("train one with `examprep train --arch rnn-seq2seq --attention additive --task reverse --out runs/gru` "
        "(a few minutes on a CPU), then pass --checkpoint runs/gru")


@generator("additive-attention-from-model", title="Bahdanau attention of a trained model",
           syllabus="Attention: additive (Bahdanau) scores in a trained RNN encoder–decoder", version=1,
           calculator_free=False, requires=("checkpoint",), requires_hint=HINT)
def additive_attention_from_model(rng: Stream, difficulty: int, calculator_free: bool, options: dict) -> Draft:
    trained = load_rnn(options["checkpoint"], "additive-attention-from-model", attention="additive")
    cfg = trained.stored.config
    ids, text = draw_source(rng, trained, 2, 4)
    annotations, finals = encoder_states(trained, ids)               # (S, D), S = tokens + <eos>
    s0 = decoder_start(trained, finals)
    w1, w2, v = trained.additive_attention()
    full = engine.attention(s0, annotations, annotations, score="additive", w_query=w2, w_key=w1, v=v)
    m, units_n = {1: (2, 2), 2: (3, 2), 3: (3, 3)}[difficulty]
    positions = sorted(rng.sample(range(len(annotations)), m))
    keys_full, query_full = annotations[positions] @ w1.T, w2 @ s0
    terms = v * np.tanh(keys_full + query_full)                        # (m, D): each unit's share of e_j
    units = sorted(np.argsort(-np.ptp(terms, axis=0))[:units_n].tolist())
    dims = sorted(np.argsort(-np.ptp(annotations[positions], axis=0))[:2].tolist())
    K, q, vv = plain_array(keys_full[:, units], 2), plain_array(query_full[units], 2), plain_array(v[units], 2)
    V = plain_array(annotations[np.ix_(positions, dims)], 2)
    if not np.all(vv) or len({tuple(r) for r in K.tolist()}) < m:
        raise Degenerate("a kept unit's v rounded to zero, or two keys are equal")
    eye = np.eye(units_n).tolist()
    params = {"query": jsonable(q), "key": jsonable(K), "value": jsonable(V), "score": "additive",
              "w_query": eye, "w_key": eye, "v": jsonable(vv)}
    known = solve.mistakes("attention", params)
    tr = known.trace()
    if np.ptp(tr.scores) < 0.005:
        raise Degenerate("the kept scores are equal to two decimals")
    vocab = trained.stored.source_vocab
    tokens = [vocab.tokens[i] for i in ids] + ["<eos>"]
    labels = [f"{tokens[j].strip() or tokens[j]!r}@{j}" for j in positions]
    statement = [
        Text(f"An RNN encoder–decoder with Bahdanau attention ({cfg.cell.upper()} cells; checkpoint sha256 "
             f"{trained.sha256[:12]}…) reads \"{text}\" (tokens and <eos>, positions from 0). At its first output "
             "step the decoder state $s_0$ scores each encoder annotation $h_j$ by "
             r"$e_j = v^\top \tanh(W_1 h_j + W_2 s_0)$, then $\alpha = \mathrm{softmax}(e)$ and the context is "
             r"$c = \sum_j \alpha_j h_j$. The projections $k_j = W_1 h_j$ and $q = W_2 s_0$ are given, computed by "
             f"the model over all {cfg.d_model} dimensions; only {units_n} of the {cfg.d_model} attention units (those "
             f"whose terms vary most over these positions), the positions {', '.join(labels)}, and annotation "
             f"dimensions {dims[0]} and {dims[1]} as values are kept, rounded to two decimals. Treat the kept units "
             "and positions as the whole attention."),
        Matrix("k (W_1 h_j)", params["key"], row_labels=labels), Matrix("q (W_2 s_0)", params["query"]),
        Matrix("v", params["v"]), Matrix("h_j (values)", params["value"], row_labels=labels)]
    parts = [
        Part("scores", r"The scores $e_j = v^\top \tanh(k_j + q)$.", "vector", jsonable(plain_array(tr.scores)),
             shape=(m,), points=3, minutes=2.0 * m * units_n / 2,
             misconceptions=(Misconception("no-tanh", jsonable(plain_array((K + q) @ vv)),
                                           "tanh comes before the product with v: e_j = vᵀ tanh(k_j + q)."),)),
        Part("weights", r"The attention weights $\alpha = \mathrm{softmax}(e)$.", "vector", jsonable(plain_array(tr.weights)),
             shape=(m,), points=2, minutes=1.0 + m, misconceptions=known.of("weights", jsonable),
             ecf_rule=EcfRule("scaled-masked-softmax", {"scores": {"$ref": "scores"}, "scale": 1.0})),
        Part("context", r"The context $c = \sum_j \alpha_j h_j$ (the two kept dimensions).", "vector",
             jsonable(plain_array(tr.output)), shape=(2,), points=2, minutes=2.0, misconceptions=known.of("output", jsonable),
             ecf_rule=EcfRule("matmul", {"a": {"$ref": "weights"}, "b": jsonable(V)})),
    ]
    steps = solve.attention.attention_steps(known.params, tr)
    whole = ", ".join(f"{tokens[j].strip() or tokens[j]!r} {w:.3f}" for j, w in enumerate(full.weights))
    solution = (steps_from(steps.scores, "scores") + steps_from(steps.softmax, "weights")
                + steps_from(steps.output, "context")
                + [SolutionStep("The model's own weights", [Text(
                    f"With all {cfg.d_model} units and every source position the model attends: {whole}.")])])
    return Draft(title="Bahdanau attention of a trained model",
                 params={"checkpoint_sha256": trained.sha256, "text": text, "positions": positions, "units": units,
                         "value_dims": dims, **params},
                 statement=statement, parts=parts, solution=solution,
                 conventions={"score": "additive: e_j = vᵀ tanh(W_1 h_j + W_2 s) (Bahdanau et al. 2015), no biases",
                              "softmax": "over the source positions", "query": "s_0, the decoder's first state",
                              "projections": "given: q = W_2 s_0 and k_j = W_1 h_j (so W_q = W_k = I below)"})

