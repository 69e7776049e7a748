"""The progress store: schema, durability, concurrency, statistics."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

import pytest

from examprep.history import (SCHEMA_VERSION, Attempt, History, HistoryError, default_path, misconception_stats,
                              topic_stats)


def attempt(topic="attention", part="scores", status="correct", score=1.0, max_score=1.0, seconds=10.0, **kw):
    base = dict(kind="problem", topic=topic, item=f"topic:{topic}", generator=topic, version=1, part=part,
                answer="1", status=status, score=score, max_score=max_score, seconds=seconds, seed=7, difficulty=1)
    base.update(kw)
    return Attempt(**base)


def test_history_lives_under_examprep_home(home):
    assert default_path() == home / "history.sqlite3"
    with History() as h:
        h.record(attempt())
    assert (home / "history.sqlite3").exists()


def test_new_history_is_versioned_and_in_wal_mode(tmp_path):
    with History(tmp_path / "h.sqlite3") as h:
        assert h.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert h.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_attempts_round_trip_every_field(tmp_path):
    a = attempt(status="misconception", score=0.0, misconception="no-scale", feedback="forgot √d_k", hints=2,
                calculator_free=True, problem_no=3, answer="[[1, 2], [3, 4]]", mode="exam", time=1000.5)
    with History(tmp_path / "h.sqlite3") as h:
        sid = h.start_session("exam", {"minutes": 30}, now=1000.0)
        a.session_id = sid
        h.record(a)
    with History(tmp_path / "h.sqlite3") as h:       # reopened: committed, not cached
        (b,) = h.attempts()
    assert b == a


def test_a_history_from_a_newer_examprep_is_refused(tmp_path):
    path = tmp_path / "h.sqlite3"
    History(path).close()
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.close()
    with pytest.raises(HistoryError, match="newer than this examprep reads"):
        History(path)


def test_a_file_that_is_not_a_database_is_refused_with_advice(tmp_path):
    path = tmp_path / "h.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(HistoryError, match="move it aside"):
        History(path)


def test_an_unwritable_location_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(HistoryError, match="EXAMPREP_HOME"):
        History(blocker / "sub" / "h.sqlite3")


def test_an_interrupted_write_leaves_no_half_record(tmp_path):
    with History(tmp_path / "h.sqlite3") as h:
        with pytest.raises(KeyboardInterrupt):
            with h.transaction() as c:
                c.execute("INSERT INTO sessions (mode, started) VALUES ('quiz', 1)")
                raise KeyboardInterrupt
        assert h.conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0
        h.record(attempt())                            # and the store still works
        assert h.count_attempts() == 1


WRITER = textwrap.dedent("""
    import sys
    from examprep.history import Attempt, History
    tag, n = sys.argv[1], int(sys.argv[2])
    with History(sys.argv[3], timeout=60) as h:
        for i in range(n):
            h.record(Attempt(kind="problem", topic=tag, item="topic:" + tag, generator=tag, version=1,
                             part=str(i), answer=str(i), status="correct", score=1, max_score=1, seconds=1))
            if i % 5 == 0:   # read-modify-write of one shared card
                h.update_card("topic:shared", lambda old: (str(int(old or 0) + 1), 0.0),
                              rating=3, seconds=1.0, now=float(i))
""")


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    path = tmp_path / "h.sqlite3"
    n = 150
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, tag, str(n), str(path)], stderr=subprocess.PIPE)
             for tag in ("a", "b")]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    with History(path) as h:
        rows = h.attempts()
        assert len(rows) == 2 * n
        for tag in ("a", "b"):
            assert sorted(int(a.part) for a in rows if a.topic == tag) == list(range(n))
        # every read-modify-write counted: the card's counter and its review log agree
        assert h.card("topic:shared") == str(2 * len(range(0, n, 5)))
        assert len(h.review_log("topic:shared")) == 2 * len(range(0, n, 5))


def test_used_seeds_are_per_generator_level_and_calculator_mode(tmp_path):
    with History(tmp_path / "h.sqlite3") as h:
        h.record(attempt(seed=1))
        h.record(attempt(seed=2, difficulty=2))
        h.record(attempt(seed=3, calculator_free=True))
        h.record(attempt(seed=4, topic="gru-step", generator="gru-step"))
        assert h.used_seeds("attention", 1, False) == {1}
        assert h.used_seeds("attention", 2, False) == {2}
        assert h.used_seeds("attention", 1, True) == {3}


def test_topic_stats_match_a_hand_count():
    # attention: problem 1 scores 3/4 in 30 s, problem 2 scores 0/2 in 50 s; gru-step 2/2 in 10 s
    rows = [attempt(part="a", score=1, max_score=1, seconds=10, session_id=1, problem_no=1),
            attempt(part="b", score=2, max_score=3, seconds=20, session_id=1, problem_no=1),
            attempt(part="a", score=0, max_score=2, seconds=50, session_id=1, problem_no=2, status="wrong"),
            attempt(topic="gru-step", generator="gru-step", part="h", score=2, max_score=2, seconds=10,
                    session_id=2, problem_no=1)]
    stats = {s.topic: s for s in topic_stats(rows)}
    att = stats["attention"]
    assert att.problems == 2 and att.parts == 3
    assert att.accuracy == pytest.approx(3 / 6)
    assert att.scores == pytest.approx([0.75, 0.0])
    assert att.seconds_per_problem == pytest.approx(40.0)     # median of 30 and 50
    assert stats["gru-step"].accuracy == 1.0
    assert [s.topic for s in topic_stats(rows)] == ["attention", "gru-step"]     # weakest first


def test_trend_compares_the_last_window_with_the_one_before():
    rows = [attempt(score=s, session_id=1, problem_no=i) for i, s in enumerate([0, 0, 1, 1])]
    (s,) = topic_stats(rows, window=2)
    assert s.earlier == 0.0 and s.recent == 1.0 and s.trend == 1.0
    (s,) = topic_stats(rows[:2], window=2)
    assert s.trend is None


def test_misconceptions_are_ranked_by_frequency():
    rows = ([attempt(misconception="no-scale", status="misconception", score=0, time=t) for t in (1, 2, 3)]
            + [attempt(misconception="wrong-axis", status="misconception", score=0, time=4)]
            + [attempt(topic="gru-step", misconception="swapped-blend", status="misconception", score=0, time=5)])
    ranked = misconception_stats(rows)
    assert [(m.topic, m.id, m.count) for m in ranked] == [("attention", "no-scale", 3), ("gru-step", "swapped-blend", 1),
                                                          ("attention", "wrong-axis", 1)]
    assert len(misconception_stats(rows, limit=1)) == 1


# ------------------------------------------------------------------ a read-only history

@pytest.fixture
def read_only(home, monkeypatch):
    """A history with one attempt, then made read-only (file and folder 0o555/0o444). The superuser
    writes whatever the modes say, so the check examprep makes (history._writable, os.access) is
    also answered as for any other user."""
    import os

    from examprep import history as history_module

    path = default_path()
    with History(path) as h:
        h.record(attempt())
    path.chmod(0o444)
    path.parent.chmod(0o555)
    monkeypatch.setattr(history_module, "_writable", lambda p: os.access(p, os.W_OK) and os.geteuid() != 0 and
                        os.access(p.parent, os.W_OK), raising=False)
    yield path
    path.parent.chmod(0o755)
    path.chmod(0o644)


def test_a_read_only_history_is_read_and_called_read_only(read_only):
    """It was "not a usable examprep history … move it aside": nothing is wrong with it."""
    with History(read_only) as h:
        assert h.read_only and len(h.attempts()) == 1
        with pytest.raises(HistoryError) as err:
            h.record(attempt())
    message = str(err.value)
    assert message.startswith(f"{read_only}: the history is read-only, so nothing can be recorded in it; ")
    assert "chmod u+w" in message and "EXAMPREP_HOME" in message and "move it aside" not in message
    assert "\n" not in message


def test_stats_work_on_a_read_only_history_and_a_quiz_says_what_to_do(read_only):
    from typer.testing import CliRunner

    from examprep.cli import app

    res = CliRunner().invoke(app, ["stats", "--json"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["quiz", "-t", "softmax-cross-entropy", "-n", "1"], input="\n")
    assert res.exit_code == 1, res.output
    assert res.stderr.startswith(f"error: {read_only}: the history is read-only, so a quiz's answers cannot be recorded")
    assert "Question" not in res.stdout and "(a)" not in res.stdout         # said before the first question
