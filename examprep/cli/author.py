"""`examprep check`: an instructor's question files, drawn many times and checked."""

import shutil
from typing import Optional

import typer

from examprep.cli.usage import paragraphs
from examprep.errors import ExamprepError, ParamError, check_seed

app = typer.Typer()


CHECK_HELP = paragraphs("""Draw each question file 50 times: degenerate draws, mistakes the tolerance cannot tell apart.

    Then runs the file's question tests ([[question.test]]: an answer to a part of the variant of a
    seed, and the verdict or the mistake it must get).

    Exit status: 0 usable (warnings listed); 1 more than 10% of the draws degenerate, a part
    that cannot be graded or a question test that does not hold; 2 a bad file (one line naming
    its file, line and key) or option.
    Every file is checked; the exit status is the worst.""")


@app.command(help=CHECK_HELP)
def check(
    files: list[str] = typer.Argument(..., help="Question files (FILE.toml; see docs/authoring.md, \"Writing your own "
                                                "questions\")."),
    draws: int = typer.Option(50, "--draws", "-n", help="Seeds to draw (0, 1, …)."),
    seed: Optional[int] = typer.Option(None, "--seed", "-s", help="First seed (default 0)."),
) -> None:
    """`examprep check` (its help is CHECK_HELP, one paragraph a line)."""
    from examprep.authoring.check import check_question, report_lines

    if not 1 <= draws <= 10_000:
        raise ParamError(f"--draws: expected 1 to 10000, got {draws}")
    check_seed(seed)
    code = 0
    for path in files:
        try:
            result = check_question(path, draws, seed or 0)
        except ExamprepError as err:           # one bad file never stops the others
            typer.echo(f"error: {err}", err=True)
            code = max(code, err.exit_code)
            continue
        for line in report_lines(result, width=shutil.get_terminal_size().columns):
            typer.echo(line)
        code = max(code, result.exit_code)
    raise typer.Exit(code)
