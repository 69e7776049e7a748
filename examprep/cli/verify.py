"""`examprep verify`: the numeric engine against its torch references (examprep.verify)."""

from pathlib import Path
from typing import Optional

import typer

from examprep.errors import ExamprepError, check_seed

app = typer.Typer()


@app.command()
def verify(
    instances: int = typer.Option(50, "--instances", "-n", help="Random instances per topic."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random instances."),
    topic: list[str] = typer.Option([], "--topic", help="Only these topics (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
    checkpoint: Optional[Path] = typer.Option(
        None, "--checkpoint", metavar="DIR",
        help="Instead: check the engine's GRU/LSTM cells and attention against a trained rnn-seq2seq model "
             "on --instances held-out inputs of its data."),
) -> None:
    """Check the numeric engine against torch on random instances of every topic torch computes
    (or, with --checkpoint, against a trained RNN encoder–decoder's modules on real inputs)."""
    if instances < 1:
        raise ExamprepError(f"--instances: expected a positive integer, got {instances}")
    check_seed(seed)
    topic = list(dict.fromkeys(topic))           # each topic once, in the order given
    if checkpoint is not None and topic:
        raise ExamprepError("--topic: with --checkpoint the topics are the model's (its cells and attention); "
                            "give one or the other")
    from examprep.train.options import quiet_waiting_threads

    quiet_waiting_threads()
    from examprep.render.terminal import console
    from examprep.train.distributed import one_thread
    from examprep.verify import REFERENCES, verify as run_verify

    if checkpoint is not None:
        from examprep.verify._checkpoint import verify_checkpoint

        with console(no_color).status("checking the engine against the trained model…"), one_thread():
            rows = verify_checkpoint(checkpoint, instances, seed)
        _show(rows, as_json, f"engine vs the model {checkpoint} ({instances} held-out inputs)",
              instances, seed, no_color)
        raise typer.Exit(0 if all(r.passed for r in rows) else 1)
    unknown = [t for t in topic if t not in REFERENCES]
    if unknown:
        raise ExamprepError(f"--topic: {unknown[0]!r} has no torch reference (choose from {', '.join(sorted(REFERENCES))})")
    with console(no_color).status("checking the engine against torch…"), one_thread():
        rows = run_verify(instances, seed, topic or None)
    _show(rows, as_json, None, instances, seed, no_color)
    raise typer.Exit(0 if all(r.passed for r in rows) else 1)


def _show(rows, as_json: bool, title: Optional[str], instances: int, seed: int, no_color: bool) -> None:
    if as_json:
        import json

        typer.echo(json.dumps([{"topic": r.topic, "instances": r.instances, "max_abs_diff": r.max_abs_diff,
                                "max_rel_diff": r.max_rel_diff, "failures": r.failures, "passed": r.passed,
                                "first_failure": r.first_failure} for r in rows], default=str))
    else:
        from examprep.render.terminal import print_verify

        print_verify(rows, instances=instances, seed=seed, no_color=no_color, title=title)
