"""The `examprep` app: one typer group whose commands live in one small module per command group
(examprep/cli/<group>.py), imported only when a command runs or its help is shown, and the one
error handler (``ExamprepGroup.main``).

The handler turns everything a user can cause into one line on stderr: our own errors
(``error: …``, their exit code), every value typer or click rejects (``error: --opt: …``, exit 2),
a command that needs the trainer's packages on the base install, Ctrl-C (``interrupted``, 130)
and file-system errors no command mapped. Commands raise; they never print errors themselves.
"""
from __future__ import annotations

import sys
from typing import Any, Optional

import typer
from typer.core import TyperGroup

from examprep import __version__
from examprep.cli.usage import USAGE_EXIT, plain_metavar, usage_line
from examprep.errors import ExamprepError, Interrupted, missing_extra

# command → the module (under examprep.cli) that defines it; the order of `examprep --help`
COMMANDS = {
    "solve": "solve", "topics": "problems", "generate": "problems", "check": "author", "grade": "grade",
    "analyze": "grade", "gradescope-autograder": "grade", "sheet": "sheet",
    "secret": "sheet", "quiz": "quiz", "stats": "quiz", "review": "quiz", "train": "train", "translate": "train",
    "verify": "verify", "attention-map": "train", "fill-mask": "lm", "finetune": "lm", "anki": "anki",
}


def _module(name: str) -> Any:
    """The command module ``name``, imported now (literal imports: the layout test sees them)."""
    if name == "solve":
        from examprep.cli import solve as module
    elif name == "problems":
        from examprep.cli import problems as module
    elif name == "grade":
        from examprep.cli import grade as module
    elif name == "sheet":
        from examprep.cli import sheet as module
    elif name == "quiz":
        from examprep.cli import quiz as module
    elif name == "train":
        from examprep.cli import train as module
    elif name == "anki":
        from examprep.cli import anki as module
    elif name == "author":
        from examprep.cli import author as module
    elif name == "lm":
        from examprep.cli import lm as module
    else:
        from examprep.cli import verify as module
    return module


def _command_name(args: list[str]) -> str:
    return next((a for a in args if a in COMMANDS), "this command")


class ExamprepGroup(TyperGroup):
    """The command group: commands loaded on demand, examprep's one error handler, plain help
    metavars."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:
            return None
        if cmd_name not in self.commands:
            group = typer.main.get_group(_module(COMMANDS[cmd_name]).app)
            self.commands.update(group.commands)
        cmd = self.commands[cmd_name]
        for param in cmd.get_params(ctx):
            plain_metavar(param)
        return cmd

    def get_params(self, ctx: Any) -> list:
        params = super().get_params(ctx)
        for param in params:
            plain_metavar(param)
        return params

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        from difflib import get_close_matches

        from typer._click import exceptions as ce

        try:
            return self._click_resolve_command(ctx, args)
        except ce.UsageError as err:
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if matches:
                err.message = f"{err.message.rstrip('.')}. Did you mean {', '.join(map(repr, matches))}?"
            raise

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as err:
            # Ctrl-C before a session starts or after it ends (a session keeps its answers and ends
            # itself); a command may say what it left behind: KeyboardInterrupt("nothing was written")
            raise Interrupted("interrupted" + (f": {err.args[0]}" if err.args and err.args[0] else "")) from None

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
        except Interrupted as err:
            typer.echo(str(err), err=True)
            code = err.exit_code
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


app = typer.Typer(
    cls=ExamprepGroup,
    name="examprep",
    help="Practise, print and grade the hand computations of a deep-learning course.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


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


def main() -> None:
    """The console script: the app, whose group handles every error (see ExamprepGroup.main)."""
    app()
