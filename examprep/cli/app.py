"""The `examprep` app: one typer group whose commands live in one small module per command group
(examprep/cli/<group>.py), imported only when a command runs or its help is shown, and the one
error handler (``ExamprepGroup.main``).

Help screens are click's plain ones (typer's ``rich_markup_mode=None``): typer's rich help imports
rich's console, markdown and syntax machinery, which cost more than the rest of a help screen
together (issue 26: `examprep --help` within 3.5× a bare interpreter). `examprep --help` lists the
commands from COMMANDS, the one table of commands (their modules and summaries), so it imports no
command module; a test keeps each summary equal to its command's own help.

The handler turns everything a user can cause into one line on stderr: our own errors
(``error: …``, their exit code), every value typer or click rejects (``error: --opt: …``, exit 2),
a command that needs the trainer's packages on the base install, Ctrl-C (``interrupted``, 130)
and file-system errors no command mapped. Commands raise; they never print errors themselves.
"""
from __future__ import annotations

import errno
import importlib
import sys
from difflib import get_close_matches
from typing import Any, NamedTuple, Optional

import typer
from typer._click import exceptions as ce
from typer.core import TyperGroup

from examprep import __version__
from examprep.cli.usage import SHEET_SUMMARY, USAGE_EXIT, HelpContext, plain_metavar, usage_line
from examprep.errors import ExamprepError, Interrupted, missing_extra

class Command(NamedTuple):
    """A command's row in the table: the module under examprep.cli that defines it, and the first
    paragraph of its help as `examprep --help` lists it (tests/cli/test_help_text.py checks each
    against the command's own help, so an edit there fails the suite until it is copied here)."""

    module: str
    summary: str


# The commands, in the order of `examprep --help`: adding one is a row here and its function in its module.
COMMANDS: dict[str, Command] = {
    "solve": Command("solve", "Compute an answer with its worked steps, straight from the numeric engine."),
    "topics": Command("problems", "List the problem generators: name, title, syllabus item and levels."),
    "generate": Command("problems", "Generate fresh, hand-computable problems with worked solutions."),
    "check": Command("author", "Draw each question file 50 times: degenerate draws, mistakes the tolerance cannot "
                               "tell apart."),
    "import": Command("author", "Import a question bank (Moodle XML, a QTI 2.1 package, a Canvas export) as "
                                "question files in DIR."),
    "grade": Command("grade", "Grade answer files against a key: scores, feedback, misconceptions, carried-forward "
                              "errors."),
    "analyze": Command("grade", "Item analysis of a graded class, from grades.json (no key or submissions needed)."),
    "gradescope-autograder": Command("grade", "Write the autograder zip of a key for a Gradescope programming "
                                              "assignment."),
    "sheet": Command("sheet", SHEET_SUMMARY),
    "scan": Command("scan", "Read scanned answer sheets (from `sheet --scannable`) into one answer file per "
                            "student, with crops and a review list."),
    "secret": Command("sheet", "Write a new 256-bit random secret (hex) for per-student variants: "
                               "`sheet --secret-file FILE`."),
    "quiz": Command("quiz", "Practise: a fresh problem at a time, checked at once, with hints and worked solutions."),
    "stats": Command("quiz", "Your progress: accuracy and trend per topic, time per problem, frequent misconceptions."),
    "review": Command("quiz", "Spaced review (FSRS): practise the topics, concepts and question files that are due, "
                              "each with a new variant."),
    "train": Command("train", "Train the reference Transformer (or an RNN encoder–decoder): on a built-in task "
                              "(default: dates) or a parallel corpus; or, with --arch encoder-only --objective mlm, a "
                              "BERT-style masked LM on their sentences."),
    "translate": Command("train", "Translate with a trained model (greedy decoding with a KV cache, or beam search "
                                  "with --beam): one output line per TEXT, or per line of stdin with '-'. Characters "
                                  "the model never saw are read as unknown, with a warning."),
    "verify": Command("verify", "Check the numeric engine against torch on random instances of every topic torch "
                                "computes (or, with --checkpoint, against a trained RNN encoder–decoder's modules on "
                                "real inputs)."),
    "attention-map": Command("train", "Show a trained model's attention per layer and head (and the dates alignment "
                                      "rate)."),
    "fill-mask": Command("lm", "Fill in each [MASK] of TEXT: the masked LM's top-k words with their probabilities."),
    "finetune": Command("lm", "Fine-tune a trained model with LoRA (Hu et al. 2021): freeze it, train low-rank "
                              "adapters on the chosen projections, save only the adapters (or, with --full, train "
                              "every weight)."),
    "runs": Command("runs", "Compare runs: the curves of their log.jsonl (training loss and NLL, held-out loss, "
                            "perplexity, the task metric) drawn into a PNG, or a table of each run's last and best "
                            "values."),
    "anki": Command("anki", "Write an Anki deck: concept questions and worked problems as flash cards (MathJax "
                            "math)."),
}


def _module(name: str) -> Any:
    """The command module ``name`` (examprep/cli/<name>.py), imported now: the one place the CLI
    imports a project module by name, so that a command's module loads only when it runs (or its
    help is shown) and `examprep --help` loads none (start-up time, issue 26)."""
    return importlib.import_module(f"examprep.cli.{name}")


def _load(name: str) -> Any:
    """The click command ``name``, built from its module's typer app alone: the module's other
    commands (train's module has three, with sixty options between them) are not built."""
    module_app = _module(COMMANDS[name].module).app
    info = next(i for i in module_app.registered_commands
                if (i.name or i.callback.__name__.replace("_", "-")) == name)
    one = typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False, add_completion=False)
    one.registered_commands.append(info)
    cmd = typer.main.get_command(one)
    cmd.context_class = HelpContext
    return cmd


def _command_name(args: list[str]) -> str:
    return next((a for a in args if a in COMMANDS), "this command")


class ExamprepGroup(TyperGroup):
    """The command group: commands loaded on demand, examprep's one error handler, plain help
    screens with plain metavars."""

    context_class = HelpContext

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:
            return None
        if cmd_name not in self.commands:
            self.commands[cmd_name] = _load(cmd_name)
        cmd = self.commands[cmd_name]
        for param in cmd.get_params(ctx):
            plain_metavar(param)
        return cmd

    def get_params(self, ctx: Any) -> list:
        params = super().get_params(ctx)
        for param in params:
            plain_metavar(param)
        return params

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            # typer leaves the flag's default None, and coercing None builds a pydantic adapter: 40 ms
            # of imports in `examprep COMMAND --help`, where this group's --help is not given
            option.default = False
        return option

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The commands with their whole first paragraph (click would cut it to one line), from
        the table: listing them imports no command module."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, c.summary) for name, c in COMMANDS.items()])

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
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
    rich_markup_mode=None,
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
