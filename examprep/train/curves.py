"""`examprep runs`: the curves of one or more runs' log.jsonl (examprep.train.runlog) drawn with
matplotlib (Agg, no display) into one PNG, and the summary table of the same runs for a terminal.

Panels, one per quantity against the step, every run in its own colour in each:
    loss            the training loss as optimised (solid) and its unsmoothed NLL (dashed)
    heldout_loss    teacher-forced cross-entropy per target token on the evaluation set
    perplexity      exp(heldout_loss), on a logarithmic axis
    METRIC          each task metric the runs name (exact_match, bleu, masked_accuracy)
--metric chooses others: lr, tokens_per_s (per step) or any number of an evaluation (token_accuracy,
chrf, ...). Imports neither torch nor, until a figure is drawn, matplotlib.
"""
from __future__ import annotations

import io
import math
import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from examprep.errors import ExamprepError, MissingExtraError
from examprep.train.runlog import LOG, STEP_FIELDS, is_number, read_log

DEFAULT_PANELS = ("loss", "heldout_loss", "perplexity")
STEP_PANELS = ("loss", "nll", "lr", "tokens_per_s")
TITLES = {"loss": "training loss (solid) and NLL (dashed)", "nll": "training NLL (unsmoothed)",
          "lr": "learning rate", "tokens_per_s": "tokens/s", "heldout_loss": "held-out loss (NLL per token)",
          "perplexity": "held-out perplexity", "exact_match": "exact match", "bleu": "BLEU",
          "masked_accuracy": "masked-token accuracy", "token_accuracy": "token accuracy", "chrf": "chrF"}
WIDTH_IN, ROW_IN, DPI = 11.0, 3.4, 100        # two panels a row: 1100 px wide, 340 px a row
INSTALL_TRAIN = "pip install -e '.[train]'"


@dataclass
class Run:
    """One run's log: its name (the path as given), its step records and its evaluations
    ({"step", **eval})."""

    name: str
    steps: list[dict]
    evals: list[dict]

    @property
    def metric(self) -> Optional[str]:
        """The task metric its evaluations name (the last one's), None for a log without one."""
        named = [e["metric"] for e in self.evals if isinstance(e.get("metric"), str)]
        return named[-1] if named else None


def read_run(path: Path | str) -> Run:
    """A run directory's log, checked (RunLogError naming the file and line)."""
    records = read_log(path)
    name = os.fspath(path)
    if Path(path).name == LOG and not Path(path).is_dir():      # RUN/log.jsonl given: the run is RUN
        name = os.path.dirname(name) or "."
    return Run(name, [r for r in records if "eval" not in r],
               [{"step": r["step"], **r["eval"]} for r in records if "eval" in r])


def labels(runs: Sequence[Run]) -> tuple[str, list[str]]:
    """(the directory every run is in, or "", each run's name within it): runs/lora and runs/full
    are shown as lora and full, under runs/. One run keeps its path as given."""
    parents = [os.path.dirname(os.path.normpath(r.name)) for r in runs]
    try:
        common = os.path.commonpath(parents) if len(runs) > 1 and all(parents) else ""
    except ValueError:                                 # absolute and relative paths mixed
        common = ""
    if not common:
        return "", [r.name for r in runs]
    return common, [os.path.relpath(os.path.normpath(r.name), common) for r in runs]


def panels_for(runs: Sequence[Run], metrics: Optional[Sequence[str]] = None) -> list[str]:
    """The panels to draw: `metrics` as given (ExamprepError for one no run logs), or the default
    panels and every run's task metric."""
    if metrics:
        known = set(STEP_FIELDS[1:]) | {k for r in runs for e in r.evals for k, v in e.items() if _number(v)}
        for m in metrics:
            if m not in known:
                raise ExamprepError(f"--metric {m}: no run logs it; choose from {', '.join(sorted(known - {'step'}))}")
        return list(dict.fromkeys(metrics))
    tasks = [r.metric for r in runs if r.metric is not None]
    return list(dict.fromkeys([*DEFAULT_PANELS, *tasks]))


def _number(value) -> bool:
    return is_number(value) and math.isfinite(value)


def _series(run: Run, key: str) -> tuple[list[int], list[float]]:
    rows = run.steps if key in STEP_PANELS else run.evals
    pairs = [(r["step"], r[key]) for r in rows if _number(r.get(key))]
    return [s for s, _ in pairs], [v for _, v in pairs]


def figure(runs: Sequence[Run], metrics: Optional[Sequence[str]] = None):
    """The matplotlib Figure of `runs`: one axes per panel (panels_for), two a row, the runs in
    the legend of the first. MissingExtraError where matplotlib is not installed."""
    panels = panels_for(runs, metrics)
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.figure import Figure
        from matplotlib.ticker import LogFormatter
    except ImportError:
        raise MissingExtraError(f"examprep runs --out needs matplotlib (not installed): {INSTALL_TRAIN}") from None
    columns = 1 if len(panels) == 1 else 2
    rows = math.ceil(len(panels) / columns)
    fig = Figure(figsize=(WIDTH_IN, ROW_IN * rows), dpi=DPI, layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    colours = [f"C{i % 10}" for i in range(len(runs))]
    common, names = labels(runs)
    for ax, key in zip(axes, panels):
        ax.set_title(TITLES.get(key, key), fontsize=10)
        ax.set_xlabel("step", fontsize=9)
        ax.tick_params(labelsize=8)
        ax.grid(True, alpha=0.3)
        for run, name, colour in zip(runs, names, colours):
            steps, values = _series(run, key)
            if not steps:
                continue
            marker = "o" if key not in STEP_PANELS and len(steps) <= 30 else None
            ax.plot(steps, values, color=colour, linewidth=1.2, marker=marker, markersize=3, label=name)
            if key == "loss":
                nll_steps, nll = _series(run, "nll")
                ax.plot(nll_steps, nll, color=colour, linewidth=1.0, linestyle="--")
        if key == "perplexity" and ax.has_data():
            ax.set_yscale("log")
            for axis_set in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):   # 2, 3, 5, not 2×10⁰
                axis_set(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
            ax.tick_params(which="both", labelsize=8)
    for ax in axes[len(panels):]:
        fig.delaxes(ax)
    title = f"runs in {common}{os.sep}" if common else ""
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncols=min(len(runs), 4),
               fontsize=9, frameon=False, title=title or None, title_fontsize=9, alignment="center")
    return fig


def png_bytes(fig) -> bytes:
    """The figure as PNG bytes (no timestamp or software version in the file's metadata)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def summary(run: Run) -> dict:
    """What a run's table row shows: steps, the last training loss and NLL, the last held-out loss
    and perplexity, the task metric's last and best value (highest), the median tokens/s."""
    last_eval = run.evals[-1] if run.evals else {}
    metric = run.metric
    values = [e[metric] for e in run.evals if metric and _number(e.get(metric))]
    rates = [r["tokens_per_s"] for r in run.steps if _number(r.get("tokens_per_s"))]
    return {"run": run.name, "steps": max((r["step"] for r in run.steps), default=0),
            "loss": run.steps[-1].get("loss") if run.steps else None,
            "nll": run.steps[-1].get("nll") if run.steps else None,
            "heldout_loss": last_eval.get("heldout_loss"), "perplexity": last_eval.get("perplexity"),
            "metric": metric, "last": values[-1] if values else None, "best": max(values) if values else None,
            "tokens_per_s": statistics.median(rates) if rates else None}


def table(runs: Sequence[Run]):
    """A rich Table of the runs' summaries, made to fit 80 columns: accuracies in percent, BLEU as
    sacrebleu gives it (0-100)."""
    from rich.table import Table

    common, names = labels(runs)
    t = Table(box=None, pad_edge=False, padding=(0, 1), title=f"runs in {common}{os.sep}" if common else None,
              title_justify="left")
    t.add_column("run", overflow="fold")
    for name in ("steps", "loss", "NLL", "held-out", "ppl"):
        t.add_column(name, justify="right", no_wrap=True)
    t.add_column("metric", no_wrap=True)
    for name in ("last", "best", "tok/s"):
        t.add_column(name, justify="right", no_wrap=True)
    for run, name in zip(runs, names):
        s = summary(run)
        t.add_row(name, f"{s['steps']:,}", _fmt(s["loss"]), _fmt(s["nll"]), _fmt(s["heldout_loss"]),
                  _fmt(s["perplexity"], 1), SHORT.get(s["metric"], s["metric"] or "-"),
                  _metric(s["metric"], s["last"]), _metric(s["metric"], s["best"]),
                  f"{s['tokens_per_s'] / 1e3:,.1f}k" if s["tokens_per_s"] is not None else "-")
    return t


SHORT = {"exact_match": "exact", "masked_accuracy": "masked", "bleu": "BLEU", "token_accuracy": "token acc"}


def _metric(name: Optional[str], value: Optional[float]) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if name in ("bleu", "chrf") else f"{100 * value:.1f}%"


def _fmt(value: Optional[float], digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if math.isfinite(value) else str(value)


__all__ = ["Run", "figure", "panels_for", "png_bytes", "read_run", "summary", "table"]
