"""What the trainer shows while it runs: a rich progress bar and one line per evaluation.

The trainer talks to a `Reporter`; the base class shows nothing (tests, other ranks), `RichReporter`
draws the bar on stderr. The bar counts steps when --steps is given, else seconds of training.
"""
from __future__ import annotations

from typing import Optional


def describe_metrics(metrics: dict) -> str:
    parts = [f"token acc {100 * metrics['token_accuracy']:.2f}%",
             f"exact {100 * metrics['exact_match']:.2f}%"]
    if "bleu" in metrics:
        parts.append(f"BLEU {metrics['bleu']:.1f}")
    return " · ".join(parts) + f" on {metrics['pairs']:,} held-out pairs"


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
    def __init__(self, console=None):
        from rich.console import Console

        self.console = console or Console(stderr=True)
        self.progress = None
        self.last_eval = ""

    def start(self, title, total_steps, total_seconds, first_step):
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.by_steps = total_steps is not None
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
        if self.progress is None:
            return
        stats = f"loss {loss:.3f} · {tokens_per_s / 1e3:,.1f}k tok/s"
        if mfu is not None:
            stats += f" · MFU {100 * mfu:.1f}%"
        stats += f" · lr {lr:.2e}"
        if self.last_eval:
            stats += f" · {self.last_eval}"
        self.progress.update(self.task, completed=step if self.by_steps else train_seconds,
                             where=f"step {step:,} · {train_seconds:.0f}s", stats=stats)

    def evaluation(self, step, train_seconds, metrics):
        self.last_eval = f"exact {100 * metrics['exact_match']:.1f}%"
        if "bleu" in metrics:
            self.last_eval += f" · BLEU {metrics['bleu']:.1f}"
        self.note(f"step {step:,} ({train_seconds:.1f}s): {describe_metrics(metrics)}")

    def note(self, text):
        if self.progress is not None:
            self.progress.console.print(text)
        else:
            self.console.print(text)

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
    if result.evals:
        lines.append(f"held-out: {describe_metrics(result.evals[-1])}")
    if result.goal is not None:
        if result.goal_step is not None:
            lines.append(f"goal {100 * result.goal:.1f}% exact match reached at step {result.goal_step:,} "
                         f"after {result.goal_seconds:.1f} s of training")
        else:
            lines.append(f"goal {100 * result.goal:.1f}% exact match not reached")
    if result.checkpoint is not None:
        lines.append(f"checkpoint: {result.checkpoint}")
        if result.stopped == "interrupted":
            lines.append(f"continue with: examprep train --out {result.run_dir} --resume")
        else:
            lines.append(f"try it: examprep translate --checkpoint {result.run_dir} \"...\"")
    return "\n".join(lines)


def print_attention(view, console=None) -> None:
    """The attention weights as a shaded table: one row per output token, one column per source token."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    table = Table(title=f"{view.layer} (mean over heads)", show_lines=False, box=None, pad_edge=False)
    table.add_column("out \\ in", style="bold")
    for tok in view.source_tokens:
        table.add_column(repr(tok)[1:-1] if tok.strip() != tok or not tok else tok, justify="center")
    for tok, row in zip(view.output_tokens, view.weights):
        cells = []
        for w in row:
            level = min(255, int(80 + 175 * w))
            cells.append(f"[on rgb({level // 3},{level // 3},{level})]{int(round(100 * w)):3d}[/]" if w >= 0.05
                         else f"{int(round(100 * w)):3d}")
        table.add_row(tok if tok.strip() == tok and tok else repr(tok)[1:-1], *cells)
    console.print(table)
