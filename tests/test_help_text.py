"""Every option's help text reaches `--help` whole: rich reads "[word: …]" as a markup tag and
drops it unless escaped, which once printed "Longest output in tokens ." for a documented default."""
import re

import pytest
import typer
from typer.testing import CliRunner

from examprep.cli import app

COMMAND = typer.main.get_command(app)
COMMANDS = sorted(getattr(COMMAND, "commands", {}))


@pytest.mark.parametrize("name", COMMANDS)
def test_bracketed_help_text_is_shown(name):
    res = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "400", "NO_COLOR": "1"})
    assert res.exit_code == 0, res.output
    shown = " ".join(res.output.split())
    for param in COMMAND.commands[name].params:
        for bracketed in re.findall(r"\\?\[[^\]]*\]", getattr(param, "help", None) or ""):
            text = " ".join(bracketed.lstrip("\\").split())
            assert text in shown, f"{name} {param.name}: {text!r} missing from --help"


def test_there_are_commands_to_check():
    assert {"train", "translate", "sheet", "attention-map", "verify"} <= set(COMMANDS)
