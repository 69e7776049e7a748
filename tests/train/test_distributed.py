"""torchrun: two processes on the CPU (gloo) train exactly what one process does with the same global batch."""
from __future__ import annotations

import os
import subprocess

import pytest
import torch
from typer.testing import CliRunner

from examprep.cli import app
from examprep.train import checkpoint
from examprep.train.trainer import RunLog

from .helpers import PYTHON, REPO

COMMON = ["train", "--task", "reverse", "--d-model", "32", "--layers", "2", "--heads", "4", "--d-ff", "64",
          "--dropout", "0", "--batch-tokens", "1500", "--steps", "10", "--warmup", "5", "--eval-every", "5",
          "--eval-size", "20", "--device", "cpu"]


def _run(args, out, timeout=300):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    res = subprocess.run([PYTHON, *args, *COMMON, "--out", str(out)], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=timeout)
    assert res.returncode == 0, res.stdout + res.stderr
    return res


def _losses(run_dir):
    return [r["loss"] for r in RunLog.read(run_dir) if "loss" in r]


def test_two_torchrun_processes_end_with_the_parameters_of_one_process(tmp_path):
    # the one-process run in this process (the command itself, through CliRunner): a subprocess
    # only added a third torch import to the test; the torchrun processes are what is tested
    one = CliRunner().invoke(app, [*COMMON, "--out", str(tmp_path / "one")])
    assert one.exit_code == 0, one.output
    two = _run(["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "examprep"],
               tmp_path / "two")
    assert two.stdout.count("stopped at step 10") == 1                     # rank 0 reports, once
    # The loss of every step is the global batch's: the same up to the order of the sums.
    one_losses, two_losses = _losses(tmp_path / "one"), _losses(tmp_path / "two")
    assert len(one_losses) == len(two_losses) == 10
    assert two_losses == pytest.approx(one_losses, rel=1e-5)
    assert one_losses[-1] < one_losses[0]
    one = checkpoint.load(tmp_path / "one").model
    two = checkpoint.load(tmp_path / "two").model
    halfway = checkpoint.load(tmp_path / "one" / "step-000005").model
    # Summing a batch in two halves rounds differently from summing it whole; AdamW divides each
    # gradient element by its own running size, so an element whose gradient is near zero can turn
    # that rounding into a visible step. Every element must agree closely, nearly all very closely.
    close = total = moved = 0
    for (name, p), q, p5 in zip(one.named_parameters(), two.parameters(), halfway.parameters()):
        torch.testing.assert_close(q, p, rtol=1e-3, atol=3e-4, msg=name)
        close += int(torch.isclose(q, p, rtol=1e-5, atol=1e-6).sum())
        total += p.numel()
        moved += int((p - p5).abs().gt(1e-4).sum())
    assert close / total > 0.995
    assert moved / total > 0.5                                             # training did move the weights
