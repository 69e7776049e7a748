"""Issue 40 item 4: the training controls. Schedules against torch's own schedulers, gradient
accumulation against one big padded batch (torch's mean cross-entropy over its taught tokens),
--save-every/--keep and RUN/best, fp16's refusal on the CPU and its GradScaler state in trainer.pt,
and the one-line refusals of options that do not go together."""
from __future__ import annotations

import json
import math
import warnings

import pytest
import torch
import torch.nn.functional as F
from typer.testing import CliRunner

from examprep.checkpoints.errors import DeviceError
from examprep.cli import app
from examprep.train import checkpoint, trainer
from examprep.train.data import PAD
from examprep.train.schedule import lr_at
from examprep.train.trainer import RunLog, TrainOptions, train

runner = CliRunner()
TINY = dict(task="reverse", d_model=16, d_ff=32, heads=2, eval_size=8, threads=1, dropout=0.0)


def _options(tmp_path, name="run", **overrides) -> TrainOptions:
    return TrainOptions(**{**TINY, "out": str(tmp_path / name), **overrides})


def _torch_lrs(schedule: str, warmup: int, steps: int, peak: float) -> list[float]:
    """The rate of steps 1…S under torch's schedulers, chained as usual (the optimizer steps, then
    the scheduler)."""
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=peak)
    sched = torch.optim.lr_scheduler
    decay = {"cosine": lambda: sched.CosineAnnealingLR(opt, T_max=steps - warmup),
             "linear": lambda: sched.LinearLR(opt, start_factor=1.0, end_factor=0.0, total_iters=steps - warmup),
             "constant": lambda: sched.ConstantLR(opt, factor=1.0, total_iters=0)}[schedule]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if warmup == 0:
            s = decay()
        else:
            up = sched.LinearLR(opt, start_factor=1 / warmup, end_factor=1.0, total_iters=warmup - 1)
            s = sched.SequentialLR(opt, [up, decay()], milestones=[warmup])
        lrs = []
        for _ in range(steps):
            lrs.append(opt.param_groups[0]["lr"])
            opt.step()
            s.step()
    return lrs


@pytest.mark.parametrize("schedule", ["cosine", "linear", "constant"])
@pytest.mark.parametrize("warmup", [0, 2, 5])
def test_schedules_are_torchs_schedulers(schedule, warmup):
    steps, peak = 17, 3e-3
    ours = [lr_at(s, schedule=schedule, warmup=warmup, lr=peak, steps=steps) for s in range(1, steps + 1)]
    assert ours == pytest.approx(_torch_lrs(schedule, warmup, steps, peak), rel=1e-12, abs=1e-15)
    if warmup:
        assert ours[warmup - 1] == pytest.approx(peak)                 # the peak at the end of the warm-up


def test_the_log_shows_the_rate_each_step_used(tmp_path):
    res = train(_options(tmp_path, steps=6, eval_every=6, lr_schedule="cosine", lr=0.01, warmup=2))
    logged = [r["lr"] for r in RunLog.read(res.run_dir) if "loss" in r]
    assert logged == pytest.approx(_torch_lrs("cosine", 2, 6, 0.01), rel=1e-12)
    training = json.loads((res.checkpoint / "config.json").read_text())["training"]
    assert (training["lr_schedule"], training["lr"], training["warmup"]) == ("cosine", 0.01, 2)


def _capture_gradients(monkeypatch) -> list:
    """The gradients each optimizer step receives (after clipping; --clip 0 leaves them as they are)."""
    seen = []
    make = trainer._Run._optimizer

    def optimizer(self):
        opt = make(self)
        step = opt.step

        def recording_step(*args, **kwargs):
            seen.append([p.grad.detach().clone() for p in self.model.parameters()])
            return step(*args, **kwargs)
        opt.step = recording_step
        return opt
    monkeypatch.setattr(trainer._Run, "_optimizer", optimizer)
    return seen


def test_grad_accum_equals_one_big_batch(tmp_path, monkeypatch):
    from examprep.train.data import TaskStream, get_task, task_vocab
    from examprep.train.model import build_model

    seen = _capture_gradients(monkeypatch)
    o = _options(tmp_path, steps=1, eval_every=1, grad_accum=3, clip=0.0, batch_tokens=400)
    train(o)
    # The same step's examples, padded into one batch here; torch's mean over the taught tokens.
    task = get_task("reverse")
    examples = TaskStream(task, task_vocab(task), o.arch, o.batch_tokens, o.seed).examples(1)
    micro_targets = [sum(e.n_targets for e in examples[k::3]) for k in range(3)]
    assert len(set(micro_targets)) > 1                                   # micro-batches of unequal sizes

    def pad(rows):
        return torch.nn.utils.rnn.pad_sequence([torch.tensor(r) for r in rows], batch_first=True, padding_value=PAD)
    config = checkpoint.load(tmp_path / "run").config
    torch.manual_seed(o.seed)                              # the trainer's initial weights
    model = build_model(config)
    logits = model(pad([e.src for e in examples]), pad([e.inp for e in examples]), src_padded=True)
    targets = pad([e.out for e in examples])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=PAD,
                           label_smoothing=o.label_smoothing, reduction="mean")
    loss.backward()
    assert len(seen) == 1
    for (name, p), accumulated in zip(model.named_parameters(), seen[0]):
        torch.testing.assert_close(accumulated, p.grad, rtol=0, atol=1e-6, msg=name)


def test_grad_accum_steps_like_the_whole_batch(tmp_path):
    # the trainer's own two ways, over three steps: the weights agree to 1e-6
    one = train(_options(tmp_path, "one", steps=3, eval_every=3, batch_tokens=400))
    four = train(_options(tmp_path, "four", steps=3, eval_every=3, batch_tokens=400, grad_accum=4))
    assert four.losses == pytest.approx(one.losses, rel=1e-6)
    a, b = checkpoint.load(one.run_dir).model, checkpoint.load(four.run_dir).model
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        torch.testing.assert_close(q, p, rtol=0, atol=1e-6, msg=name)


def test_save_every_keep_and_the_best_checkpoint(tmp_path, monkeypatch):
    scores = iter([0.5, 0.25, 0.75, 0.5])                 # held-out exact match at steps 2, 4, 6, 8
    monkeypatch.setattr(trainer._Run, "_evaluate", lambda self: {
        "pairs": 8, "sources": 8, "token_accuracy": 0.5, "exact_match": next(scores), "split": "held-out",
        "heldout_loss": 1.0, "perplexity": math.e})
    weights = {}
    res = train(_options(tmp_path, steps=8, eval_every=2, save_every=3, keep=3, goal=0.0),
                on_step=lambda step, model: weights.__setitem__(step, {k: v.clone() for k, v in
                                                                       model.state_dict().items()}))
    steps = sorted(p.name for p in res.run_dir.glob("step-*"))
    assert steps == ["step-000003", "step-000006", "step-000008"]       # every 3rd and the last; 3 kept
    best = checkpoint.load(res.run_dir / "best")
    assert best.meta["best"] == {"step": 6, "metric": "exact_match", "value": 0.75} == res.best
    assert best.meta["step"] == 6 and not (res.run_dir / "best" / "trainer.pt").exists()
    for name, value in best.model.state_dict().items():
        assert torch.equal(value, weights[6][name]), name
    shown = runner.invoke(app, ["translate", "--checkpoint", str(res.run_dir / "best"), "abc"])
    assert shown.exit_code == 0, shown.output


def test_fp16_is_refused_on_the_cpu_in_one_line(tmp_path):
    res = runner.invoke(app, ["train", "--task", "reverse", "--steps", "2", "--device", "cpu", "--precision", "fp16",
                              "--out", str(tmp_path / "run")])
    assert res.exit_code == DeviceError.exit_code
    assert res.output.strip().splitlines() == [
        "error: --precision fp16 needs a CUDA GPU (with torch.amp.GradScaler); on the CPU use fp32 or bf16"]
    assert not (tmp_path / "run" / "latest").exists()


def test_fp16_gradient_scaler_state_is_saved_and_restored(tmp_path, monkeypatch):
    # CPU autocast knows float16 and torch.amp.GradScaler("cpu") exists: the CUDA path, run on the CPU
    monkeypatch.setattr(trainer, "check_precision_device", lambda precision, device: None)
    first = train(_options(tmp_path, steps=2, eval_every=2, precision="fp16"))
    state = torch.load(first.checkpoint / "trainer.pt", weights_only=True)["scaler"]
    assert state["scale"] > 0 and state["_growth_tracker"] == 2               # two steps without overflow
    loaded = []
    original = torch.amp.GradScaler.load_state_dict
    monkeypatch.setattr(torch.amp.GradScaler, "load_state_dict",
                        lambda self, s: (loaded.append(dict(s)), original(self, s))[1])
    resumed = train(_options(tmp_path, steps=4, eval_every=2, precision="fp16", resume=True))
    assert loaded == [state]
    after = torch.load(resumed.checkpoint / "trainer.pt", weights_only=True)["scaler"]
    assert after["_growth_tracker"] == 4                                      # counted on, not from 0
    assert json.loads((resumed.checkpoint / "config.json").read_text())["training"]["precision"] == "fp16"


@pytest.mark.parametrize("args, message", [
    (["--lr", "0.001"], "error: --lr is the peak rate of --lr-schedule cosine, linear or constant; the noam "
                        "schedule (the default) is scaled by --lr-factor instead"),
    (["--lr-schedule", "cosine", "--steps", "100", "--lr-factor", "2"],
     "error: --lr-factor scales the noam schedule; --lr-schedule cosine takes its peak rate as --lr"),
    (["--lr-schedule", "linear", "--minutes", "1"],
     "error: --lr-schedule linear decays over the whole run: give --steps (--minutes alone does not say when "
     "the run ends)"),
    (["--lr-schedule", "cosine", "--steps", "100"],
     "error: --warmup 200 leaves nothing of --steps 100 for the cosine decay; give a smaller --warmup"),
    (["--lr-schedule", "step"], "error: --lr-schedule 'step' is not one of noam, cosine, linear, constant"),
    (["--grad-accum", "0"], "error: --grad-accum must be at least 1, got 0"),
    (["--keep", "0"], "error: --keep must be at least 1, got 0"),
    (["--save-every", "0"], "error: --save-every must be at least 1, got 0"),
    (["--clip", "-1"], "error: --clip must be a finite number at least 0 (0: off), got -1.0"),
    (["--weight-decay", "nan"], "error: --weight-decay must be a finite number at least 0, got nan"),
])
def test_controls_that_do_not_go_together_are_refused_in_one_line(tmp_path, args, message):
    res = runner.invoke(app, ["train", "--task", "reverse", *args, "--out", str(tmp_path / "run")])
    assert res.exit_code == 2, res.output
    assert res.output.strip().splitlines() == [message]


def test_grad_accum_of_the_masked_lm_steps_like_the_whole_batch(tmp_path):
    from examprep.train.mlm import train_mlm

    corpus = tmp_path / "pairs.tsv"
    corpus.write_text("".join(f"the cat {w} the mat\tle chat {w} le tapis\n"
                              for w in ("sat on", "saw", "ran to", "lay on", "looked at", "slept by")), encoding="utf-8")
    runs = []
    for n in (1, 3):
        o = TrainOptions(arch="encoder-only", objective="mlm", corpus=str(corpus), tokens="word", heldout=0.2,
                         d_model=16, heads=2, d_ff=32, dropout=0.0, steps=2, eval_every=2, threads=1, grad_accum=n,
                         out=str(tmp_path / f"mlm{n}"))
        runs.append(train_mlm(o))
    assert runs[1].losses == pytest.approx(runs[0].losses, rel=1e-6)
    a, b = (checkpoint.load(r.run_dir).model for r in runs)
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        torch.testing.assert_close(q, p, rtol=0, atol=1e-6, msg=name)
    best = json.loads((runs[0].run_dir / "best" / "config.json").read_text())["best"]
    assert best["metric"] == "masked_accuracy" and best["step"] == 2


@pytest.mark.slow
def test_grad_accum_under_two_torchrun_processes(tmp_path):
    # DDP averages the gradients once, after the last micro-batch; each micro-batch's loss sum is
    # divided by the global batch's taught tokens times the processes, as without accumulation
    import os
    import subprocess

    from .helpers import PYTHON, REPO
    from .test_distributed import COMMON, _losses

    one = runner.invoke(app, [*COMMON, "--out", str(tmp_path / "one")])
    assert one.exit_code == 0, one.output
    two = subprocess.run([PYTHON, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                          "-m", "examprep", *COMMON, "--grad-accum", "2", "--out", str(tmp_path / "two")],
                         cwd=REPO, env={**os.environ, "OMP_NUM_THREADS": "1"}, capture_output=True, text=True,
                         timeout=300)
    assert two.returncode == 0, two.stdout + two.stderr
    assert _losses(tmp_path / "two") == pytest.approx(_losses(tmp_path / "one"), rel=1e-5)
    a, b = checkpoint.load(tmp_path / "one").model, checkpoint.load(tmp_path / "two").model
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        torch.testing.assert_close(q, p, rtol=1e-3, atol=3e-4, msg=name)      # as test_distributed's bound
