"""`examprep verify --checkpoint DIR`: the engine's gru_cell / lstm_cell and attention against the
modules of a trained RNN encoder–decoder (examprep.train.rnn), on real inputs.

The model is loaded (SHA-256 checks included), converted to float64, and translates held-out
sources of its own data (the built-in task's held-out pairs, or the corpus's held-out sentences).
Hooks record what its modules computed:
- every step of every GRU/LSTM layer and direction, encoder and decoder: each layer is replayed one
  step at a time by a one-layer torch module holding that layer's weights (the replay must give the
  model's own outputs: that is checked too), and the engine's cell, in PyTorch's convention, must
  give torch's new state from torch's old one;
- every attention call: additive (Bahdanau, engine attention(score="additive") with w_key = W_1,
  w_query = W_2) or dot (Luong, score="dot"), weights and context, against the model's.
Tolerances are the engine check's (verify.RTOL, ATOL): both sides compute in float64.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from examprep import engine
from examprep.errors import ExamprepError
from examprep.train import checkpoint
from examprep.train.data import BOS, EOS, get_task, read_corpus, split_heldout
from examprep.train.evaluate import translate
from examprep.train.model import keep_attention
from examprep.verify import TopicCheck, _compare


class _Tally:
    def __init__(self, topic: str):
        self.row = TopicCheck(topic, 0, 0.0, 0.0, 0)

    def add(self, what: dict, ours, theirs) -> None:
        a, r, ok = _compare(ours, theirs)
        row = self.row
        row.instances += 1
        row.max_abs_diff, row.max_rel_diff = max(row.max_abs_diff, a), max(row.max_rel_diff, r)
        if not ok:
            row.failures += 1
            if row.first_failure is None:
                row.first_failure = {**what, "ours": np.asarray(ours).tolist(), "torch": np.asarray(theirs).tolist()}


def _sources(loaded, n: int, seed: int) -> list[str]:
    """n held-out sources of the run's own data."""
    data = loaded.data
    if data.get("kind") == "task" or data.get("task"):
        lengths = loaded.meta.get("training", {}).get("lengths")
        return [s for s, _ in get_task(data["task"], lengths).heldout_pairs(n, seed)]
    corpus = data.get("corpus")
    if not corpus or not Path(corpus).is_file():
        raise ExamprepError(f"--checkpoint: the model was trained on {corpus or 'a corpus'}, which is not there "
                            f"to give real inputs")
    pairs = read_corpus(corpus, swap=bool(data.get("swap"))).pairs
    train, heldout = split_heldout(pairs, round(1000 * loaded.meta.get("training", {}).get("heldout", 0.05)))
    sources = list(dict.fromkeys(s for s, _ in (heldout or train)))
    rng = np.random.default_rng(seed)
    return [sources[i] for i in sorted(rng.permutation(len(sources))[:n])]


def _one_layer(rnn: nn.Module, layer: int, reverse: bool) -> nn.Module:
    """A one-layer, one-direction copy of layer `layer` of an nn.GRU/nn.LSTM (float64)."""
    suffix = f"_l{layer}" + ("_reverse" if reverse else "")
    kind = type(rnn)
    w_ih = getattr(rnn, "weight_ih" + suffix)
    one = kind(w_ih.shape[1], rnn.hidden_size, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(one, name + "_l0").copy_(getattr(rnn, name + suffix))
    return one


def _replay(rnn: nn.Module, x: torch.Tensor, state, cell: str, tally: _Tally, side: str) -> torch.Tensor:
    """Run `rnn` (one sequence, x (T, I), state per layer·direction or None) layer by layer and
    step by step with one-layer copies; check every step against the engine; return the top
    layer's outputs (T, directions·H)."""
    directions = 2 if rnn.bidirectional else 1
    for layer in range(rnn.num_layers):
        outputs = []
        for d in range(directions):
            one = _one_layer(rnn, layer, d == 1)
            k = layer * directions + d
            if state is None:
                h = torch.zeros(1, 1, rnn.hidden_size, dtype=torch.float64)
                c = torch.zeros_like(h)
            elif cell == "lstm":
                h, c = state[0][k:k + 1, None], state[1][k:k + 1, None]
            else:
                h, c = state[k:k + 1, None], None
            seq, order = [], range(x.shape[0] - 1, -1, -1) if d == 1 else range(x.shape[0])
            for t in order:
                inp = x[t][None, None]
                if cell == "lstm":
                    _, (h_new, c_new) = one(inp, (h, c))
                    step = engine.lstm_cell(inp.flatten().numpy(), h.flatten().numpy(), c.flatten().numpy(),
                                            *(getattr(one, n + "_l0").detach().numpy()
                                              for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")))
                    where = {"module": f"{side} layer {layer}{' reverse' if d else ''}", "step": t}
                    tally.add({**where, "answer": "c_new"}, step.c_new, c_new.flatten().numpy())
                    tally.add({**where, "answer": "h_new"}, step.h_new, h_new.flatten().numpy())
                    c = c_new
                else:
                    _, h_new = one(inp, h)
                    step = engine.gru_cell(inp.flatten().numpy(), h.flatten().numpy(),
                                           *(getattr(one, n + "_l0").detach().numpy()
                                             for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")),
                                           convention="pytorch")
                    tally.add({"module": f"{side} layer {layer}{' reverse' if d else ''}", "step": t,
                               "answer": "h_new"}, step.h_new, h_new.flatten().numpy())
                h = h_new
                seq.append(h.flatten())
            outputs.append(torch.stack(seq[::-1] if d == 1 else seq))
        x = torch.cat(outputs, dim=-1)
    return x


def verify_checkpoint(path: Path | str, instances: int = 50, seed: int = 0) -> list[TopicCheck]:
    """Rows "<cell>-cell (encoder)", "<cell>-cell (decoder)" and "attention (<kind>)" of the
    checks above, over `instances` held-out sources. ExamprepError for a model that is not an
    rnn-seq2seq (the Transformer's layers are checked by `examprep verify`'s own topics)."""
    loaded = checkpoint.load(path)
    cfg = loaded.config
    if cfg.arch != "rnn-seq2seq":
        raise ExamprepError(f"--checkpoint: {loaded.path} holds an --arch {cfg.arch} model; verify --checkpoint checks an "
                            f"RNN encoder-decoder (`examprep train --arch rnn-seq2seq`)")
    model = loaded.model.double().eval()
    cells = {side: _Tally(f"{cfg.cell}-cell ({side})") for side in ("encoder", "decoder")}
    replay = _Tally("torch replay = model")                  # the one-layer replays give the model's own outputs
    attention = _Tally(f"attention ({cfg.attention})")
    calls: list = []
    hooks = [model.decoder.register_forward_hook(lambda m, args, out: calls.append(("decoder", args, out)))]
    if cfg.attention == "additive":
        hooks.append(model.attention.register_forward_hook(lambda m, args, out: calls.append(("additive", args, out))))
    sources = _sources(loaded, instances, seed)
    vocab = loaded.source_vocab
    max_tokens = int(loaded.data.get("max_target_tokens", cfg.max_len - 1))
    try:
        for text in sources:
            output = translate(model, [text], vocab, loaded.target_vocab, max_new_tokens=max_tokens)[0]
            ids = torch.tensor([vocab.encode(text) + [EOS]])
            inp = torch.tensor([[BOS] + loaded.target_vocab.encode(output)])
            calls.clear()
            with torch.no_grad(), keep_attention(model):
                model(ids, inp)                          # teacher-forced on its own output: the hooks record
                kept = model.attention_maps().get("decoder.attention")
                memory = model.encode(ids, model.source_mask(ids))
                x = model.src_embed(ids)[0] * cfg.d_model ** 0.5
                top = _replay(model.encoder, x, None, cfg.cell, cells["encoder"], "encoder")
                replay.add({"module": "encoder", "text": text}, top.numpy(), memory.annotations[0].numpy())
                ann = memory.annotations[0].numpy()
                for kind, args, out in calls:
                    if kind == "decoder":
                        inputs, state = args
                        got = _replay(model.decoder, inputs[0], _row(state), cfg.cell, cells["decoder"], "decoder")
                        replay.add({"module": "decoder", "text": text}, got.numpy(), out[0][0].numpy())
                        if cfg.attention == "dot":
                            for t, s in enumerate(out[0][0].numpy()):
                                want = engine.attention(s, ann, ann, score="dot")
                                attention.add({"text": text, "step": t, "answer": "weights"}, want.weights,
                                              kept[0, 0, t].numpy())
                    else:
                        s, annotations, keys, mask = args
                        context, weights = out
                        a = model.attention
                        want = engine.attention(s[0].numpy(), annotations[0].numpy(), annotations[0].numpy(),
                                                mask=mask[0].numpy().astype(int), score="additive",
                                                w_query=a.query_proj.weight.numpy(), w_key=a.key_proj.weight.numpy(),
                                                v=a.v.weight[0].numpy())
                        attention.add({"text": text, "answer": "weights"}, want.weights, weights[0].numpy())
                        attention.add({"text": text, "answer": "output"}, want.output, context[0].numpy())
    finally:
        for h in hooks:
            h.remove()
    rows = [cells["encoder"].row, cells["decoder"].row]
    if cfg.attention != "none":
        rows.append(attention.row)
    return rows + [replay.row]


def _row(state):
    """The state of the first (only) row of a one-sequence call."""
    return (state[0][:, 0], state[1][:, 0]) if isinstance(state, tuple) else state[:, 0]
