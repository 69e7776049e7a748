"""`examprep anki`: the concept bank and worked problems as an Anki deck (the work is examprep.deck)."""

from typing import Optional

import typer

app = typer.Typer()


HELP = ("Write an Anki deck: concept questions and worked problems as flash cards (MathJax math).\n\n"
        "Import the .apkg in Anki (File › Import). Notes have stable ids: importing a newer export of the same deck "
        "updates its cards and keeps their review history instead of adding copies.")


@app.command(help=HELP)
def anki(
    out: str = typer.Option(..., "--out", "-o", metavar="FILE", help="The deck to write (e.g. examprep.apkg)."),
    topics: Optional[list[str]] = typer.Option(None, "--topics", "-t", metavar="TOPICS",
                                               help="Problem topics or question files (FILE.toml), comma-separated "
                                                    "or repeated; default: every topic that needs no trained model "
                                                    "(see `examprep topics`)."),
    sections: Optional[list[str]] = typer.Option(None, "--sections", metavar="SECTIONS",
                                                 help="Concept sections (rnn, attention, transformer, llm, cnn, "
                                                      "training; default: all; none: no concept cards)."),
    problems: int = typer.Option(3, "--problems", "-n", help="Generated problems per topic (0: concept cards only)."),
    difficulty: Optional[int] = typer.Option(None, "--difficulty", "-d",
                                             help="Level 1-3 for every problem (default: each topic's levels in turn)."),
    seed: int = typer.Option(0, "--seed", "-s",
                             help="Problem k of a topic has seed SEED+k (fixed, so a re-export updates the same cards)."),
    calculator_free: bool = typer.Option(False, "--calculator-free",
                                         help="Calculator-free variants where a topic has them."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out file."),
) -> None:
    """`examprep anki` (its help is HELP, one paragraph a line)."""
    from examprep.deck import split_names, write_deck

    summary = write_deck(out, force=force, topics=split_names(topics) if topics is not None else None,
                         sections=split_names(sections) if sections is not None else None, problems=problems,
                         difficulty=difficulty, seed=seed, calculator_free=calculator_free)
    concepts, worked = sum(summary.concepts.values()), sum(summary.problems.values())
    lines = [f"wrote {summary.path} ({summary.bytes / 1024:.0f} KiB): {summary.notes} cards"]
    if summary.concepts:
        n = len(summary.concepts)
        lines.append(f"  {concepts} concept cards in {n} section{'s' if n > 1 else ''} ({', '.join(summary.concepts)})")
    if summary.problems:
        levels = ", ".join(map(str, sorted(summary.levels)))
        lines.append(f"  {worked} worked problems: {problems} for each of {len(summary.problems)} topics, "
                     f"level{'s' if len(summary.levels) > 1 else ''} {levels}, seeds {seed}…{seed + problems - 1}")
    lines.append("Import it in Anki (File › Import); a later export updates these cards.")
    typer.echo("\n".join(lines))
