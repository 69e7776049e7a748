"""RUN/log.jsonl, the one log every run writes (`train` seq2seq and RNN, `train --objective mlm`,
`finetune` LoRA and --full), and its optional TensorBoard mirror (RUN/tensorboard/).

One JSON object per line, appended as training goes (the schema, documented in docs/trainer.md,
"The run log"):

    {"step", "loss", "nll", "lr", "tokens_per_s"}            every step
    {"step", "eval": {"heldout_loss", "perplexity", "metric", METRIC, "train_seconds", "split", ...}}

loss: the training loss as optimised (label-smoothed where --label-smoothing > 0), per taught token;
nll: the unsmoothed cross-entropy per taught token of the same batch, from the same logits;
lr: the learning rate of the step; tokens_per_s: source + target tokens per second of training,
measured over the read-out window (one step on a CPU, ten on CUDA);
heldout_loss: teacher-forced cross-entropy per target token on the evaluation set (never smoothed),
perplexity = exp(heldout_loss); metric names the task metric, a field of the same object
(exact_match for tasks, bleu for corpora, masked_accuracy for the masked LM); train_seconds: training
time so far. Other fields (token_accuracy, chrf, pairs, …) are the evaluation's own.

This module imports neither torch nor tensorboard until a TensorBoard writer is opened.
"""
from __future__ import annotations

import json
import math
from importlib.util import find_spec
from pathlib import Path
from typing import Optional

from examprep.checkpoints.errors import WriteError
from examprep.errors import MissingExtraError
from examprep.fileio import InputError, read_user_text

LOG = "log.jsonl"
TENSORBOARD = "tensorboard"
STEP_FIELDS = ("step", "loss", "nll", "lr", "tokens_per_s")
INSTALL_TENSORBOARD = "pip install -e '.[tensorboard]'"


def check_tensorboard() -> None:
    """MissingExtraError (one line) where --tensorboard cannot be honoured: the package is missing.
    Found without importing it, so a command checks this before any work."""
    if find_spec("tensorboard") is None:
        raise MissingExtraError(f"--tensorboard needs the tensorboard package (not installed): {INSTALL_TENSORBOARD}")


def perplexity(loss: float) -> float:
    """exp(loss), the perplexity of a mean cross-entropy in nats; inf where exp overflows."""
    return math.exp(loss) if loss < 700 else math.inf


def step_record(step: int, loss: float, nll: float, lr: float, tokens_per_s: float) -> dict:
    """A step's line of the log."""
    return {"step": step, "loss": loss, "nll": nll, "lr": lr, "tokens_per_s": tokens_per_s}


def eval_record(step: int, train_seconds: float, metrics: dict, metric: str) -> dict:
    """An evaluation's line: `metrics` (which hold heldout_loss and the task metric named `metric`)
    with the perplexity, the metric's name and the training time added."""
    if metric not in metrics or "heldout_loss" not in metrics:
        raise KeyError(f"an evaluation's metrics need heldout_loss and {metric}, got {sorted(metrics)}")
    return {"step": step, "eval": {**metrics, "perplexity": perplexity(metrics["heldout_loss"]), "metric": metric,
                                   "train_seconds": train_seconds}}


class RunLog:
    """RUN/log.jsonl, appended by the main process as training goes; with tensorboard=True the
    same scalars also go to RUN/tensorboard/ through torch.utils.tensorboard.SummaryWriter
    (train/loss, train/nll, train/lr, train/tokens_per_s; eval/<field> for every number of an
    evaluation). A resumed run first drops the lines (and TensorBoard events) after its checkpoint's
    step, so the log is one curve; a fresh run starts both afresh."""

    def __init__(self, run_dir: Path, resumed_step: Optional[int], tensorboard: bool = False):
        self.path = run_dir / LOG
        self.writer = None
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
            if resumed_step is not None and self.path.exists():
                kept = [r for r in _records(self.path, read_user_text(self.path, error=RunLogError))
                        if r["step"] <= resumed_step]
                self.path.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
            elif resumed_step is None and self.path.exists():
                self.path.unlink()                # a fresh run in a directory without checkpoints
            if tensorboard:
                self.writer = _summary_writer(run_dir / TENSORBOARD, resumed_step)
            self.file = open(self.path, "a", encoding="utf-8")
        except OSError as err:
            raise WriteError(f"cannot write the training log {self.path}: {err.strerror}") from None

    def write(self, records: list[dict]) -> None:
        try:
            self.file.write("".join(json.dumps(r) + "\n" for r in records))
            self.file.flush()
        except OSError as err:
            raise WriteError(f"cannot write the training log {self.path}: {err.strerror}") from None
        if self.writer is not None:
            for r in records:
                scalars = ({f"eval/{k}": v for k, v in r["eval"].items()} if "eval" in r else
                           {f"train/{k}": v for k, v in r.items() if k != "step"})
                for tag, value in scalars.items():
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        self.writer.add_scalar(tag, value, r["step"])
            self.writer.flush()

    def close(self) -> None:
        self.file.close()
        if self.writer is not None:
            self.writer.close()

    @staticmethod
    def read(run_dir: Path | str) -> list[dict]:
        """The records of RUN/log.jsonl, checked as `examprep runs` reads them (read_log)."""
        return read_log(run_dir)


class RunLogError(InputError):
    """A run log that cannot be read: no log.jsonl, or a line that is not one of its records."""


def read_log(run: Path | str) -> list[dict]:
    """The records of RUN/log.jsonl (RUN may also name the file itself), checked line by line:
    RunLogError naming the file and the line that is not a JSON object with a whole positive
    "step" and either numbers (a step) or an "eval" object (an evaluation). Logs from before
    the nll and tokens_per_s fields read as they are."""
    run = Path(run)
    path = run if run.name == LOG and not run.is_dir() else run / LOG
    if not run.exists():
        raise RunLogError(f"{run}: no such run directory")
    if run.is_dir() and not path.exists():
        raise RunLogError(f"{run}: no {LOG} here (not a run directory of examprep train or finetune)")
    records = _records(path, read_user_text(path, error=RunLogError))
    if not records:
        raise RunLogError(f"{path}: no steps logged yet")
    return records


def _records(path: Path, text: str) -> list[dict]:
    """The records of a log's text, each checked (RunLogError naming the file and the line). A last
    line without its newline that is not JSON is the one being written when the run was killed
    (kill -9, a power cut): it is left out, as the resumed run will write that step again."""
    lines = text.splitlines()
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as err:
            if number == len(lines) and not text.endswith("\n"):
                break                                   # cut short by a kill while it was written
            raise RunLogError(f"{path}: line {number}: not JSON ({getattr(err, 'msg', err)})") from None
        problem = _record_problem(record)
        if problem:
            raise RunLogError(f"{path}: line {number}: {problem}")
        records.append(record)
    return records


def is_number(value) -> bool:
    """A JSON number of the log (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _record_problem(record) -> str:
    if not isinstance(record, dict):
        return f"expected a JSON object, got {type(record).__name__}"
    step = record.get("step")
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        return f"\"step\" must be a whole number of at least 0, got {step!r}"
    if "eval" in record:
        if not isinstance(record["eval"], dict):
            return "\"eval\" must be an object"
        return ""
    for name in STEP_FIELDS[1:]:
        if name in record and not is_number(record[name]):
            return f"\"{name}\" must be a number, got {record[name]!r}"
    if "loss" not in record:
        return "neither a step (\"loss\") nor an evaluation (\"eval\")"
    return ""


def _summary_writer(log_dir: Path, resumed_step: Optional[int]):
    check_tensorboard()
    if resumed_step is None and log_dir.is_dir():
        for old in log_dir.glob("events.out.tfevents.*"):      # a fresh run: no events of an earlier one
            old.unlink()
    from torch.utils.tensorboard import SummaryWriter

    # purge_step: TensorBoard hides the events of the abandoned steps after the checkpoint resumed
    return SummaryWriter(str(log_dir), purge_step=None if resumed_step is None else resumed_step + 1)


__all__ = ["LOG", "STEP_FIELDS", "RunLog", "RunLogError", "check_tensorboard", "eval_record", "is_number",
           "perplexity", "read_log", "step_record"]
