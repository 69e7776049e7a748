"""The `examprep` command line. Thin: each command parses options and calls one function.

Heavy modules (numpy, sympy, torch) are imported inside the commands, never at start-up, so
`examprep --help` stays fast.

One error handler (``ExamprepGroup.main``) turns everything a user can cause into one line on
stderr: our own errors (``error: …``, their exit code), every value typer rejects
(``error: --opt: …``, exit 2), a command that needs the trainer's packages on the base install,
and file-system errors no command mapped. Commands raise; they do not print errors themselves.
"""
from __future__ import annotations

import re
import sys
from typing import Any, Optional

import typer
from typer.core import TyperGroup

from examprep import __version__
from examprep.errors import ExamprepError, missing_extra

USAGE_EXIT = 2
def _option_name(param: Any) -> str:
    """How the user wrote (or would write) a parameter: its long option, else its metavar."""
    opts = list(getattr(param, "opts", None) or [])
    if getattr(param, "param_type_name", "") == "option" and opts:
        return max(opts, key=len)
    return (getattr(param, "metavar", None) or getattr(param, "name", "") or "value").upper()


_EXPECTED = {"int": "an integer", "float": "a number", "bool": "true or false", "string": "text",
             "path": "a path"}


def usage_line(err: Any) -> str:
    """One line for a value typer (or its click core) rejected: ``--opt: what was expected, got 'x'``."""
    from typer._click import exceptions as ce

    if isinstance(err, ce.MissingParameter) and err.param is not None:
        kind = "option" if err.param.param_type_name == "option" else "argument"
        return f"{_option_name(err.param)}: missing {kind}; see --help"
    if isinstance(err, ce.BadParameter) and err.param is not None:
        cause = err.__cause__
        what = err.message
        errors = cause.errors() if hasattr(cause, "errors") else []
        if errors:
            kind = str(errors[0].get("type", "")).split("_")[0]
            got = errors[0].get("input")
            what = f"expected {_EXPECTED.get(kind, kind)}, got {got!r}" if kind in _EXPECTED else \
                str(errors[0].get("msg", what))
        return f"{_option_name(err.param)}: {what}"
    if isinstance(err, ce.NoSuchOption):
        near = f"; did you mean {' or '.join(sorted(err.possibilities))}?" if err.possibilities else ""
        return f"{err.option_name}: no such option{near} (see --help)"
    if isinstance(err, ce.BadOptionUsage):
        message = err.message.rstrip(".")
        if "requires an argument" in message:
            message = "needs a value"
        elif "does not take a value" in message:
            message = "is a flag and takes no value"
        return f"{err.option_name}: {message[:1].lower() + message[1:]}"
    message = " ".join(err.format_message().split()).rstrip(".")
    extra = re.match(r"Got unexpected extra arguments? ?\(?s?\)? \((.*)\)$", message)
    if extra:
        words = extra.group(1).split()
        return f"unexpected extra argument{'s' if len(words) > 1 else ''} {' '.join(map(repr, words))}; see --help"
    if message.startswith("No such command"):
        return message[:1].lower() + message[1:].replace(". Did you mean", "; did you mean") + \
            ("" if "did you mean" in message.lower() else "; see examprep --help")
    return message[:1].lower() + message[1:]


def _command_name(args: list[str]) -> str:
    names = set(app_commands())
    return next((a for a in args if a in names), "this command")


def app_commands() -> list[str]:
    return [c.name or c.callback.__name__.replace("_", "-") for c in app.registered_commands]


class ExamprepGroup(TyperGroup):
    """The command group with examprep's one error handler and plain help metavars."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            for param in cmd.get_params(ctx):
                _plain_metavar(param)
        return cmd

    def get_params(self, ctx: Any) -> list:
        params = super().get_params(ctx)
        for param in params:
            _plain_metavar(param)
        return params

    def main(self, args: Any = None, prog_name: Optional[str] = None, complete_var: Optional[str] = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        import errno

        from typer._click import exceptions as ce

        argv = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(args=args, prog_name=prog_name, complete_var=complete_var,
                                standalone_mode=False, **extra)
        except ce.NoArgsIsHelpError as err:         # `examprep` alone: the help, as before
            err.show()
            code = err.exit_code
        except ce.UsageError as err:
            typer.echo(f"error: {usage_line(err)}", err=True)
            code = USAGE_EXIT
        except ExamprepError as err:
            typer.echo(f"error: {err}", err=True)
            code = err.exit_code
        except ImportError as err:
            missing = missing_extra(err, f"examprep {_command_name(argv)}")
            if missing is None:
                raise
            typer.echo(f"error: {missing}", err=True)
            code = missing.exit_code
        except typer.Abort:
            typer.echo("aborted", err=True)
            code = 1
        except OSError as err:
            # the last resort for file-system errors a command did not map itself (a file name too long
            # for the file system, a vanished directory): one line, like every other user error
            if err.errno == errno.EPIPE:
                raise
            where = f"{err.filename}: " if err.filename else ""
            typer.echo(f"error: {where}{err.strerror or err}", err=True)
            code = USAGE_EXIT
        code = code if isinstance(code, int) else 0
        if standalone_mode:
            sys.exit(code)
        return code


_TYPE_METAVARS = {"<int>": "INTEGER", "<float>": "NUMBER", "<str>": "TEXT", "<list[str]>": "TEXT",
                  "<Path>": "PATH", "<path>": "PATH"}


def _plain_metavar(param: Any) -> None:
    """Help shows INTEGER, NUMBER, TEXT (click's words) instead of typer's <int>, <float>, <str>,
    and nothing for a flag, which takes no value (typer printed <bool>)."""
    kind = getattr(param, "param_type_name", "")
    if kind == "argument":
        shown = param.display_type(None)
        if shown in _TYPE_METAVARS:        # an argument's label is its name; only the type column changes
            param.display_type = lambda ctx, word=_TYPE_METAVARS[shown]: word
        return
    if kind != "option" or param.metavar is not None:
        return
    if getattr(param, "is_flag", False):
        param.metavar = ""
        return
    shown = param.display_type(None)
    if shown in _TYPE_METAVARS:
        param.metavar = _TYPE_METAVARS[shown]


app = typer.Typer(
    cls=ExamprepGroup,
    name="examprep",
    help="Practise, print and grade the hand computations of a deep-learning course.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def fail(err: ExamprepError) -> "typer.Exit":
    """Print a user error on one line to stderr and return the Exit to raise. (Commands may simply
    raise: ExamprepGroup.main prints the same line.)"""
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
    difficulty: str = typer.Option("1", "--difficulty", "-d", metavar="INTEGER", help="Level 1 (easiest) to 3."),
    seed: Optional[str] = typer.Option(None, "--seed", "-s", metavar="INTEGER",
                                       help="Seed (random when omitted; printed with each problem)."),
    count: str = typer.Option("1", "--count", "-n", metavar="INTEGER", help="Problems per topic (seeds seed, seed+1, …)."),
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

    seed_n = secrets.randbelow(1_000_000) if seed is None else int_option("--seed", seed)
    if key is not None or template is not None:
        from examprep.fileio import check_output_file

        for option, path in (("--key", key), ("--template", template)):    # before the work: a typo'd
            if path is not None:                                              # directory is never created
                check_output_file(path, option, force=force)
    try:
        problems = generators.build_many(topic, seed=seed_n, count=int_option("--count", count),
                                         difficulty=int_option("--difficulty", difficulty),
                                         calculator_free=calculator_free,
                                         options={"checkpoint": checkpoint} if checkpoint else None)
    except ImportError as err:            # a topic that reads a trained model, on the base install
        missing = missing_extra(err, f"examprep generate {' '.join(topic)}")
        if missing is None:
            raise
        raise missing from None
    if key is not None or template is not None:
        from examprep import keys

        for path in keys.save(problems, key=key, template=template, title=", ".join(topic), force=force,
                              meta={"topics": topic, "seed": seed_n, "difficulty": problems[0].difficulty}):
            typer.echo(f"wrote {path}", err=True)
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
    """The console script: the app, whose group handles every error (see ExamprepGroup.main)."""
    app()


if __name__ == "__main__":
    main()
