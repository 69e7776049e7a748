"""`examprep verify --checkpoint`: the engine's cells and attention against a trained RNN model."""
from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from examprep import engine
from examprep.cli import app
from examprep.errors import ExamprepError
from examprep.train import checkpoint
from examprep.train.data import TASKS, task_vocab
from examprep.train.model import build_model
from examprep.verify import _checkpoint as verify_ck

from .helpers import small_config

runner = CliRunner()


def _save(tmp_path, **cfg):
    vocab = task_vocab(TASKS["reverse"])
    torch.manual_seed(2)
    model = build_model(small_config(**{**dict(arch="rnn-seq2seq", src_vocab_size=len(vocab),
                                                 tgt_vocab_size=len(vocab), n_encoder_layers=2, n_decoder_layers=2),
                                        **cfg}))
    meta = {"data": {"kind": "task", "task": "reverse", "max_target_tokens": 6}, "training": {}}
    checkpoint.save(tmp_path / "run", 1, model, vocab, vocab, meta)
    return tmp_path / "run"


@pytest.mark.parametrize("cell,attention", [("gru", "additive"), ("lstm", "dot"), ("gru", "none")])
def test_every_cell_step_and_attention_call_agrees_with_the_engine(tmp_path, cell, attention):
    rows = verify_ck.verify_checkpoint(_save(tmp_path, cell=cell, attention=attention), instances=3)
    topics = [r.topic for r in rows]
    assert topics[:2] == [f"{cell}-cell (encoder)", f"{cell}-cell (decoder)"]
    assert (f"attention ({attention})" in topics) == (attention != "none")
    assert all(r.passed and r.instances > 0 for r in rows), rows


def test_a_wrong_engine_cell_is_caught(tmp_path, monkeypatch):
    run = _save(tmp_path, cell="gru", attention="additive")
    real = engine.gru_cell
    monkeypatch.setattr(verify_ck.engine, "gru_cell", lambda *a, **k: real(*a, **{**k, "convention": "lecture"}))
    rows = {r.topic: r for r in verify_ck.verify_checkpoint(run, instances=2)}
    assert rows["gru-cell (encoder)"].failures > 0 and rows["gru-cell (encoder)"].first_failure["answer"] == "h_new"
    assert rows["attention (additive)"].passed


def test_a_wrong_additive_score_is_caught(tmp_path, monkeypatch):
    run = _save(tmp_path, cell="lstm", attention="additive")
    real = engine.attention
    monkeypatch.setattr(verify_ck.engine, "attention",
                        lambda *a, **k: real(*a, **{**k, "w_key": k["w_key"] * 0.5}) if k.get("score") == "additive"
                        else real(*a, **k))
    rows = {r.topic: r for r in verify_ck.verify_checkpoint(run, instances=2)}
    assert rows["attention (additive)"].failures > 0 and rows["lstm-cell (encoder)"].passed


def test_the_command_passes_on_a_model_and_refuses_a_transformer_in_one_line(tmp_path):
    run = _save(tmp_path, cell="gru", attention="dot")
    res = runner.invoke(app, ["verify", "--checkpoint", str(run), "-n", "2", "--json"])
    assert res.exit_code == 0, res.output
    assert all(r["passed"] for r in json.loads(res.stdout))
    vocab = task_vocab(TASKS["reverse"])
    checkpoint.save(tmp_path / "tf", 1, build_model(small_config(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab))),
                    vocab, vocab, {"data": {"kind": "task", "task": "reverse"}})
    res = runner.invoke(app, ["verify", "--checkpoint", str(tmp_path / "tf")])
    assert res.exit_code == 2 and "checks an RNN encoder-decoder" in res.output
    assert len(res.output.strip().splitlines()) == 1
    res = runner.invoke(app, ["verify", "--checkpoint", str(run), "--topic", "softmax"])
    assert res.exit_code == 2 and "give one or the other" in res.output
    with pytest.raises(ExamprepError, match="does not exist"):
        verify_ck.verify_checkpoint(tmp_path / "missing")
