"""Attention weights of a real trained head: Q and K of one head of the reference model's first
encoder layer, for a short `dates` input, rounded to hand-computable values.

The weights are read with numpy (safetensors' numpy loader; no torch in generators) and the
first layer's projections recomputed in numpy: x = E[token]·√D (+ the position table, or RoPE on
q and k), LayerNorm first for a pre-norm model, q = x W_qᵀ + b_q, k = x W_kᵀ, v = x W_vᵀ + b_v
(examprep.train.model.MultiHeadAttention's layout: qkv_proj rows [q; k; v], heads in blocks of
D/H). A few of the head's dimensions (those that carry most of the selected q·k products) are
kept, scaled by one common factor and rounded; the problem states all of that. The checkpoint's
SHA-256 is part of the parameters, so a problem names the exact model it came from.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from examprep import engine, solve
from examprep.engine import ops
from examprep.document import Matrix, Text
from examprep.errors import ParamError
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from, tolist
from examprep.problem import Misconception, Part, Recipe

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
HINT = ("train one with `examprep train --out runs/dates` (the default dates model, about a minute on a CPU), "
        "then pass --checkpoint runs/dates")


def _step_dir(path: str | Path) -> Path:
    from examprep.train.rundir import read_latest

    p = Path(path)
    step_dir, problem = read_latest(p)
    if problem is not None:
        raise ParamError(f"--checkpoint: {problem}")
    p = step_dir or p
    if not (p / "model.safetensors").is_file() or not (p / "config.json").is_file():
        raise ParamError(f"--checkpoint: {path} holds no checkpoint (model.safetensors, config.json); {HINT}")
    if not (p / "vocab.json").is_file():
        raise ParamError(f"--checkpoint: checkpoint {p} is missing vocab.json")
    return p


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise ParamError(f"--checkpoint: {path} cannot be read as JSON: {err}") from None
    if not isinstance(data, dict):
        raise ParamError(f"--checkpoint: {path} should hold a JSON object")
    return data


def _mismatch(step: Path, what: str) -> ParamError:
    return ParamError(f"--checkpoint: {step}: config.json does not match model.safetensors: {what}")


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Weights (numpy), model config, source vocabulary and SHA-256 of a trained checkpoint.
    A damaged or foreign checkpoint is a ParamError naming the file, never a traceback."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    step = _step_dir(path)
    meta = _read_json(step / "config.json")
    cfg = meta.get("model")
    if not isinstance(cfg, dict):
        raise ParamError(f"--checkpoint: {step / 'config.json'}: bad model config: no \"model\" object")
    data = meta.get("data")
    task = data.get("task") if isinstance(data, dict) else None
    if task is not None and task != "dates":
        raise ParamError(f"--checkpoint: attention-from-model needs a model trained on the dates task "
                         f"(`examprep train`, the default); {step} was trained on {task!r}")
    if cfg.get("arch") != "encoder-decoder":
        raise ParamError(f"--checkpoint: attention-from-model reads an encoder-decoder's first encoder layer; "
                         f"this model is {cfg.get('arch')!r}")
    try:
        d, h = int(cfg["d_model"]), int(cfg["n_heads"])
        if d <= 0 or h <= 0 or d % h:
            raise ValueError(f"d_model {d} is not a positive multiple of n_heads {h}")
        if cfg["positions"] not in ("sinusoidal", "learned", "rope"):
            raise ValueError(f"unknown positions {cfg['positions']!r}")
        if cfg["norm"] not in ("pre", "post"):
            raise ValueError(f"unknown norm {cfg['norm']!r}")
        if cfg["norm"] == "pre":
            float(cfg["layer_norm_eps"])
        float(cfg.get("rope_base", 10000.0))
    except (KeyError, TypeError, ValueError) as err:
        raise ParamError(f"--checkpoint: {step / 'config.json'}: bad model config: {err}") from None
    vocab = _read_json(step / "vocab.json")
    try:
        source = vocab["source"]
        tokens, level = source["tokens"], source.get("level", "char")
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise TypeError("source tokens should be a list of strings")
    except (KeyError, TypeError, AttributeError) as err:
        raise ParamError(f"--checkpoint: {step / 'vocab.json'}: bad vocabulary: {err}") from None
    weights_file = step / "model.safetensors"
    try:
        raw = weights_file.read_bytes()
        weights = load_file(str(weights_file))
    except (SafetensorError, OSError, ValueError, TypeError) as err:
        raise ParamError(f"--checkpoint: {weights_file} cannot be read: {err}") from None
    from examprep.train.rundir import hash_problem, nonfinite_tensor     # torch-free, as the trainer checks

    problem = hash_problem(step, meta, ["model.safetensors", "vocab.json"])
    if problem is not None:
        raise ParamError(f"--checkpoint: {problem}")
    bad = nonfinite_tensor(weights)
    if bad is not None:
        raise ParamError(f"--checkpoint: {weights_file}: {bad} holds NaN or infinite values")
    a = "encoder.layers.0.self_attn."
    need = {a + "qkv_proj.weight": (3 * d, d), a + "q_bias": (d,), a + "v_bias": (d,)}
    if cfg["positions"] == "learned":
        need["positions.table.weight"] = (None, d)
    if cfg["norm"] == "pre":
        need["encoder.layers.0.norm1.weight"] = need["encoder.layers.0.norm1.bias"] = (d,)
    emb = next((k for k in ("src_embed.weight", "tgt_embed.weight", "lm_head.weight") if k in weights), None)
    if emb is None:
        raise _mismatch(step, "the weights hold no source embedding (src_embed.weight)")
    need[emb] = (len(tokens), d)
    for key, shape in need.items():
        if key not in weights:
            raise _mismatch(step, f"the weights lack {key!r}")
        got = weights[key].shape
        if len(got) != len(shape) or any(want is not None and want != n for want, n in zip(shape, got)):
            raise _mismatch(step, f"{key!r} is {list(got)} in the weights but {[n or '?' for n in shape]} "
                                  "for the config and vocabulary")
    return {"weights": {k: v.astype(np.float64) for k, v in weights.items()}, "config": cfg,
            "source_tokens": tokens, "level": level, "sha256": hashlib.sha256(raw).hexdigest(), "task": task,
            "path": str(step)}


def head_qkv(ck: dict[str, Any], text: str, head: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Full-precision q, k, v (T, D/H) of ``head`` in the first encoder layer for ``text`` (+ <eos>),
    and the tokens (characters, then "<eos>")."""
    cfg, w, tokens = ck["config"], ck["weights"], ck["source_tokens"]
    if ck["level"] != "char":
        raise ParamError(f"--checkpoint: attention-from-model needs a character-level model trained on the dates "
                         f"task (`examprep train`, the default); this one reads {ck['level']!r} tokens")
    index = {t: i for i, t in enumerate(tokens)}
    missing = sorted({c for c in text if c not in index})
    if missing:
        raise ParamError(f"--checkpoint: attention-from-model needs a model trained on the dates task "
                         f"(`examprep train`, the default); this model's vocabulary lacks {missing[0]!r}")
    ids = [index[c] for c in text] + [2]                       # <eos> = 2
    d, h = int(cfg["d_model"]), int(cfg["n_heads"])
    dh = d // h
    emb_key = next(k for k in ("src_embed.weight", "tgt_embed.weight", "lm_head.weight") if k in w)
    x = w[emb_key][ids] * np.sqrt(d)
    pos = np.arange(len(ids))
    if cfg["positions"] == "sinusoidal":
        x = x + engine.positional_encoding(pos.tolist(), d).encoding
    elif cfg["positions"] == "learned":
        x = x + w["positions.table.weight"][pos]
    if cfg["norm"] == "pre":
        p = "encoder.layers.0.norm1."
        x = engine.layer_norm(x, w[p + "weight"], w[p + "bias"], eps=float(cfg["layer_norm_eps"]),
                              eps_placement="inside-sqrt").output
    a = "encoder.layers.0.self_attn."
    W = w[a + "qkv_proj.weight"]
    q = x @ W[:d].T + w[a + "q_bias"]
    k = x @ W[d:2 * d].T
    v = x @ W[2 * d:].T + w[a + "v_bias"]
    sl = slice(head * dh, (head + 1) * dh)
    q, k, v = q[:, sl], k[:, sl], v[:, sl]
    if cfg["positions"] == "rope":
        base = float(cfg.get("rope_base", 10000.0))
        q = engine.rope(q, pos.tolist(), base=base, style="rotate-half").output
        k = engine.rope(k, pos.tolist(), base=base, style="rotate-half").output
    return q, k, v, [*text, "<eos>"]


def _round(a: np.ndarray, factor: float) -> np.ndarray:
    return _pos0(np.round(a * factor * 2) / 2)   # steps of 0.5


def _pos0(a: Any) -> np.ndarray:
    """``a`` as floats with every -0.0 made 0.0 (so a problem never shows "-0")."""
    return np.asarray(a, dtype=float) + 0.0


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
    ck = load_checkpoint(options["checkpoint"])
    cfg = ck["config"]
    text = f"{rng.integer(1, 28)} {rng.choice(MONTHS)} {rng.integer(1950, 2049)}"
    head = rng.integer(0, int(cfg["n_heads"]) - 1)
    q, k, v, toks = head_qkv(ck, text, head)
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
    known = solve.mistakes("attention", {"query": tolist(Q), "key": tolist(K), "value": tolist(V)})
    tr = known.trace()
    for row in tr.scaled_scores:
        if np.ptp(row) == 0:
            raise Degenerate("a row of equal scores")
    if len({tuple(np.round(row, 9)) for row in tr.weights}) < len(tr.weights):
        raise Degenerate("two queries with the same weights (one computation asked twice)")
    no_scale = known.trace(scale=1.0)
    full_dk = known.trace(scale=1.0 / np.sqrt(q.shape[1]))
    wrong_axis = engine.softmax(tr.scaled_scores.T).probs.T
    scores, weights, output = _pos0(tr.scaled_scores), _pos0(tr.weights), _pos0(tr.output)
    qlab = [f"{toks[i]!r}@{i}" for i in qpos]
    klab = [f"{toks[j]!r}@{j}" for j in kpos]
    params = {"checkpoint_sha256": ck["sha256"], "text": text, "head": head, "query_positions": qpos,
              "key_positions": kpos, "dims": keep, "value_dims": vkeep, "factor": round(factor, 6) + 0.0,
              "value_factor": round(vfactor, 6) + 0.0, "query": tolist(Q), "key": tolist(K), "value": tolist(V)}
    statement = [
        Text(f"A Transformer trained on the dates task (checkpoint sha256 {ck['sha256'][:12]}…) reads "
             f"\"{text}\". In head {head} of its first encoder layer, take the queries of the characters "
             f"{', '.join(qlab)} and the keys and values of {', '.join(klab)} (character@position, positions counted from 0). "
             f"Only {dims} of the head's {q.shape[1]} dimensions are kept (those carrying most of these q·k products), "
             "scaled by a common factor and rounded to halves; the values keep 2 dimensions. Treat the kept "
             f"dimensions as the whole head: $d_k = {dims}$, and the queries attend to these keys only."),
        Matrix("Q", tolist(Q), row_labels=qlab), Matrix("K", tolist(K), row_labels=klab),
        Matrix("V", tolist(V), row_labels=klab)]
    shape = tr.weights.shape
    parts = [
        Part("scaled_scores", r"The scaled scores $QK^\top / \sqrt{d_k}$.", "matrix", tolist(scores), shape=shape,
             points=2, minutes=1 + 0.5 * tr.weights.size,
             misconceptions=(Misconception("no-scale", tolist(_pos0(no_scale.scores)), "You forgot to divide by √d_k."),
                             Misconception("full-head-dk", tolist(_pos0(full_dk.scaled_scores)),
                                           f"The problem keeps {dims} dimensions, so d_k = {dims} here, not the "
                                           f"model's {q.shape[1]}."))),
        Part("weights", r"The attention weights $\alpha = \mathrm{softmax}$ of each row.", "matrix", tolist(weights),
             shape=shape, points=3, minutes=2 + tr.weights.size,
             misconceptions=(Misconception("wrong-axis", tolist(wrong_axis), "Softmax runs over the keys, along each row."),
                             Misconception("no-scale", tolist(no_scale.weights), "You forgot to divide by √d_k.")),
             recipe=Recipe("scaled-masked-softmax", {"scores": {"$ref": "scaled_scores"}, "scale": 1.0})),
        Part("output", r"The outputs $\alpha V$.", "matrix", tolist(output), shape=output.shape, points=2,
             minutes=1 + 0.5 * tr.output.size,
             misconceptions=(Misconception("wrong-axis", tolist(_pos0(ops.matmul(wrong_axis, V))),
                                           "Your weights were normalised over the queries."),),
             recipe=Recipe("matmul", {"a": {"$ref": "weights"}, "b": tolist(V)})),
    ]
    steps = solve.attention.attention_steps(known.params, tr)
    solution = (steps_from((steps.scores, steps.scale), "scaled_scores") + steps_from(steps.softmax, "weights")
                + steps_from(steps.output, "output"))
    return Draft(title="Attention weights of a trained head", params=params, statement=statement, parts=parts,
                 solution=solution, conventions={"score": "QKᵀ/√d_k with the kept d_k", "softmax": "over the keys (rows)",
                                                 "model": f"first encoder layer, head {head}, {cfg['positions']} positions"})
