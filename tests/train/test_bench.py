"""The trainer's benchmarks run end to end at a tiny size (their figures are not asserted here)."""
from __future__ import annotations

import json
import os
import subprocess

from .helpers import PYTHON, REPO

ENV = {**os.environ, "OMP_NUM_THREADS": "1"}


def test_cpu_benchmark_runs_and_reports_every_figure(tmp_path):
    out = tmp_path / "cpu.json"
    res = subprocess.run([PYTHON, "bench/train_cpu.py", "--quick", "--steps", "2", "--decode-rounds", "1",
                          "--threads", "1", "--json", str(out)], cwd=REPO, env=ENV, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    result = json.loads(out.read_text())
    assert set(result["train"]) == set(result["train_ratio"]) == {"0.1", "0.0"}    # both dropouts, one run
    for rows in result["train"].values():
        assert set(rows) == {"ours", "nn.Transformer"}
        assert all(r["tokens_per_s"] > 0 and 0 < r["matmul_share"] for r in rows.values())
    assert result["train_goal"] == {"0.1": 1.4, "0.0": 1.15}
    assert "ratio ours / nn.Transformer at dropout 0.1" in res.stdout
    assert "ratio ours / nn.Transformer at dropout 0.0" in res.stdout
    assert set(result["decode"]) == {"ours, KV cache", "ours, no cache", "nn.Transformer"}
    assert result["decode_same_tokens"] is True                 # same weights: the same greedy tokens
    assert "identical tokens: yes" in res.stdout
    assert set(result["rnn"]) == {"additive", "dot", "none"}
    assert all(r["ours_tokens_per_s"] > 0 and r["plain_tokens_per_s"] > 0 for r in result["rnn"].values())
    assert "ratio ours / plain" in res.stdout
    lora, full = result["finetune"]["LoRA r=4 on q,v"], result["finetune"]["full fine-tuning"]
    assert lora["steps_per_s"] > 0 and full["steps_per_s"] > 0 and result["finetune_ratio_lora_vs_full"] > 0
    assert lora["trainable"] == 6 * 4 * (32 + 32)        # 3 attention blocks × (q, v), r = 4, d = k = 32
    assert lora["optimizer_bytes"] < full["optimizer_bytes"]
    assert "ratio LoRA / full fine-tuning" in res.stdout
    res = subprocess.run([PYTHON, "bench/train_cpu.py", "--quick", "--finetune-only", "--steps", "1", "--threads", "1",
                          "--json", str(out)], cwd=REPO, env=ENV, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert set(json.loads(out.read_text())) == {"finetune"} and "nn.Transformer" not in res.stdout


def test_gpu_benchmark_runs_on_the_cpu_at_a_tiny_size_and_writes_as_it_goes(tmp_path):
    env = {**ENV, "BENCH_TINY": "1", "BENCH_COMPILE": "0", "BENCH_STEPS": "1", "BENCH_BATCH": "2",
           "BENCH_OUT": str(tmp_path / "gpu")}
    res = subprocess.run([PYTHON, "bench/train_gpu.py"], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    rows = [json.loads(line) for line in (tmp_path / "gpu" / "results.jsonl").read_text().splitlines()]
    assert [r["model"] for r in rows] == ["ours decoder-only", "ours encoder-decoder", "nn.Transformer"]
    for r in rows:
        assert "error" not in r, r
        assert r["tokens_per_s"] > 0 and r["tflops_per_step"] > 0 and r["mfu_vs_989"] > 0
    assert rows[0]["flop_formula"].startswith("6·N + 12·L·H·Q·T per token")
    assert "MFU vs 989" in (tmp_path / "gpu" / "summary.md").read_text()
    assert json.loads((tmp_path / "gpu" / "env.json").read_text())["tiny"] is True


def test_exact_match_by_length_reports_every_band(tmp_path):
    from examprep.train.trainer import TrainOptions, train

    train(TrainOptions(task="copy", lengths="4-30", arch="rnn-seq2seq", attention="none", d_model=32, layers=1,
                       batch_tokens=300, eval_size=20, eval_every=1000, steps=3, out=str(tmp_path / "run")))
    out = tmp_path / "bands.json"
    res = subprocess.run([PYTHON, "bench/exact_by_length.py", str(tmp_path / "run"), "--pairs", "40", "--band", "10",
                          "--json", str(out)], cwd=REPO, env=ENV, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    [result] = json.loads(out.read_text())
    assert list(result["bands"]) == ["4-13", "14-23", "24-30"] and result["task"] == "copy"
    assert sum(b["pairs"] for b in result["bands"].values()) == result["pairs"] == 40
    assert "rnn-seq2seq gru attention=none" in res.stdout
