"""The progress store: every attempt, every review-schedule card, in one SQLite file.

Where: ``$EXAMPREP_HOME/history.sqlite3`` when EXAMPREP_HOME is set, else platformdirs' user
data directory for "examprep" (``~/.local/share/examprep`` on Linux).

Safety: WAL journal (readers never block the writer), a 30 s busy timeout, and one short
transaction per attempt, so two quiz processes can write at once and an interrupted session keeps
every attempt answered before the interrupt. Schedule cards are read-modify-written inside
``BEGIN IMMEDIATE`` (``update_card``), so concurrent reviews of one card are serialised, never lost.

Schema: versioned with ``PRAGMA user_version`` (``SCHEMA_VERSION``); older files are migrated in
place, a file from a newer examprep is refused with a message rather than misread.

Times are Unix seconds (UTC); ``seconds`` is the time a student spent on a part.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import platformdirs

from examprep.errors import ExamprepError

SCHEMA_VERSION = 3
FILENAME = "history.sqlite3"

# status values of a recorded part (the grading engine's, plus "revealed": the student asked for
# the worked solution before answering, and "timeout": an exam ended before the part was answered)
CORRECT_STATUSES = ("correct", "ecf")

_MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE sessions (
        id       INTEGER PRIMARY KEY,
        mode     TEXT NOT NULL,                 -- quiz | exam | review
        started  REAL NOT NULL,
        ended    REAL,
        options  TEXT NOT NULL DEFAULT '{}',    -- the command's options, JSON
        pid      INTEGER
    );
    CREATE TABLE attempts (
        id              INTEGER PRIMARY KEY,
        session_id      INTEGER REFERENCES sessions(id),
        time            REAL NOT NULL,          -- when the part was answered (Unix seconds)
        kind            TEXT NOT NULL CHECK (kind IN ('problem', 'concept')),
        topic           TEXT NOT NULL,          -- generator name, or "concepts/<section>"
        item            TEXT NOT NULL,          -- what is scheduled: "topic:<gen>" or "concept:<id>"
        generator       TEXT NOT NULL,          -- generator name, or "concept:<id>"
        version         INTEGER NOT NULL,       -- generator version, or the concept bank's version
        seed            INTEGER,
        difficulty      INTEGER,
        calculator_free INTEGER NOT NULL DEFAULT 0,
        problem_no      INTEGER NOT NULL,       -- position of the problem in its session
        part            TEXT NOT NULL,
        answer          TEXT NOT NULL,          -- exactly what was typed ('' when blank)
        status          TEXT NOT NULL,          -- correct | ecf | misconception | wrong | blank | revealed | timeout
        score           REAL NOT NULL,
        max_score       REAL NOT NULL,
        misconception   TEXT,                   -- the matched misconception's id, if any
        feedback        TEXT,                   -- what the student was told (the misconception's explanation)
        hints           INTEGER NOT NULL DEFAULT 0,
        seconds         REAL NOT NULL,
        mode            TEXT NOT NULL DEFAULT 'quiz'   -- quiz | exam | review
    );
    CREATE INDEX attempts_topic_time ON attempts (topic, time);
    CREATE INDEX attempts_generator_seed ON attempts (generator, difficulty, seed);
    CREATE TABLE cards (
        item     TEXT PRIMARY KEY,              -- "topic:<generator>" or "concept:<id>"
        card     TEXT NOT NULL,                 -- fsrs.Card as JSON
        due      REAL NOT NULL,                 -- Unix seconds, for due queries
        reviews  INTEGER NOT NULL DEFAULT 0,
        updated  REAL NOT NULL
    );
    CREATE INDEX cards_due ON cards (due);
    CREATE TABLE reviews (
        id         INTEGER PRIMARY KEY,
        item       TEXT NOT NULL,
        time       REAL NOT NULL,
        rating     INTEGER NOT NULL,            -- fsrs.Rating: 1 Again, 2 Hard, 3 Good, 4 Easy
        seconds    REAL,
        session_id INTEGER
    );
    CREATE INDEX reviews_item ON reviews (item, time);
    """,
    # 2: FSRS parameters fitted to the student's own review log (`examprep review --optimize`); the
    # newest row is the one the scheduler uses, a row without parameters is a return to the defaults
    2: """
    CREATE TABLE fsrs_parameters (
        id               INTEGER PRIMARY KEY,
        time             REAL NOT NULL,         -- when they were fitted, or the reset (Unix seconds)
        parameters       TEXT,                  -- JSON list of the FSRS-6 weights, NULL for the defaults
        reviews          INTEGER NOT NULL DEFAULT 0,   -- reviews in the log when fitted
        training_reviews INTEGER NOT NULL DEFAULT 0,   -- of them, those the optimizer learns from
        log_loss         REAL,                  -- the fitted parameters' log loss on those reviews
        previous_log_loss REAL,                 -- the parameters they replaced, on the same reviews
        optimizer        TEXT                   -- the optimizer and its version
    );
    """,
    # 3: the question file an authored question's card is served from (`examprep quiz --question
    # FILE`), so `examprep review` can draw it again and tell a moved or edited file
    3: """
    CREATE TABLE card_files (
        item     TEXT PRIMARY KEY,              -- the card's item: "topic:question:<id>"
        path     TEXT NOT NULL,                 -- the question file, resolved absolute
        sha256   TEXT NOT NULL,                 -- SHA-256 of its text (UTF-8) when last practised or re-linked
        linked   REAL NOT NULL                  -- when that was (Unix seconds)
    );
    """,
}


class HistoryError(ExamprepError):
    """The history file cannot be opened, is damaged, or was written by a newer examprep."""

    exit_code = 1


def home() -> Path:
    """examprep's data directory: $EXAMPREP_HOME if set, else the platform's user data dir."""
    env = os.environ.get("EXAMPREP_HOME")
    if env:
        return Path(env).expanduser()

    return Path(platformdirs.user_data_dir("examprep", appauthor=False))


def _writable(path: Path) -> bool:
    """Can the history and its folder (SQLite's WAL and shared-memory files live beside it) be written?"""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def default_path() -> Path:
    return home() / FILENAME


@dataclass(frozen=True)
class CardFile:
    """The question file a card is drawn from: ``path`` resolved absolute, ``sha256`` of its text
    when the card was last practised from it (or re-linked to it), ``linked`` when (Unix seconds)."""

    path: str
    sha256: str
    linked: float = 0.0


@dataclass
class Attempt:
    """One answered (or skipped) part. ``kind`` "problem" or "concept"."""

    kind: str
    topic: str
    item: str
    generator: str
    version: int
    part: str
    answer: str
    status: str
    score: float
    max_score: float
    seconds: float
    seed: int | None = None
    difficulty: int | None = None
    calculator_free: bool = False
    problem_no: int = 0
    misconception: str | None = None
    feedback: str | None = None
    hints: int = 0
    mode: str = "quiz"
    time: float = field(default_factory=time.time)
    session_id: int | None = None
    id: int | None = None

    @property
    def correct(self) -> bool:
        return self.status in CORRECT_STATUSES


_ATTEMPT_COLUMNS = ("session_id", "time", "kind", "topic", "item", "generator", "version", "seed", "difficulty",
                    "calculator_free", "problem_no", "part", "answer", "status", "score", "max_score",
                    "misconception", "feedback", "hints", "seconds", "mode")


class History:
    """An open progress store. Use as a context manager, or call ``close``.

    Raises HistoryError when the file cannot be created or opened, is not a database, or has a
    newer schema than this examprep knows.
    """

    def __init__(self, path: str | os.PathLike | None = None, *, timeout: float = 30.0):
        self.path = Path(path) if path is not None else default_path()
        self.read_only = False
        if self.path.is_file() and not _writable(self.path):
            self._open_read_only()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # autocommit mode: every transaction below is explicit and short
            self.conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        except (OSError, sqlite3.Error) as err:
            raise HistoryError(f"{self.path}: cannot open the history ({err}); "
                               "set EXAMPREP_HOME to a writable directory") from None
        try:
            self.conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            self._set_wal()
            self.conn.execute("PRAGMA synchronous = NORMAL")   # durable across crashes in WAL mode
            self._migrate()
        except sqlite3.DatabaseError as err:
            self.conn.close()
            if "readonly" in str(err):            # a read-only file system, or modes os.access did not see
                self._open_read_only()
                return
            trouble = _disk_trouble(err)
            if trouble is not None:               # a nearly full disk fails here first: the history itself is fine
                raise HistoryError(f"{self.path}: cannot open the history ({trouble}); it is kept as it is — free "
                                   "some space and start again") from None
            raise HistoryError(f"{self.path}: not a usable examprep history ({err}); "
                               "move it aside to start a new one") from None

    def _open_read_only(self) -> None:
        """Open a history that cannot be written (its file or its folder read-only): everything that
        reads it works (stats, --due); anything that would write raises HistoryError saying so."""
        self.read_only = True
        uri = self.path.resolve().as_uri()
        try:
            try:
                self.conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None)
                self.conn.execute("PRAGMA user_version").fetchone()
            except sqlite3.OperationalError:      # WAL's shared-memory file cannot be made beside it: read as is
                self.conn = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None)
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as err:
            raise HistoryError(f"{self.path}: not a usable examprep history ({err}); "
                               "move it aside to start a new one") from None
        if version > SCHEMA_VERSION:
            raise HistoryError(f"{self.path}: history schema {version} is newer than this examprep reads "
                               f"({SCHEMA_VERSION}); upgrade examprep")
        if version < SCHEMA_VERSION:
            raise HistoryError(f"{self.path}: the history is read-only and from an older examprep; make it writable "
                               "once (chmod u+w on it and its folder) so this examprep can upgrade it")

    def read_only_message(self, doing: str) -> str:
        """One line: read-only, so ``doing`` ("a quiz's answers cannot be recorded"); what still works; what to do."""
        return (f"{self.path}: the history is read-only, so {doing}; `examprep stats` and "
                "`examprep review --due` still read it. Make it writable (chmod u+w on the file and its "
                "folder), or set EXAMPREP_HOME to another folder to start a new history there")

    # ------------------------------------------------------------------------------ plumbing

    def _set_wal(self) -> None:
        # Switching to WAL needs a moment of exclusive access; a second process starting at the
        # same instant may get SQLITE_BUSY without the busy handler, so retry briefly.
        for attempt in range(100):
            try:
                mode = self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode.lower() != "wal":
                    raise HistoryError(f"{self.path}: the file system does not support SQLite's WAL mode "
                                       "(set EXAMPREP_HOME to a local directory)")
                return
            except sqlite3.OperationalError as err:
                if "locked" not in str(err) and "busy" not in str(err):
                    raise
                time.sleep(0.02 * (1 + attempt % 5))
        raise HistoryError(f"{self.path}: the history is locked by another process")

    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise HistoryError(f"{self.path}: history schema {version} is newer than this examprep reads "
                               f"({SCHEMA_VERSION}); upgrade examprep")
        if version == SCHEMA_VERSION:
            return
        with self.transaction():
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]   # another process may have won
            for v in range(version + 1, SCHEMA_VERSION + 1):
                for statement in _split_sql(_MIGRATIONS[v]):
                    self.conn.execute(statement)
                self.conn.execute(f"PRAGMA user_version = {v}")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT (rolled back on any exception, KeyboardInterrupt included).
        A full disk (or a failing one) is HistoryError in one line: this transaction is lost, every
        one committed before it is kept. HistoryError for a read-only history (every write comes here)."""
        if self.read_only:
            raise HistoryError(self.read_only_message("nothing can be recorded in it"))
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self._rollback()
                raise
            try:
                self.conn.execute("COMMIT")
            except sqlite3.Error:
                self._rollback()
                raise
        except sqlite3.OperationalError as err:
            reason = _disk_trouble(err)
            if reason is None:
                raise
            raise HistoryError(f"{self.path}: cannot save to the history ({reason}); everything saved before "
                               "this is kept — free some space and start again") from None

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:          # SQLite may have rolled back already (a full disk at COMMIT)
                pass

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "History":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------------------ sessions

    def start_session(self, mode: str, options: dict[str, Any] | None = None, *, now: float | None = None) -> int:
        with self.transaction() as c:
            cur = c.execute("INSERT INTO sessions (mode, started, options, pid) VALUES (?, ?, ?, ?)",
                            (mode, time.time() if now is None else now, json.dumps(options or {}), os.getpid()))
            return int(cur.lastrowid)

    def end_session(self, session_id: int, *, now: float | None = None) -> None:
        with self.transaction() as c:
            c.execute("UPDATE sessions SET ended = ? WHERE id = ?", (time.time() if now is None else now, session_id))

    # ------------------------------------------------------------------------------ attempts

    def record(self, attempt: Attempt) -> int:
        """Store one attempt in its own transaction (committed before this returns)."""
        row = tuple(int(attempt.calculator_free) if k == "calculator_free" else getattr(attempt, k)
                    for k in _ATTEMPT_COLUMNS)
        with self.transaction() as c:
            cur = c.execute(f"INSERT INTO attempts ({', '.join(_ATTEMPT_COLUMNS)}) "
                            f"VALUES ({', '.join('?' * len(_ATTEMPT_COLUMNS))})", row)
            attempt.id = int(cur.lastrowid)
        return attempt.id

    def attempts(self, *, topic: str | None = None, kind: str | None = None, since: float | None = None,
                 session_id: int | None = None) -> list[Attempt]:
        """Stored attempts, oldest first, filtered by topic, kind, time and session."""
        where, args = [], []
        for col, val in (("topic", topic), ("kind", kind), ("session_id", session_id)):
            if val is not None:
                where.append(f"{col} = ?")
                args.append(val)
        if since is not None:
            where.append("time >= ?")
            args.append(since)
        sql = f"SELECT id, {', '.join(_ATTEMPT_COLUMNS)} FROM attempts"
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = self.conn.execute(sql + " ORDER BY time, id", args).fetchall()
        out = []
        for r in rows:
            d = dict(zip(("id",) + _ATTEMPT_COLUMNS, r))
            d["calculator_free"] = bool(d["calculator_free"])
            out.append(Attempt(**d))
        return out

    def used_seeds(self, generator: str, difficulty: int, calculator_free: bool) -> set[int]:
        """Seeds of every variant of ``generator`` at this level already attempted."""
        rows = self.conn.execute("SELECT DISTINCT seed FROM attempts WHERE kind = 'problem' AND generator = ? "
                                 "AND difficulty = ? AND calculator_free = ? AND seed IS NOT NULL",
                                 (generator, difficulty, int(calculator_free))).fetchall()
        return {r[0] for r in rows}

    def count_attempts(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM attempts").fetchone()[0])

    # ------------------------------------------------------------------------------ schedule cards

    def card(self, item: str) -> str | None:
        """The stored card JSON of ``item``, or None when it was never reviewed."""
        row = self.conn.execute("SELECT card FROM cards WHERE item = ?", (item,)).fetchone()
        return row[0] if row else None

    def update_card(self, item: str, update: Any, *, rating: int, seconds: float | None, now: float,
                    session_id: int | None = None, file: CardFile | None = None) -> tuple[str, float]:
        """Read-modify-write one card atomically: ``update(old_json_or_None) -> (new_json, due)``.

        Also logs the review, and with ``file`` links the card to the question file it was drawn
        from (its ``linked`` becomes ``now``). Returns (new_json, due). Serialised against other
        processes by BEGIN IMMEDIATE, so two concurrent reviews of one card both count.
        """
        with self.transaction() as c:
            row = c.execute("SELECT card FROM cards WHERE item = ?", (item,)).fetchone()
            new_json, due = update(row[0] if row else None)
            c.execute("INSERT INTO cards (item, card, due, reviews, updated) VALUES (?, ?, ?, 1, ?) "
                      "ON CONFLICT(item) DO UPDATE SET card = excluded.card, due = excluded.due, "
                      "reviews = cards.reviews + 1, updated = excluded.updated",
                      (item, new_json, due, now))
            c.execute("INSERT INTO reviews (item, time, rating, seconds, session_id) VALUES (?, ?, ?, ?, ?)",
                      (item, now, rating, seconds, session_id))
            if file is not None:
                _link(c, item, file, now)
        return new_json, due

    def card_files(self) -> dict[str, CardFile]:
        """The question file of each card drawn from one, by item."""
        return {r[0]: CardFile(r[1], r[2], r[3])
                for r in self.conn.execute("SELECT item, path, sha256, linked FROM card_files")}

    def relink_card(self, item: str, file: CardFile, *, now: float) -> bool:
        """Link the card ``item`` to ``file`` (its text as it is now), keeping its schedule. False
        when there is no such card."""
        with self.transaction() as c:
            if c.execute("SELECT 1 FROM cards WHERE item = ?", (item,)).fetchone() is None:
                return False
            _link(c, item, file, now)
        return True

    def drop_card(self, item: str) -> bool:
        """Take ``item`` off the review schedule (its card and question file); its attempts and
        review log stay. False when there is no such card."""
        with self.transaction() as c:
            gone = c.execute("DELETE FROM cards WHERE item = ?", (item,)).rowcount
            c.execute("DELETE FROM card_files WHERE item = ?", (item,))
        return bool(gone)

    def cards(self) -> list[tuple[str, str, float, int]]:
        """Every card: (item, card JSON, due, number of reviews), soonest due first."""
        return [tuple(r) for r in self.conn.execute("SELECT item, card, due, reviews FROM cards ORDER BY due, item")]

    def fsrs_parameters(self) -> dict[str, Any] | None:
        """The newest stored FSRS parameters row (``parameters`` None after a reset), or None when
        the defaults were never replaced."""
        row = self.conn.execute("SELECT time, parameters, reviews, training_reviews, log_loss, previous_log_loss, "
                                "optimizer FROM fsrs_parameters ORDER BY id DESC LIMIT 1").fetchone()
        if row is None:
            return None
        keys = ("time", "parameters", "reviews", "training_reviews", "log_loss", "previous_log_loss", "optimizer")
        out = dict(zip(keys, row))
        out["parameters"] = json.loads(out["parameters"]) if out["parameters"] is not None else None
        return out

    def save_fsrs_parameters(self, parameters: list[float] | None, *, now: float, reviews: int = 0,
                             training_reviews: int = 0, log_loss: float | None = None,
                             previous_log_loss: float | None = None, optimizer: str | None = None) -> None:
        """Store fitted parameters (None: back to the defaults) as the newest row, in one transaction."""
        with self.transaction() as c:
            c.execute("INSERT INTO fsrs_parameters (time, parameters, reviews, training_reviews, log_loss, "
                      "previous_log_loss, optimizer) VALUES (?, ?, ?, ?, ?, ?, ?)",
                      (now, json.dumps([float(w) for w in parameters]) if parameters is not None else None,
                       reviews, training_reviews, log_loss, previous_log_loss, optimizer))

    def review_log(self, item: str | None = None) -> list[tuple[str, float, int, float | None]]:
        sql = "SELECT item, time, rating, seconds FROM reviews"
        args: tuple = ()
        if item is not None:
            sql += " WHERE item = ?"
            args = (item,)
        return [tuple(r) for r in self.conn.execute(sql + " ORDER BY time, id", args)]


def _link(c: sqlite3.Connection, item: str, file: CardFile, now: float) -> None:
    c.execute("INSERT INTO card_files (item, path, sha256, linked) VALUES (?, ?, ?, ?) ON CONFLICT(item) DO UPDATE "
              "SET path = excluded.path, sha256 = excluded.sha256, linked = excluded.linked",
              (item, file.path, file.sha256, now))


def _disk_trouble(err: sqlite3.Error) -> str | None:
    """"the disk is full" or "a disk I/O error" where ``err`` is SQLite's SQLITE_FULL or SQLITE_IOERR
    (an ENOSPC while writing the journal often shows as the latter), else None."""
    code = getattr(err, "sqlite_errorcode", None)
    text = str(err).lower()
    if code == getattr(sqlite3, "SQLITE_FULL", 13) or "disk is full" in text:
        return "the disk is full"
    if (code is not None and code & 0xFF == getattr(sqlite3, "SQLITE_IOERR", 10)) or "disk i/o error" in text:
        return "a disk I/O error: is the disk full?"
    return None


def _split_sql(script: str) -> list[str]:
    """Statements of a migration script (ours: no semicolons inside strings or triggers)."""
    out = []
    for chunk in script.split(";"):
        lines = [ln.split("--", 1)[0] for ln in chunk.splitlines()]
        text = "\n".join(lines).strip()
        if text:
            out.append(text)
    return out


# ---------------------------------------------------------------------------------- statistics

@dataclass
class TopicStats:
    """Progress on one topic. ``accuracy``: points scored / points possible; ``recent`` and
    ``earlier``: the same over the last ``window`` problems and the ones before them (None when
    there are none); ``scores``: each problem's fraction, oldest first; ``seconds_per_problem``:
    the median time on a problem."""

    topic: str
    kind: str
    problems: int
    parts: int
    accuracy: float
    recent: float | None
    earlier: float | None
    scores: list[float]
    seconds_per_problem: float
    last: float

    @property
    def trend(self) -> float | None:
        if self.recent is None or self.earlier is None:
            return None
        return self.recent - self.earlier


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    if not s:
        return 0.0
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def problem_groups(attempts: list[Attempt]) -> list[list[Attempt]]:
    """Attempts grouped by problem (session, position in it, generator, seed), in order."""
    groups: dict[tuple, list[Attempt]] = {}
    for a in attempts:
        groups.setdefault((a.session_id, a.problem_no, a.generator, a.seed, a.id if a.session_id is None else 0),
                          []).append(a)
    return list(groups.values())


def topic_stats(attempts: list[Attempt], *, window: int = 5) -> list[TopicStats]:
    """Per-topic progress from a list of attempts, topics sorted weakest first."""
    by_topic: dict[str, list[list[Attempt]]] = {}
    for group in problem_groups(attempts):
        by_topic.setdefault(group[0].topic, []).append(group)
    out = []
    for topic, groups in by_topic.items():
        fractions = [sum(a.score for a in g) / max(sum(a.max_score for a in g), 1e-12) for g in groups]
        earned = sum(a.score for g in groups for a in g)
        possible = sum(a.max_score for g in groups for a in g)
        recent = fractions[-window:]
        earlier = fractions[:-window][-window:]
        out.append(TopicStats(
            topic=topic, kind=groups[0][0].kind, problems=len(groups), parts=sum(len(g) for g in groups),
            accuracy=earned / possible if possible else 0.0,
            recent=sum(recent) / len(recent) if recent else None,
            earlier=sum(earlier) / len(earlier) if earlier else None,
            scores=fractions, seconds_per_problem=_median([sum(a.seconds for a in g) for g in groups]),
            last=max(a.time for g in groups for a in g)))
    out.sort(key=lambda s: (s.accuracy, s.topic))
    return out


@dataclass
class MisconceptionStats:
    id: str
    topic: str
    count: int
    last: float


def misconception_stats(attempts: list[Attempt], limit: int = 10) -> list[MisconceptionStats]:
    """The most frequent misconceptions (by topic and id), most frequent first."""
    counts: dict[tuple[str, str], MisconceptionStats] = {}
    for a in attempts:
        if a.misconception:
            key = (a.topic, a.misconception)
            m = counts.setdefault(key, MisconceptionStats(a.misconception, a.topic, 0, a.time))
            m.count += 1
            m.last = max(m.last, a.time)
    return sorted(counts.values(), key=lambda m: (-m.count, -m.last, m.topic, m.id))[:limit]
