"""What the trainer shows while it runs: a rich progress bar and one line per evaluation.

The trainer talks to a `Reporter`; the base class shows nothing (tests, other ranks), `RichReporter`
draws the bar on stderr. The bar counts steps when --steps is given, else seconds of training.
"""
from __future__ import annotations

import time
from typing import Optional

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from examprep.document import Heatmap
from examprep.render.terminal import block_renderable, console as make_console


def describe_metrics(metrics: dict) -> str:
    if "masked_accuracy" in metrics:                     # a masked LM (examprep.train.mlm)
        return (f"masked-token acc {100 * metrics['masked_accuracy']:.2f}% · loss {metrics['masked_loss']:.3f} "
                f"on {metrics['masked_tokens']:,} masked tokens of {metrics['sentences']:,} "
                f"{metrics.get('split', 'held-out')} sentences")
    parts = [f"token acc {100 * metrics['token_accuracy']:.2f}%",
             f"exact {100 * metrics['exact_match']:.2f}%"]
    if "bleu" in metrics:
        parts.append(f"BLEU {metrics['bleu']:.1f}")
    if "chrf" in metrics:
        parts.append(f"chrF {metrics['chrf']:.1f}")
    if "heldout_loss" in metrics:                        # unsmoothed, per target token (the run log's)
        parts.append(f"loss {metrics['heldout_loss']:.3f} (ppl {metrics['perplexity']:.2f})")
    where = f"{metrics['pairs']:,} {metrics.get('split', 'held-out')} pairs"
    if metrics.get("sources", metrics["pairs"]) != metrics["pairs"]:
        where += f" ({metrics['sources']:,} sources)"
    return " · ".join(parts) + f" on {where}"


def describe_best(run_dir, best: dict) -> str:
    """The summary's line on RUN/best: which step and metric it holds."""
    name = {"exact_match": "exact match", "bleu": "BLEU", "masked_accuracy": "masked-token accuracy"}.get(
        best["metric"], best["metric"])
    value = f"{best['value']:.1f}" if best["metric"] == "bleu" else f"{100 * best['value']:.2f}%"
    return f"best: {run_dir}/best (step {best['step']:,}, {name} {value})"


class Reporter:
    """Receives the trainer's events and shows nothing."""

    def start(self, title: str, total_steps: Optional[int], total_seconds: Optional[float],
              first_step: int) -> None: ...

    def step(self, step: int, train_seconds: float, loss: float, tokens_per_s: float,
             mfu: Optional[float], lr: float) -> None: ...

    def evaluation(self, step: int, train_seconds: float, metrics: dict) -> None: ...

    def note(self, text: str) -> None: ...

    def close(self) -> None: ...


class RichReporter(Reporter):
    """A live bar on a terminal; elsewhere (a log file, torchrun's pipes) a status line every
    `log_seconds` seconds instead."""

    def __init__(self, console=None, log_seconds: float = 10.0):
        self.console = console or Console(stderr=True)
        self.progress = None
        self.started = False          # step() does nothing before start()
        self.last_eval = ""
        self.clock, self.log_seconds = time.monotonic, log_seconds
        self.last_log = self.clock()

    def start(self, title, total_steps, total_seconds, first_step):
        self.by_steps = total_steps is not None
        self.started = True
        if not self.console.is_terminal:
            # No live bar: rich would print its last frame at the end, cut to the console's width
            # with "…"; the plain status lines of step() say the same in full.
            return
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(bar_width=24),
            TextColumn("{task.fields[where]}"), TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(), console=self.console, transient=False)
        total = total_steps if self.by_steps else total_seconds
        self.task = self.progress.add_task(title, total=total,
                                           completed=first_step if self.by_steps else 0,
                                           where="", stats="starting…")
        self.progress.start()

    def step(self, step, train_seconds, loss, tokens_per_s, mfu, lr):
        if not self.started:
            return
        stats = f"loss {loss:.3f} · {tokens_per_s / 1e3:,.1f}k tok/s"
        if mfu is not None:
            stats += f" · MFU {100 * mfu:.1f}%"
        stats += f" · lr {lr:.2e}"
        if self.last_eval:
            stats += f" · {self.last_eval}"
        where = f"step {step:,} · {train_seconds:.0f}s"
        if self.progress is not None:
            self.progress.update(self.task, completed=step if self.by_steps else train_seconds, where=where,
                                 stats=stats)
        elif self.clock() - self.last_log >= self.log_seconds:
            self.last_log = self.clock()
            self.note(f"{where}: {stats}")

    def evaluation(self, step, train_seconds, metrics):
        self.last_eval = f"exact {100 * metrics['exact_match']:.1f}%" if "exact_match" in metrics \
            else f"masked {100 * metrics['masked_accuracy']:.1f}%"
        if "bleu" in metrics:
            self.last_eval += f" · BLEU {metrics['bleu']:.1f}"
        self.note(f"step {step:,} ({train_seconds:.1f}s): {describe_metrics(metrics)}")

    def note(self, text):
        console = self.progress.console if self.progress is not None else self.console
        console.print(text, soft_wrap=True, markup=False, highlight=False)

    def close(self):
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def summary(result) -> str:
    """What a finished `train` run did, in a few lines (for the terminal)."""
    why = {"steps": "reached --steps", "time": "used its time", "goal": "reached the goal",
           "interrupted": "interrupted"}[result.stopped]
    lines = [f"stopped at step {result.steps:,} ({why}) after {result.train_seconds:.1f} s of training "
             f"({result.wall_seconds:.1f} s with evaluation), {result.tokens_per_second / 1e3:,.1f}k tokens/s"]
    if getattr(result, "compile_seconds", 0.0):
        lines.append(f"compiling took {result.compile_seconds:.1f} s, not counted as training (nor in --minutes)")
    if result.evals:
        last = result.evals[-1]
        if last.get("step", result.steps) == result.steps:
            lines.append(f"held-out: {describe_metrics(last)}")
        else:       # stopped (Ctrl-C) between evaluations: the last one measured an earlier model
            lines.append(f"last evaluation, at step {last['step']:,} (not at step {result.steps:,}): "
                         f"{describe_metrics(last)}")
    if result.goal is not None:
        if result.goal_step is not None:
            lines.append(f"goal {100 * result.goal:.1f}% exact match reached at step {result.goal_step:,} "
                         f"after {result.goal_seconds:.1f} s of training")
        else:
            lines.append(f"goal {100 * result.goal:.1f}% exact match not reached")
    if result.checkpoint is not None:
        lines.append(f"checkpoint: {result.checkpoint}")
        if getattr(result, "best", None):
            lines.append(describe_best(result.run_dir, result.best))
        if result.stopped == "interrupted":
            lines.append(f"continue with: examprep train --out {result.run_dir} --resume")
        else:
            lines.append(f"try it: examprep translate --checkpoint {result.run_dir} \"...\"")
    return "\n".join(lines)


def print_attention(view, console=None) -> None:
    """The attention weights as examprep's terminal heatmap, after a title line: one row per output
    token (the step that produced it), one column per source token. The heatmap fits the console's
    width: two decimals, whole percentages or one shade character per source token."""
    def label(tok: str) -> str:                       # word tokens carry their leading space
        return tok.strip() or "␣"

    console = console or make_console()
    console.print(f"{view.layer} (mean over heads): rows = output tokens, columns = source tokens",
                  soft_wrap=True, markup=False, highlight=False)
    heatmap = Heatmap("attention", [[min(max(float(w), 0.0), 1.0) for w in row] for row in view.weights],
                      [label(t) for t in view.output_tokens], [label(t) for t in view.source_tokens])
    console.print(block_renderable(heatmap))
