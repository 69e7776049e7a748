"""Issue 40 item 1: --precision and --compile are carried out for the masked LM, and config.json
records the precision and compile setting that ran (the resolved `auto`), never only what was asked."""
from __future__ import annotations

import json

import pytest
import torch

from tests.train.test_bert import TINY, _corpus, run


def _training(out):
    return json.loads((out / "step-000002" / "config.json").read_text())["training"]


def _losses(out):
    return [row["loss"] for row in map(json.loads, (out / "log.jsonl").read_text().splitlines()) if "loss" in row]


def test_mlm_trains_in_the_precision_it_records(tmp_path):
    corpus = _corpus(tmp_path)
    runs = {}
    for precision in ("auto", "bf16"):                               # two tiny runs: ~1 s on an idle machine
        out = tmp_path / precision
        res = run("train", *TINY, "--corpus", corpus, "--steps", "2", "--eval-every", "2",
                  "--precision", precision, "--out", out)
        assert res.exit_code == 0, res.output
        runs[precision] = out
    assert _training(runs["auto"])["precision"] == "fp32"           # auto on a CPU: what ran
    assert _training(runs["bf16"])["precision"] == "bf16"
    assert _training(runs["bf16"])["compile"] is False
    assert _losses(runs["bf16"]) != _losses(runs["auto"])           # bf16 autocast really ran
    assert _losses(runs["bf16"]) == pytest.approx(_losses(runs["auto"]), rel=0.05)


def test_seq2seq_records_the_resolved_precision(tmp_path):
    out = tmp_path / "run"
    res = run("train", "--task", "reverse", "--d-model", "16", "--d-ff", "32", "--steps", "2", "--eval-every", "2",
              "--eval-size", "8", "--threads", "1", "--out", out)
    assert res.exit_code == 0, res.output
    assert _training(out)["precision"] == "fp32" and _training(out)["compile"] is False


@pytest.mark.slow
def test_mlm_compiles_when_asked(tmp_path):
    from torch._dynamo.utils import counters

    counters.clear()
    out = tmp_path / "compiled"
    res = run("train", *TINY, "--corpus", _corpus(tmp_path), "--steps", "2", "--eval-every", "2", "--compile",
              "--out", out)
    assert res.exit_code == 0, res.output
    assert _training(out)["compile"] is True
    assert counters["stats"]["unique_graphs"] > 0                    # dynamo compiled something
    torch._dynamo.reset()
