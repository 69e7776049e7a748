"""`examprep scan`: scanned answer pages in, answer files, crops and a review list out (examprep.scan)."""

from typing import Optional

import typer

app = typer.Typer()

HELP = ("Read scanned answer sheets (from `sheet --scannable`) into one answer file per student, with crops and a "
        "review list.\n\n"
        "SCANS are PDFs, PNG/JPEG/TIFF images or folders of them. Writes OUT/answers/ID.toml (grade them with "
        "`examprep grade KEY OUT/answers`), OUT/crops/ (boxes), OUT/pages/ (annotated pages), OUT/marks.csv "
        "and OUT/summary.md and .json with the review list. Nothing uncertain is guessed. Needs the extra 'scan'.\n\n"
        "Exit status: 0 answer files written (items for review listed in the summary); 1 no page was read as a "
        "page of this sheet (the summary says why); 2 bad input (nothing written).")


@app.command(help=HELP)
def scan(
    scans: list[str] = typer.Argument(..., metavar="SCANS...", help="Scanned PDFs or images, or folders of them."),
    key: str = typer.Option(..., "--key", help="The sheet's key.json (scan-layout.json beside it)."),
    out: str = typer.Option(..., "--out", "-o", help="Output folder."),
    layout: Optional[str] = typer.Option(None, "--layout", help="The sheet's scan-layout.json, when not beside the key."),
    force: bool = typer.Option(False, "--force", help="Replace an earlier scan's output folder (cleaned first)."),
) -> None:
    from examprep.scan import run_scan

    def progress(what, done, total):
        if done % 10 == 0:
            typer.echo(f"  {done} {what} read", err=True)

    result = run_scan(scans, key, out, layout_path=layout, force=force, progress=progress)
    typer.echo(f"read {result.pages} page(s): {len(result.students)} student(s), {len(result.review)} item(s) for review "
               f"(see {result.out}/summary.md)")
    if not result.students:      # no page was read as a page of this sheet: nothing to grade
        typer.echo(f"error: no answer file written: no page was read as a page of this sheet "
                   f"(see {result.out}/summary.md)", err=True)
        raise typer.Exit(1)
    typer.echo(f"grade them: examprep grade {key} {result.out}/answers")
