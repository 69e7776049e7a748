"""Spaced review with FSRS: ratings from performance, schedules stored per item."""
from __future__ import annotations

from datetime import datetime, timezone

import fsrs
import pytest
from hypothesis import given, strategies as st

from examprep import review
from examprep.history import History

DAY = 86400.0
T0 = 1_700_000_000.0


@pytest.fixture
def history(tmp_path):
    with History(tmp_path / "h.sqlite3") as h:
        yield h


@pytest.mark.parametrize("fraction, seconds, expected, kw, want", [
    (0.0, 60, 120, {}, 1),                      # nothing right: Again
    (0.4, 60, 120, {}, 1),                      # under half: Again
    (1.0, 10, 120, {"revealed": True}, 1),      # looked at the solution first: Again
    (0.75, 60, 120, {}, 2),                     # partly right: Hard
    (1.0, 200, 120, {}, 2),                     # right but slow (> 1.5×): Hard
    (1.0, 100, 120, {}, 3),                     # right in reasonable time: Good
    (1.0, 30, 120, {"hinted": True}, 3),        # fast, but with a hint: Good
    (1.0, 30, 120, {}, 4),                      # right and fast (≤ ½×): Easy
])
def test_rating_from_correctness_and_time(fraction, seconds, expected, kw, want):
    assert review.rating(fraction, seconds, expected, **kw) == want


@pytest.mark.parametrize("args", [(1.5, 1, 1), (-0.1, 1, 1), (1.0, -1, 1), (1.0, 1, 0)])
def test_rating_refuses_impossible_inputs(args):
    with pytest.raises(ValueError):
        review.rating(*args)


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1000), st.floats(1, 1000))
def test_a_better_score_never_gets_a_worse_rating(f1, f2, seconds, expected):
    lo, hi = sorted((f1, f2))
    assert review.rating(lo, seconds, expected) <= review.rating(hi, seconds, expected)


def _utc(ts):
    return datetime.fromtimestamp(ts, timezone.utc)


def test_stored_schedule_equals_fsrs_applied_directly(history):
    """Our store must give exactly what the fsrs library computes for the same reviews."""
    ratings = [3, 3, 1, 3, 4, 2]
    times = [T0 + k * 2 * DAY for k in range(len(ratings))]
    sched = fsrs.Scheduler(desired_retention=0.9, enable_fuzzing=False)
    card = fsrs.Card(card_id=1, due=_utc(times[0]))
    for r, t in zip(ratings, times):
        card, _ = sched.review_card(card, fsrs.Rating(r), review_datetime=_utc(t))
        state = review.review(history, "topic:attention", r, now=t, seconds=30)
    assert state.due == pytest.approx(card.due.timestamp())
    assert state.stability == pytest.approx(card.stability)
    assert state.state == card.state.name
    assert state.reviews == len(ratings)
    assert [row[2] for row in history.review_log("topic:attention")] == ratings


def test_fsrs_moves_a_failed_topic_forward(history):
    t = T0
    for _ in range(4):                        # learnt well: each Good review, when due, pushes it further out
        state = review.review(history, "topic:gru-step", 3, now=t)
        last, t = t, max(t + 60, state.due)
    far = state.due
    assert far - last > 3 * DAY
    t_fail = last + DAY                       # failed before it was due again
    failed = review.review(history, "topic:gru-step", 1, now=t_fail)
    assert failed.due < far                   # brought forward …
    assert failed.due - t_fail <= 15 * 60     # … to a relearning step minutes away
    assert failed.state == "Relearning"
    assert [c.item for c in review.due(history, now=t_fail + 20 * 60)] == ["topic:gru-step"]


def test_due_lists_only_what_is_due_most_overdue_first(history):
    review.review(history, "topic:a", 1, now=T0)              # due in a minute
    review.review(history, "topic:b", 1, now=T0 - 3600)       # due long ago
    review.review(history, "concept:why-sqrt-dk", 4, now=T0)  # Easy: days away
    assert [c.item for c in review.due(history, now=T0 + 120)] == ["topic:b", "topic:a"]
    assert review.due(history, now=T0 - 7200) == []
    assert {c.kind for c in review.all_cards(history, now=T0)} == {"topic", "concept"}


def test_a_bad_rating_is_refused(history):
    with pytest.raises(ValueError, match="rating"):
        review.review(history, "topic:a", 5, now=T0)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=8))
def test_every_review_schedules_the_item_after_it_and_round_trips(tmp_path_factory, ratings):
    with History(tmp_path_factory.mktemp("fsrs") / "h.sqlite3") as h:
        t = T0
        for r in ratings:
            state = review.review(h, "topic:x", r, now=t)
            assert state.due > t
            assert 0.0 <= state.retrievability <= 1.0
            t = state.due
        assert fsrs.Card.from_json(h.card("topic:x")).due.timestamp() == pytest.approx(state.due)


# FSRS-6's forgetting curve, written out (Ye et al.; py-fsrs' default w20 = 0.1542):
# R(t) = (1 + F t / S)^(-w20), F = 0.9^(-1/w20) - 1, t in days since the last review.
W20 = 0.1542


def _fsrs6_recall(days: float, stability: float) -> float:
    return (1 + (0.9 ** (-1 / W20) - 1) * days / stability) ** -W20


def test_recall_counts_the_hours_since_the_last_review_not_whole_days(history):
    # issue 36: fsrs counts whole days, so a card missed an hour ago and due again read "recall 100%"
    missed = review.review(history, "topic:attention", 1, now=T0)          # Again: a learning step
    at = missed.due + 3600
    card = review.state(history, "topic:attention", now=at)
    assert card.retrievability == pytest.approx(_fsrs6_recall((at - T0) / DAY, card.stability), rel=1e-12)
    assert card.retrievability < 0.99
    t = T0 + 7 * DAY
    for _ in range(2):                                                    # learnt: a review card days away
        state = review.review(history, "topic:gru-step", 3, now=t)
        last, t = t, state.due
    assert state.state == "Review"
    late = state.due + DAY / 2                                            # half a day overdue
    card = review.state(history, "topic:gru-step", now=late)
    assert card.retrievability == pytest.approx(_fsrs6_recall((late - last) / DAY, card.stability), rel=1e-12)
    assert card.retrievability < review.state(history, "topic:gru-step", now=state.due).retrievability < 0.91


def test_a_due_card_never_shows_100_percent_recall(history):
    from examprep.quiz.prompt import Terminal
    from examprep.quiz.stats import print_due

    review.review(history, "topic:attention", 1, now=T0)                  # due a minute later
    review.review(history, "topic:gru-step", 1, now=T0 - 3600)            # due an hour ago
    term = Terminal(no_color=True, interactive=False, width=80)
    term.console.record = True
    print_due(term, history, now=T0 + 120)
    text = term.console.export_text()
    assert "Due now: 2" in text and "100%" not in text
    attention = next(line for line in text.splitlines() if "attention" in line)
    assert ">99%" in attention                           # two minutes after a miss: FSRS still predicts > 99 %
    gru = next(line for line in text.splitlines() if "gru-step" in line)
    want = _fsrs6_recall((3600 + 120) / DAY, review.state(history, "topic:gru-step", now=T0).stability)
    assert f"{100 * want:.0f}%" in gru
    assert "learning step" in text and max(len(line) for line in text.splitlines()) <= 80
