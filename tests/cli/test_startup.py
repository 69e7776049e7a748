"""A help screen imports typer and the command tree only: numpy, sympy, torch, the generators, the
renderers and rich's heavy parts load when a command runs (issue 26: start-up time). Each check
runs the real console entry point in a fresh interpreter and reads its sys.modules."""
import json
import subprocess
import sys

import pytest

from examprep.cli.app import COMMANDS

HEAVY = ("numpy", "sympy", "torch", "safetensors", "sacrebleu", "typst", "fsrs", "matplotlib", "tensorboard",
         # typer's rich help (rich's console, markdown and syntax machinery: markdown_it, pygments) and its
         # pydantic coercion, which a help screen never needs
         "rich", "markdown_it", "pygments", "typer.rich_utils", "pydantic", "pydantic_core",
         "examprep.generators", "examprep.engine", "examprep.solve", "examprep.render", "examprep.answers",
         "examprep.grading", "examprep.quiz", "examprep.sheets", "examprep.train.model", "examprep.verify")

PROBE = """
import json, sys
sys.argv = ["examprep", *sys.argv[1:]]
from examprep.cli import main
try:
    main()
except SystemExit:
    pass
sys.stdout.flush()
print("\\nMODULES " + json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def loaded(args: list[str]) -> set[str]:
    res = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120,
                         env={"COLUMNS": "100", "NO_COLOR": "1", "PATH": ""})
    assert res.returncode == 0 and "Usage:" in res.stdout, res.stdout + res.stderr
    return set(json.loads(res.stderr.rpartition("MODULES ")[2]))


# the table of export formats, which the help screens list (standard library only; the renderers
# are imported by each row's writer when it runs), and its package's small __init__
TABLES = ("examprep.render", "examprep.render.exports")


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m not in TABLES and any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_examprep_help_imports_no_heavy_module_and_no_command_module():
    modules = loaded(["--help"])
    assert "typer" in modules and "examprep.cli.app" in modules
    assert heavy_in(modules) == []
    # the Commands list comes from app.COMMANDS: no command module is imported to list them
    assert sorted(m for m in modules if m.startswith("examprep.cli.")) == ["examprep.cli.app", "examprep.cli.usage"]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_commands_help_imports_its_own_module_and_no_heavy_one(name):
    modules = loaded([name, "--help"])
    assert heavy_in(modules) == []
    others = {f"examprep.cli.{c.module}" for c in COMMANDS.values()} - {f"examprep.cli.{COMMANDS[name].module}"}
    assert not others & modules, sorted(others & modules)


def test_a_command_is_built_alone_not_with_the_rest_of_its_module():
    # train's module holds train, translate and attention-map (sixty options): translate builds one
    import typer

    from examprep.cli import app

    group = typer.main.get_command(app)
    cmd = group.get_command(typer.Context(group), "translate")
    assert cmd.name == "translate" and "--beam" in {o for p in cmd.params for o in p.opts}
    assert set(group.commands) == {"translate"}


def test_the_probe_sees_a_heavy_import():
    # the check above is only worth something if a command that runs is seen loading numpy
    res = subprocess.run([sys.executable, "-c", PROBE, "solve", "softmax", "--params", '{"x": [1, 2]}', "--json"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "numpy" in json.loads(res.stderr.rpartition("MODULES ")[2])
