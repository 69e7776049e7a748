"""Benchmark of grading: 1,000 and 10,000 submissions × 20 parts from one key, end to end (read
the answer files, parse, check with misconceptions and error carried forward, write the CSV and
JSON exports), then the worst-case hostile answers one by one.

End to end = read the files + grade (the first run includes sympy's import and warm-up) + export
CSV and JSON; "in-memory" grades the same answers again without files, caches warm.

Baseline, measured in the same run on the same answers: a naive grader that reads each answer
with json.loads/float and compares it with numpy.isclose — no safe parsing of formulas, no
feedback, no misconceptions, no ECF. The ratio says what the real grader costs on top.

Then files built to be slow, each just under the one-submission size limit (issue 14: 66,741
unknown part ids once took 30 s), graded alone; the baseline parses the same file with json or
tomllib only.

Usage: python bench/grade.py [--sizes 1000 10000] [--cli]
Goals (issue 5): ≥ 4,000 parts/s, cost linear in submissions, no single answer over 50 ms;
(issue 14) every hostile file graded in well under a second.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from examprep import ecf, generators  # noqa: E402
from examprep.answers import check_part  # noqa: E402
from examprep.grading import Settings, grade_batch, grade_submission  # noqa: E402
from examprep.keys import Key, write_key  # noqa: E402
from examprep.grading import report_text  # noqa: E402

PARTS = 20


def twenty_part_problems():
    """Problems from several topics (one symbolic part included) with exactly 20 parts in all."""
    picks = [("softmax-cross-entropy", 1), ("attention", 2), ("gru-step", 2), ("receptive-field", 2),
             ("lora", 1), ("param-count", 1), ("layer-norm", 1), ("rnn-step", 1)]
    problems, total = [], 0
    gens = generators.load_all()
    for name, level in picks:
        if name not in gens:
            continue
        p = generators.build(name, 11, level)
        if total + len(p.parts) <= PARTS:
            problems.append(p)
            total += len(p.parts)
        if total == PARTS:
            return problems
    raise SystemExit(f"could not assemble {PARTS} parts from {picks} (got {total})")


def typed(value, rng):
    """A value as a student types it: 4 significant figures, brackets or spaces for lists."""
    if isinstance(value, list):
        if value and isinstance(value[0], list):
            if rng.random() < 0.3:
                return "[" + "; ".join(" ".join(typed(v, rng) for v in row) for row in value) + "]"
            return "[" + ", ".join(typed(row, rng) for row in value) + "]"
        return "[" + ", ".join(typed(v, rng) for v in value) + "]"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    if value is None:
        return "-inf"
    return f"{value:.4g}"


def scaled(value, factor):
    if isinstance(value, list):
        return [scaled(v, factor) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value * factor if isinstance(value, float) else int(round(value * factor)) + 1
    return value


def student(problems, i):
    """One student's answers: mostly right, some misconceptions, carried-forward errors, blanks,
    unreadable and plainly wrong answers, drawn deterministically from ``i``."""
    rng = random.Random(i)
    answers = {}
    for n, p in enumerate(problems, 1):
        own = {}
        for part in p.parts:
            r = rng.random()
            value = part.expected
            if part.misconceptions and r < 0.15:
                value = rng.choice(part.misconceptions).value
            elif part.ecf_rule is not None and r < 0.30 and all(d in own for d in part.depends_on):
                try:
                    value = ecf.evaluate(part.ecf_rule, own)
                    value = value.tolist() if isinstance(value, np.ndarray) else value
                except Exception:                 # noqa: BLE001 - the student's own values may not compute
                    value = part.expected
            elif r < 0.36:
                answers[f"q{n}.{part.id}"] = ""
                own[part.id] = part.expected
                continue
            elif r < 0.40 and part.kind == "number":
                answers[f"q{n}.{part.id}"] = typed(part.expected, rng).replace(".", ",")
                own[part.id] = part.expected
                continue
            elif r < 0.48 and part.kind not in ("expression", "choice"):
                value = scaled(part.expected, 1.3)
            elif part.exact and r < 0.55:
                value = part.exact
            own[part.id] = value
            answers[f"q{n}.{part.id}"] = typed(value, rng)
    return answers


def toml_text(sid, answers):
    lines = [f'student_id = "{sid}"']
    tables = {}
    for addr, raw in answers.items():
        q, _, pid = addr.partition(".")
        tables.setdefault(q, []).append(f"{pid} = {json.dumps(raw)}")
    for q, rows in tables.items():
        lines += [f"[{q}]", *rows]
    return "\n".join(lines) + "\n"


def naive(problems, answers):
    """The baseline: json.loads/float and numpy.isclose, nothing else."""
    score = 0.0
    for n, p in enumerate(problems, 1):
        for part in p.parts:
            raw = answers.get(f"q{n}.{part.id}", "")
            try:
                got = json.loads(raw) if raw.startswith("[") else float(raw)
                ok = np.allclose(np.asarray(got, dtype=float), np.asarray(part.expected, dtype=float), rtol=1e-3, atol=1e-3)
            except (ValueError, TypeError):
                ok = False
            score += part.points * ok
    return score


def run_size(problems, key_path, n, tmp: Path):
    subs = [student(problems, i) for i in range(n)]
    folder = tmp / f"class{n}"
    folder.mkdir()
    for i, answers in enumerate(subs):
        (folder / f"s{i:05d}.toml").write_text(toml_text(f"s{i:05d}", answers), encoding="utf-8")
    from examprep.keys import read_key

    key = read_key(key_path)
    t0 = time.perf_counter()
    batch = grade_batch(key, [str(folder)], Settings())
    t_grade = time.perf_counter() - t0
    t0 = time.perf_counter()
    report_text.csv_text(batch.results)
    report_text.json_text(batch)
    t_out = time.perf_counter() - t0
    assert len(batch.results) == n and not batch.unreadable
    t0 = time.perf_counter()
    for answers in subs:
        grade_submission(problems, answers)
    t_mem = time.perf_counter() - t0
    t0 = time.perf_counter()
    for answers in subs:
        naive(problems, answers)
    t_naive = time.perf_counter() - t0
    counts = {}
    for res in batch.results:
        for _, _, r in res.parts():
            counts[r.status] = counts.get(r.status, 0) + 1
    return {"n": n, "end_to_end": t_grade + t_out, "grade": t_grade, "out": t_out, "mem": t_mem, "naive": t_naive,
            "counts": counts, "folder": folder}


HOSTILE = [
    ("exponent tower", "number", "9^9^9^9"), ("exponent tower (symbolic)", "expression", "p_i^9^9^9^9"),
    ("deep nesting", "number", "(" * 5000 + "1" + ")" * 5000), ("10 kB of digits", "number", "1" * 10_000),
    ("10 kB formula", "number", "1+" * 5000 + "1"), ("unicode noise", "number", "√" * 3000),
    ("longest accepted sum", "number", "+".join(["1"] * 200)),
    ("big matrix, 400 entries", "matrix", "[" + "; ".join(" ".join("0.123456" for _ in range(20)) for _ in range(20)) + "]"),
    ("3,950-char vector (790 entries)", "vector", "[" + ", ".join(["0.1"] * 790) + "]"),
    ("symbolic, equivalent but long", "expression", "+".join(["(p_i - y_i)/40"] * 40)),
    ("symbolic power", "expression", "(p_i + y_i)^60 - (p_i + y_i)^60 + p_i - y_i"),
    ("symbolic exp/log", "expression", "ln(e^(p_i))*exp(ln(1)) - y_i*sqrt(y_i^2)/y_i"),
    ("code injection", "expression", "__import__('os').system('true')"),
    ("literal 1E-10000000 (symbolic)", "expression", "p_i - y_i + 1E-10000000"),
    ("(p+y+1)^1000 (symbolic)", "expression", "(p_i + y_i + 1)^1000 - (p_i + y_i + 1)^1000 + p_i - y_i"),
]


def worst_cases():
    from examprep.problem import EXACT, Part

    parts = {
        "number": Part("x", "x", "number", 0.5),
        "vector": Part("v", "v", "vector", [0.1] * 3, shape=(3,)),
        "matrix": Part("m", "m", "matrix", [[0.1] * 20] * 20, shape=(20, 20)),
        "expression": Part("d", "d", "expression", "p_i - y_i", tolerance=EXACT, exact="p_i - y_i", variables=("p_i", "y_i")),
    }
    from concurrent.futures import ThreadPoolExecutor

    from examprep.answers import symbolic

    check_part(parts["expression"], "p_i - y_i")        # sympy imported once, as any run does
    rows = []
    pool = ThreadPoolExecutor(1)                         # no SIGALRM there: only the cost bound holds
    for label, kind, text in HOSTILE:
        times, thread_times = [], []
        for _ in range(5):
            symbolic.clear_caches()                      # no help from the cache: each is a first sight
            t0 = time.perf_counter()
            r = check_part(parts[kind], text)
            times.append(time.perf_counter() - t0)
            symbolic.clear_caches()
            t0 = time.perf_counter()
            pool.submit(check_part, parts[kind], text).result()
            thread_times.append(time.perf_counter() - t0)
        rows.append((label, max(times) * 1e3, statistics.median(times) * 1e3, max(thread_times) * 1e3, r.status,
                     r.feedback[:60]))
    pool.shutdown()
    return rows


def hostile_files(problems, tmp: Path):
    """Files just under the one-submission size limit, built to be slow: each is graded alone
    (read + grade + CSV/JSON export); the baseline parses the same file with json/tomllib only."""
    import tomllib

    from examprep.answers.files import MAX_SUBMISSION_BYTES

    n_ids = 66_741
    files = {
        "66,741 unknown part ids (JSON)": ("u.json", json.dumps({"student_id": "u", **{f"z{i}": "1" for i in range(n_ids)}})),
        "66,741 unknown part ids (TOML)": ("u.toml", 'student_id = "u"\n' + "".join(f'z{i} = "1"\n' for i in range(n_ids))),
        "one 990 kB unknown id (JSON)": ("long.json", json.dumps({"student_id": "l", "q1." + "x" * 990_000: "1"})),
        "64-deep lists (JSON)": ("deep.json", '{"q1": {"x": ' + "[" * 62 + "]" * 62 + "}}"),
        "900-deep lists (JSON)": ("deep900.json", '{"q1": {"x": ' + "[" * 900 + "]" * 900 + "}}"),
        "4,300-digit integer (TOML)": ("digits.toml", "[q1]\nx = " + "9" * 4300 + "\n"),
        "every answer 4,000 characters (TOML)": ("long.toml", "".join(
            f"[q{n}]\n" + "".join(f'{part.id} = "{"1+" * 1999}1"\n' for part in p.parts)
            for n, p in enumerate(problems, 1))),
    }
    rows = []
    key = Key("bench", problems)
    for label, (name, text) in files.items():
        path = tmp / name
        path.write_text(text, encoding="utf-8")
        assert path.stat().st_size <= MAX_SUBMISSION_BYTES, (label, path.stat().st_size)
        t0 = time.perf_counter()
        (json.loads if name.endswith(".json") else tomllib.loads)(text) if "digits" not in name else None
        t_parse = time.perf_counter() - t0
        t0 = time.perf_counter()
        batch = grade_batch(key, [str(path)], Settings())
        report_text.csv_text(batch.results)
        report_text.json_text(batch)
        t_grade = time.perf_counter() - t0
        verdict = "graded" if batch.results else "unreadable: " + batch.unreadable[0].split(": ", 1)[1][:40]
        rows.append((label, path.stat().st_size, t_grade, t_parse, verdict))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--cli", action="store_true", help="also time `examprep grade` as a subprocess on the first size")
    args = ap.parse_args()
    problems = twenty_part_problems()
    print(f"key: {len(problems)} problems, {sum(len(p.parts) for p in problems)} parts "
          f"({', '.join(p.generator for p in problems)})")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        key_path = tmp / "key.json"
        write_key(key_path, Key("bench", problems))
        print(f"{'submissions':>11} {'end-to-end s':>13} {'(read+grade':>12} {'export)':>8} {'parts/s':>9} "
              f"{'in-memory parts/s':>18} {'naive parts/s':>14} {'cost vs naive':>14}")
        rates = []
        results = []
        for n in args.sizes:
            r = run_size(problems, key_path, n, tmp)
            results.append(r)
            parts = n * PARTS
            rate = parts / r["end_to_end"]
            rates.append(rate)
            print(f"{n:>11,} {r['end_to_end']:>13.2f} {r['grade']:>12.2f} {r['out']:>8.2f} {rate:>9,.0f} "
                  f"{parts / r['mem']:>18,.0f} "
                  f"{parts / r['naive']:>14,.0f} {r['mem'] / r['naive']:>13.1f}×")
        print("statuses:", ", ".join(f"{k} {v}" for k, v in sorted(results[-1]["counts"].items())))
        if len(rates) > 1:
            print(f"linearity: parts/s at {args.sizes[-1]:,} is {rates[-1] / rates[0]:.2f}× that at {args.sizes[0]:,} "
                  "(1.00 = perfectly linear)")
        print(f"goal ≥ 4,000 parts/s end to end: {'met' if min(rates) >= 4000 else 'NOT met'} (lowest {min(rates):,.0f})")
        if args.cli:
            folder = results[0]["folder"]
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "examprep", "grade", str(key_path), str(folder), "--quiet",
                                   "--csv", str(tmp / "g.csv"), "--json", str(tmp / "g.json")],
                                  capture_output=True, text=True)
            dt = time.perf_counter() - t0
            print(f"`examprep grade` CLI on {args.sizes[0]:,} files: {dt:.2f} s wall "
                  f"({args.sizes[0] * PARTS / dt:,.0f} parts/s, start-up included; exit {proc.returncode})")
        print("\nhostile files at the size limit, graded alone (goal: each well under 1 s):")
        print(f"{'file':<38}{'bytes':>10}{'grade s':>9}{'parse s':>9}{'ratio':>8}  result")
        slowest = 0.0
        for label, size, t_grade, t_parse, verdict in hostile_files(problems, tmp):
            slowest = max(slowest, t_grade)
            ratio = f"{t_grade / t_parse:.1f}×" if t_parse > 1e-4 else "—"
            print(f"{label:<38}{size:>10,}{t_grade:>9.3f}{t_parse:>9.3f}{ratio:>8}  {verdict}")
        print(f"slowest hostile file {slowest:.2f} s; goal < 1 s: {'met' if slowest < 1 else 'NOT met'}")
    print("\nworst-case answers (5 runs each, symbolic cache cleared; 'thread': in a worker thread):")
    print(f"{'answer':<32}{'max ms':>8}{'median ms':>11}{'thread max':>11}  verdict")
    worst = 0.0
    for label, mx, med, thread_mx, status, fb in worst_cases():
        worst = max(worst, mx, thread_mx)
        print(f"{label:<32}{mx:>8.2f}{med:>11.2f}{thread_mx:>11.2f}  {status}: {fb}")
    print(f"slowest single answer {worst:.1f} ms; goal ≤ 50 ms: {'met' if worst <= 50 else 'NOT met'}")


if __name__ == "__main__":
    main()
