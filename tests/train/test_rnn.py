"""The RNN encoder–decoder (examprep.train.rnn): shapes and masks, the model against a hand-rolled
loop over torch's GRUCell/LSTMCell with the same weights, the attention against the engine, and
tiny runs of every cell and attention that learn and resume exactly."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from examprep.engine.attention import attention as engine_attention
from examprep.train import checkpoint
from examprep.train.data import PAD
from examprep.checkpoints.errors import ConfigError
from examprep.train.model import build_model, keep_attention
from examprep.train.trainer import RunLog, TrainOptions, train

from .helpers import small_config

CELLS = ("gru", "lstm")
ATTENTION = ("none", "additive", "dot")


def rnn_config(**overrides):
    base = dict(arch="rnn-seq2seq", cell="gru", attention="additive", n_encoder_layers=1, n_decoder_layers=1)
    return small_config(**{**base, **overrides})


def _batch(b=3, s=7, t=5, vocab=23, lengths=(7, 4, 2)):
    src = torch.randint(5, vocab, (b, s))
    for i, n in enumerate(lengths):
        src[i, n:] = PAD
    return src, torch.randint(5, vocab, (b, t))


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("attention", ATTENTION)
def test_logits_have_the_target_shape_and_padding_changes_nothing(cell, attention):
    model = build_model(rnn_config(cell=cell, attention=attention, n_encoder_layers=2, n_decoder_layers=2)).eval()
    src, tgt = _batch()
    with torch.no_grad():
        logits = model(src, tgt)
        assert logits.shape == (3, 5, 23)
        # each row alone, without its padding, gives the same logits: packing and the mask hide padding
        for i, n in enumerate((7, 4, 2)):
            alone = model(src[i:i + 1, :n], tgt[i:i + 1], src_padded=False)
            torch.testing.assert_close(alone[0], logits[i], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attention", ("additive", "dot"))
def test_attention_weights_are_a_distribution_over_the_real_source_tokens(attention):
    model = build_model(rnn_config(attention=attention)).eval()
    src, tgt = _batch()
    with torch.no_grad(), keep_attention(model):
        model(src, tgt)
        weights = model.attention_maps()["decoder.attention"]
    assert weights.shape == (3, 1, 5, 7)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 1, 5))
    assert float(weights[1, ..., 4:].abs().max()) == 0.0 and float(weights[2, ..., 2:].abs().max()) == 0.0
    assert model.attention_maps() == {"decoder.attention": weights}


def _cells(rnn: torch.nn.Module, cell: str, reverse: bool) -> torch.nn.Module:
    """A GRUCell/LSTMCell holding layer 0's weights of one direction of an nn.GRU/nn.LSTM."""
    suffix = "_l0_reverse" if reverse else "_l0"
    one = (torch.nn.GRUCell if cell == "gru" else torch.nn.LSTMCell)(rnn.input_size, rnn.hidden_size)
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        getattr(one, name).data.copy_(getattr(rnn, name + suffix).data)
    return one


def _hand_rolled(model, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    """Logits (T, V) for one unpadded source, step by step with torch's cells and the formulas of
    examprep.train.rnn's docstring written out: bidirectional encoder, tanh bridge, attention."""
    cfg = model.cfg
    d, lstm = cfg.d_model, cfg.cell == "lstm"
    x = model.src_embed.weight[src] * math.sqrt(d)
    half = d // 2

    def run(cell, inputs, size):
        h, c, outs = torch.zeros(size), torch.zeros(size), []
        for v in inputs:
            if lstm:
                h, c = cell(v[None], (h[None], c[None]))
                h, c = h[0], c[0]
            else:
                h = cell(v[None], h[None])[0]
            outs.append(h)
        return outs, h, c

    fwd, h_f, c_f = run(_cells(model.encoder, cfg.cell, False), x, half)
    bwd, h_b, c_b = run(_cells(model.encoder, cfg.cell, True), x.flip(0), half)
    annotations = torch.stack([torch.cat([f, b]) for f, b in zip(fwd, bwd[::-1])])        # (S, D)
    s = torch.tanh(model.bridge.weight @ torch.cat([h_f, h_b]) + model.bridge.bias)
    c = model.bridge_cell.weight @ torch.cat([c_f, c_b]) + model.bridge_cell.bias if lstm else None
    decoder = _cells(model.decoder, cfg.cell, False)
    y = model.tgt_embed.weight[tgt] * math.sqrt(d)
    logits = []
    for t in range(len(tgt)):
        inp = y[t]
        if cfg.attention == "additive":
            a = model.attention
            e = torch.stack([a.v.weight[0] @ torch.tanh(a.key_proj.weight @ h_j + a.query_proj.weight @ s)
                             for h_j in annotations])
            context = F.softmax(e, 0) @ annotations
            inp = torch.cat([inp, context])
        if lstm:
            s, c = (z[0] for z in decoder(inp[None], (s[None], c[None])))
        else:
            s = decoder(inp[None], s[None])[0]
        if cfg.attention == "dot":
            context = F.softmax(annotations @ s, 0) @ annotations
        features = s if cfg.attention == "none" else torch.cat([s, context])
        logits.append(model.lm_head.weight @ torch.tanh(model.out_proj.weight @ features + model.out_proj.bias))
    return torch.stack(logits)


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("attention", ATTENTION)
def test_the_model_equals_a_hand_rolled_loop_over_torch_cells_with_the_same_weights(cell, attention):
    model = build_model(rnn_config(cell=cell, attention=attention, share_embeddings="none")).eval()
    src, tgt = _batch()
    with torch.no_grad():
        logits = model(src, tgt)
        for i, n in enumerate((7, 4, 2)):
            torch.testing.assert_close(logits[i], _hand_rolled(model, src[i, :n], tgt[i]), rtol=1e-5, atol=1e-5)


def test_additive_attention_is_the_engines_additive_score():
    model = build_model(rnn_config(d_model=8)).eval()
    a = model.attention
    rng = np.random.default_rng(3)
    s, h = rng.normal(size=8), rng.normal(size=(5, 8))
    mask = np.array([1, 1, 1, 1, 0], dtype=bool)
    with torch.no_grad():
        annotations = torch.tensor(h, dtype=torch.float32)[None]
        context, weights = a(torch.tensor(s, dtype=torch.float32)[None], annotations, a.key_proj(annotations),
                             torch.tensor(mask)[None])
    want = engine_attention(s, h, h, mask=mask.astype(int), score="additive",
                            w_query=a.query_proj.weight.detach().double().numpy(),
                            w_key=a.key_proj.weight.detach().double().numpy(),
                            v=a.v.weight[0].detach().double().numpy())
    np.testing.assert_allclose(weights[0].numpy(), want.weights, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(context[0].numpy(), want.output, rtol=1e-5, atol=1e-6)


def test_impossible_rnn_configs_are_config_errors():
    with pytest.raises(ConfigError, match="cell='rnn' is not one of gru, lstm"):
        rnn_config(cell="rnn")
    with pytest.raises(ConfigError, match="attention='luong' is not one of none, additive, dot"):
        rnn_config(attention="luong")
    with pytest.raises(ConfigError, match="even d_model"):
        rnn_config(d_model=33)
    with pytest.raises(ConfigError, match="bidirectional must be true or false"):
        rnn_config(bidirectional="yes")
    assert build_model(rnn_config(d_model=33, bidirectional=False)).encoder.hidden_size == 33


TINY = dict(task="copy", lengths="2-5", arch="rnn-seq2seq", d_model=32, layers=1, batch_tokens=300, eval_size=50,
            eval_every=1000, warmup=20, lr_factor=1.0)


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("attention", ATTENTION)
def test_a_tiny_run_of_every_cell_and_attention_learns(tmp_path, cell, attention):
    result = train(TrainOptions(**TINY, cell=cell, attention=attention, steps=40, out=str(tmp_path / "run")))
    first, last = np.mean(result.losses[:5]), np.mean(result.losses[-5:])
    assert last < 0.75 * first, (first, last)
    loaded = checkpoint.load(result.run_dir)
    assert (loaded.config.cell, loaded.config.attention) == (cell, attention)


def test_a_unidirectional_encoder_trains_and_is_kept_on_resume(tmp_path):
    kw = dict(TINY, cell="gru", attention="dot", bidirectional=False, d_model=33)
    result = train(TrainOptions(**kw, steps=20, out=str(tmp_path / "u")))
    assert np.mean(result.losses[-5:]) < np.mean(result.losses[:5])
    resumed = train(TrainOptions(**{**kw, "bidirectional": True}, steps=22, resume=True, out=str(tmp_path / "u")))
    assert resumed.steps == 22
    cfg = checkpoint.load(tmp_path / "u").config
    assert cfg.bidirectional is False and cfg.d_model == 33


def test_an_rnn_run_resumes_on_the_same_loss_curve(tmp_path):
    kw = dict(TINY, cell="lstm", attention="additive", dropout=0.2, save_every=6)
    straight = train(TrainOptions(**kw, steps=12, out=str(tmp_path / "a")))
    train(TrainOptions(**kw, steps=6, out=str(tmp_path / "b")))
    resumed = train(TrainOptions(**{**kw, "cell": None, "attention": None}, steps=12, resume=True,
                                 out=str(tmp_path / "b")))
    assert resumed.first_step == 7
    assert resumed.losses == pytest.approx(straight.losses[6:], rel=1e-6)
    logged = [r["loss"] for r in RunLog.read(tmp_path / "b") if "loss" in r]
    assert logged == pytest.approx(straight.losses, rel=1e-6)
    assert checkpoint.load(tmp_path / "b").config.cell == "lstm"


def test_long_string_tasks_draw_the_lengths_asked(tmp_path):
    from examprep.train.data import get_task

    task = get_task("reverse", "40-60")
    pairs = task.heldout_pairs(50, 0)
    assert all(40 <= len(s) <= 60 and t == s[::-1] for s, t in pairs)
    assert task.max_target_chars == 60 and get_task("reverse").lengths == (4, 16)


@pytest.mark.parametrize("attention", ATTENTION)
def test_the_benchmarks_plain_loop_computes_the_same_logits(attention):
    from examprep.train.baseline import plain_rnn_loop

    model = build_model(rnn_config(attention=attention, cell="lstm", n_encoder_layers=2)).eval()
    src, tgt = torch.randint(5, 23, (3, 6)), torch.randint(5, 23, (3, 5))
    with torch.no_grad():
        torch.testing.assert_close(plain_rnn_loop(model, src, tgt), model(src, tgt, src_padded=False),
                                   rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("d_model", [36, 30])
def test_an_rnn_takes_any_even_d_model_the_transformers_head_rules_do_not_apply(d_model):
    # d_model 36 with 4 "heads" is a head size of 9 (odd: RoPE would refuse it) and 30 does not
    # divide by 4; an RNN has neither heads nor RoPE
    model = build_model(rnn_config(d_model=d_model))
    src = torch.randint(5, 23, (2, 5))
    tgt = torch.randint(5, 23, (2, 4))
    assert model(src, tgt).shape == (2, 4, 23)
    with pytest.raises(ConfigError, match="bidirectional encoder needs an even d_model"):
        rnn_config(d_model=d_model + 1)
