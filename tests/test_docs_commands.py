"""Every command shown in README.md and docs/*.md parses, as written, with examprep's own command line.

What counts as a shown command: a line of a code block (indented four spaces or more, or fenced
without a language or with a shell one; TOML, JSON and Python fences are not commands) that is
either a prompt line, `$ …`, or, in a block without prompts, a line that starts with `examprep `,
`python -m examprep` or `torchrun`, or runs `examprep` after `|`, `&&`, `||` or `;`. A line ending
in `\\`, or one whose quote is still open (a JSON parameter over several lines), continues on the
next line of the block. Output lines are never read.

The shell line is split as the shell splits it (shlex, with `#` comments): at `|`, `&&`, `||` and
`;` into commands, and a redirection (`> FILE`, `2>&1`, `< FILE`) is dropped with its target. Each
command that runs examprep — `examprep …`, `python -m examprep …`, `… -m examprep …` under
`torchrun` — is parsed by the app's click group and then by the command it names (click's
``make_context``: the options and arguments are matched and converted, nothing is executed), so an
unknown or renamed option, a wrong number of arguments or a value of the wrong type fails here.
Other commands on the line (`pip`, `head`, `printf`, `python bench/…`) are not examprep's and are
left alone.

Placeholders are allowed only where the parser accepts them as written: paths and names need not
exist (nothing is opened), so `FILE.toml` or `runs/dates-…` stand where a path or text goes, but a
placeholder where a number goes (`--seed N`) fails, as it would in a shell. Synopses with optional
parts in brackets (`[--seed N]`) belong in prose, not in code blocks.

A command that does not parse passes only where the docs show it failing on purpose: its next line
is exactly the usage error examprep prints for it (`error: --…`). (A command that parses and then
refuses its input, `error: --attention additive: …`, is a command's own error: it parses.)

The pages' relative links (README.md → docs/…, a page → another's heading) are checked here too:
each leads to a file, and an anchor to one of its headings as GitHub names them.
"""
from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest
import typer.main

from examprep.cli import app
from examprep.cli.usage import usage_line

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_FENCES = {"", "sh", "bash", "shell", "console"}
SEPARATORS = {"|", "||", "&&", ";", "&"}
REDIRECTIONS = {">", ">>", "<", ">&", "<&", "&>", "2>", "2>>"}
STARTS = ("examprep ", "python -m examprep", "torchrun ")
AFTER_SEPARATOR = re.compile(r"(\|\||&&|;)\s*examprep\s")   # `pip install -e . && examprep sheet …`


def _blocks(text: str) -> list[list[tuple[int, str]]]:
    """The code blocks of a Markdown text that may hold shell commands: lists of (line number, line
    without its indentation)."""
    blocks: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    fence: str | None = None
    indent = 0
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith("```"):
                if fence in SHELL_FENCES:
                    blocks.append(current)
                current, fence = [], None
            else:
                current.append((number, line[indent:] if line[:indent].isspace() else line.lstrip()))
            continue
        if stripped.startswith("```"):
            if current:
                blocks.append(current)
            current, fence, indent = [], stripped[3:].strip().lower(), len(line) - len(line.lstrip())
            continue
        spaces = len(line) - len(line.lstrip(" "))
        if stripped and spaces >= 4 and (current or not _prose(text, number)):
            current.append((number, line.strip()))
        elif stripped or not current:
            if current:
                blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


def _prose(text: str, number: int) -> bool:
    """Whether the indented line ``number`` continues a list item's paragraph (the line before it is
    text, not blank): an indented code block starts after a blank line."""
    lines = text.splitlines()
    return number >= 2 and lines[number - 2].strip() != ""


def _commands(path: Path) -> list[tuple[int, str, str | None]]:
    """Each shown shell command of ``path``: (line, the command line, the block's next line or None)."""
    found = []
    for block in _blocks(path.read_text(encoding="utf-8")):
        prompts = any(line.startswith("$ ") for _, line in block)
        i = 0
        while i < len(block):
            number, line = block[i]
            if not (line.startswith("$ ") if prompts else line.startswith(STARTS) or AFTER_SEPARATOR.search(line)):
                i += 1
                continue
            command = line[2:] if prompts else line
            while i + 1 < len(block) and (command.endswith("\\") or _open_quote(command)):
                i += 1
                command = command[:-1] if command.endswith("\\") else command + "\n"
                command += " " + block[i][1]
            i += 1
            found.append((number, command, block[i][1] if i < len(block) else None))
    return found


def _open_quote(command: str) -> bool:
    try:
        shlex.split(command, comments=True)
    except ValueError:
        return True
    return False


def _examprep_invocations(command: str) -> list[list[str]]:
    """The argument lists of the examprep commands in one shell line."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    simple: list[list[str]] = [[]]
    tokens = list(lexer)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in SEPARATORS:
            simple.append([])
        elif token in REDIRECTIONS or token[:1] in "<>" and set(token) <= set("<>&"):
            if simple[-1] and simple[-1][-1].isdigit():      # 2>&1: the descriptor is not an argument
                simple[-1].pop()
            i += 1                                              # the target
            if i < len(tokens) and tokens[i] == "&":
                i += 1
        else:
            simple[-1].append(token)
        i += 1
    out = []
    for words in simple:
        if words[:1] == ["examprep"]:
            out.append(words[1:])
        elif "-m" in words and words[words.index("-m") + 1:][:1] == ["examprep"]:
            out.append(words[words.index("-m") + 2:])
    return out


GROUP = typer.main.get_command(app)


def parse(args: list[str]) -> None:
    """Parse ``examprep ARGS`` as the app would, to the command's own options; raise click's
    UsageError for what the parser rejects. --help and --version end the parse, as they end a run."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            ctx = GROUP.make_context("examprep", list(args))
            rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
            if rest:
                name, cmd, sub = GROUP.resolve_command(ctx, rest)
                cmd.make_context(name, sub, parent=ctx)
        except typer.Exit as done:
            if done.exit_code:
                raise


CASES = [pytest.param(args, line, following, id=f"{path.relative_to(ROOT)}:{line}:{'_'.join(args[:2])}")
         for path in DOCS for line, command, following in _commands(path)
         for args in _examprep_invocations(command)]


def test_the_docs_show_commands_of_every_page():
    pages = {case.id.split(":")[0] for case in CASES}
    assert {"README.md", "docs/solve.md", "docs/sheets.md", "docs/grading.md", "docs/quiz.md",
            "docs/trainer.md", "docs/authoring.md", "docs/problems.md", "docs/rnn.md", "docs/lora.md"} <= pages
    assert len(CASES) >= 90


@pytest.mark.parametrize(("args", "line", "following"), CASES)
def test_a_documented_command_parses_as_written(args, line, following):
    from typer._click import exceptions as ce

    try:
        parse(args)
    except ce.UsageError as err:
        message = f"error: {usage_line(err)}"
        assert following == message, f"line {line}: examprep {shlex.join(args)}\n  {message}"


@pytest.mark.parametrize(("shell", "expected"), [
    ("examprep sheet --recipe midterm", [["sheet", "--recipe", "midterm"]]),
    ("python3 -m venv .venv && . .venv/bin/activate && pip install -e . && examprep sheet --recipe midterm",
     [["sheet", "--recipe", "midterm"]]),
    ("printf '%s\\n' '{\"id\": 1}' | examprep solve --batch > out.jsonl 2>&1", [["solve", "--batch"]]),
    ("examprep check loose.toml          # the same with tolerance", [["check", "loose.toml"]]),
    ("torchrun --standalone --nproc_per_node 8 -m examprep train --device cuda", [["train", "--device", "cuda"]]),
    ("python -m examprep grade key.json a.toml; head -3 canvas.csv", [["grade", "key.json", "a.toml"]]),
    ("pip install -e '.[train]'", []),
])
def test_shell_lines_are_split_into_examprep_commands(shell, expected):
    assert _examprep_invocations(shell) == expected


def test_blocks_and_continuations_are_read_as_a_shell_reads_them(tmp_path):
    text = ("Prose `examprep nothing --here`.\n\n"
            "    $ examprep solve network-shapes --params '{\"a\": [\n"
            "        1]}'\n"
            "    examprep this-is-output\n"
            "    $ examprep train --corpus x.tsv \\\n"
            "          --minutes 5\n\n"
            "```toml\nexamprep = \"not a command\"\n```\n\n"
            "- a list item whose text goes on\n"
            "    examprep is prose here\n\n"
            "Then, without prompts:\n\n"
            "    python3 -m venv .venv && pip install -e . && examprep sheet -r cnn\n"
            "    wrote examprep.apkg; and examprep is output here\n")
    sample = tmp_path / "sample.md"
    sample.write_text(text, encoding="utf-8")
    found = _commands(sample)
    assert [(n, _examprep_invocations(c)) for n, c, _ in found] == [
        (3, [["solve", "network-shapes", "--params", '{"a": [\n 1]}']]),
        (6, [["train", "--corpus", "x.tsv", "--minutes", "5"]]),
        (18, [["sheet", "-r", "cnn"]]),
    ]


@pytest.mark.parametrize("args", [
    ["sheet", "--recipee", "midterm"],          # a renamed option
    ["grade"],                                  # a missing argument
    ["generate", "attention", "--seed", "N"],   # a placeholder where a number goes
    ["solve", "conv-output-size", "--params"],  # an option without its value
    ["no-such-command"],
])
def test_what_a_shell_would_refuse_fails_to_parse(args):
    from typer._click import exceptions as ce

    with pytest.raises(ce.UsageError):
        parse(args)


def test_a_shown_usage_error_must_be_the_one_examprep_prints():
    from typer._click import exceptions as ce

    with pytest.raises(ce.UsageError) as err:
        parse(["verify", "-n", "abc"])
    assert f"error: {usage_line(err.value)}" == "error: --instances: expected an integer, got 'abc'"


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lstrip("#").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _links(path: Path) -> list[tuple[int, str]]:
    """The relative links of a page, outside code blocks and inline code."""
    found = []
    fence = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fence = not fence
        if fence or line.startswith("    "):
            continue
        prose = re.sub(r"`[^`]*`", "", line)
        found += [(number, target) for target in re.findall(r"\]\(([^)\s]+)\)", prose)
                  if not re.match(r"[a-z]+:", target)]
    return found


def test_every_relative_link_of_the_docs_leads_to_a_file_and_heading():
    broken = []
    for page in DOCS:
        for number, target in _links(page):
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}:{number}: {target} (no such file)")
            elif anchor and anchor not in {_anchor(h) for h in dest.read_text(encoding="utf-8").splitlines()
                                           if h.startswith("#")}:
                broken.append(f"{page.relative_to(ROOT)}:{number}: {target} (no such heading)")
    assert not broken, "\n".join(broken)
    assert _anchor("## Recipes: pin, weigh, mix") == "recipes-pin-weigh-mix"
    assert _anchor("## `examprep solve` — the engine") == "examprep-solve--the-engine"
