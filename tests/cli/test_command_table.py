"""One table of commands (examprep.cli.app.COMMANDS, issue 37): a command is a row (its module and
summary) and its function; the app lists it, loads its module when it runs and never before."""
import sys
import types

import typer
from typer.testing import CliRunner

from examprep.cli import app
from examprep.cli.app import COMMANDS, Command


def test_a_command_added_to_the_table_alone_is_listed_and_runs_from_its_module(monkeypatch):
    fake = types.ModuleType("examprep.cli.fakecmd")
    fake.app = typer.Typer()

    @fake.app.command()
    def hello(name: str = typer.Argument(..., help="Who.")) -> None:
        """Say hello."""
        typer.echo(f"hello {name}")

    monkeypatch.setitem(sys.modules, "examprep.cli.fakecmd", fake)
    monkeypatch.setitem(COMMANDS, "hello", Command("fakecmd", "Say hello."))
    runner = CliRunner()
    listed = runner.invoke(app, ["--help"], env={"COLUMNS": "100"})
    assert "  hello " in listed.output and "Say hello." in listed.output.partition("  hello ")[2]
    ran = runner.invoke(app, ["hello", "you"])
    assert ran.exit_code == 0 and ran.output == "hello you\n", ran.output
    wrong = runner.invoke(app, ["helo", "you"])
    assert wrong.exit_code == 2 and "did you mean 'hello'?" in wrong.output


def test_every_row_names_a_command_module_that_defines_the_command():
    from pathlib import Path

    cli = Path(sys.modules[Command.__module__].__file__).parent
    for name, row in COMMANDS.items():
        assert (cli / f"{row.module}.py").is_file(), name
        assert row.summary.endswith(".") and "\n" not in row.summary, name
