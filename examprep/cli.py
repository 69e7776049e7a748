"""The `examprep` command line. Thin: each command parses options and calls one function.

Heavy modules (numpy, sympy, torch) are imported inside the commands, never at start-up, so
`examprep --help` stays fast.
"""
from __future__ import annotations

import sys
from typing import Optional

import typer

from examprep import __version__
from examprep.errors import ExamprepError

app = typer.Typer(
    name="examprep",
    help="Practise, print and grade the hand computations of a deep-learning course.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def fail(err: ExamprepError) -> "typer.Exit":
    """Print a user error on one line to stderr and return the Exit to raise."""
    typer.echo(f"error: {err}", err=True)
    return typer.Exit(err.exit_code)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"examprep {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Practise, print and grade the hand computations of a deep-learning course."""


@app.command()
def solve(
    topic: Optional[str] = typer.Argument(None, help="Engine topic, e.g. gru-cell (see --list)."),
    params: Optional[str] = typer.Option(None, "--params", "-p",
                                         help="Parameters as a JSON object, or @FILE to read them from a file."),
    as_json: bool = typer.Option(False, "--json", help="Print answer, steps and conventions as JSON."),
    batch: bool = typer.Option(False, "--batch",
                               help='Read {"id","topic","params"} JSON lines on stdin; write one answer line each.'),
    list_topics: bool = typer.Option(False, "--list", help="List the topics with their parameters and defaults."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
) -> None:
    """Compute an answer with its worked steps, straight from the numeric engine."""
    from examprep import solve as solver
    from examprep.render import terminal

    try:
        if list_topics:
            if as_json:
                typer.echo(solver.topics_json())
            else:
                terminal.print_topic_list(solver.TOPICS, no_color=no_color)
            return
        if batch:
            if topic is not None or params is not None:
                raise ExamprepError("--batch reads topics and params from stdin; give no TOPIC or --params")
            rejected = solver.run_batch(sys.stdin, sys.stdout)
            raise typer.Exit(1 if rejected else 0)
        if topic is None:
            raise ExamprepError("missing TOPIC: give a topic (see `examprep solve --list`) or --batch")
        solution = solver.solve(topic, solver.read_params(params))
        if as_json:
            typer.echo(solver.to_json(solution))
        else:
            terminal.print_solution(solution, no_color=no_color)
    except ExamprepError as err:
        raise fail(err)


def _register_plugins() -> None:
    # Command groups that live beside their own package (the trainer keeps torch out of here).
    from examprep import cli_train

    cli_train.register(app)


_register_plugins()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
