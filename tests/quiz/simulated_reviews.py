"""A student simulated from known FSRS parameters, for the optimizer's tests and bench.

Memory follows py-fsrs's FSRS-6 with the student's TRUE weights (recall at a review is drawn with
the retrievability those weights give); the review dates follow the schedule examprep would set
with the defaults, a little early or late as students are. Ratings: Again when recall fails, else
Hard, Good or Easy; the first rating of an item is drawn on its own. Reviews fall at noon UTC, so
their day numbers do not depend on the machine's time zone."""
from __future__ import annotations

import math
import random
from datetime import datetime, timedelta, timezone

import fsrs

DEFAULT = tuple(fsrs.Scheduler().parameters)
# a student who forgets faster than FSRS's average user: half the first-review stabilities, a smaller
# stability gain on recall (w8) and a flatter forgetting curve (w20)
TRUE = tuple(w / 2 for w in DEFAULT[:4]) + DEFAULT[4:8] + (1.2,) + DEFAULT[9:20] + (0.3,)
START = datetime(2026, 1, 5, 12, tzinfo=timezone.utc)


def _day_scheduler(parameters) -> fsrs.Scheduler:
    return fsrs.Scheduler(parameters=parameters, learning_steps=(), relearning_steps=(), enable_fuzzing=False)


def simulate(parameters=TRUE, *, items: int, days: int, seed: int) -> dict[str, list[tuple[datetime, int]]]:
    """item → its reviews [(when, rating 1-4)], oldest first."""
    rng = random.Random(seed)
    memory, schedule = _day_scheduler(parameters), _day_scheduler(DEFAULT)
    log = {}
    for k in range(items):
        now = START + timedelta(days=rng.randrange(0, days // 2))
        true_card, card = fsrs.Card(card_id=k + 1, due=now), fsrs.Card(card_id=k + 1, due=now)
        reviews = []
        while now < START + timedelta(days=days):
            if not reviews:
                rating = rng.choices([1, 2, 3, 4], [0.25, 0.15, 0.5, 0.1])[0]
            elif rng.random() < memory.get_card_retrievability(true_card, now):
                rating = rng.choices([2, 3, 4], [0.15, 0.75, 0.1])[0]
            else:
                rating = 1
            reviews.append((now, rating))
            true_card, _ = memory.review_card(true_card, fsrs.Rating(rating), now)
            card, _ = schedule.review_card(card, fsrs.Rating(rating), now)
            days_ahead = (card.due - now).total_seconds() / 86400 * rng.lognormvariate(0, 0.3)
            now += timedelta(days=max(1, round(days_ahead)))
        log[f"topic:simulated-{k}"] = reviews
    return log


def log_loss(parameters, log: dict[str, list[tuple[datetime, int]]]) -> float:
    """The mean log loss of ``parameters`` on every review after an item's first, computed by
    replaying each item through py-fsrs (the scheduler examprep uses), not by the optimizer."""
    scheduler = _day_scheduler(parameters)
    total, n = 0.0, 0
    for k, reviews in enumerate(log.values()):
        card = fsrs.Card(card_id=k + 1, due=reviews[0][0])
        for i, (when, rating) in enumerate(reviews):
            if i:
                r = min(max(scheduler.get_card_retrievability(card, when), 1e-9), 1 - 1e-9)
                total -= math.log(r if rating > 1 else 1 - r)
                n += 1
            card, _ = scheduler.review_card(card, fsrs.Rating(rating), when)
    return total / n


def rows(log: dict[str, list[tuple[datetime, int]]]) -> list[tuple[str, float, int, None]]:
    """The log as History.review_log gives it: (item, Unix time, rating, seconds)."""
    return sorted(((item, when.timestamp(), rating, None) for item, reviews in log.items() for when, rating in reviews),
                  key=lambda r: (r[1], r[0]))
