"""One GRU step of a trained model: the forward GRU of the first encoder layer of an RNN
encoder–decoder (`examprep train --arch rnn-seq2seq --cell gru`), reading one token of a short
input, with the state the model itself reached on the tokens before it.

The weights are read by the trainer's torch-free checkpoint reader (examprep.checkpoints.stored) and the
encoder run in numpy with the engine's gru_cell (PyTorch's convention, as torch.nn.GRU computes):
x = E[token]·√D, h = the forward state after the earlier tokens. The step is then reduced to a
hand-computable slice: a few of the cell's hidden units (the rows of each gate block and the
columns of W_hh that belong to them) and the input dimensions where x is largest, every number
rounded to one decimal; the problem says so, and treats the slice as the whole cell. The
checkpoint's SHA-256 is part of the parameters, so a problem names the exact model it came from.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from examprep import engine, solve
from examprep.checkpoints.errors import CheckpointError
from examprep.checkpoints.stored import Weights, read_checkpoint
from examprep.checkpoints.vocab import EOS, SPECIALS, UNK
from examprep.document import Matrix, Text
from examprep.errors import ParamError
from examprep.fileio import read_user_text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, jsonable, plain_array, steps_from
from examprep.values import allclose
from examprep.problem import Part, SolutionStep

HINT = ("train one with `examprep train --arch rnn-seq2seq --cell gru --task reverse --out runs/gru` "
        "(a few minutes on a CPU), then pass --checkpoint runs/gru")


def load_rnn(path: str | Path, generator_name: str, *, cell: str | None = None,
             attention: str | None = None) -> Weights:
    """A trained rnn-seq2seq model's weights (numpy) through examprep.checkpoints.stored (config,
    vocabulary, SHA-256 and NaN checks); ParamError naming the file or what the model lacks."""
    try:
        stored, weights = read_checkpoint(path)
    except CheckpointError as err:
        raise ParamError(f"--checkpoint: {err}") from None
    cfg = stored.config
    if cfg.arch != "rnn-seq2seq":
        raise ParamError(f"--checkpoint: {generator_name} reads an RNN encoder-decoder (`examprep train --arch "
                         f"rnn-seq2seq`); this model is {cfg.arch!r}")
    if cell is not None and cfg.cell != cell:
        raise ParamError(f"--checkpoint: {generator_name} needs a model with --cell {cell}; this one has {cfg.cell!r}")
    if attention is not None and cfg.attention != attention:
        raise ParamError(f"--checkpoint: {generator_name} needs a model with --attention {attention}; this one "
                         f"has {cfg.attention!r}")
    return weights


def draw_source(rng: Stream, weights: Weights, lo: int, hi: int) -> tuple[list[int], str]:
    """A short input of lo…hi tokens, as ids and text: a source sentence of the model's own corpus
    when the file is still there (its vocabulary covers it), else tokens of its source vocabulary
    (a built-in task's inputs are random strings anyway). The text encodes back to the same ids."""
    vocab, data = weights.stored.source_vocab, weights.stored.data
    corpus = data.get("corpus")
    if corpus:
        column = 1 if data.get("swap") else 0
        try:                # fileio's reader: a file gone, or now a pipe or a device, gives no sentence (never a wait)
            lines = read_user_text(corpus, error=ParamError).splitlines()
        except ParamError:
            lines = []
        sources = sorted({cols[column] for cols in (line.split("\t") for line in lines) if len(cols) > column})
        fitting = [t for t in sources if lo <= len(vocab.encode(t)) <= hi and UNK not in vocab.encode(t)]
        if fitting:
            text = rng.choice(fitting)
            return vocab.encode(text), " ".join(text.split())
    regular = list(range(len(SPECIALS), len(vocab)))
    if not regular:
        raise ParamError(f"--checkpoint: {weights.stored.path} has no source tokens beyond the special ones")
    ids = [rng.choice(regular) for _ in range(rng.integer(lo, hi))]
    text = vocab.decode(ids)
    if vocab.encode(text) != ids:
        raise Degenerate("the drawn tokens do not read back as themselves")
    return ids, text


def encoder_states(weights: Weights, ids: list[int]) -> tuple[np.ndarray, list]:
    """The encoder over `ids` + <eos> in numpy, as examprep.train.rnn runs it: annotations (S, D),
    [→h_j; ←h_j] of the top layer, and per layer and direction the list of (x_t, h_{t−1}, h_t[, c])
    of every step (forward order for both directions' own reading order)."""
    cfg = weights.stored.config
    x = weights.embedding("source")[[*ids, EOS]] * np.sqrt(cfg.d_model)
    hidden = cfg.d_model // 2 if cfg.bidirectional else cfg.d_model
    steps, finals = [], []
    for layer in range(cfg.n_encoder_layers):
        outputs, finals = [], []
        for reverse in ((False, True) if cfg.bidirectional else (False,)):
            w = weights.rnn_layer("encoder", layer, reverse)
            h, c, seq, trace = np.zeros(hidden), np.zeros(hidden), [], []
            for v in (x[::-1] if reverse else x):
                if cfg.cell == "gru":
                    h_new = engine.gru_cell(v, h, w.weight_ih, w.weight_hh, w.bias_ih, w.bias_hh,
                                            convention="pytorch").h_new
                    trace.append((v, h, h_new))
                else:
                    step = engine.lstm_cell(v, h, c, w.weight_ih, w.weight_hh, w.bias_ih, w.bias_hh)
                    trace.append((v, h, step.h_new, c))
                    h_new, c = step.h_new, step.c_new
                h = h_new
                seq.append(h)
            outputs.append(np.stack(seq[::-1] if reverse else seq))
            finals.append((h, c))
            steps.append(trace)
        x = np.concatenate(outputs, axis=1)
    return x, finals


def decoder_start(weights: Weights, finals: list) -> np.ndarray:
    """The decoder's first state s_0 = tanh(W_b [→h_S; ←h_1] + b_b) (examprep.train.rnn's bridge)."""
    w, b = weights.bridge()
    return np.tanh(w @ np.concatenate([h for h, _ in finals]) + b)


def _models_own_step(units: list, own: np.ndarray, sliced, hidden: int, d_model: int) -> SolutionStep:
    """The model's own h′ at the kept units, beside the slice's: the slice drops the other units' and
    input dimensions' terms, so its answer may be far from, even of the opposite sign to, the model's."""
    sliced = np.atleast_1d(np.asarray(sliced, dtype=float))
    pairs = ", ".join(f"unit {u}: {own[u]:.3f}" for u in units)
    flipped = [u for u, s in zip(units, sliced) if np.sign(s) != np.sign(own[u]) and own[u] != 0]
    note = (f" The slice's answer has the opposite sign at unit{'s' if len(flipped) > 1 else ''} "
            f"{', '.join(map(str, flipped))}: the dropped terms outweigh the kept ones there."
            if flipped else " The slice keeps the model's signs; the dropped terms change the size.")
    return SolutionStep("The model's own h′", [Text(
        f"With all {hidden} hidden units and all {d_model} input dimensions, unrounded, the model's own h′ is "
        f"{pairs}.{note}")])


@generator("gru-from-model", title="One GRU step of a trained model",
           syllabus="RNN/GRU: gates and forward step in a trained model", version=1,
           calculator_free=False, requires=("checkpoint",), requires_hint=HINT)
def gru_from_model(rng: Stream, difficulty: int, calculator_free: bool, options: dict) -> Draft:
    trained = load_rnn(options["checkpoint"], "gru-from-model", cell="gru")
    cfg = trained.stored.config
    ids, text = draw_source(rng, trained, 3, 6)
    t = rng.integer(1, len(ids) - 1)                       # a step with some history before it
    hidden = cfg.d_model // 2 if cfg.bidirectional else cfg.d_model
    w = trained.rnn_layer("encoder", 0, False)
    x_full = trained.embedding("source")[ids] * np.sqrt(cfg.d_model)
    h_full = np.zeros(hidden)
    for v in x_full[:t]:
        h_full = engine.gru_cell(v, h_full, w.weight_ih, w.weight_hh, w.bias_ih, w.bias_hh, convention="pytorch").h_new
    own = engine.gru_cell(x_full[t], h_full, w.weight_ih, w.weight_hh, w.bias_ih, w.bias_hh, convention="pytorch").h_new
    units_n, dims_n = {1: (1, 1), 2: (2, 2), 3: (2, 3)}[difficulty]
    units = sorted(rng.sample(range(hidden), units_n))
    dims = sorted(np.argsort(-np.abs(x_full[t]))[:dims_n].tolist())
    rows = [g * hidden + u for g in range(3) for u in units]
    x, h = plain_array(x_full[t][dims], 1), plain_array(h_full[units], 1)
    w_ih, w_hh = plain_array(w.weight_ih[np.ix_(rows, dims)], 1), plain_array(w.weight_hh[np.ix_(rows, units)], 1)
    b_ih, b_hh = plain_array(w.bias_ih[rows], 1), plain_array(w.bias_hh[rows], 1)
    if not np.any(h) or not np.any(x):
        raise Degenerate("the slice's state or input rounded to zero")
    if not np.all(np.any(w_ih, axis=1) | np.any(w_hh, axis=1)):
        raise Degenerate("a gate row of the slice rounded to zeros")
    params = {"x": jsonable(x), "h": jsonable(h), "weight_ih": jsonable(w_ih), "weight_hh": jsonable(w_hh),
              "bias_ih": jsonable(b_ih), "bias_hh": jsonable(b_hh), "convention": "pytorch", "reset": "after"}
    known = solve.mistakes("gru-cell", params)
    g = known.trace()
    if np.any(np.abs(g.z - 0.5) < 1e-9) or allclose(g.h_new, known.trace(convention="lecture").h_new):
        raise Degenerate("the two blends agree: the convention would not show")
    scalar = units_n == 1
    kind, shape = ("number", None) if scalar else ("vector", (units_n,))
    val = (lambda a: float(np.asarray(a).ravel()[0])) if scalar else jsonable
    token = trained.stored.source_vocab.tokens[ids[t]]
    labels = [f"{gate}{u}" for gate in "rzn" for u in units]
    statement = [
        Text(f"A GRU encoder–decoder trained with examprep (checkpoint sha256 {trained.sha256[:12]}…) reads "
             f"\"{text}\". Take one step of its encoder's forward GRU (first layer): the input is the embedding of "
             f"token {t} ({token.strip() or token!r}, counting from 0) and the state is the one the model reached on "
             f"the tokens before it. Of its {hidden} hidden units only {units_n} (unit{'s' if units_n > 1 else ''} "
             f"{', '.join(map(str, units))}) and of its {cfg.d_model} input dimensions only the {dims_n} largest "
             f"({', '.join(map(str, dims))}) are kept, every number rounded to one decimal: treat the slice as the "
             "whole cell. The cell is torch.nn.GRU, in PyTorch's convention: "
             r"$r = \sigma(W_{ir} x + b_{ir} + W_{hr} h + b_{hr})$, $z = \sigma(W_{iz} x + b_{iz} + W_{hz} h + b_{hz})$, "
             r"$n = \tanh(W_{in} x + b_{in} + r \odot (W_{hn} h + b_{hn}))$, $h' = (1 - z) \odot n + z \odot h$, "
             "weight rows stacked [r; z; n]."),
        Matrix("x", params["x"]), Matrix("h", params["h"]),
        Matrix("W_ih", params["weight_ih"], row_labels=labels), Matrix("W_hh", params["weight_hh"], row_labels=labels),
        Matrix("b_ih", params["bias_ih"], row_labels=labels), Matrix("b_hh", params["bias_hh"], row_labels=labels)]
    asked = ("r", "z", "n", "h_new")
    parts = [
        Part("r", "The reset gate $r$.", kind, val(g.r), shape=shape, points=1, minutes=2.0 * units_n,
             misconceptions=known.of("r", val)),
        Part("z", "The update gate $z$.", kind, val(g.z), shape=shape, points=1, minutes=2.0 * units_n,
             misconceptions=known.of("z", val)),
        Part("n", "The candidate state $n$.", kind, val(g.n), shape=shape, points=2, minutes=3.0 * units_n,
             misconceptions=known.of("n", val), ecf_rule=solve.ecf("gru-cell", "n", params, g, asked)),
        Part("h_new", "The new hidden state $h'$ (PyTorch's convention).", kind, val(g.h_new), shape=shape, points=2,
             minutes=2.0 * units_n, misconceptions=known.of("h_new", val),
             ecf_rule=solve.ecf("gru-cell", "h_new", params, g, asked)),
    ]
    steps = solve.rnn.gru_steps(params, g)
    solution = (steps_from(steps.reset, "r") + steps_from(steps.update, "z") + steps_from(steps.candidate, "n")
                + steps_from(steps.blend, "h_new") + [_models_own_step(units, own, g.h_new, hidden, cfg.d_model)])
    return Draft(title="One GRU step of a trained model",
                 params={"checkpoint_sha256": trained.sha256, "text": text, "position": t, "units": units,
                         "input_dims": dims, **params},
                 statement=statement, parts=parts, solution=solution,
                 conventions={"blend": "pytorch: h' = (1 − z)⊙n + z⊙h (torch.nn.GRU)",
                              "reset": "after: r⊙(W_hn h + b_hn)", "layout": "rows [r; z; n] as torch.nn.GRU",
                              "model": f"encoder layer 0, forward direction, units {units}"})
