"""`examprep quiz`, `examprep stats` and `examprep review`: practice at the prompt, progress, and
spaced review (the work is examprep.quiz.run)."""

from typing import Optional

import typer

from examprep.cli.usage import paragraphs
from examprep.errors import ParamError

app = typer.Typer()


QUIZ_HELP = paragraphs("""Practise: a fresh problem at a time, checked at once, with hints and worked solutions.

    At a prompt: ? hint · s worked solution · skip · q quit; =s answers "s". Ctrl-C ends the session
    and keeps every answer. Answers may be piped on stdin (one line per prompt).""")


@app.command(help=QUIZ_HELP)
def quiz(
    topic: Optional[list[str]] = typer.Option(None, "--topic", "-t",
                                              help="Topic to practise (repeatable; default: all, weakest first). "
                                                   "With --concepts: a section (rnn, attention, transformer, llm)."),
    difficulty: Optional[int] = typer.Option(None, "--difficulty", "-d",
                                             help="Level 1-3 (default: adapts to your history; 2 in an exam)."),
    count: Optional[int] = typer.Option(None, "--count", "-n",
                                        help="Number of problems (default 10; in an exam one per topic)."),
    seed: Optional[int] = typer.Option(None, "--seed", "-s",
                                       help="Reproducible problems: seeds N, N+1, … (default: variants you have not seen)."),
    calculator_free: bool = typer.Option(False, "--calculator-free", help="Exact answers that need no calculator."),
    concepts: bool = typer.Option(False, "--concepts", help="Concept questions from the lectures instead of computations."),
    exam: bool = typer.Option(False, "--exam", help="Exam mode: no feedback until the end, timed, then a graded report."),
    recipe: Optional[str] = typer.Option(None, "--recipe", help="Exam: a sheet recipe's mix (e.g. midterm)."),
    minutes: Optional[float] = typer.Option(None, "--minutes", help="Exam: time limit in minutes (default: the estimate)."),
    question: Optional[list[str]] = typer.Option(None, "--question", "-q",
                                                 help="Practise your own question file (FILE.toml; repeatable)."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
) -> None:
    """`examprep quiz` (its help is QUIZ_HELP, one paragraph a line)."""
    from examprep.quiz import QuizOptions, run_quiz

    opts = QuizOptions(topics=list(topic or []), count=count, difficulty=difficulty, seed=seed,
                       calculator_free=calculator_free, concepts=concepts, mode="exam" if exam else "quiz",
                       recipe=recipe, minutes=minutes, questions=list(question or []))
    raise typer.Exit(run_quiz(opts, no_color=no_color))


@app.command()
def stats(
    topic: Optional[str] = typer.Option(None, "--topic", "-t", help="Only this topic."),
    days: Optional[float] = typer.Option(None, "--days", help="Only the last N days."),
    as_json: bool = typer.Option(False, "--json", help="Print the statistics as JSON."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
) -> None:
    """Your progress: accuracy and trend per topic, time per problem, frequent misconceptions."""
    from examprep.quiz import run_stats

    run_stats(topic=topic, days=days, no_color=no_color, as_json=as_json)


@app.command()
def review(
    due: bool = typer.Option(False, "--due", help="List what is due for review, without practising."),
    count: int = typer.Option(20, "--count", "-n", help="At most this many items in one review."),
    calculator_free: bool = typer.Option(False, "--calculator-free",
                                         help="Calculator-free variants where a topic has them."),
    optimize: bool = typer.Option(False, "--optimize",
                                  help="Fit the scheduler's FSRS parameters to your own reviews (once the optimizer "
                                       "has 64 to train on), instead of practising."),
    reset: bool = typer.Option(False, "--reset", help="With --optimize: return to FSRS's default parameters."),
    as_json: bool = typer.Option(False, "--json", help="With --due or --optimize: print the result as JSON."),
    drop: Optional[list[str]] = typer.Option(None, "--drop", metavar="CARD",
                                             help="Take a card off the review schedule, instead of practising "
                                                  "(as --due names it; repeatable). Its attempts stay in the history."),
    relink: Optional[tuple[str, str]] = typer.Option(None, "--relink", metavar="CARD FILE",
                                                     help="Review a question file's card from FILE as it is now "
                                                          "(moved or edited), keeping its schedule."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
) -> None:
    """Spaced review (FSRS): practise the topics, concepts and question files that are due, each with a new variant."""
    from examprep.quiz import run_optimize, run_review

    if reset and not optimize:
        raise ParamError("--reset goes with --optimize (examprep review --optimize --reset)")
    if optimize:
        if due or drop or relink:
            raise ParamError(f"--optimize and {'--due' if due else '--drop/--relink'} are separate uses of review; "
                             "give one")
        raise typer.Exit(run_optimize(reset=reset, no_color=no_color, as_json=as_json))
    raise typer.Exit(run_review(count=count, calculator_free=calculator_free, no_color=no_color, due=due,
                                as_json=as_json, drop=list(drop or []), relink=relink))
