"""CLI commands of the sheet feature; heavy imports happen inside the commands."""
from __future__ import annotations

from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    """Add this feature's commands to the main app."""

    @app.command()
    def sheet(
        recipe: Optional[str] = typer.Option(None, "--recipe", "-r",
                                             help="Bundled recipe (midterm, cnn, rnn, transformer) or a recipe .toml file."),
        topics: Optional[list[str]] = typer.Option(None, "--topics", "-t",
                                                   help="Topics instead of a recipe (repeat or comma-separate)."),
        count: Optional[str] = typer.Option(None, "--count", "-n", metavar="INTEGER", help="Problems per topic (with --topics)."),
        difficulty: Optional[str] = typer.Option(None, "--difficulty", "-d", metavar="INTEGER",
                                                 help="Level 1-3 of every problem (overrides the recipe's)."),
        seed: Optional[str] = typer.Option(None, "--seed", "-s", metavar="INTEGER",
                                           help="Seed of the sheet (random when omitted; printed and kept in the key)."),
        roster: Optional[str] = typer.Option(None, "--roster", help="CSV with an id column (and names): one variant each."),
        secret_file: Optional[str] = typer.Option(None, "--secret-file",
                                                  help="The secret the variants are derived from "
                                                       "(make one with `examprep secret FILE`)."),
        legacy_secret: bool = typer.Option(False, "--legacy-secret",
                                           help="Regenerate a sheet made before examprep stretched secrets "
                                                "(old derivation; warns)."),
        formats: Optional[str] = typer.Option(None, "--format", "-f",
                                              help="Comma-separated: pdf, md, moodle \\[default: pdf,md]. "
                                                   "The key and answer template are always written."),
        out: Optional[str] = typer.Option(None, "--out", "-o", help="Output directory \\[default: the recipe's name]."),
        force: bool = typer.Option(False, "--force", help="Overwrite existing outputs."),
        title: Optional[str] = typer.Option(None, "--title", help="Title printed on the sheet (overrides the recipe's)."),
        course: Optional[str] = typer.Option(None, "--course", help="Course name printed in the header."),
        list_recipes: bool = typer.Option(False, "--list", help="List the bundled recipes and exit."),
    ) -> None:
        """Print a practice sheet: problems and solutions (PDF, Markdown), key, answer template, Moodle XML."""
        import secrets

        from examprep.cli import int_option

        if list_recipes:
            _print_recipes()
            return
        from examprep import sheets

        seed_n = secrets.randbelow(1_000_000) if seed is None else int_option("--seed", seed)
        try:
            with _Progress() as progress:
                result = sheets.make_sheet(
                    recipe=recipe, topics=topics, count=None if count is None else int_option("--count", count),
                    difficulty=None if difficulty is None else int_option("--difficulty", difficulty), seed=seed_n,
                    roster=roster, secret_file=secret_file, formats=formats, out=out, force=force, title=title,
                    course=course, legacy_secret=legacy_secret, progress=progress)
        except KeyboardInterrupt:
            typer.echo("interrupted: nothing was written", err=True)
            raise typer.Exit(130) from None
        for warning in result.warnings:
            typer.echo(f"warning: {warning}", err=True)
        _print_summary(result)

    @app.command()
    def secret(
        file: str = typer.Argument(..., metavar="FILE", help="Where to write the secret (e.g. secret.txt)."),
        force: bool = typer.Option(False, "--force", help="Replace an existing file (its sheets' variants are lost)."),
    ) -> None:
        """Write a new 256-bit random secret (hex) for per-student variants: `sheet --secret-file FILE`."""
        from examprep import sheets

        path = sheets.write_secret(file, force=force)
        typer.echo(f"wrote {path}: a 256-bit secret, readable only by you. Keep it private and keep it: "
                   f"the same file regenerates the same variants.")


class _Progress:
    """A long sheet's progress on stderr: a live bar on a terminal, else a line per PDF part once
    there are several (a 200-student sheet typesets for minutes). Nothing for a one-copy sheet's
    two PDFs, which take seconds."""

    def __init__(self):
        self.bar = None
        self.tasks: dict[str, int] = {}

    def __enter__(self) -> "_Progress":
        import sys

        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self.bar.start()
        return self

    def __call__(self, what: str, done: int, total: int) -> None:
        if total <= 2:
            return
        if self.bar is not None:
            if what not in self.tasks:
                self.tasks[what] = self.bar.add_task(f"{what}", total=total)
            self.bar.update(self.tasks[what], completed=done, total=total)
        elif what == "PDF parts":
            typer.echo(f"typeset {done} of {total} PDF parts", err=True)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()


def _print_recipes() -> None:
    from examprep import sheets
    from examprep.render import plural

    import shutil

    width = max(40, shutil.get_terminal_size((80, 24)).columns) - 1
    for name, r in sheets.bundled_recipes().items():
        typer.echo(f"{name:<12} {r.title} — {plural(r.problem_count, 'problem')}{f', {r.minutes} min' if r.minutes else ''}")
        items = [f"{i.topic}{f' ×{i.count}' if i.count > 1 else ''} (L{i.difficulty})" for i in r.items]
        line = " " * 13
        for k, item in enumerate(items):               # whole items per line, wrapped at the terminal's width
            piece = item + ("," if k < len(items) - 1 else "")
            if len(line) > 13 and len(line) + 1 + len(piece) > width:
                typer.echo(line)
                line = " " * 13
            line += ("" if len(line) == 13 else " ") + piece
        typer.echo(line)


def _print_summary(result) -> None:
    from examprep.render import plural

    sh = result.sheet
    first = sh.copies[0]
    r = sh.recipe
    what = plural(len(sh.copies), "variant") if sh.variants else f"seed {sh.seed}"
    typer.echo(f"{r.title}: {plural(len(first.problems), 'problem')}, {plural(first.points, 'point')}, "
               f"about {round(first.minutes)} min "
               f"of work{f' for {r.minutes} min allowed' if r.minutes else ''} ({what}; sheet {sh.sheet_id})")
    shown = [p for p in result.written if p.parent == result.out_dir]
    for path in shown:
        typer.echo(f"  {path}")
    hidden = len(result.written) - len(shown)
    if hidden:
        typer.echo(f"  {result.out_dir / 'answers'}/ ({plural(hidden, 'answer template')}, one per student)")
