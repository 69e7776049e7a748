"""Spaced review: each topic (problem generator) and each concept card is an FSRS card.

Scheduling is the ``fsrs`` library's (FSRS-6, py-fsrs; Ye et al., "A Stochastic Shortest Path
Algorithm for Optimizing Spaced Repetition Scheduling", KDD 2022), with 90 % desired retention and no
interval fuzzing (a schedule is reproducible). Its parameters are FSRS's defaults until
`examprep review --optimize` fits the student's own (examprep.review_optimize) and stores them in
the history; from then on every review is scheduled with the newest stored ones.

A review's rating comes from what the student did, never from a self-assessment:

    Again  scored under half the points (or revealed the solution before answering)
    Hard   partly right, or fully right but slower than 1.5 × the problem's time estimate
    Good   fully right in reasonable time, or fully right after a hint
    Easy   fully right, no hint, within half the time estimate

Items are named "topic:<generator>" and "concept:<question id>"; an authored question's card is
"topic:question:<id>", linked in the history to its question file (path and SHA-256 of its text).
Reviewing a topic always draws a new variant of its generator (a seed not attempted before), so
review tests the method, not the memory of one set of numbers.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from examprep.history import CardFile, History

DESIRED_RETENTION = 0.9


def topic_item(generator: str) -> str:
    return f"topic:{generator}"


def split_item(item: str) -> tuple[str, str]:
    """("topic" | "concept", name) of an item."""
    kind, _, name = item.partition(":")
    return kind, name


def parameters(history: History) -> tuple[float, ...] | None:
    """The FSRS parameters the history holds (fitted by `review --optimize`), or None: the defaults."""
    row = history.fsrs_parameters()
    return tuple(row["parameters"]) if row and row["parameters"] else None


def _scheduler(history: History) -> Any:
    import fsrs

    fitted = parameters(history)
    extra = {"parameters": fitted} if fitted else {}
    return fsrs.Scheduler(desired_retention=DESIRED_RETENTION, enable_fuzzing=False, **extra)


def _utc(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, timezone.utc)


def _card_id(item: str) -> int:
    # a stable id (fsrs.Card() would otherwise sleep 1 ms to make a time-based one)
    return int.from_bytes(hashlib.blake2b(item.encode(), digest_size=6).digest(), "big")


def rating(fraction: float, seconds: float, expected_seconds: float, *, hinted: bool = False,
           revealed: bool = False) -> int:
    """The FSRS rating (1 Again … 4 Easy) of one reviewed item, from the fraction of its points
    scored (0–1), the seconds spent and the time a prepared student needs (seconds).
    Raises ValueError for a fraction outside [0, 1] or negative times."""
    if not 0.0 <= fraction <= 1.0 + 1e-9:
        raise ValueError(f"fraction must be in [0, 1], got {fraction}")
    if seconds < 0 or expected_seconds <= 0:
        raise ValueError("seconds must be ≥ 0 and expected_seconds > 0")
    if revealed or fraction < 0.5:
        return 1
    if fraction < 1.0 - 1e-9 or seconds > 1.5 * expected_seconds:
        return 2
    if not hinted and seconds <= 0.5 * expected_seconds:
        return 4
    return 3


@dataclass
class CardState:
    """Where an item stands: due time (Unix seconds), FSRS state name, stability (days),
    retrievability now (0–1), number of reviews."""

    item: str
    due: float
    state: str
    stability: float | None
    retrievability: float
    reviews: int

    @property
    def kind(self) -> str:
        return split_item(self.item)[0]

    @property
    def name(self) -> str:
        return split_item(self.item)[1]


def review(history: History, item: str, rating_: int, *, now: float, seconds: float | None = None,
           session_id: int | None = None, file: CardFile | None = None) -> CardState:
    """Apply one review (rating 1–4) to ``item`` at time ``now`` and store the new card
    (atomically: a concurrent review of the same card is applied after this one, not lost);
    ``file``: the question file the item was drawn from, remembered with the card."""
    import fsrs

    if rating_ not in (1, 2, 3, 4):
        raise ValueError(f"rating must be 1 (Again) … 4 (Easy), got {rating_}")
    scheduler = _scheduler(history)

    def update(old: str | None) -> tuple[str, float]:
        card = fsrs.Card.from_json(old) if old else fsrs.Card(card_id=_card_id(item), due=_utc(now))
        card, _log = scheduler.review_card(card, fsrs.Rating(rating_), review_datetime=_utc(now),
                                           review_duration=int(seconds * 1000) if seconds is not None else None)
        return card.to_json(), card.due.timestamp()

    history.update_card(item, update, rating=rating_, seconds=seconds, now=now, session_id=session_id, file=file)
    return state(history, item, now=now)  # type: ignore[return-value]


def retrievability(card: Any, scheduler: Any, now: float) -> float:
    """FSRS-6's predicted recall of ``card`` at ``now``: R = (1 + F·t/S)^(−w₂₀), F = 0.9^(−1/w₂₀) − 1,
    with t the days since its last review, fraction included, and S its stability in days; 0 before
    any review. (fsrs' own get_card_retrievability counts whole days, so a card reviewed an hour ago
    read 100 % — also when due again in a learning step.)"""
    if card.last_review is None or card.stability is None:
        return 0.0
    decay = -scheduler.parameters[20]
    days = max(0.0, now - card.last_review.timestamp()) / 86400.0
    return float((1 + (0.9 ** (1 / decay) - 1) * days / card.stability) ** decay)


def _state(item: str, card_json: str, reviews: int, now: float, scheduler: Any) -> CardState:
    import fsrs

    card = fsrs.Card.from_json(card_json)
    return CardState(item=item, due=card.due.timestamp(), state=card.state.name, stability=card.stability,
                     retrievability=retrievability(card, scheduler, now), reviews=reviews)


def state(history: History, item: str, *, now: float) -> CardState | None:
    """The item's card, or None when it was never reviewed."""
    for it, js, _due, n in history.cards():
        if it == item:
            return _state(it, js, n, now, _scheduler(history))
    return None


def all_cards(history: History, *, now: float) -> list[CardState]:
    """Every reviewed item, soonest due first."""
    scheduler = _scheduler(history)
    return [_state(it, js, n, now, scheduler) for it, js, _due, n in history.cards()]


def due(history: History, *, now: float) -> list[CardState]:
    """Items due at ``now`` (due time ≤ now), the most overdue first."""
    return [c for c in all_cards(history, now=now) if c.due <= now]
