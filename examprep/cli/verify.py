"""`examprep verify`: the numeric engine against its torch references (examprep.verify)."""
from __future__ import annotations

import typer

app = typer.Typer()


@app.command()
def verify(
    instances: int = typer.Option(50, "--instances", "-n", help="Random instances per topic."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random instances."),
    topic: list[str] = typer.Option([], "--topic", help="Only these topics (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
) -> None:
    """Check the numeric engine against torch on random instances of every topic torch computes."""
    from examprep.errors import ExamprepError
    from examprep.train.options import quiet_waiting_threads

    if instances < 1:
        raise ExamprepError(f"--instances: expected a positive integer, got {instances}")
    if seed < 0:
        raise ExamprepError(f"--seed: expected an integer ≥ 0, got {seed}")
    topic = list(dict.fromkeys(topic))           # each topic once, in the order given
    quiet_waiting_threads()
    from examprep.render.terminal import console, print_verify
    from examprep.train.distributed import one_thread
    from examprep.verify import REFERENCES, verify as run_verify

    unknown = [t for t in topic if t not in REFERENCES]
    if unknown:
        raise ExamprepError(f"--topic: {unknown[0]!r} has no torch reference (choose from {', '.join(sorted(REFERENCES))})")
    with console(no_color).status("checking the engine against torch…"), one_thread():
        rows = run_verify(instances, seed, topic or None)
    if as_json:
        import json

        typer.echo(json.dumps([{"topic": r.topic, "instances": r.instances, "max_abs_diff": r.max_abs_diff,
                                "max_rel_diff": r.max_rel_diff, "failures": r.failures, "passed": r.passed,
                                "first_failure": r.first_failure} for r in rows], default=str))
    else:
        print_verify(rows, instances=instances, seed=seed, no_color=no_color)
    raise typer.Exit(0 if all(r.passed for r in rows) else 1)
