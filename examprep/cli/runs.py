"""`examprep runs`: compare runs by their log.jsonl, as curves in a PNG or as a table (the work is
in examprep.train.curves; neither torch nor, without --out, matplotlib is imported)."""

import os
from pathlib import Path
from typing import Optional

import typer

from examprep.errors import ExamprepError
from examprep.fileio import InputError, OutputError, atomic_write_bytes, check_output_file

app = typer.Typer()


@app.command()
def runs(
    run_dirs: list[str] = typer.Argument(..., metavar="RUN...",
                                         help="Run directories of `examprep train` or `examprep finetune`."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="FILE.png",
                                       help="Draw the curves into this PNG [default: a table on the terminal]."),
    metric: Optional[list[str]] = typer.Option(
        None, "--metric", metavar="NAME",
        help="A panel to draw (repeatable): loss, nll, lr, tokens_per_s or an evaluation's field such as "
             "heldout_loss, perplexity, exact_match, bleu [default: loss, heldout_loss, perplexity and the task metric]."),
    force: bool = typer.Option(False, "--force", help="Replace --out if it exists."),
) -> None:
    """Compare runs: the curves of their log.jsonl (training loss and NLL, held-out loss, perplexity,
    the task metric) drawn into a PNG, or a table of each run's last and best values."""
    from examprep.train.curves import figure, png_bytes, read_run, table
    from examprep.train.runlog import RunLogError

    if metric and out is None:
        raise ExamprepError("--metric chooses the panels of --out FILE.png; the table shows every run's summary")
    if out is not None:
        if out.suffix.lower() != ".png":
            raise OutputError(f"--out {out}: expected a .png file name")
        check_output_file(out, "--out", force=force)
    read, bad, seen = [], [], {}
    for run_dir in run_dirs:
        same = os.path.realpath(Path(run_dir).parent if Path(run_dir).name == "log.jsonl" else run_dir)
        if same in seen:                # one run named twice: one row, one curve (two of a colour misled)
            typer.echo(f"warning: {run_dir} is {seen[same]} again; shown once", err=True)
            continue
        seen[same] = run_dir
        try:
            read.append(read_run(run_dir))
        except RunLogError as err:
            bad.append(str(err))
    if not read and len(bad) == 1:
        raise InputError(bad[0])
    for problem in bad:                 # each unreadable run in one line; the others are still shown
        typer.echo(f"warning: skipped {problem}", err=True)
    if not read:
        raise InputError(f"none of the {len(bad)} runs could be read (above)")
    if out is not None:
        fig = figure(read, metric)
        atomic_write_bytes(out, png_bytes(fig))
        panels = len(fig.axes)
        typer.echo(f"wrote {out} ({panels} panel{'s' * (panels > 1)}, {len(read)} run{'s' * (len(read) > 1)})")
    else:
        from rich.console import Console

        Console(width=80, highlight=False).print(table(read))
    if bad:
        raise InputError(f"{len(bad)} of {len(run_dirs)} runs could not be read (above); the other "
                         f"{len(read)} {'are' if len(read) > 1 else 'is'} shown")
