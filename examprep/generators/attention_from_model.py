"""Attention weights of a real trained head: Q and K of one head of a trained model's first
encoder layer (`examprep train`, the dates task), for a short `dates` input, rounded to
hand-computable values.

The weights are read by the trainer's torch-free checkpoint reader (examprep.checkpoints.stored, which
knows the model's state-dict names) and the first layer's projections recomputed in numpy:
x = E[token]·√D (+ the position table, or RoPE on q and k), LayerNorm first for a pre-norm model,
q = x W_qᵀ + b_q, k = x W_kᵀ, v = x W_vᵀ + b_v, heads in blocks of D/H. A few of the head's
dimensions (those that carry most of the selected q·k products) are kept, scaled by one common
factor and rounded; the problem states all of that. The checkpoint's SHA-256 is part of the
parameters, so a problem names the exact model it came from.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from examprep import engine, solve
from examprep.engine import ops
from examprep.checkpoints.errors import CheckpointError
from examprep.checkpoints.stored import Weights, read_checkpoint
from examprep.checkpoints.vocab import EOS
from examprep.document import Matrix, Text
from examprep.errors import ParamError
from examprep.generators.framework import Degenerate, Draft, Stream, generator, jsonable, plain_array, steps_from
from examprep.problem import Misconception, Part, EcfRule

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
HINT = ("train one with `examprep train --out runs/dates` (the default dates model, about a minute on a CPU), "
        "then pass --checkpoint runs/dates")


def load_checkpoint(path: str | Path) -> Weights:
    """A trained dates model's weights (numpy), read by the trainer's own checkpoint reader
    (examprep.checkpoints.stored: config, vocabulary, SHA-256 and NaN checks). A damaged or foreign
    checkpoint is a ParamError naming the file, never a traceback."""
    try:
        stored, weights = read_checkpoint(path)
    except CheckpointError as err:
        raise ParamError(f"--checkpoint: {err}") from None
    task = stored.data.get("task")
    if task is not None and task != "dates":
        raise ParamError(f"--checkpoint: attention-from-model needs a model trained on the dates task "
                         f"(`examprep train`, the default); {stored.path} was trained on {task!r}")
    if stored.config.arch != "encoder-decoder":
        raise ParamError(f"--checkpoint: attention-from-model reads an encoder-decoder's first encoder layer; "
                         f"this model is {stored.config.arch!r}")
    return weights


def head_qkv(weights: Weights, text: str, head: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Full-precision q, k, v (T, D/H) of ``head`` in the first encoder layer for ``text`` (+ <eos>),
    and the tokens (characters, then "<eos>")."""
    cfg, vocab = weights.stored.config, weights.stored.source_vocab
    if vocab.level != "char":
        raise ParamError(f"--checkpoint: attention-from-model needs a character-level model trained on the dates "
                         f"task (`examprep train`, the default); this one reads {vocab.level!r} tokens")
    missing = sorted({c for c in text if c not in vocab.index})
    if missing:
        raise ParamError(f"--checkpoint: attention-from-model needs a model trained on the dates task "
                         f"(`examprep train`, the default); this model's vocabulary lacks {missing[0]!r}")
    ids = [vocab.index[c] for c in text] + [EOS]               # the encoder reads `source <eos>`
    d, dh = cfg.d_model, cfg.d_head
    try:
        x = weights.embedding("source")[ids] * np.sqrt(d)
        pos = np.arange(len(ids))
        if cfg.positions == "sinusoidal":
            x = x + engine.positional_encoding(pos.tolist(), d).encoding
        elif cfg.positions == "learned":
            x = x + weights.position_table()[pos]
        if cfg.norm == "pre":
            gamma, beta = weights.encoder_norm1(0)
            x = engine.layer_norm(x, gamma, beta, eps=cfg.layer_norm_eps, eps_placement="inside-sqrt").output
        sa = weights.encoder_self_attention(0)
    except CheckpointError as err:
        raise ParamError(f"--checkpoint: {err}") from None
    q = x @ sa.weight_q.T + sa.bias_q
    k = x @ sa.weight_k.T
    v = x @ sa.weight_v.T + sa.bias_v
    sl = slice(head * dh, (head + 1) * dh)
    q, k, v = q[:, sl], k[:, sl], v[:, sl]
    if cfg.positions == "rope":
        q = engine.rope(q, pos.tolist(), base=cfg.rope_base, style="rotate-half").output
        k = engine.rope(k, pos.tolist(), base=cfg.rope_base, style="rotate-half").output
    return q, k, v, [*text, "<eos>"]


def _round(a: np.ndarray, factor: float) -> np.ndarray:
    return plain_array(np.round(a * factor * 2) / 2)   # steps of 0.5


def _check_rows(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> None:
    """Redraw unless every row of Q, K and V is nonzero and distinct within its matrix, every kept
    dimension is nonzero somewhere in Q and in K, and no query is a rounding step from zero."""
    for name, m in (("Q", Q), ("K", K), ("V", V)):
        if not np.all(np.any(m, axis=1)):
            raise Degenerate(f"a row of {name} rounded to zeros")
        if len({tuple(row) for row in m.tolist()}) < len(m):
            raise Degenerate(f"two equal rows in {name}")
    if not np.all(np.any(Q, axis=0)) or not np.all(np.any(K, axis=0)):
        raise Degenerate("a kept dimension is zero in all of Q or K: it carries no q·k")
    if np.any(np.max(np.abs(Q), axis=1) < 1):
        raise Degenerate("a query within one rounding step of zero: its weights would be rounding noise")


@generator("attention-from-model", title="Attention weights of a trained head",
           syllabus="Transformer: scaled dot-product attention in a trained model", version=5,
           calculator_free=False, requires=("checkpoint",), requires_hint=HINT)
def attention_from_model(rng: Stream, difficulty: int, calculator_free: bool, options: dict) -> Draft:
    trained = load_checkpoint(options["checkpoint"])
    cfg = trained.stored.config
    text = f"{rng.integer(1, 28)} {rng.choice(MONTHS)} {rng.integer(1950, 2049)}"
    head = rng.integer(0, cfg.n_heads - 1)
    q, k, v, toks = head_qkv(trained, text, head)
    n, m, dims = {1: (2, 2, 2), 2: (2, 3, 4), 3: (3, 4, 4)}[difficulty]
    kpos = sorted(rng.sample(range(len(text)), m))
    qpos = sorted(rng.sample(kpos, n))
    contrib = np.abs(q[qpos][:, None, :] * k[kpos][None, :, :]).sum(axis=(0, 1))
    keep = sorted(np.argsort(-contrib)[:dims].tolist())
    Qf, Kf = q[np.ix_(qpos, keep)], k[np.ix_(kpos, keep)]
    vkeep = sorted(np.argsort(-np.var(v[kpos], axis=0))[:2].tolist())
    Vf = v[np.ix_(kpos, vkeep)]
    factor = 2.0 / max(float(np.max(np.abs(np.concatenate([Qf.ravel(), Kf.ravel()])))), 1e-9)
    vfactor = 2.0 / max(float(np.max(np.abs(Vf))), 1e-9)
    Q, K, V = _round(Qf, factor), _round(Kf, factor), _round(Vf, vfactor)
    _check_rows(Q, K, V)
    known = solve.mistakes("attention", {"query": jsonable(Q), "key": jsonable(K), "value": jsonable(V)})
    tr = known.trace()
    for row in tr.scaled_scores:
        if np.ptp(row) == 0:
            raise Degenerate("a row of equal scores")
    if len({tuple(np.round(row, 9)) for row in tr.weights}) < len(tr.weights):
        raise Degenerate("two queries with the same weights (one computation asked twice)")
    no_scale = known.trace(scale=1.0)
    full_dk = known.trace(scale=1.0 / np.sqrt(q.shape[1]))
    wrong_axis = engine.softmax(tr.scaled_scores.T).probs.T
    scores, weights, output = plain_array(tr.scaled_scores), plain_array(tr.weights), plain_array(tr.output)
    qlab = [f"{toks[i]!r}@{i}" for i in qpos]
    klab = [f"{toks[j]!r}@{j}" for j in kpos]
    params = {"checkpoint_sha256": trained.sha256, "text": text, "head": head, "query_positions": qpos,
              "key_positions": kpos, "dims": keep, "value_dims": vkeep, "factor": round(factor, 6) + 0.0,
              "value_factor": round(vfactor, 6) + 0.0, "query": jsonable(Q), "key": jsonable(K), "value": jsonable(V)}
    statement = [
        Text(f"A Transformer trained on the dates task (checkpoint sha256 {trained.sha256[:12]}…) reads "
             f"\"{text}\". In head {head} of its first encoder layer, take the queries of the characters "
             f"{', '.join(qlab)} and the keys and values of {', '.join(klab)} (character@position, positions counted from 0). "
             f"Only {dims} of the head's {q.shape[1]} dimensions are kept (those carrying most of these q·k products), "
             "scaled by a common factor and rounded to halves; the values keep 2 dimensions. Treat the kept "
             f"dimensions as the whole head: $d_k = {dims}$, and the queries attend to these keys only."),
        Matrix("Q", jsonable(Q), row_labels=qlab), Matrix("K", jsonable(K), row_labels=klab),
        Matrix("V", jsonable(V), row_labels=klab)]
    shape = tr.weights.shape
    parts = [
        Part("scaled_scores", r"The scaled scores $QK^\top / \sqrt{d_k}$.", "matrix", jsonable(scores), shape=shape,
             points=2, minutes=1 + 0.5 * tr.weights.size,
             misconceptions=(Misconception("no-scale", jsonable(plain_array(no_scale.scores)), "You forgot to divide by √d_k."),
                             Misconception("full-head-dk", jsonable(plain_array(full_dk.scaled_scores)),
                                           f"The problem keeps {dims} dimensions, so d_k = {dims} here, not the "
                                           f"model's {q.shape[1]}."))),
        Part("weights", r"The attention weights $\alpha = \mathrm{softmax}$ of each row.", "matrix", jsonable(weights),
             shape=shape, points=3, minutes=2 + tr.weights.size,
             misconceptions=(Misconception("wrong-axis", jsonable(wrong_axis), "Softmax runs over the keys, along each row."),
                             Misconception("no-scale", jsonable(no_scale.weights), "You forgot to divide by √d_k.")),
             ecf_rule=EcfRule("scaled-masked-softmax", {"scores": {"$ref": "scaled_scores"}, "scale": 1.0})),
        Part("output", r"The outputs $\alpha V$.", "matrix", jsonable(output), shape=output.shape, points=2,
             minutes=1 + 0.5 * tr.output.size,
             misconceptions=(Misconception("wrong-axis", jsonable(plain_array(ops.matmul(wrong_axis, V))),
                                           "Your weights were normalised over the queries."),),
             ecf_rule=EcfRule("matmul", {"a": {"$ref": "weights"}, "b": jsonable(V)})),
    ]
    steps = solve.attention.attention_steps(known.params, tr)
    solution = (steps_from((steps.scores, steps.scale), "scaled_scores") + steps_from(steps.softmax, "weights")
                + steps_from(steps.output, "output"))
    return Draft(title="Attention weights of a trained head", params=params, statement=statement, parts=parts,
                 solution=solution, conventions={"score": "QKᵀ/√d_k with the kept d_k", "softmax": "over the keys (rows)",
                                                 "model": f"first encoder layer, head {head}, {cfg.positions} positions"})
