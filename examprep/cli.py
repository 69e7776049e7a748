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


def int_option(name: str, text: str) -> int:
    """An integer option parsed by us, so a bad value gets our one-line error (exit 2)."""
    try:
        return int(text.strip())
    except ValueError:
        raise ExamprepError(f"{name}: expected an integer, got {text!r}") from None


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
        raise fail(err) from None


@app.command()
def topics(as_json: bool = typer.Option(False, "--json", help="Print the topics as JSON."),
           no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour.")) -> None:
    """List the problem generators: name, title, syllabus item and levels."""
    from examprep import generators
    from examprep.render import terminal

    gens = generators.all_generators()
    if as_json:
        import json

        typer.echo(json.dumps([{"topic": g.name, "title": g.title, "syllabus": g.syllabus, "levels": list(g.levels),
                                "version": g.version, "calculator_free": g.calculator_free,
                                "requires": list(g.requires)}
                               for g in gens.values()], ensure_ascii=False))
    else:
        terminal.print_generators(gens, no_color=no_color)


@app.command()
def generate(
    topic: list[str] = typer.Argument(..., help="One or more topics (see `examprep topics`)."),
    difficulty: str = typer.Option("1", "--difficulty", "-d", help="Level 1 (easiest) to 3."),
    seed: Optional[str] = typer.Option(None, "--seed", "-s", help="Seed (random when omitted; printed with each problem)."),
    count: str = typer.Option("1", "--count", "-n", help="Problems per topic (seeds seed, seed+1, …)."),
    calculator_free: bool = typer.Option(False, "--calculator-free", help="Exact answers that need no calculator."),
    solution: bool = typer.Option(False, "--solution", help="Show the worked solution and the answers."),
    as_json: bool = typer.Option(False, "--json", help="Print the Problems as JSON (one array)."),
    markdown: bool = typer.Option(False, "--markdown", help="Print Markdown with LaTeX math."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
    key: Optional[str] = typer.Option(None, "--key", help="Also write the answer key (JSON) for `examprep grade`."),
    template: Optional[str] = typer.Option(None, "--template", help="Also write a TOML answer file for students to fill."),
    checkpoint: Optional[str] = typer.Option(None, "--checkpoint", metavar="DIR",
                                             help="A trained model, for topics that need one (attention-from-model)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --key or --template file."),
) -> None:
    """Generate fresh, hand-computable problems with worked solutions."""
    import secrets

    from examprep import generators
    from examprep.render import markdown as md, terminal

    try:
        seed_n = secrets.randbelow(1_000_000) if seed is None else int_option("--seed", seed)
        problems = generators.build_many(topic, seed=seed_n, count=int_option("--count", count),
                                         difficulty=int_option("--difficulty", difficulty),
                                         calculator_free=calculator_free,
                                         options={"checkpoint": checkpoint} if checkpoint else None)
        if key is not None or template is not None:
            from examprep import keys

            for path in keys.save(problems, key=key, template=template, title=", ".join(topic), force=force,
                                  meta={"topics": topic, "seed": seed_n, "difficulty": problems[0].difficulty}):
                typer.echo(f"wrote {path}", err=True)
    except ExamprepError as err:
        raise fail(err) from None
    if as_json:
        import json

        typer.echo(json.dumps([p.to_dict() for p in problems], ensure_ascii=False))
    elif markdown:
        typer.echo("\n".join(md.problem(p, solution=solution, number_=i + 1 if len(problems) > 1 else None)
                             for i, p in enumerate(problems)))
    else:
        for i, p in enumerate(problems):
            terminal.print_problem(p, solution=solution, no_color=no_color, number=i + 1 if len(problems) > 1 else None)


def _register_plugins() -> None:
    # Command groups that live beside their own feature (the trainer keeps torch out of here).
    # Each module's register() adds typer commands whose heavy imports happen inside them.
    from examprep import cli_grade, cli_quiz, cli_reference, cli_sheet, cli_train

    for module in (cli_grade, cli_sheet, cli_quiz, cli_train, cli_reference):
        module.register(app)


_register_plugins()


def main() -> None:
    try:
        app()
    except OSError as err:
        # the last resort for file-system errors a command did not map itself (a file name too long
        # for the file system, a vanished directory): one line, like every other user error
        import errno
        import sys

        if err.errno == errno.EPIPE:
            raise
        where = f"{err.filename}: " if err.filename else ""
        print(f"error: {where}{err.strerror or err}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
