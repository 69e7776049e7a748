"""`examprep sheet` and `examprep secret`: printed practice sheets and the secret of their variants."""

from typing import Optional

import typer

from examprep.cli.usage import FORMAT_HELP, RECIPE_HELP, SHEET_SUMMARY

app = typer.Typer()


@app.command(help=SHEET_SUMMARY)
def sheet(
    recipe: Optional[str] = typer.Option(None, "--recipe", "-r",
                                         help=RECIPE_HELP),
    topics: Optional[list[str]] = typer.Option(None, "--topics", "-t",
                                               help="Topics or question files (FILE.toml) instead of a recipe (repeat "
                                                    "or comma-separate)."),
    count: Optional[int] = typer.Option(None, "--count", "-n", help="Problems per topic (with --topics)."),
    difficulty: Optional[int] = typer.Option(None, "--difficulty", "-d",
                                             help="Level 1-3 of every problem (overrides the recipe's)."),
    seed: Optional[int] = typer.Option(None, "--seed", "-s",
                                       help="Seed of the sheet (random when omitted: kept in the key and shown "
                                            "here, never printed on the copies)."),
    roster: Optional[str] = typer.Option(None, "--roster", help="CSV with an id column (and names): one variant each."),
    secret_file: Optional[str] = typer.Option(None, "--secret-file",
                                              help="The secret the variants are derived from (made by "
                                                   "`examprep secret FILE`); without it, --roster makes OUT/secret.hex "
                                                   "and a rerun into OUT reuses it."),
    legacy_secret: bool = typer.Option(False, "--legacy-secret",
                                       help="Regenerate a sheet made before examprep stretched secrets "
                                            "(old derivation; warns)."),
    formats: Optional[str] = typer.Option(None, "--format", "-f",
                                          help=FORMAT_HELP),
    out: Optional[str] = typer.Option(None, "--out", "-o", help="Output directory [default: the recipe's name]."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing outputs."),
    title: Optional[str] = typer.Option(None, "--title", help="Title printed on the sheet (overrides the recipe's)."),
    course: Optional[str] = typer.Option(None, "--course", help="Course name printed in the header."),
    split: bool = typer.Option(False, "--split",
                               help="With --roster: each student's copy as a PDF of its own too, "
                                    "problems/ID.pdf and solutions/ID.pdf (to e-mail or upload)."),
    canvas_per_student: bool = typer.Option(False, "--canvas-per-student",
                                            help="With --roster and --format canvas: one quiz per student (their "
                                                 "printed variant, assigned by hand) instead of one quiz whose "
                                                 "questions Canvas draws from the variants at random."),
    solutions: bool = typer.Option(False, "--solutions",
                                   help="With --roster: typeset each student's worked solutions too (solutions.pdf, "
                                        "and solutions/ID.pdf with --split); a common sheet always has them."),
    scannable: bool = typer.Option(False, "--scannable",
                                   help="Also answer-sheets.pdf (QR code, markers, bubbles and boxes per copy) and "
                                        "scan-layout.json, for `examprep scan` (needs the extra 'scan')."),
    list_recipes: bool = typer.Option(False, "--list", help="List the bundled recipes and exit."),
    questions_dir: Optional[str] = typer.Option(None, "--questions-dir", metavar="DIR",
                                                help="A folder a recipe's question files may also come from (by "
                                                     "default only the recipe's project: the folder holding .git)."),
    decimal_comma: bool = typer.Option(False, "--decimal-comma",
                                       help="Answers are written with decimal commas (0,245) and ';' between list "
                                            "entries; the answer file says so and grade applies it (recipe: "
                                            "decimal_comma = true)."),
    checkpoint: Optional[str] = typer.Option(None, "--checkpoint", metavar="DIR",
                                             help="A trained model, for the problems that need one "
                                                  "(attention-from-model and the other model problems)."),
) -> None:
    # the help: usage.SHEET_SUMMARY, which names the bundled recipes and the formats from their tables
    from examprep import sheets
    from examprep.render.terminal import StepProgress, print_recipes, print_sheet_summary

    if list_recipes:
        print_recipes(sheets.bundled_recipes())
        return
    with StepProgress(lines=4) as progress:
        result = sheets.make_sheet(
            recipe=recipe, topics=topics, count=count, difficulty=difficulty,
            seed=seed, roster=roster, secret_file=secret_file,
            formats=formats, out=out, force=force, title=title, course=course, legacy_secret=legacy_secret,
            progress=progress, decimal_comma=decimal_comma, split=split, questions_dir=questions_dir,
            checkpoint=checkpoint, canvas_per_student=canvas_per_student, solutions=solutions, scannable=scannable)
    print_sheet_summary(result)


@app.command()
def secret(
    file: str = typer.Argument(..., metavar="FILE", help="Where to write the secret (e.g. secret.txt)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing file (its sheets' variants are lost)."),
) -> None:
    """Write a new 256-bit random secret (hex) for per-student variants: `sheet --secret-file FILE`."""
    from examprep import sheets

    path = sheets.write_secret(file, force=force)
    typer.echo(f"wrote {path}: a 256-bit secret, readable only by you (its first line marks it as examprep's). "
               f"Keep it private and keep it: the same file regenerates the same variants.")
