"""CLI commands of the quiz feature (quiz, stats, review); heavy imports happen inside the commands."""
from __future__ import annotations

from typing import Optional

import typer


def _float_option(name: str, text: str) -> float:
    from examprep.errors import ExamprepError

    try:
        value = float(text.strip())
    except ValueError:
        raise ExamprepError(f"{name}: expected a number, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ExamprepError(f"{name}: expected a finite number, got {text!r}")
    return value


def register(app: typer.Typer) -> None:
    """Add this feature's commands to the main app."""

    @app.command()
    def quiz(
        topic: Optional[list[str]] = typer.Option(None, "--topic", "-t",
                                                  help="Topic to practise (repeatable; default: all, weakest first). "
                                                       "With --concepts: a section (rnn, attention, transformer, llm)."),
        difficulty: Optional[str] = typer.Option(None, "--difficulty", "-d", metavar="INTEGER",
                                                 help="Level 1-3 (default: adapts to your history; 2 in an exam)."),
        count: Optional[str] = typer.Option(None, "--count", "-n", metavar="INTEGER",
                                            help="Number of problems (default 10; in an exam one per topic)."),
        seed: Optional[str] = typer.Option(None, "--seed", "-s", metavar="INTEGER",
                                           help="Reproducible problems: seeds N, N+1, … (default: variants you have not seen)."),
        calculator_free: bool = typer.Option(False, "--calculator-free", help="Exact answers that need no calculator."),
        concepts: bool = typer.Option(False, "--concepts", help="Concept questions from the lectures instead of computations."),
        exam: bool = typer.Option(False, "--exam", help="Exam mode: no feedback until the end, timed, then a graded report."),
        recipe: Optional[str] = typer.Option(None, "--recipe", help="Exam: a sheet recipe's mix (e.g. midterm)."),
        minutes: Optional[str] = typer.Option(None, "--minutes", metavar="NUMBER",
                                              help="Exam: time limit in minutes (default: the estimate)."),
        no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
    ) -> None:
        """Practise: a fresh problem at a time, checked at once, with hints and worked solutions.

        At a prompt: ? hint · s worked solution · skip · q quit. Ctrl-C ends the session and keeps
        every answer. Answers may be piped on stdin (one line per prompt).
        """
        from examprep.cli import int_option
        from examprep.errors import ExamprepError
        from examprep.quiz import QuizOptions, run_quiz

        try:
            if (recipe or minutes) and not exam:
                raise ExamprepError("--recipe and --minutes belong to an exam: add --exam")
            if exam and concepts:
                raise ExamprepError("--concepts cannot be combined with --exam")
            opts = QuizOptions(
                topics=list(topic or []), count=int_option("--count", count) if count is not None else None,
                difficulty=int_option("--difficulty", difficulty) if difficulty is not None else None,
                seed=int_option("--seed", seed) if seed is not None else None, calculator_free=calculator_free,
                concepts=concepts, mode="exam" if exam else "quiz", recipe=recipe,
                minutes=_float_option("--minutes", minutes) if minutes is not None else None)
            code = run_quiz(opts, no_color=no_color)
        except KeyboardInterrupt:      # before the session started or after it ended
            typer.echo("interrupted", err=True)
            raise typer.Exit(130) from None
        raise typer.Exit(code)

    @app.command()
    def stats(
        topic: Optional[str] = typer.Option(None, "--topic", "-t", help="Only this topic."),
        days: Optional[str] = typer.Option(None, "--days", metavar="NUMBER", help="Only the last N days."),
        as_json: bool = typer.Option(False, "--json", help="Print the statistics as JSON."),
        no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
    ) -> None:
        """Your progress: accuracy and trend per topic, time per problem, frequent misconceptions."""
        from examprep.quiz import run_stats

        run_stats(topic=topic, days=_float_option("--days", days) if days is not None else None,
                  no_color=no_color, as_json=as_json)

    @app.command()
    def review(
        due: bool = typer.Option(False, "--due", help="List what is due for review, without practising."),
        count: str = typer.Option("20", "--count", "-n", metavar="INTEGER", help="At most this many items in one review."),
        calculator_free: bool = typer.Option(False, "--calculator-free",
                                             help="Calculator-free variants where a topic has them."),
        as_json: bool = typer.Option(False, "--json", help="With --due: print the schedule as JSON."),
        no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
    ) -> None:
        """Spaced review (FSRS): practise the topics and concepts that are due, each topic with a new variant."""
        from examprep.cli import int_option
        from examprep.errors import ExamprepError
        from examprep.quiz import run_due, run_review

        try:
            if as_json and not due:
                raise ExamprepError("--json goes with --due")
            if due:
                run_due(no_color=no_color, as_json=as_json)
                return
            code = run_review(count=int_option("--count", count), calculator_free=calculator_free, no_color=no_color)
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(130) from None
        raise typer.Exit(code)
