"""What the quiz's bookkeeping costs, each against a baseline measured in the same run.

1. Storing an attempt: History.record (WAL, one durable transaction per answer, so Ctrl-C or a
   crash loses nothing) against the baseline of a bare sqlite3 INSERT into the same table
   shape, autocommit with SQLite's default journal.
2. One answered part end to end: check_part + record (+ the FSRS review after each problem)
   against the baseline of check_part alone: the share the history adds to a student's wait.
3. `examprep stats` data (stats_data) over a large history against the baseline of fetching
   every attempt row.
4. Two processes recording at once against one process recording the same total.

Usage: python bench/quiz.py [--attempts 2000] [--history 20000]
"""
from __future__ import annotations

import argparse
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from examprep import generators
from examprep.answers import check_part
from examprep.history import Attempt, History
from examprep.quiz import stats_data
from examprep.review import review


def attempt(i: int, topic: str = "attention") -> Attempt:
    return Attempt(kind="problem", topic=topic, item=f"topic:{topic}", generator=topic, version=1, part="scores",
                   answer="[[0.5, 0], [-0.5, 0]]", status="correct" if i % 3 else "misconception",
                   score=2.0 if i % 3 else 0.0, max_score=2.0, seconds=12.5, seed=i, difficulty=1, problem_no=i,
                   misconception=None if i % 3 else "no-scale", session_id=1 + i // 10)


def per_call(fn, n: int) -> float:
    t0 = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - t0) / n


def bench_record(tmp: Path, n: int) -> None:
    with History(tmp / "record.sqlite3") as h:
        ours = per_call(lambda i: h.record(attempt(i)), n)
    for journal, label in (("WAL", "bare INSERT, WAL, synchronous=NORMAL"),
                           ("DELETE", "bare INSERT, SQLite defaults (rollback journal, synchronous=FULL)")):
        con = sqlite3.connect(tmp / f"bare-{journal}.sqlite3", isolation_level=None)
        con.execute(f"PRAGMA journal_mode = {journal}")
        if journal == "WAL":
            con.execute("PRAGMA synchronous = NORMAL")
        con.execute("CREATE TABLE attempts (topic TEXT, part TEXT, answer TEXT, status TEXT, score REAL, seconds REAL)")
        base = per_call(lambda i, con=con: con.execute("INSERT INTO attempts VALUES (?, ?, ?, ?, ?, ?)",
                                                       ("attention", "scores", "[[0.5, 0]]", "correct", 2.0, 12.5)), n)
        con.close()
        print(f"1. record one attempt  {ours * 1e3:8.3f} ms   baseline {label}: {base * 1e3:.3f} ms"
              f"   ratio {ours / base:.3g}×")


def bench_answer(tmp: Path, n: int) -> None:
    problem = generators.build("attention", 7, 1)
    raws = ["[[0.5, 0], [-0.5, 0]]", "[[0.6225, 0.3775], [0.3775, 0.6225]]", "[[0.1326, 0.7551], [0.8674, 1.245]]"]

    def check_only(i: int) -> None:
        earlier: dict = {}
        for part, raw in zip(problem.parts, raws):
            earlier[part.id] = check_part(part, raw, earlier).value

    with History(tmp / "answer.sqlite3") as h:
        def full(i: int) -> None:
            earlier: dict = {}
            for part, raw in zip(problem.parts, raws):
                r = check_part(part, raw, earlier)
                earlier[part.id] = r.value
                h.record(attempt(i))
            review(h, "topic:attention", 3, now=1.7e9 + i * 600.0, seconds=40.0)

        base = per_call(check_only, n // 10)
        ours = per_call(full, n // 10)
    print(f"2. answer a 3-part problem  {ours * 1e3:.3f} ms   baseline check_part alone: {base * 1e3:.3f} ms"
          f"   ratio {ours / base:.3g}× (the history adds {(ours - base) * 1e3:.2f} ms per problem)")


def bench_stats(tmp: Path, n: int) -> None:
    path = tmp / "stats.sqlite3"
    with History(path) as h:
        with h.transaction() as c:       # bulk-load the history fast (the bench measures reading it)
            for i in range(n):
                a = attempt(i, topic=("attention", "gru-step", "receptive-field", "softmax-cross-entropy")[i % 4])
                c.execute("INSERT INTO attempts (session_id, time, kind, topic, item, generator, version, seed, "
                          "difficulty, calculator_free, problem_no, part, answer, status, score, max_score, "
                          "misconception, feedback, hints, seconds, mode) VALUES "
                          "(?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, 'quiz')",
                          (a.session_id, 1.7e9 + i, a.kind, a.topic, a.item, a.generator, a.version, a.seed,
                           a.difficulty, a.problem_no, a.part, a.answer, a.status, a.score, a.max_score,
                           a.misconception, "you forgot the scale" if a.misconception else None, a.seconds))
        runs = [0.0, 0.0]
        for k in range(3):
            t0 = time.perf_counter()
            stats_data(h, now=1.7e9 + n)
            t1 = time.perf_counter()
            h.conn.execute("SELECT * FROM attempts").fetchall()
            t2 = time.perf_counter()
            runs = [runs[0] + t1 - t0, runs[1] + t2 - t1] if k else [t1 - t0, t2 - t1]
    ours, base = runs[0] / 2, runs[1] / 2
    print(f"3. stats over {n} attempts  {ours * 1e3:.0f} ms   baseline fetch every row: {base * 1e3:.0f} ms"
          f"   ratio {ours / base:.3g}×")


WRITER = ("import sys\nfrom examprep.history import Attempt, History\n"
          "with History(sys.argv[1], timeout=60) as h:\n"
          "    for i in range(int(sys.argv[2])):\n"
          "        h.record(Attempt(kind='problem', topic='t', item='topic:t', generator='t', version=1, part='p',\n"
          "                         answer='1', status='correct', score=1, max_score=1, seconds=1))\n")


def bench_concurrent(tmp: Path, n: int) -> None:
    def run(procs: int, each: int, name: str) -> float:
        path = tmp / name
        History(path).close()
        t0 = time.perf_counter()
        ps = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(each)]) for _ in range(procs)]
        for p in ps:
            p.wait()
        elapsed = time.perf_counter() - t0
        with History(path) as h:
            assert h.count_attempts() == procs * each, "lost attempts"
        return elapsed

    one = statistics.median(run(1, n, f"one{k}.sqlite3") for k in range(3))
    two = statistics.median(run(2, n // 2, f"two{k}.sqlite3") for k in range(3))
    print(f"4. {n} attempts by 2 processes at once  {two * 1e3:.0f} ms   baseline 1 process: {one * 1e3:.0f} ms"
          f"   ratio {two / one:.3g}× (none lost)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--attempts", type=int, default=2000)
    ap.add_argument("--history", type=int, default=20000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        bench_record(tmp, args.attempts)
        bench_answer(tmp, args.attempts)
        bench_stats(tmp, args.history)
        bench_concurrent(tmp, args.attempts)


if __name__ == "__main__":
    main()
