"""`examprep topics` and `examprep generate`: the problem generators and fresh problems."""

import os
from typing import Optional

import typer

from examprep.errors import ParamError, missing_extra

app = typer.Typer()


@app.command()
def topics(as_json: bool = typer.Option(False, "--json", help="Print the topics as JSON."),
           answers: Optional[str] = typer.Option(
               None, "--answers", metavar="TOPIC",
               help="The answers a question file's parts may name for a solve TOPIC, with their known mistakes "
                    "(as `examprep solve --list TOPIC`)."),
           no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour.")) -> None:
    """List the problem generators: name, title, syllabus item and levels."""
    from examprep.render import terminal

    if answers is not None:
        from examprep import generators, solve

        topic = generators.topic_for_answers(answers)
        if topic.name != answers.strip().lower():
            typer.echo(f"note: {answers} is a generator; its parts' answers are those of the solve topic "
                       f"{topic.name}", err=True)
        if as_json:
            typer.echo(solve.answers_json(topic))
        else:
            terminal.print_topic_answers(topic, no_color=no_color)
        return
    from examprep import generators

    gens = generators.all_generators()
    if as_json:
        typer.echo(generators.catalogue_json(gens))
    else:
        terminal.print_generators(gens, no_color=no_color)


@app.command()
def generate(
    topic: list[str] = typer.Argument(..., help="One or more topics (see `examprep topics`) or question files "
                                                "(FILE.toml, see docs/authoring.md, \"Writing your own questions\")."),
    difficulty: int = typer.Option(1, "--difficulty", "-d", help="Level 1 (easiest) to 3."),
    seed: Optional[int] = typer.Option(None, "--seed", "-s", help="Seed (random when omitted; printed with each problem)."),
    count: int = typer.Option(1, "--count", "-n", help="Problems per topic (seeds seed, seed+1, …)."),
    calculator_free: bool = typer.Option(False, "--calculator-free", help="Exact answers that need no calculator."),
    solution: bool = typer.Option(False, "--solution", help="Show the worked solution and the answers."),
    as_json: bool = typer.Option(False, "--json", help="Print the Problems as JSON (one array)."),
    markdown: bool = typer.Option(False, "--markdown", help="Print Markdown with LaTeX math."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
    key: Optional[str] = typer.Option(None, "--key", help="Also write the answer key (JSON) for `examprep grade`."),
    template: Optional[str] = typer.Option(None, "--template", help="Also write a TOML answer file for students to fill."),
    checkpoint: Optional[str] = typer.Option(None, "--checkpoint", metavar="DIR",
                                             help="A trained model, for the topics that need one (attention-from-model, "
                                                  "gru-from-model, additive-attention-from-model)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --key or --template file."),
    show: bool = typer.Option(False, "--show", help="With --key or --template: print the problems too "
                                                    "(without it, one line each: title, level, seed, points)."),
) -> None:
    """Generate fresh, hand-computable problems with worked solutions."""
    import secrets                              # with hashlib and random: not for the help screen

    from examprep import keys
    from examprep.sources import build_many

    if as_json and markdown:                    # one output format on stdout: JSON alone was printed
        raise ParamError("--json and --markdown: choose one (each prints the problems in its own format)")
    seed = secrets.randbelow(1_000_000) if seed is None else seed
    keys.check_outputs(key=key, template=template, force=force,      # before the work
                       inputs=[t for t in topic if os.path.isfile(t)])
    try:
        problems = build_many(topic, seed=seed, count=count, difficulty=difficulty, calculator_free=calculator_free,
                              checkpoint=checkpoint)
    except ImportError as err:            # a topic that reads a trained model, on the base install
        missing = missing_extra(err, f"examprep generate {' '.join(topic)}")
        if missing is None:
            raise
        raise missing from None
    for path in keys.save(problems, key=key, template=template, title=", ".join(topic), force=force,
                          meta={"topics": topic, "seed": seed, "difficulty": problems[0].difficulty}):
        typer.echo(f"wrote {path}", err=True)
    numbered = len(problems) > 1
    if (key or template) and not (show or solution or as_json or markdown):     # the files are the point
        from examprep.render import terminal

        for i, p in enumerate(problems):
            terminal.print_problem_line(p, number=i + 1 if numbered else None)
    elif as_json:
        import json

        typer.echo(json.dumps([p.to_dict() for p in problems], ensure_ascii=False))
    elif markdown:
        from examprep.render.markdown import problem as problem_markdown

        typer.echo("\n".join(problem_markdown(p, solution=solution, number_=i + 1 if numbered else None)
                             for i, p in enumerate(problems)))
    else:
        from examprep.render import terminal

        for i, p in enumerate(problems):
            terminal.print_problem(p, solution=solution, no_color=no_color, number=i + 1 if numbered else None)
