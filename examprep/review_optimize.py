"""`examprep review --optimize`: FSRS parameters fitted to the student's own review log.

The optimizer is fsrs-rs (fsrs-rs-python), the one inside Anki: it fits FSRS-6's 21 weights by
gradient descent on the log loss of "recalled or not" (a rating above Again) at each review, with an
L2 pull towards the defaults, and needs no torch. The fitted weights drive py-fsrs's scheduler
(examprep.review), which implements the same model.

What the optimizer learns from. The log is the history's ``reviews`` table (one row per reviewed
item: "topic:<generator>" or "concept:<id>", its time and rating). Each item's reviews, in order,
become one FSRS item per review after the first ("the history up to here, then this rating"), with
the days between reviews counted as Anki counts them: calendar days whose boundary is 4 a.m. local
time. A review on the same day as the item's previous one stays in the history but is not a
target. fsrs-rs then sets aside, as outliers, items whose first interval is rare in the log: it
groups them by (first rating, days from the first review to the second), drops the smallest groups
until 20 items (or 5 %, if more) are dropped, and every group of fewer than 6 or with a first
interval over 100 days (365 after Easy); so fewer than 20 items reviewed twice teach it nothing.
What is left are the *training reviews* (``ReviewHistory.training_reviews``, counted with
fsrs-rs's own filter).

How many are enough (MIN_TRAINING_REVIEWS = 64). fsrs-rs returns the default weights for fewer
than 8 training reviews and, below 64, fits only the four first-review stabilities ("pre-training"
on the first intervals) and keeps the other 17 defaults; from 64 on it fits all 21 (fsrs-rs,
training.rs, compute_parameters). examprep asks for those 64, so that a fit is a fit of the whole
model; below them it keeps the weights in use and says how many more are needed. Even above,
fitted weights replace the ones in use only when they predict the student's own reviews better
(a lower log loss on the same reviews), as Anki does.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property
from importlib.metadata import version
from typing import Any, Iterable

from examprep.history import History

MIN_TRAINING_REVIEWS = 64
DAY_STARTS_AT = 4                 # hours after local midnight, Anki's default "next day starts at"


def day_number(ts: float, *, rollover_hours: int = DAY_STARTS_AT) -> int:
    """The review day of Unix time ``ts``: local calendar days that start at ``rollover_hours``."""
    offset = time.localtime(ts).tm_gmtoff
    return int((ts + offset - rollover_hours * 3600) // 86400)


@dataclass(frozen=True)
class ReviewHistory:
    """A log in the optimizer's terms: per item, its reviews as (days since the previous review,
    rating), the first with 0 days."""

    items: dict[str, list[tuple[int, int]]]

    @property
    def reviews(self) -> int:
        return sum(len(h) for h in self.items.values())

    @property
    def days_apart(self) -> int:
        """Reviews on a later day than their item's previous review."""
        return sum(1 for h in self.items.values() for delta, _ in h[1:] if delta > 0)

    @property
    def training_reviews(self) -> int:
        """The reviews fsrs-rs trains on: those days apart, less its outliers (its own filter,
        as in its prepare_training_data)."""
        from fsrs_rs_python import filter_outlier

        items = self._items
        first = [i for i in items if i.long_term_review_cnt() == 1]
        later = [i for i in items if i.long_term_review_cnt() != 1]
        if not first:
            return 0
        kept_first, kept_later = filter_outlier(first, later)
        return len(kept_first) + len(kept_later)

    @cached_property
    def _items(self) -> list[Any]:
        return self.fsrs_items()

    def fsrs_items(self) -> list[Any]:
        """fsrs-rs's FSRSItems: one per review days apart, holding the item's history up to it."""
        from fsrs_rs_python import FSRSItem, FSRSReview

        out = []
        for history in self.items.values():
            reviews = [FSRSReview(rating, delta) for delta, rating in history]
            out += [FSRSItem(reviews[:i + 1]) for i in range(1, len(reviews)) if history[i][0] > 0]
        return out


def review_history(log: Iterable[tuple[str, float, int, Any]], *, rollover_hours: int = DAY_STARTS_AT) -> ReviewHistory:
    """The optimizer's view of a review log: rows (item, time, rating, …) as History.review_log gives them."""
    days: dict[str, list[tuple[int, int]]] = {}
    for item, ts, rating, *_ in sorted(log, key=lambda r: (r[0], r[1])):
        days.setdefault(item, []).append((day_number(ts, rollover_hours=rollover_hours), int(rating)))
    items = {item: [(0 if i == 0 else d - seq[i - 1][0], r) for i, (d, r) in enumerate(seq)]
             for item, seq in days.items()}
    return ReviewHistory(items)


def optimizer_name() -> str:
    return f"fsrs-rs-python {version('fsrs-rs-python')}"


def log_loss(parameters: Any, items: list[Any]) -> float:
    """fsrs-rs's log loss of ``parameters`` on FSRSItems (the mean over their last reviews)."""
    from fsrs_rs_python import FSRS

    return float(FSRS(list(parameters)).evaluate(items).log_loss)


def default_parameters() -> tuple[float, ...]:
    import fsrs

    return tuple(fsrs.Scheduler().parameters)


@dataclass
class Optimization:
    """What `review --optimize` did. ``outcome``: "fitted" (stored and in use), "too-few" (below
    MIN_TRAINING_REVIEWS, nothing changed), "not-better" (fitted, but no better than the weights in
    use, which stay). ``previous``: the weights in use before (None: the defaults) and when they
    were fitted."""

    outcome: str
    reviews: int
    days_apart: int
    training_reviews: int
    parameters: tuple[float, ...] | None = None
    previous: tuple[float, ...] | None = None
    previous_time: float | None = None
    log_loss: float | None = None
    previous_log_loss: float | None = None
    optimizer: str = ""


def fit(log: Iterable[tuple], *, current: tuple[float, ...] | None = None) -> Optimization:
    """Fit FSRS's weights to a review log (no storage). ``current``: the weights in use (None: the
    defaults), which fitted weights must beat."""
    from fsrs_rs_python import DEFAULT_PARAMETERS, FSRS

    hist = review_history(log)
    n, apart, usable = hist.reviews, hist.days_apart, hist.training_reviews
    if usable < MIN_TRAINING_REVIEWS:
        return Optimization("too-few", n, apart, usable, previous=current)
    items = hist._items
    try:
        fitted = tuple(float(w) for w in FSRS(list(DEFAULT_PARAMETERS)).compute_parameters(items))
    except ValueError:          # fsrs-rs's NotEnoughData: its pre-training found too little to go on
        return Optimization("too-few", n, apart, usable, previous=current)
    in_use = current if current is not None else default_parameters()
    loss, before = log_loss(fitted, items), log_loss(in_use, items)
    outcome = "fitted" if loss < before and _schedulable(fitted) else "not-better"
    return Optimization(outcome, n, apart, usable, parameters=fitted, previous=current, log_loss=loss,
                        previous_log_loss=before, optimizer=optimizer_name())


def _schedulable(parameters: tuple[float, ...]) -> bool:
    """py-fsrs, which schedules examprep's reviews, accepts these weights (its own range checks)."""
    import fsrs

    try:
        fsrs.Scheduler(parameters=parameters)
    except ValueError:
        return False
    return True


def optimize(history: History, *, now: float) -> Optimization:
    """`review --optimize`: fit to the history's review log and store the weights when they are
    better than those in use (one row in fsrs_parameters, with the date and the review counts)."""
    row = history.fsrs_parameters()
    current = tuple(row["parameters"]) if row and row["parameters"] else None
    result = fit(history.review_log(), current=current)
    result.previous_time = row["time"] if current is not None and row else None
    if result.outcome == "fitted":
        history.save_fsrs_parameters(list(result.parameters or ()), now=now, reviews=result.reviews,
                                     training_reviews=result.training_reviews, log_loss=result.log_loss,
                                     previous_log_loss=result.previous_log_loss, optimizer=result.optimizer)
    return result


def reset(history: History, *, now: float) -> bool:
    """`review --optimize --reset`: back to FSRS's defaults (a row without weights, so the earlier
    fits stay on record). Returns False when the defaults were already in use."""
    row = history.fsrs_parameters()
    if not row or row["parameters"] is None:
        return False
    history.save_fsrs_parameters(None, now=now, optimizer="reset")
    return True
