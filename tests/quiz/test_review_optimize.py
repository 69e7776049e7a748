"""`examprep review --optimize`: FSRS parameters fitted to the student's own log (fsrs-rs), checked on
a simulated student whose true parameters are known, and the history that stores them."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import fsrs
import pytest
from typer.testing import CliRunner

from examprep import review, review_optimize
from examprep.cli import app
from examprep.history import _MIGRATIONS, SCHEMA_VERSION, History, _split_sql

from tests.quiz import simulated_reviews as sim

runner = CliRunner()
NOON = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)


def store(history: History, log) -> None:
    """A simulated log written the way examprep's reviews are: one review() per answer."""
    for item, when, rating, _ in sim.rows(log):
        review.review(history, item, rating, now=when)


@pytest.fixture(scope="module")
def fitted():
    """A simulated student: reviews of 100 items over 240 days to learn from, 60 other items to test on."""
    train = sim.simulate(items=100, days=240, seed=10)
    held_out = sim.simulate(items=60, days=240, seed=100)
    return train, held_out, review_optimize.fit(sim.rows(train))


def test_fitted_parameters_predict_held_out_reviews_better_than_the_defaults(fitted):
    train, held_out, result = fitted
    assert result.outcome == "fitted" and result.days_apart > 1000 and result.training_reviews > 500
    assert len(result.parameters) == 21
    default, fit, true = (sim.log_loss(p, held_out) for p in (sim.DEFAULT, result.parameters, sim.TRUE))
    assert true < default                                 # the simulated student does differ from the defaults
    assert fit < default                                  # and the fit sees it, on reviews it never saw
    assert fit - true < 0.5 * (default - true)            # closing at least half of the gap to the truth
    # the optimizer's own report agrees, on the reviews it was fitted to
    assert result.log_loss < result.previous_log_loss


def test_the_fit_learns_that_this_student_forgets_faster(fitted):
    _, _, result = fitted
    # first-review stabilities (days) of Good and Easy move from the defaults towards the true halves
    for rating in (2, 3):
        assert abs(result.parameters[rating] - sim.TRUE[rating]) < abs(sim.DEFAULT[rating] - sim.TRUE[rating])


def test_optimize_stores_the_parameters_with_date_and_counts_and_the_scheduler_uses_them(tmp_path, fitted):
    train, _, result = fitted
    with History(tmp_path / "h.sqlite3") as h:
        store(h, train)
        now = NOON.timestamp() + 400 * 86400
        got = review_optimize.optimize(h, now=now)
        assert got.outcome == "fitted" and got.parameters == pytest.approx(result.parameters)
        row = h.fsrs_parameters()
        assert row["time"] == now and row["reviews"] == got.reviews == sum(len(r) for r in train.values())
        assert row["training_reviews"] == got.training_reviews and row["optimizer"].startswith("fsrs-rs-python ")
        assert row["parameters"] == pytest.approx(list(result.parameters))
        # a new item rated Good starts with the fitted first-review stability, as py-fsrs gives it
        state = review.review(h, "concept:new-one", 3, now=now)
        expected, _ = fsrs.Scheduler(parameters=row["parameters"], enable_fuzzing=False).review_card(
            fsrs.Card(card_id=1, due=datetime.fromtimestamp(now, timezone.utc)), fsrs.Rating.Good,
            datetime.fromtimestamp(now, timezone.utc))
        assert state.stability == pytest.approx(expected.stability)
        assert state.stability == pytest.approx(row["parameters"][2])
        # optimizing again on the same log finds nothing better: the stored fit stays
        again = review_optimize.optimize(h, now=now + 60)
        assert again.outcome == "not-better" and h.fsrs_parameters()["time"] == now
        # reset: the defaults again, for new reviews; the fit stays on record
        assert review_optimize.reset(h, now=now + 120) is True
        assert h.fsrs_parameters()["parameters"] is None and review.parameters(h) is None
        assert review.review(h, "concept:another", 3, now=now + 120).stability == pytest.approx(sim.DEFAULT[2])
        assert h.conn.execute("SELECT COUNT(*) FROM fsrs_parameters").fetchone()[0] == 2
        assert review_optimize.reset(h, now=now + 180) is False


def days_apart(n_items: int, reviews_each: int, *, extra: int = 0, same_day_extra: bool = False):
    """A log of items reviewed alike: first rated Good, then every two days (so fsrs-rs's outlier
    filter keeps them all once there are 20). Training reviews: n_items × (reviews_each − 1) + extra
    (one more review of the first ``extra`` items). With ``same_day_extra``, a second review an hour
    after each, which is not a training review."""
    log = []
    for k in range(n_items):
        for i in range(reviews_each + (1 if k < extra else 0)):
            when = NOON + timedelta(days=i * 2)
            log.append((f"topic:t{k}", when.timestamp(), 1 if i % 3 == 2 else 3, None))
            if same_day_extra:
                log.append((f"topic:t{k}", (when + timedelta(hours=1)).timestamp(), 3, None))
    return log


def test_below_64_training_reviews_the_defaults_stay_and_nothing_is_stored(tmp_path):
    log = days_apart(21, 4, same_day_extra=True)                  # 21 × 3 = 63 training reviews, 168 in all
    hist = review_optimize.review_history(log)
    assert (hist.reviews, hist.days_apart, hist.training_reviews) == (168, 63, 63)
    result = review_optimize.fit(log)
    assert result.outcome == "too-few" and result.parameters is None and result.training_reviews == 63
    with History(tmp_path / "h.sqlite3") as h:
        for item, when, rating, _ in log:
            review.review(h, item, rating, now=when)
        assert review_optimize.optimize(h, now=NOON.timestamp()).outcome == "too-few"
        assert h.fsrs_parameters() is None
    enough = review_optimize.fit(days_apart(21, 4, extra=1))      # 64
    assert enough.training_reviews == 64 and enough.outcome != "too-few" and enough.parameters is not None


def test_fewer_than_20_items_reviewed_twice_are_all_outliers_to_fsrs_rs():
    hist = review_optimize.review_history(days_apart(19, 8))       # 19 × 7 = 133 reviews days apart
    assert hist.days_apart == 133 and hist.training_reviews == 0
    assert review_optimize.fit(days_apart(19, 8)).outcome == "too-few"


def test_the_threshold_is_where_fsrs_rs_starts_fitting_every_weight():
    """For growing prefixes of a simulated log, examprep fits exactly when fsrs-rs would change more
    than the four first-review stabilities."""
    from fsrs_rs_python import DEFAULT_PARAMETERS, FSRS

    log = sim.simulate(items=100, days=240, seed=11)
    names = list(log)
    for k in (20, 30, 45, 60, 100):
        rows = sim.rows({n: log[n] for n in names[:k]})
        hist = review_optimize.review_history(rows)
        try:
            weights = FSRS(list(DEFAULT_PARAMETERS)).compute_parameters(hist.fsrs_items())
            fits_all = list(weights[4:]) != list(DEFAULT_PARAMETERS[4:])
        except ValueError:
            fits_all = False
        assert (hist.training_reviews >= review_optimize.MIN_TRAINING_REVIEWS) == fits_all, k
        assert (review_optimize.fit(rows).outcome != "too-few") == fits_all, k


def test_review_days_start_at_4_am_local_time(monkeypatch):
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        evening = datetime(2026, 3, 2, 23, tzinfo=timezone.utc).timestamp()
        assert review_optimize.day_number(evening + 4 * 3600) == review_optimize.day_number(evening)   # 3 a.m.
        assert review_optimize.day_number(evening + 6 * 3600) == review_optimize.day_number(evening) + 1
        log = [("topic:a", evening, 3, None), ("topic:a", evening + 4 * 3600, 1, None),
               ("topic:a", evening + 20 * 3600, 3, None)]
        assert review_optimize.review_history(log).items == {"topic:a": [(0, 3), (0, 1), (1, 3)]}
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_version_1_history_is_migrated_and_keeps_its_reviews(tmp_path):
    path = tmp_path / "old.sqlite3"
    con = sqlite3.connect(path)
    for statement in _split_sql(_MIGRATIONS[1]):
        con.execute(statement)
    con.execute("INSERT INTO reviews (item, time, rating) VALUES ('topic:attention', 1.0, 3)")
    con.execute("PRAGMA user_version = 1")
    con.commit()
    con.close()
    with History(path) as h:
        assert h.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
        assert h.review_log() == [("topic:attention", 1.0, 3, None)] and h.fsrs_parameters() is None


OPENER = """
import sys
from examprep.history import History
with History(sys.argv[1]) as h:
    h.save_fsrs_parameters([0.5] * 21, now=float(sys.argv[2]), reviews=1)
"""


def test_two_processes_migrating_and_storing_at_once_both_succeed(tmp_path):
    path = tmp_path / "old.sqlite3"
    con = sqlite3.connect(path)
    for statement in _split_sql(_MIGRATIONS[1]):
        con.execute(statement)
    con.execute("PRAGMA user_version = 1")
    con.commit()
    con.close()
    procs = [subprocess.Popen([sys.executable, "-c", OPENER, str(path), str(t)], stderr=subprocess.PIPE) for t in (1, 2)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    with History(path) as h:
        assert sorted(r[0] for r in h.conn.execute("SELECT time FROM fsrs_parameters")) == [1.0, 2.0]


def test_the_command_fits_reports_and_resets(home, fitted):
    train, _, _ = fitted
    with History() as h:
        store(h, train)
    res = runner.invoke(app, ["review", "--optimize"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "Fitted FSRS parameters to your reviews with fsrs-rs-python" in text
    assert "log loss, in use" in text and "log loss, fitted" in text and "training reviews" in text
    assert "Stored in" in text and "--optimize --reset" in text
    res = runner.invoke(app, ["review", "--optimize", "--json"])
    data = json.loads(res.output)
    assert data["outcome"] == "not-better" and data["minimum_training_reviews"] == 64
    res = runner.invoke(app, ["review", "--optimize", "--reset"])
    assert res.exit_code == 0 and "Back to FSRS's default parameters" in res.output
    with History() as h:
        assert review.parameters(h) is None


def test_the_command_below_the_threshold_says_so(home):
    with History() as h:
        review.review(h, "topic:attention", 3, now=NOON.timestamp())
    res = runner.invoke(app, ["review", "--optimize"], env={"COLUMNS": "80"})
    text = " ".join(res.output.split())
    assert res.exit_code == 0 and "Not enough reviews to fit your own FSRS parameters yet" in text
    assert "needed 64" in text and "keeping FSRS's default parameters" in text


@pytest.mark.parametrize("args, message", [
    (["review", "--optimize"], "No review history yet: --optimize learns from the reviews `examprep quiz` keeps."),
    (["review", "--optimize", "--reset"], "FSRS's default parameters are already in use."),
    (["review", "--optimize", "--json"], '{"outcome": "no-history", "reviews": 0}'),
])
def test_optimize_without_a_history_says_so_in_one_line_and_creates_nothing(home, args, message):
    from examprep.history import default_path

    res = runner.invoke(app, args, env={"COLUMNS": "80"})
    assert res.exit_code == 0 and res.output.strip() == message, res.output
    assert not default_path().exists()


@pytest.mark.parametrize("args, message", [
    (["review", "--reset"], "--reset goes with --optimize"),
    (["review", "--optimize", "--due"], "--optimize and --due are separate"),
])
def test_option_mistakes_are_one_line_exit_2(home, args, message):
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and message in res.output and res.output.count("\n") == 1


def test_review_due_says_when_the_schedule_uses_fitted_parameters(home):
    now = datetime.now(timezone.utc)
    with History() as h:
        review.review(h, "topic:attention", 3, now=now.timestamp())
    res = runner.invoke(app, ["review", "--due"], env={"COLUMNS": "80"})
    assert res.exit_code == 0 and "own FSRS parameters" not in res.output
    with History() as h:
        h.save_fsrs_parameters(list(sim.DEFAULT), now=datetime(2026, 5, 4, 12, tzinfo=timezone.utc).timestamp(),
                               reviews=812)
    res = runner.invoke(app, ["review", "--due"], env={"COLUMNS": "80"})
    text = " ".join(res.output.split())
    assert "Scheduled with your own FSRS parameters, fitted on 2026-05-04 to 812 reviews" in text
