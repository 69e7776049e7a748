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


IMPORT_HELP = paragraphs("""Import a question bank (Moodle XML, a QTI 2.1 package, a Canvas export) as question files in DIR.

    Moodle's numerical, multichoice, truefalse, shortanswer, calculated and cloze questions; QTI
    2.1 items (zip or folder with imsmanifest.xml); Canvas's QTI 1.2 export. A calculated
    question's wildcards become drawn parameters and its formula a computed part. What a question
    file cannot hold is named per question on stderr and in the file's header
    (docs/authoring.md, "Importing a bank").

    Exit status: 0 every question carried whole; 1 some question not carried or carried without
    something (the files of the others are written); 2 a bank that cannot be read (malformed XML,
    entities, over 16 MB, not a bank) or a file in DIR that exists without --force: nothing is
    written.""")


@app.command("import", help=IMPORT_HELP)
def import_bank(
    bank: str = typer.Argument(..., help="A Moodle XML file, a QTI 2.1 package (zip or folder) or a Canvas export "
                                         "(zip)."),
    out: str = typer.Option(..., "--out", "-o", help="Folder for the question files (made if absent; its parent "
                                                     "must exist)."),
    force: bool = typer.Option(False, "--force", help="Replace question files of the same name in DIR."),
) -> None:
    """`examprep import` (its help is IMPORT_HELP)."""
    from examprep.banks.importer import import_bank as run, report

    result = run(bank, out, force=force)
    lines, problems = report(result, out)
    for line in problems:
        typer.echo(line, err=True)
    for line in lines:
        typer.echo(line)
    raise typer.Exit(result.exit_code)
