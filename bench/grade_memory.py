"""Peak memory of `examprep grade` on class files (issue 35 item 4): a class read as a stream takes
memory linear in the submissions it keeps, never in the file's size.

Each case is graded by `python -m examprep grade KEY CLASS... --json FILE -q` in its own process;
its peak resident memory is the kernel's account of that child (os.wait4's rusage, ru_maxrss: the
same figure as resource.getrusage(RUSAGE_CHILDREN), but per child).

Baseline, measured in the same run: a 1,000-row class CSV (the interpreter, the key and the grader
loaded, few results). The class at the raised limit (--rows, default 100,000 rows, with
--max-class-rows and --max-class-size raised to it) is then reported as peak memory per 10,000 rows,
and as the memory it adds over the baseline per 10,000 rows added: linear reading keeps this
figure flat whatever the file's size (one CSV row and one JSON item hold a student's answers).
"Reading alone" is the same file read by read_file in a child of its own: what the stream keeps
(the parsed submissions) beside the file's own size; the rest of grading's memory is its results.
Then the refusals: a 60 MB, 3-million-row CSV beside the 1,000-row class with the default limits
(refused by its size before it is read), and the same file with --max-class-size raised to 100 MB
(refused at its 100,001st row, read as a stream): the class must be graded in both, under 1 GB.

Usage: python bench/grade_memory.py [--rows 100000] [--formats csv json]
Goal (issue 35): the 60 MB file refused with the class graded under 1 GB peak resident memory;
memory linear in the rows kept: the memory added per 10,000 rows at the raised limit within 1.25×
of that at a tenth of it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examprep import generators  # noqa: E402
from examprep.keys import Key, write_key  # noqa: E402

GOAL_MB = 1000
ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
# The reading alone, in a child of its own: what streaming keeps is the submissions
READ_ONLY = """import sys
from examprep.answers.files import Limits, read_file
subs, errors = read_file(sys.argv[1], Limits(class_rows=int(sys.argv[2]), class_bytes=int(sys.argv[3])))
assert len(subs) == int(sys.argv[2]) and not errors, errors[:3]
"""
# grades.json counted in a child too: a parent that grows passes its size on to the children it forks
COUNT = """import json, sys
data = json.load(open(sys.argv[1], encoding="utf-8"))
print(json.dumps([len(data["submissions"]), data["unreadable"]]))
"""
TOPICS = [("softmax-cross-entropy", 1), ("gru-step", 1)]       # 8 parts: vectors, numbers, an expression


def build_key(folder: Path) -> tuple[Path, dict[str, object]]:
    """A key of TOPICS and one student's correct answers by column (q1.probs …)."""
    problems = [generators.build(name, 7, level) for name, level in TOPICS]
    path = folder / "key.json"
    write_key(path, Key("memory bench", problems))
    answers = {f"q{n}.{part.id}": part.exact or part.expected for n, p in enumerate(problems, 1) for part in p.parts}
    return path, answers


def cell(value: object) -> str:
    text = json.dumps(value) if isinstance(value, (list, dict)) else str(value)
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text


def write_class(path: Path, rows: int, answers: dict[str, object], fmt: str) -> int:
    """A class file of ``rows`` students who all answer correctly; its size in bytes."""
    with path.open("w", encoding="utf-8", newline="") as fh:
        if fmt == "csv":
            fh.write("student_id," + ",".join(answers) + "\n")
            tail = "," + ",".join(cell(v) for v in answers.values()) + "\n"
            for start in range(0, rows, 10_000):
                fh.write("".join(f"s{i:07d}{tail}" for i in range(start, min(rows, start + 10_000))))
        else:
            body = json.dumps(answers)[1:]
            fh.write("[\n")
            for start in range(0, rows, 10_000):
                fh.write(",\n".join(f'{{"student_id": "s{i:07d}", {body}' for i in range(start, min(rows, start + 10_000))))
                fh.write(",\n" if start + 10_000 < rows else "\n")
            fh.write("]\n")
    return path.stat().st_size


def write_huge_csv(path: Path, rows: int = 3_000_000) -> int:
    """A 60 MB CSV of 3 million short rows (what a spreadsheet export gone wrong, or an attacker, gives)."""
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write("student_id,q1.loss\n")
        for start in range(0, rows, 100_000):
            fh.write("".join(f"x{i:011d},{i % 97:02d}.250\n" for i in range(start, start + 100_000)))
    return path.stat().st_size


def child(cmd: list[str]) -> tuple[float, float, int, str]:
    """Run ``cmd``: (its peak resident MB, seconds, exit status, stderr)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    stderr = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    peak_mb = usage.ru_maxrss / 1024 if sys.platform != "darwin" else usage.ru_maxrss / 2**20
    return peak_mb, time.perf_counter() - t0, os.waitstatus_to_exitcode(status), stderr.decode(errors="replace")


def read_only(path: Path, rows: int) -> tuple[float, float]:
    """Peak resident MB and seconds of reading ``path`` alone (read_file), limits raised to it."""
    peak_mb, seconds, code, stderr = child([sys.executable, "-c", READ_ONLY, str(path), str(rows),
                                            str(path.stat().st_size)])
    if code:
        sys.exit(f"reading {path} failed:\n{stderr[-2000:]}")
    return peak_mb, seconds


def grade(key: Path, files: list[Path], out: Path, options: list[str]) -> tuple[float, float, int, dict]:
    """Grade ``files`` in a child process: (peak resident MB, seconds, exit status, and of grades.json
    the number of submissions and the unreadable lines)."""
    out.unlink(missing_ok=True)          # a fresh output each time: replacing a large one costs memory of its own
    cmd = [sys.executable, "-m", "examprep", "grade", str(key), *map(str, files), "--json", str(out), "-q",
           "--no-color", *options]
    peak_mb, seconds, code, stderr = child(cmd)
    if code not in (0, 1) or not out.exists():
        sys.exit(f"{' '.join(cmd)} exited with {code}:\n{stderr[-2000:]}")
    counted = subprocess.run([sys.executable, "-c", COUNT, str(out)], capture_output=True, text=True, check=True)
    n, unreadable = json.loads(counted.stdout)
    return peak_mb, seconds, code, {"submissions": n, "unreadable": unreadable}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000, help="rows of the class at the raised limit")
    ap.add_argument("--baseline-rows", type=int, default=1_000)
    ap.add_argument("--formats", nargs="*", default=["csv", "json"], choices=["csv", "json"])
    args = ap.parse_args()
    if args.rows // 10 <= args.baseline_rows:
        ap.error(f"--rows: more than 10 × --baseline-rows ({args.baseline_rows:,}) needed")
    sys.stdout.reconfigure(line_buffering=True)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; peak resident memory of each "
          f"`examprep grade` process (ru_maxrss)")
    worst_ok = True
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        key, answers = build_key(folder)
        out = folder / "grades.json"
        base_file = folder / "class-base.csv"
        write_class(base_file, args.baseline_rows, answers, "csv")
        for fmt in args.formats:
            small = folder / f"base.{fmt}"
            write_class(small, args.baseline_rows, answers, fmt)
            base_mb, base_s, _, data = grade(key, [small], out, [])
            assert data["submissions"] == args.baseline_rows, "the baseline class was not graded whole"
            read_base, _ = read_only(small, args.baseline_rows)
            print(f"{fmt.upper():4} baseline {args.baseline_rows:>9,} rows: grade {base_mb:5.0f} MB peak in {base_s:5.1f} s; "
                  f"reading alone {read_base:4.0f} MB")
            added = []
            for rows in (args.rows // 10, args.rows):
                big = folder / f"class.{fmt}"
                size = write_class(big, rows, answers, fmt)
                raised = ["--max-class-rows", str(rows), "--max-class-size", f"{size / 1e6 + 0.001:.3f}"]
                big_mb, big_s, code, data = grade(key, [big], out, raised)
                assert data["submissions"] == rows and code == 0, (data["submissions"], code, data["unreadable"][:3])
                read_mb, read_s = read_only(big, rows)
                tens = (rows - args.baseline_rows) / 10_000
                added.append((big_mb - base_mb) / tens)
                per_file = size / 1e6 / (rows / 10_000)
                print(f"{fmt.upper():4} raised   {rows:>9,} rows ({size / 1e6:5.1f} MB, {per_file:.1f} MB per "
                      f"10,000): grade {big_mb:5.0f} MB peak ({big_mb / (rows / 10_000):6.1f} MB per 10,000 rows; "
                      f"{added[-1]:5.1f} MB per 10,000 rows over the baseline; {big_mb / base_mb:5.2f}× the baseline) in "
                      f"{big_s:5.1f} s; reading alone {read_mb:4.0f} MB ({(read_mb - read_base) / tens:4.1f} MB per 10,000 "
                      f"rows over the baseline) in {read_s:4.1f} s")
            linear = added[1] <= 1.25 * added[0]
            worst_ok = worst_ok and linear
            print(f"{fmt.upper():4} memory added per 10,000 rows at {args.rows:,} rows / at {args.rows // 10:,}: "
                  f"{added[1] / added[0]:.2f} (goal ≤ 1.25, linear: {'ok' if linear else 'over'})")
        huge = folder / "huge.csv"
        size = write_huge_csv(huge)
        for label, options, reason in [("default limits", [], "limit for a class file"),
                                       ("--max-class-size 100", ["--max-class-size", "100"], "rows, over the limit")]:
            peak_mb, seconds, code, data = grade(key, [base_file, huge], out, options)
            graded = data["submissions"]
            refused = [u for u in data["unreadable"] if "huge.csv" in u]
            ok = (code == 1 and graded == args.baseline_rows and len(refused) == 1 and reason in refused[0]
                  and peak_mb < GOAL_MB)
            worst_ok = worst_ok and ok
            print(f"60 MB CSV ({size / 1e6:.1f} MB, 3,000,000 rows) beside {args.baseline_rows:,} rows, {label}: "
                  f"{peak_mb:.0f} MB peak in {seconds:.1f} s, {graded:,} graded, exit {code} "
                  f"(goal < {GOAL_MB} MB and the class graded: {'ok' if ok else 'over'})")
            print(f"     {refused[0] if refused else 'NOT REFUSED'}")
    print("all within their goals" if worst_ok else "some over their goals")


if __name__ == "__main__":
    main()
