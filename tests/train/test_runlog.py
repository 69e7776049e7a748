"""Issue 40 item 3: every kind of run writes RUN/log.jsonl with the same fields, the held-out loss
is the teacher-forced cross-entropy (checked against torch.nn.functional.cross_entropy written
here), the NLL beside the label-smoothed loss is the unsmoothed cross-entropy of the same batch, and
--tensorboard mirrors the scalars into an event file that TensorBoard's own reader reads back."""
from __future__ import annotations

import json
import math
from importlib.util import find_spec

import pytest
import torch
import torch.nn.functional as F
from typer.testing import CliRunner

from examprep.cli import app
from examprep.train import checkpoint
from examprep.train.data import PAD, TaskStream, collate, get_task, make_example
from examprep.train.evaluate import evaluate
from examprep.train.model import build_model

runner = CliRunner()
SMALL = ["--d-model", "16", "--heads", "2", "--d-ff", "32", "--batch-tokens", "300", "--eval-size", "10",
         "--threads", "1"]
FT = ["--batch-tokens", "300", "--eval-size", "10", "--eval-every", "2", "--steps", "2", "--task", "dates-dmy",
      "--threads", "1"]
STEP_KEYS = {"step", "loss", "nll", "lr", "tokens_per_s"}
EVAL_KEYS = {"heldout_loss", "perplexity", "metric", "train_seconds", "split"}


def run(*args):
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res


def read(run_dir):
    return [json.loads(line) for line in (run_dir / "log.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One run of every kind: seq2seq on a task (label-smoothed, --tensorboard), on a corpus, an RNN,
    a masked LM, and LoRA and full fine-tuning of the first."""
    root = tmp_path_factory.mktemp("runlog")
    corpus = root / "pairs.tsv"
    corpus.write_text("".join(f"w{i} x{i % 7}\tx{i % 7} w{i}\n" for i in range(60)), encoding="utf-8")
    out = {k: root / k for k in ("seq", "corpus", "rnn", "mlm", "lora", "full")}
    board = ["--tensorboard"] if find_spec("tensorboard") else []     # the tensorboard extra; its test skips without it
    run("train", *SMALL, "--steps", "4", "--eval-every", "2", *board, "--out", out["seq"])
    run("train", *SMALL, "--corpus", corpus, "--heldout", "0.3", "--steps", "2", "--eval-every", "2", "--out",
        out["corpus"])
    run("train", "--arch", "rnn-seq2seq", *SMALL[:2], *SMALL[6:], "--steps", "2", "--eval-every", "2",
        "--out", out["rnn"])
    run("train", "--arch", "encoder-only", "--objective", "mlm", "--corpus", corpus, *SMALL, "--steps", "2",
        "--eval-every", "2", "--out", out["mlm"])
    run("finetune", "--checkpoint", out["seq"], "--lora-rank", "2", *FT, *board, "--out", out["lora"])
    run("finetune", "--checkpoint", out["seq"], "--full", *FT, "--out", out["full"])
    return out


def test_every_kind_of_run_logs_the_same_fields(runs):
    metric = {"seq": "exact_match", "corpus": "bleu", "rnn": "exact_match", "mlm": "masked_accuracy",
              "lora": "exact_match", "full": "exact_match"}
    for kind, run_dir in runs.items():
        records = read(run_dir)
        steps = [r for r in records if "eval" not in r]
        evals = [r for r in records if "eval" in r]
        assert steps and evals, kind
        assert all(set(r) == STEP_KEYS for r in steps), (kind, steps[0])
        for r in evals:
            assert set(r) == {"step", "eval"} and EVAL_KEYS <= set(r["eval"]), (kind, r)
            e = r["eval"]
            assert e["metric"] == metric[kind] and isinstance(e[e["metric"]], float), (kind, e)
            assert e["perplexity"] == pytest.approx(math.exp(e["heldout_loss"]), rel=1e-12)
        assert [r["step"] for r in steps] == list(range(1, len(steps) + 1))


def test_the_nll_is_the_unsmoothed_cross_entropy_of_the_batch_the_loss_was_smoothed_on(runs):
    # step 1 runs the initial weights (torch.manual_seed(seed), then the model) on batch 1 of the task
    loaded = checkpoint.load(runs["seq"])
    torch.manual_seed(0)
    model = build_model(loaded.config).eval()
    task = get_task("dates")
    stream = TaskStream(task, loaded.source_vocab, "encoder-decoder", 300, 0)
    batch = collate(stream.examples(1), 0, 1)
    with torch.no_grad():
        logits = model(batch.src, batch.inp, src_padded=batch.src_padded).reshape(-1, len(loaded.target_vocab))
    target = batch.out.reshape(-1)
    first = read(runs["seq"])[0]
    nll = F.cross_entropy(logits, target, ignore_index=PAD).item()
    smoothed = F.cross_entropy(logits, target, ignore_index=PAD, label_smoothing=0.1).item()
    assert first["step"] == 1 and first["loss"] != pytest.approx(first["nll"], rel=1e-3)
    assert first["nll"] == pytest.approx(nll, rel=1e-5)
    assert first["loss"] == pytest.approx(smoothed, rel=1e-5)


@pytest.mark.parametrize("kind", ["seq", "rnn"])
def test_the_heldout_loss_is_the_teacher_forced_cross_entropy_per_target_token(runs, kind):
    loaded = checkpoint.load(runs[kind])
    model = loaded.model.eval()
    pairs = get_task("dates").heldout_pairs(10, 0)
    total, count = 0.0, 0
    with torch.no_grad():
        for source, target in pairs:                  # one pair at a time: no padding at all
            e = make_example(loaded.source_vocab.encode(source), loaded.target_vocab.encode(target), loaded.config.arch)
            logits = model(torch.tensor([e.src]), torch.tensor([e.inp]))[0]
            total += F.cross_entropy(logits, torch.tensor(e.out), ignore_index=PAD, reduction="sum").item()
            count += sum(1 for t in e.out if t != PAD)
    logged = [r for r in read(runs[kind]) if "eval" in r][-1]["eval"]
    assert logged["heldout_loss"] == pytest.approx(total / count, rel=1e-5)
    again = evaluate(model, pairs, loaded.source_vocab, loaded.target_vocab, max_new_tokens=12)
    assert again["heldout_loss"] == pytest.approx(total / count, rel=1e-5)


def test_tensorboard_mirrors_the_logs_scalars(runs):
    pytest.importorskip("tensorboard", reason="--tensorboard needs the tensorboard extra: pip install -e '.[tensorboard]'")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    for kind in ("seq", "lora"):
        acc = EventAccumulator(str(runs[kind] / "tensorboard"))
        acc.Reload()
        records = read(runs[kind])
        for field in ("loss", "nll", "lr", "tokens_per_s"):
            events = acc.Scalars(f"train/{field}")
            assert [e.step for e in events] == [r["step"] for r in records if "eval" not in r]
            assert [e.value for e in events] == pytest.approx([r[field] for r in records if "eval" not in r], rel=1e-6)
        for field in ("heldout_loss", "perplexity", "exact_match"):
            events = acc.Scalars(f"eval/{field}")
            assert [(e.step, pytest.approx(e.value, rel=1e-6)) for e in events] == \
                [(r["step"], r["eval"][field]) for r in records if "eval" in r]


def test_tensorboard_without_the_package_is_one_line_before_any_work(monkeypatch, tmp_path):
    import examprep.train.runlog as runlog

    monkeypatch.setattr(runlog, "find_spec", lambda name: None)
    for args in (["train", "--steps", "1", "--tensorboard", "--out", tmp_path / "t"],
                 ["finetune", "--checkpoint", tmp_path / "none", "--full", "--tensorboard", "--out", tmp_path / "f"]):
        res = runner.invoke(app, [str(a) for a in args])
        assert res.exit_code == 2
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and "--tensorboard needs the tensorboard package" in lines[0], res.output
    assert not (tmp_path / "t").exists() and not (tmp_path / "f").exists()


def test_runs_tabulates_every_kind_of_run_in_80_columns(runs, monkeypatch):
    monkeypatch.chdir(runs["seq"].parent)
    res = run("runs", *runs)
    assert [line for line in res.output.splitlines() if len(line) > 80] == []
    for kind, run_dir in runs.items():
        last = [r for r in read(run_dir) if "eval" in r][-1]["eval"]
        assert f"{last['heldout_loss']:.3f}" in next(line for line in res.output.splitlines() if line.startswith(kind))


def test_resuming_a_run_killed_while_it_wrote_its_log_drops_the_cut_line(tmp_path):
    """kill -9 in the middle of an append leaves a last line without its end: the resumed run keeps
    the records up to its checkpoint and drops the cut one (it used to stop on a JSONDecodeError
    traceback). RunLog is opened as the trainers open it on --resume."""
    from examprep.train.runlog import RunLog, step_record

    records = [step_record(s, 2.0 / s, 1.9 / s, 1e-3, 1000.0) for s in (1, 2, 3)]
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records) + '{"step": 4, "lo',
                                        encoding="utf-8")
    log = RunLog(tmp_path, resumed_step=2)
    log.write([step_record(3, 0.5, 0.4, 1e-3, 1000.0)])
    log.close()
    assert read(tmp_path) == [*records[:2], step_record(3, 0.5, 0.4, 1e-3, 1000.0)]
