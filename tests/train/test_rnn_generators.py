"""gru-from-model and additive-attention-from-model: the numpy forward pass they build on equals the
torch model's, their answers are torch's on the slice they state, and they stay out of quiz/sheets."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from examprep import generators
from examprep.cli import app
from examprep.errors import ParamError
from examprep.generators.gru_from_model import decoder_start, encoder_states, load_rnn
from examprep.train import checkpoint
from examprep.train.data import EOS, TASKS, task_vocab
from examprep.train.model import build_model

from .helpers import small_config

runner = CliRunner()
NAMES = ("gru-from-model", "additive-attention-from-model")


def _save(tmp_path, name, **cfg):
    vocab = task_vocab(TASKS["reverse"])
    torch.manual_seed(5)
    base = dict(arch="rnn-seq2seq", src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), n_encoder_layers=2,
                n_decoder_layers=1)
    model = build_model(small_config(**{**base, **cfg})).eval()
    with torch.no_grad():                      # trained-looking weights: larger than the initial ones
        for p in model.parameters():
            p.mul_(3.0)
    checkpoint.save(tmp_path / name, 1, model, vocab, vocab, {"data": {"kind": "task", "task": "reverse",
                                                                       "max_target_tokens": 17}})
    return tmp_path / name, model


@pytest.fixture(scope="module")
def gru_run(tmp_path_factory):
    return _save(tmp_path_factory.mktemp("rnn"), "gru", cell="gru", attention="additive")


@pytest.mark.parametrize("cell,bidirectional", [("gru", True), ("lstm", True), ("gru", False)])
def test_the_numpy_encoder_and_bridge_equal_the_torch_model(tmp_path, cell, bidirectional):
    run, model = _save(tmp_path, cell, cell=cell, attention="additive", bidirectional=bidirectional)
    weights = load_rnn(run, "test")
    ids = weights.stored.source_vocab.encode("kayak")
    annotations, finals = encoder_states(weights, ids)
    with torch.no_grad():
        memory = model.encode(torch.tensor([ids + [EOS]]))
    np.testing.assert_allclose(annotations, memory.annotations[0].double().numpy(), rtol=1e-4, atol=1e-5)
    s0 = memory.state[0] if cell == "lstm" else memory.state
    np.testing.assert_allclose(decoder_start(weights, finals), s0[-1, 0].double().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("level", (1, 2, 3))
def test_gru_from_model_answers_are_torchs_gru_cell_on_the_stated_slice(gru_run, level):
    run, _ = gru_run
    p = generators.build("gru-from-model", 4, level, options={"checkpoint": str(run)})
    assert p == generators.build("gru-from-model", 4, level, options={"checkpoint": str(run)})
    assert p.params["checkpoint_sha256"] == load_rnn(run, "test").sha256 and p.params["convention"] == "pytorch"
    cell = torch.nn.GRUCell(len(p.params["x"]), len(p.params["h"]), dtype=torch.float64)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, name).copy_(torch.tensor(p.params[name], dtype=torch.float64))
        h_new = cell(torch.tensor([p.params["x"]], dtype=torch.float64), torch.tensor([p.params["h"]], dtype=torch.float64))
    answer = {part.id: part.expected for part in p.parts}["h_new"]
    np.testing.assert_allclose(np.atleast_1d(answer), h_new[0].numpy(), rtol=1e-9)
    assert "PyTorch's convention" in json.dumps(p.to_dict())
    assert any(m.id == "lecture-blend" for part in p.parts if part.id == "h_new" for m in part.misconceptions)


@pytest.mark.parametrize("level", (1, 2, 3))
def test_additive_attention_from_model_answers_follow_the_formula(gru_run, level):
    run, _ = gru_run
    p = generators.build("additive-attention-from-model", 7, level, options={"checkpoint": str(run)})
    q, k, v, h = (torch.tensor(p.params[n], dtype=torch.float64) for n in ("query", "key", "v", "value"))
    scores = torch.tanh(k + q) @ v
    weights = torch.softmax(scores, 0)
    got = {part.id: np.asarray(part.expected) for part in p.parts}
    np.testing.assert_allclose(got["scores"], scores.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got["weights"], weights.numpy(), rtol=1e-9)
    np.testing.assert_allclose(got["context"], (weights @ h).numpy(), rtol=1e-9, atol=1e-12)


def test_the_models_own_weights_in_the_solution_are_the_torch_models(gru_run):
    run, model = gru_run
    p = generators.build("additive-attention-from-model", 7, 2, options={"checkpoint": str(run)})
    vocab = task_vocab(TASKS["reverse"])
    ids = vocab.encode(p.params["text"]) + [EOS]
    with torch.no_grad():
        memory = model.encode(torch.tensor([ids]))
        _, w = model.attention(memory.state[-1], memory.annotations, memory.keys, memory.mask)
    last = p.solution[-1].to_dict()["blocks"][0]["text"]
    assert [f"{x:.3f}" for x in w[0].tolist()] == [piece.split()[-1].rstrip(".") for piece in last.split(": ")[1].split(", ")]


def test_generators_refuse_other_models_in_one_line(tmp_path, gru_run):
    lstm_dot, _ = _save(tmp_path, "lstm", cell="lstm", attention="dot")
    for name, why in (("gru-from-model", "needs a model with --cell gru"),
                      ("additive-attention-from-model", "needs a model with --attention additive")):
        res = runner.invoke(app, ["generate", name, "--checkpoint", str(lstm_dot), "--seed", "1"])
        assert res.exit_code == 2 and why in res.output and len(res.output.strip().splitlines()) == 1
    with pytest.raises(ParamError, match="examprep train --arch rnn-seq2seq"):
        generators.build("gru-from-model", 1, 1)


def test_the_from_model_generators_are_listed_but_never_drawn_by_quiz_or_sheets():
    drawable = generators.load_all()
    listing = json.loads(runner.invoke(app, ["topics", "--json"]).output)
    for name in NAMES:
        assert name not in drawable
        assert any(t["topic"] == name and t["requires"] == ["checkpoint"] for t in listing)
        with pytest.raises(ParamError, match="needs a trained model"):
            generators.get_drawable(name, "the quiz")


def test_a_corpus_models_problems_read_a_sentence_of_its_corpus(tmp_path):
    from examprep.checkpoints.vocab import Vocab

    corpus = tmp_path / "pairs.tsv"
    pairs = [("I am tired.", "Je suis fatigué."), ("We won.", "Nous avons gagné."), ("Go.", "Va !")]
    corpus.write_text("".join(f"{e}\t{f}\n" for e, f in pairs), encoding="utf-8")
    vocab = Vocab.build([t for p in pairs for t in p], "word")
    torch.manual_seed(0)
    model = build_model(small_config(arch="rnn-seq2seq", src_vocab_size=len(vocab), tgt_vocab_size=len(vocab),
                                     n_encoder_layers=1, n_decoder_layers=1))
    checkpoint.save(tmp_path / "run", 1, model, vocab, vocab,
                    {"data": {"kind": "corpus", "corpus": str(corpus), "swap": True, "max_target_tokens": 9}})
    french = {f for _, f in pairs}
    texts = {generators.build(name, seed, 1, options={"checkpoint": str(tmp_path / "run")}).params["text"]
             for name in NAMES for seed in range(4)}
    assert texts <= french and len(texts) > 1


def test_gru_from_model_shows_the_models_own_h_new(gru_run):
    """Issue 40 item 6: the sliced answer can have the opposite sign to the model's real value, so
    the solution ends with the model's own h′ at the kept units, here from torch.nn.GRU itself."""
    run, model = gru_run
    vocab = task_vocab(TASKS["reverse"])
    for seed in range(1, 6):
        p = generators.build("gru-from-model", seed, 2, options={"checkpoint": str(run)})
        ids = vocab.encode(p.params["text"])[: p.params["position"] + 1]
        hidden = model.encoder.hidden_size                    # layer 0, forward direction, as torch runs it
        gru = torch.nn.GRU(model.cfg.d_model, hidden, batch_first=True)
        with torch.no_grad():
            for name in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"):
                getattr(gru, name).copy_(getattr(model.encoder, name))
            x = model.src_embed(torch.tensor([ids])) * np.sqrt(model.cfg.d_model)
            out, _ = gru(x)
        own = out[0, -1].double().numpy()                     # h′ at step t
        last = p.solution[-1].to_dict()
        assert last["title"] == "The model's own h′"
        text = last["blocks"][0]["text"]
        shown = {int(u): float(v) for u, v in re.findall(r"unit (\d+): (-?\d+\.\d+)", text)}
        assert sorted(shown) == p.params["units"], text
        for u, value in shown.items():                        # three decimals of float64; torch's float32
            assert abs(value - own[u]) <= 0.0005 + 1e-5, (seed, u, text)
        sliced = np.atleast_1d({part.id: part.expected for part in p.parts}["h_new"])
        flipped = [u for u, s in zip(p.params["units"], sliced) if np.sign(s) != np.sign(own[u])]
        assert ("opposite sign" in text) == bool(flipped)
