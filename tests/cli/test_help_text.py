"""The help screens (click's plain help, issue 26): every option's help text reaches `--help` whole
(rich's help once read "[word: …]" as a markup tag and dropped it, printing "Longest output in
tokens ."), `examprep --help` lists each command with its own first paragraph, and at 80 columns
every paragraph, argument and option is there, no line is longer and none breaks after a hyphen."""
import re

import pytest
import typer
from typer.testing import CliRunner

from examprep.cli import app
from examprep.cli.app import COMMANDS as REGISTRY

GROUP = typer.main.get_command(app)
COMMANDS = sorted(REGISTRY)


def command(name: str):
    """The click command of ``name``, loaded as the group loads it when it runs."""
    return GROUP.get_command(typer.Context(GROUP), name)


@pytest.mark.parametrize("name", COMMANDS)
def test_bracketed_help_text_is_shown(name):
    res = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "400", "NO_COLOR": "1"})
    assert res.exit_code == 0, res.output
    shown = " ".join(res.output.split())
    for param in command(name).params:
        for bracketed in re.findall(r"\\?\[[^\]]*\]", getattr(param, "help", None) or ""):
            text = " ".join(bracketed.lstrip("\\").split())
            assert text in shown, f"{name} {param.name}: {text!r} missing from --help"


def test_there_are_commands_to_check():
    assert {"train", "translate", "sheet", "attention-map", "verify"} <= set(COMMANDS)
    assert GROUP.list_commands(typer.Context(GROUP)) == list(REGISTRY)
    assert all(command(name).name == name for name in COMMANDS)


TYPE_TOKENS = ("<bool>", "<str>", "<int>", "<float>", "<list[str]>", "<Path>")


@pytest.mark.parametrize("name", [None, *COMMANDS], ids=lambda n: n or "examprep")
def test_help_shows_plain_value_types_and_nothing_for_flags(name):
    res = CliRunner().invoke(app, [*([name] if name else []), "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert res.exit_code == 0, res.output
    for token in TYPE_TOKENS:
        assert token not in res.output, f"{name}: {token} in --help"
    for line in res.output.splitlines():
        if "--help" in line:
            assert "Show this message and exit." in line and not any(w in line for w in ("TEXT", "INTEGER")), line


@pytest.mark.parametrize("name", ["generate", "sheet", "quiz", "review"])
def test_integer_options_say_integer(name):
    res = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    rows = [line for line in res.output.splitlines() if "--count" in line or "--seed" in line]
    assert rows and all("INTEGER" in row for row in rows), rows


@pytest.mark.parametrize("name", COMMANDS)
def test_help_paragraphs_are_one_line_each_so_80_columns_never_break_them_mid_sentence(name):
    # the help screen joins the first paragraph's lines, but keeps a line break inside a later one
    text = command(name).help or ""
    assert all("\n" not in paragraph for paragraph in text.split("\n\n")[1:]), (name, text)


def test_grade_help_at_80_columns_gives_the_option_help_room():
    res = CliRunner().invoke(app, ["grade", "--help"], env={"COLUMNS": "80", "NO_COLOR": "1"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    # the help column (from the option's text to the box's edge) is at least 30 wide, not 22
    row = next(line for line in lines if "--self-test" in line)
    assert "Check the key:" in row and len(row.rstrip()) - row.index("Check the key:") >= 30, res.output
    assert "1 some could not be read (each is listed" in " ".join(res.output.split())
    assert not any(line.rstrip().endswith("could not be read") for line in lines)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_commands_list_is_each_commands_own_first_paragraph():
    # `examprep --help` lists the command table's summaries without importing a command module: they
    # must not drift apart
    for name in COMMANDS:
        assert REGISTRY[name].summary == flat(command(name).help.split("\n\n")[0]), name


def test_examprep_help_at_80_columns_lists_every_command_with_its_whole_summary():
    res = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert res.output.startswith("Usage: examprep [OPTIONS] COMMAND [ARGS]...\n")
    assert all(len(line) <= 80 for line in res.output.splitlines()), res.output
    head, _, listing = res.output.partition("\nCommands:\n")
    assert "Practise, print and grade" in head and "--version" in head and "-h, --help" in head
    rows = [line.split()[0] for line in listing.splitlines() if line.startswith("  ") and line[2] != " "]
    assert rows == list(REGISTRY)
    text = flat(listing)
    for name, row in REGISTRY.items():
        assert f"{name} {row.summary}" in text, name          # whole, not cut to a line with "..."


@pytest.mark.parametrize("name", COMMANDS)
def test_command_help_at_80_columns_keeps_its_paragraphs_and_every_option_with_its_help(name):
    res = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    out = res.output
    assert out.startswith(f"Usage: examprep {name} [OPTIONS]") and "\nOptions:\n" in out, out
    assert all(len(line) <= 80 for line in out.splitlines()), out
    text = flat(out)
    cmd = command(name)
    for paragraph in cmd.help.split("\n\n"):              # the description and its exit-status paragraph
        assert flat(paragraph) in text, paragraph
    if any(p.param_type_name == "argument" for p in cmd.params):
        assert "\nArguments:\n" in out
    for param in cmd.params:
        for opt in param.opts + param.secondary_opts if param.param_type_name == "option" else []:
            assert re.search(rf"(^|[\s,/]){re.escape(opt)}\b", out, re.M), (name, opt)
        assert flat(param.help or "") in text, (name, param.name)


@pytest.mark.parametrize("name", COMMANDS)
def test_usage_line_writes_arguments_in_the_posix_style(name):
    # typer wrote {KEY}, {topic}... and [SUBMISSION...]...: required arguments bare and upper-case,
    # optional ones in brackets, several with one "..."
    out = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "80"}).output
    usage = out.splitlines()[0]
    assert "{" not in usage and "}" not in usage and "]..." not in usage and "......" not in usage, usage
    for param in command(name).params:
        if param.param_type_name == "argument":
            word = (param.metavar or param.name).upper().removesuffix("...")
            word += "..." if param.nargs != 1 else ""
            assert (f" {word}" if param.required else f" [{word}]") in usage, (usage, param.name)
            assert re.search(rf"^  {re.escape(word)} ", out.partition("\nArguments:\n")[2], re.M), (name, word)


def test_usage_line_of_grade_names_its_key_and_its_submissions():
    out = CliRunner().invoke(app, ["grade", "--help"], env={"COLUMNS": "80"}).output
    assert out.startswith("Usage: examprep grade [OPTIONS] KEY [SUBMISSION...]\n"), out


@pytest.mark.parametrize("name", ["grade", "train", "sheet", "generate"])
def test_help_never_breaks_a_line_after_a_hyphen(name):
    # "sigfigs-" / "strict" on two lines reads as two words; click's wrapper would break there
    res = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "80"})
    broken = [line for line in res.output.splitlines() if re.search(r"\w-$", line.rstrip())]
    assert broken == [], broken
    if name == "grade":
        assert "sigfigs-strict" in res.output and "carried-forward" in res.output
