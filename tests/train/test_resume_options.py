"""Issue 40 item 5: --resume keeps the run's controls (--goal, --eval-every, --steps, --threads, the
schedule, clipping, weight decay, accumulation, --save-every, --keep) unless they are given again
on the command line, the thread count is the run's own; compiling is timed apart from training and
not charged to --minutes; bf16 on a CPU slower in bf16 says so once."""
from __future__ import annotations

import json
import types

import pytest
import torch
from typer.testing import CliRunner

from examprep.cli import app
from examprep.train import precision, trainer
from examprep.train.report import Reporter, summary
from examprep.train.trainer import RunLog, TrainOptions, train

runner = CliRunner()
TINY = ["--task", "reverse", "--d-model", "16", "--d-ff", "32", "--heads", "2", "--eval-size", "8"]
CONTROLS = ["--lr-schedule", "constant", "--lr", "0.003", "--warmup", "1", "--clip", "0.5", "--weight-decay", "0.05",
            "--grad-accum", "2", "--save-every", "2", "--keep", "3", "--goal", "0.99", "--eval-every", "2"]


def _step(out, step):
    training = json.loads((out / f"step-{step:06d}" / "config.json").read_text())["training"]
    decay = torch.load(out / f"step-{step:06d}" / "trainer.pt", weights_only=True)["optimizer"]["param_groups"][0]
    return training, decay["weight_decay"]


def test_resume_keeps_the_run_controls_unless_given_again(tmp_path):
    out = tmp_path / "run"
    first = runner.invoke(app, ["train", *TINY, *CONTROLS, "--steps", "4", "--threads", "3", "--out", str(out)])
    assert first.exit_code == 0, first.output
    kept = {"lr_schedule": "constant", "lr": 0.003, "warmup": 1, "clip": 0.5, "weight_decay": 0.05, "grad_accum": 2,
            "save_every": 2, "keep": 3, "goal": 0.99, "eval_every": 2, "threads": 3}

    again = runner.invoke(app, ["train", "--out", str(out), "--resume", "--steps", "6"])
    assert again.exit_code == 0, again.output
    assert "training on the CPU with 3 thread(s)" in again.output          # the run's count, not the load's
    training, decay = _step(out, 6)
    assert {k: training[k] for k in kept} == kept and training["steps"] == 6
    assert decay == 0.05
    log = RunLog.read(out)
    assert [r["lr"] for r in log if "loss" in r and r["step"] > 4] == [0.003, 0.003]
    assert [r["step"] for r in log if "eval" in r] == [2, 4, 6]                # --eval-every 2 kept

    # given again, even at its default (50), an option replaces the checkpoint's
    changed = runner.invoke(app, ["train", "--out", str(out), "--resume", "--steps", "8", "--eval-every", "50",
                                  "--clip", "0", "--weight-decay", "0.1", "--threads", "1"])
    assert changed.exit_code == 0, changed.output
    assert "training on the CPU with 1 thread(s)" in changed.output
    training, decay = _step(out, 8)
    assert {k: training[k] for k in kept} == {**kept, "eval_every": 50, "clip": 0.0, "weight_decay": 0.1, "threads": 1}
    assert decay == 0.1                                                     # the optimizer's, not only the record
    assert [r["step"] for r in RunLog.read(out) if "eval" in r] == [2, 4, 6, 8]


def test_resume_refuses_a_control_that_does_not_fit_the_kept_schedule(tmp_path):
    out = tmp_path / "run"
    first = runner.invoke(app, ["train", *TINY, *CONTROLS, "--steps", "2", "--threads", "1", "--out", str(out)])
    assert first.exit_code == 0, first.output
    res = runner.invoke(app, ["train", "--out", str(out), "--resume", "--steps", "4", "--lr-factor", "2"])
    assert res.exit_code == 2
    assert res.output.strip().splitlines()[-1] == ("error: --lr-factor scales the noam schedule; --lr-schedule "
                                                   "constant takes its peak rate as --lr")


class _Clock:
    """time.perf_counter as the trainer sees it: a millisecond per reading, and what a test adds."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        self.now += 1e-3
        return self.now


def test_compile_time_is_apart_from_training_and_not_charged_to_minutes(tmp_path, monkeypatch):
    clock, graphs = _Clock(), [0]
    monkeypatch.setattr(trainer, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    monkeypatch.setattr(torch, "compile", lambda model, *args, **kwargs: model)
    monkeypatch.setattr(trainer, "compiled_graphs", lambda: graphs[0])

    def compile_in_step_one(step, model):                # what building the graph costs, in step 1
        if step == 1:
            clock.now += 100.0
            graphs[0] += 1
    o = TrainOptions(task="reverse", d_model=16, d_ff=32, heads=2, eval_size=8, threads=1, steps=3, eval_every=3,
                     minutes=1.0, compile=True, out=str(tmp_path / "run"))
    res = train(o, on_step=compile_in_step_one)
    assert res.stopped == "steps"                      # charged to --minutes, it stopped at step 1 ("time")
    assert res.compile_seconds >= 100.0 and res.train_seconds < 1.0
    assert json.loads((res.checkpoint / "config.json").read_text())["compile_seconds"] >= 100.0
    assert "compiling took 100.0 s, not counted as training" in summary(res)


class _Notes(Reporter):
    def __init__(self):
        self.notes = []

    def note(self, text):
        self.notes.append(text)


@pytest.mark.parametrize("bf16_seconds, expected", [(2.0, 1), (0.5, 0)])
def test_bf16_slower_than_fp32_on_this_cpu_is_said_once(tmp_path, monkeypatch, bf16_seconds, expected):
    monkeypatch.setattr(precision, "matmul_seconds", lambda dtype: bf16_seconds if dtype == torch.bfloat16 else 1.0)
    reporter = _Notes()
    train(TrainOptions(task="reverse", d_model=16, d_ff=32, heads=2, eval_size=8, threads=1, steps=2, eval_every=1,
                       precision="bf16", out=str(tmp_path / "run")), reporter=reporter)
    said = [n for n in reporter.notes if n.startswith("--precision bf16")]
    assert len(said) == expected
    if expected:
        assert said[0] == ("--precision bf16: this CPU multiplies bf16 matrices 2.0x slower than fp32 (a 256x256 "
                           "matmul); fp32 may train faster here")


@pytest.mark.parametrize("args, message", [
    (["--tokens", "word"], "--tokens word: the run in {out} was trained with --tokens bpe"),
    (["--d-model", "64"], "--d-model 64: the run in {out} was trained with --d-model 32"),
    (["--swap"], "--swap: the run in {out} was trained without --swap"),
    (["--lengths", "3-5"], "--lengths 3-5: the run in {out} was trained with --lengths (its default)"),
    (["--objective", "mlm"], "--objective mlm: the run in {out} was trained with --objective seq2seq"),
    (["--arch", "rnn-seq2seq"], "--arch rnn-seq2seq: the run in {out} was trained with --arch encoder-decoder"),
])
def test_resume_refuses_a_changed_model_or_data_option_instead_of_ignoring_it(tmp_path, args, message):
    """--resume keeps the run's model and data options; one named again with another value used to
    be dropped without a word (--tokens word trained the BPE model on). The run directory is written
    here, config.json's "training" only: the refusal comes before any checkpoint is loaded."""
    out = tmp_path / "run"
    (out / "step-000010").mkdir(parents=True)
    (out / "latest").write_text("step-000010\n", encoding="utf-8")
    training = {"corpus": "pairs.tsv", "swap": False, "tokens": "bpe", "d_model": 32, "lengths": None,
                "arch": "encoder-decoder", "objective": "seq2seq"}
    (out / "step-000010" / "config.json").write_text(json.dumps({"training": training}), encoding="utf-8")
    before = sorted((p.name, p.read_bytes()) for p in (out / "step-000010").iterdir())
    res = runner.invoke(app, ["train", "--out", str(out), "--resume", "--steps", "20", *args])
    assert res.exit_code == 2, res.output
    assert res.output.strip().splitlines() == [f"error: {message.format(out=out)}, and --resume keeps the model's "
                                               "and the data's options; leave " + args[0] + " out, or train a new "
                                               "run in another --out"], res.output
    assert sorted((p.name, p.read_bytes()) for p in (out / "step-000010").iterdir()) == before


def test_resume_keeps_the_precision_the_run_trained_in_unless_given_again():
    """A bf16 run resumed without --precision went on in fp32 (the default, auto, resolved again),
    and an fp16 run on CUDA in bf16, its GradScaler's state dropped. config.json records the
    precision that ran; the resumed run keeps it, or takes the one given again."""
    from examprep.train.controls import merge_resumed

    saved = {"precision": "bf16", "steps": 4, "task": "reverse"}
    kept = merge_resumed(TrainOptions(out="run", resume=True, steps=6, given=frozenset({"out", "resume", "steps"})),
                         saved)
    assert (kept.precision, kept.steps) == ("bf16", 6)
    given = merge_resumed(TrainOptions(out="run", resume=True, precision="fp32",
                                       given=frozenset({"out", "resume", "precision"})), saved)
    assert (given.precision, given.steps) == ("fp32", 4)



def test_resume_keeps_compile_unless_given_again_and_no_compile_turns_it_off():
    """A --compile run resumed without --compile went on uncompiled, config.json saying false;
    --no-compile is the way to turn it off on resume (a flag alone could never be unset)."""
    import typer.main

    from examprep.cli import app
    from examprep.cli.train import given_on_command_line
    from examprep.train.controls import merge_resumed

    saved = {"compile": True, "steps": 4, "task": "reverse"}
    kept = merge_resumed(TrainOptions(out="run", resume=True, steps=6, given=frozenset({"out", "resume", "steps"})),
                         saved)
    assert (kept.compile, kept.steps) == (True, 6)
    group = typer.main.get_command(app)
    for args, compiled in ((["--out", "run", "--resume", "--no-compile"], False), (["--out", "run", "--resume"], True)):
        parent = group.make_context("examprep", ["train", *args])
        name, command, rest = group.resolve_command(parent, [*getattr(parent, "_protected_args", []), *parent.args])
        ctx = command.make_context(name, rest, parent=parent)
        resumed = merge_resumed(TrainOptions(out="run", resume=True, compile=ctx.params["compile"],
                                             given=given_on_command_line(ctx)), saved)
        assert resumed.compile is compiled, args
