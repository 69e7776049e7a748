"""The history on a full disk: the answer that could not be saved is named in one line (no
traceback), and every answer saved before it is kept."""
from __future__ import annotations

import sqlite3

import pytest
from typer.testing import CliRunner

from examprep import generators
from examprep.cli import app
from examprep.history import History, HistoryError

from .helpers import correct_answers
from .test_history import attempt


def test_a_full_history_disk_is_one_line_and_keeps_what_was_saved(tmp_path):
    """SQLite's own SQLITE_FULL: the database may grow by one page only (PRAGMA max_page_count)."""
    path = tmp_path / "h.sqlite3"
    saved = 0
    with History(path) as h:
        pages = h.conn.execute("PRAGMA page_count").fetchone()[0]
        h.conn.execute(f"PRAGMA max_page_count = {pages + 1}")
        with pytest.raises(HistoryError) as info:
            for i in range(10_000):
                h.record(attempt(part=f"p{i}", answer="x" * 200))
                saved += 1
    assert str(info.value) == (f"{path}: cannot save to the history (the disk is full); everything saved before "
                               "this is kept — free some space and start again")
    assert saved > 0
    with History(path) as h:
        assert [a.part for a in h.attempts()] == [f"p{i}" for i in range(saved)]


class _FullAfter:
    """A connection whose disk fills after ``n`` answers: the next INSERT fails as SQLite's does."""

    def __init__(self, conn: sqlite3.Connection, n: int):
        self.conn, self.left = conn, n

    def execute(self, sql, *args):
        if sql.startswith("INSERT INTO attempts"):
            if self.left == 0:
                raise sqlite3.OperationalError("database or disk is full")
            self.left -= 1
        return self.conn.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self.conn, name)


def test_the_quiz_on_a_full_disk_ends_in_one_line_with_the_answers_before_kept(monkeypatch):
    problem = generators.build("attention", 8, 1)
    opened = History.__init__

    def full_after_two(self, *args, **kw):
        opened(self, *args, **kw)
        self.conn = _FullAfter(self.conn, 2)

    monkeypatch.setattr(History, "__init__", full_after_two)
    res = CliRunner().invoke(app, ["quiz", "--topic", "attention", "--seed", "8", "--count", "1"],
                             input="".join(f"{a}\n" for a in correct_answers(problem)) + "\n", env={"COLUMNS": "80"})
    monkeypatch.setattr(History, "__init__", opened)       # (undo() would drop EXAMPREP_HOME too)
    assert res.exit_code == 1 and "Traceback" not in res.output and not isinstance(res.exception, sqlite3.Error)
    assert res.stderr.count("\n") == 1 and "cannot save to the history (the disk is full)" in res.stderr, res.stderr
    with History() as h:
        assert [a.part for a in h.attempts()] == ["scaled_scores", "weights"]


@pytest.mark.parametrize("failure, said", [("database or disk is full", "the disk is full"),
                                           ("disk I/O error", "a disk I/O error: is the disk full?")])
def test_a_full_disk_when_the_history_opens_never_calls_it_unusable(tmp_path, monkeypatch, failure, said):
    """With a few kB left, SQLite fails while the history is opened (its WAL files): the history is
    fine, so the line says why and never 'move it aside'."""
    path = tmp_path / "h.sqlite3"
    with History(path) as h:
        h.record(attempt(part="p0"))

    def full(self):
        raise sqlite3.OperationalError(failure)

    monkeypatch.setattr(History, "_set_wal", full)
    with pytest.raises(HistoryError) as info:
        History(path)
    assert str(info.value) == (f"{path}: cannot open the history ({said}); it is kept as it is — free some space "
                               "and start again")
    monkeypatch.undo()
    with History(path) as h:
        assert [a.part for a in h.attempts()] == ["p0"]
