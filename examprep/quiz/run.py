"""The quiz feature's entry points, one per command: plan, run, summarise."""
from __future__ import annotations

import json
import math
import time
from typing import Any

from examprep import generators, review_optimize
from examprep.errors import ParamError
from examprep.generators import canonical
from examprep.history import CardFile, History, HistoryError, default_path
from examprep.quiz import cards
from examprep.quiz.cards import unreviewable
from examprep.sources.concepts import packaged_bank
from examprep.quiz.plan import (
    QuizOptions, plan_concepts, plan_exam, plan_problems, plan_questions, plan_review, validate,
)
from examprep.quiz.prompt import Terminal
from examprep.quiz.session import Session
from examprep.quiz.stats import print_due, print_stats, stats_data
from examprep.quiz.views import print_optimization, print_summary
from examprep.review import all_cards

def open_history() -> History:
    return History()


def run_quiz(opts: QuizOptions, *, no_color: bool = False) -> int:
    """`examprep quiz`: plan, run, summarise. Returns the exit code (130 after Ctrl-C)."""
    validate(opts)
    term = Terminal(no_color=no_color)
    with open_history() as history:
        if history.read_only:                 # said before the first question, not after the first answer
            raise HistoryError(history.read_only_message("a quiz's answers cannot be recorded"))
        now = time.time()
        concept_bank = packaged_bank()
        minutes = None
        files: dict[str, CardFile] = {}          # a question file's card remembers the file
        if opts.mode == "exam":
            problems, title, minutes = plan_exam(opts, history, files)
        elif opts.questions:
            problems = plan_questions(opts, files, history)
        elif opts.concepts:
            problems = plan_concepts(opts, concept_bank, history, now=now)
        else:
            problems = plan_problems(opts, history, now=now)
        session = Session(term, history, mode=opts.mode, bank=concept_bank, options=_options_dict(opts), minutes=minutes,
                          files=files)
        if opts.mode == "exam":
            summary = session.run_exam(problems, title=title)
        else:
            summary = session.run_practice(problems)
        print_summary(term, summary)
        return summary.exit_code



def _options_dict(opts: QuizOptions) -> dict[str, Any]:
    return {k: v for k, v in opts.__dict__.items() if v not in (None, [], False)}


def run_review(*, count: int = 20, calculator_free: bool = False, no_color: bool = False, due: bool = False,
               as_json: bool = False, drop: list[str] | None = None, relink: tuple[str, str] | None = None) -> int:
    """`examprep review`: a practice session over the due items (with ``due``: the list of them,
    as JSON with ``as_json``; with ``drop``: those cards taken off the schedule; with ``relink``
    (card, file): a question file's card linked to the file as it is now). Returns the exit code:
    1 when a due item could not be reviewed (each is named) and the session had nothing else to do."""
    if as_json and not due:
        raise ParamError("--json goes with --due")
    if (drop or relink) and due:
        raise ParamError("--drop and --relink change the schedule: give them without --due")
    if due:
        run_due(no_color=no_color, as_json=as_json)
        return 0
    if drop or relink:
        return run_cards(drop=drop or [], relink=relink, no_color=no_color)
    if not 1 <= count <= 200:
        raise ParamError(f"--count: expected 1 to 200 items, got {count}")
    term = Terminal(no_color=no_color)
    with open_history() as history:
        now = time.time()
        concept_bank = packaged_bank()
        files: dict[str, CardFile] = {}
        problems, skipped = plan_review(history, concept_bank, count=count, now=now, calculator_free=calculator_free,
                                        files=files)
        for line in skipped:
            term.show(f"Not reviewed: {line}", style="yellow", soft_wrap=True)     # one line, whole, for grep
        if not problems:
            print_due(term, history, now=now, name_unreviewable=False)      # each was just named: "Not reviewed"
            return 1 if skipped else 0
        if history.read_only:
            raise HistoryError(history.read_only_message("a review's answers cannot be recorded"))
        session = Session(term, history, mode="review", bank=concept_bank, options={"count": count}, files=files)
        summary = session.run_practice(problems)
        print_summary(term, summary)
        return summary.exit_code


def run_cards(*, drop: list[str], relink: tuple[str, str] | None, no_color: bool = False) -> int:
    """`examprep review --drop CARD` and `--relink CARD FILE`: every card named is checked before
    any is changed (ParamError, exit 2, naming the one that is not in the schedule)."""
    term = Terminal(no_color=no_color)
    with open_history() as history:
        dropped = list(dict.fromkeys(cards.resolve(history, name, "--drop") for name in drop))
        relinked = cards.resolve(history, relink[0], "--relink") if relink is not None else None
        if relinked in dropped:
            raise ParamError(f"--relink and --drop both name {relink[0]}: give one")
        if history.read_only:
            raise HistoryError(history.read_only_message("its cards cannot be changed"))
        done = [cards.relink(history, relinked, relink[1], now=time.time())] if relink is not None else []
        done += [cards.drop(history, item) for item in dropped]
        for line in done:
            term.show(line)
        return 0


NO_HISTORY = "No review history yet: --optimize learns from the reviews `examprep quiz` keeps."


def run_optimize(*, reset: bool = False, no_color: bool = False, as_json: bool = False) -> int:
    """`examprep review --optimize [--reset]`: fit FSRS's parameters to the review log, or return to
    the defaults. Returns the exit code."""
    term = Terminal(no_color=no_color)
    if not default_path().exists():        # never create a database just to find it empty
        if as_json:
            print(json.dumps({"outcome": "already-default"} if reset else {"outcome": "no-history", "reviews": 0}))
        else:
            term.show("FSRS's default parameters are already in use." if reset else NO_HISTORY, markup=False)
        return 0
    with open_history() as history:
        now = time.time()
        if reset:
            changed = review_optimize.reset(history, now=now)
            if as_json:
                print(json.dumps({"outcome": "reset" if changed else "already-default"}))
            else:
                term.show("Back to FSRS's default parameters; earlier fits stay on record in the history."
                          if changed else "FSRS's default parameters are already in use.", markup=False)
            return 0
        result = review_optimize.optimize(history, now=now)
        if result.reviews == 0 and not as_json:
            term.show(NO_HISTORY, markup=False)
            return 0
        if as_json:
            print(json.dumps({"outcome": result.outcome, "reviews": result.reviews, "days_apart": result.days_apart,
                              "training_reviews": result.training_reviews,
                              "minimum_training_reviews": review_optimize.MIN_TRAINING_REVIEWS,
                              "parameters": result.parameters, "previous_parameters": result.previous,
                              "log_loss": result.log_loss, "previous_log_loss": result.previous_log_loss,
                              "optimizer": result.optimizer or None}))
        else:
            print_optimization(term, result, path=history.path, now=now)
        return 0


def run_due(*, no_color: bool = False, as_json: bool = False) -> None:
    """`examprep review --due`."""
    with open_history() as history:
        now = time.time()
        if as_json:
            cards = all_cards(history, now=now)
            cannot = unreviewable(history, cards, topics=generators.load_all(), concepts=packaged_bank().questions)
            print(json.dumps([{"item": c.item, "due": c.due, "overdue": c.due <= now, "state": c.state,
                               "stability_days": c.stability, "retrievability": round(c.retrievability, 4),
                               "reviews": c.reviews, "reviewable": c.item not in cannot,
                               "reason": cannot.get(c.item)} for c in cards]))
            return
        print_due(Terminal(no_color=no_color), history, now=now)


def run_stats(*, topic: str | None = None, days: float | None = None, no_color: bool = False,
              as_json: bool = False) -> None:
    """`examprep stats`."""
    if days is not None and not 0 < days < math.inf:
        raise ParamError(f"--days: expected a positive number, got {days:g}")
    if topic:
        topic = canonical(topic)            # an alias's attempts are its generator's (gru-cell: gru-step)
    with open_history() as history:
        now = time.time()
        data = stats_data(history, now=now, topic=topic, days=days)
        if topic and not data["topics"]:
            if topic not in generators.all_generators():
                generators.get(topic)          # raises UnknownTopicError with the closest names (exit 2)
        if as_json:
            print(json.dumps(data, ensure_ascii=False))
            return
        print_stats(Terminal(no_color=no_color), data, now=now)
