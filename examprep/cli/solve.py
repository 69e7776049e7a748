"""`examprep solve`: an answer and its worked steps, straight from the numeric engine."""

import sys
from typing import Optional

import typer

from examprep.errors import ExamprepError

app = typer.Typer()


@app.command()
def solve(
    topic: Optional[str] = typer.Argument(None, help="Engine topic, e.g. gru-cell (see --list)."),
    params: Optional[str] = typer.Option(None, "--params", "-p",
                                         help="Parameters as a JSON object, or @FILE to read them from a file."),
    as_json: bool = typer.Option(False, "--json", help="Print answer, steps and conventions as JSON."),
    batch: bool = typer.Option(False, "--batch",
                               help='Read {"id","topic","params"} JSON lines on stdin; write one answer line each.'),
    list_topics: bool = typer.Option(False, "--list", help="List the topics with their parameters and defaults; "
                                     "with a TOPIC, its answers and each one's known mistakes and ECF rule."),
    reference: bool = typer.Option(False, "--reference", help="Print the reference of every topic "
                                   "(docs/topics.md) as Markdown, written from the solve tables."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
) -> None:
    """Compute an answer with its worked steps, straight from the numeric engine."""
    from examprep import solve as solver
    from examprep.render import terminal

    if reference:
        if topic is not None or params is not None or batch or list_topics or as_json:
            raise ExamprepError("--reference prints every topic's reference as Markdown; give no TOPIC, --params, "
                                "--batch, --list or --json")
        from examprep.solve.reference import reference_markdown

        typer.echo(reference_markdown(), nl=False)
        return
    if list_topics and topic is not None:
        t = solver.get_topic(topic)
        if as_json:
            typer.echo(solver.answers_json(t))
        else:
            terminal.print_topic_answers(t, no_color=no_color)
        return
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
