"""CLI commands of the reference model at work: `examprep verify` (engine vs torch).

torch is imported inside the commands only.
"""
from __future__ import annotations

import typer

from examprep.errors import ExamprepError


def verify(
    instances: int = typer.Option(50, "--instances", "-n", help="Random instances per topic."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random instances."),
    topic: list[str] = typer.Option([], "--topic", help="Only these topics (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
) -> None:
    """Check the numeric engine against torch on random instances of every topic torch computes."""
    from examprep.render.terminal import console

    if instances < 1:
        typer.echo(f"error: --instances: expected a positive integer, got {instances}", err=True)
        raise typer.Exit(2) from None
    try:
        from examprep.train.engine_reference import REFERENCES
        from examprep.train.verify import verify as run_verify
    except ImportError as err:
        typer.echo(f"error: verify needs torch ({err.name} is missing): pip install -e '.[train]'", err=True)
        raise typer.Exit(2) from None
    unknown = [t for t in topic if t not in REFERENCES]
    if unknown:
        typer.echo(f"error: --topic: {unknown[0]!r} has no torch reference (choose from {', '.join(sorted(REFERENCES))})",
                   err=True)
        raise typer.Exit(2) from None
    out = console(no_color)
    with out.status("checking the engine against torch…"):
        rows = run_verify(instances, seed, list(topic) or None)
    if as_json:
        import json

        typer.echo(json.dumps([{"topic": r.topic, "instances": r.instances, "max_abs_diff": r.max_abs_diff,
                                "max_rel_diff": r.max_rel_diff, "failures": r.failures, "passed": r.passed,
                                "first_failure": r.first_failure} for r in rows], default=str))
    else:
        from rich.table import Table

        table = Table(title=f"engine vs torch ({instances} random instances per topic, seed {seed})")
        for col, just in (("topic", "left"), ("instances", "right"), ("max |diff|", "right"),
                          ("max rel diff", "right"), ("result", "left")):
            table.add_column(col, justify=just)
        for r in rows:
            table.add_row(r.topic, str(r.instances), f"{r.max_abs_diff:.1e}", f"{r.max_rel_diff:.1e}",
                          "[green]pass[/]" if r.passed else f"[red]FAIL[/] ({r.failures})")
        out.print(table)
        for r in rows:
            if not r.passed:
                out.print(f"[red]{r.topic}[/]: first disagreement: {r.first_failure}", soft_wrap=True)
    raise typer.Exit(0 if all(r.passed for r in rows) else 1)


def register(app: typer.Typer) -> None:
    app.command()(verify)


__all__ = ["register", "ExamprepError"]
