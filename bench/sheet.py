"""Benchmark of `examprep sheet`, end to end (build, render, compile, write), wall-clock time.

1. One 20-problem sheet (20 topics at level 2) with problems and solutions PDFs.
   Goal (issue 6): ≤ 2 s.  Baseline, measured in the same run: building the same 20 problems
   alone (generators only) — the ratio is what rendering and typesetting cost on top.
2. The midterm for 200 students (one variant each, from a roster and a secret), problems and
   solutions PDFs. Goal: ≤ 60 s.  Baseline, measured in the same run: the common midterm sheet
   (one copy) end to end — the ratio says how the per-student work scales (200 would be linear,
   less is the parallel compile).

Usage: python bench/sheet.py [--students 200] [--repeat 3]
The machine's load average is printed: on a shared box the wall-clock figures move with it.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examprep import generators, sheets  # noqa: E402


def timed(fn, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def cpu_per_student(secret: Path, n: int = 8) -> float:
    """CPU seconds per student of the variant run's work (build, both PDFs, key, templates),
    measured in this process: unlike wall-clock time it does not move with the machine's load."""
    from examprep import keys
    from examprep.render.pdf import compile_pdf
    from examprep.render.typst.sheet import sheet_source

    roster = [sheets.Student(f"c{i}", f"Student {i}") for i in range(n)]
    t0 = time.process_time()
    sheet = sheets.build_sheet(sheets.load_recipe("midterm"), 7, roster=roster, secret=sheets.read_secret(secret))
    for solutions in (False, True):
        compile_pdf(sheet_source(sheet, solutions=solutions))
    keys.key_to_json(sheets.make_key(sheet))
    for copy in sheet.copies:
        keys.answer_template(copy.problems, student_id=copy.student.id)
    return (time.process_time() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"examprep sheet benchmark — {os.cpu_count()} CPUs, load average {load:.1f}")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        topics = sorted(generators.load_all())[:20]
        recipe = sheets.recipe_from_topics(topics, difficulty=2)
        n = [0]

        def one_sheet() -> None:
            n[0] += 1
            sheets.make_sheet(topics=[",".join(topics)], difficulty=2, seed=7, formats="pdf",
                              out=str(tmp / f"twenty-{n[0]}"))

        def problems_only() -> None:
            sheets.build_problems(recipe, 7)

        t_sheet = timed(one_sheet, args.repeat)
        t_build = timed(problems_only, args.repeat)
        print(f"20-problem sheet, problems + solutions PDF   {t_sheet:7.2f} s   (goal ≤ 2 s)")
        print(f"  baseline: the same 20 problems, generators only  {t_build:7.3f} s   "
              f"ratio {t_sheet / t_build:6.1f}×")

        roster = tmp / "roster.csv"
        roster.write_text("student_id,name\n" + "".join(f"s{1000 + i},Student {i}\n" for i in range(args.students)))
        secret = tmp / "secret.txt"
        secret.write_text("2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae\n")

        def common() -> None:
            n[0] += 1
            sheets.make_sheet(recipe="midterm", seed=7, formats="pdf", out=str(tmp / f"mid-{n[0]}"))

        def variants() -> None:
            n[0] += 1
            sheets.make_sheet(recipe="midterm", seed=7, formats="pdf", roster=str(roster), secret_file=str(secret),
                              out=str(tmp / f"var-{n[0]}"))

        t_common = timed(common, args.repeat)
        t_var = timed(variants, 1)
        per = cpu_per_student(secret)
        print(f"midterm, {args.students} student variants, problems + solutions PDF   {t_var:7.2f} s   (goal ≤ 60 s)")
        print(f"  baseline: the common midterm sheet (1 copy)   {t_common:7.2f} s   ratio {t_var / t_common:6.1f}× "
              f"for {args.students} copies ({t_var / args.students:.3f} s per student)")
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        print(f"  CPU time per student (8 variants built, typeset and keyed in one process): {per:.3f} s → "
              f"{args.students} students ≈ {per * args.students:.0f} CPU-s, ≈ {per * args.students / cpus:.0f} s "
              f"on {cpus} idle CPUs (the wall-clock floor, whatever the load)")


if __name__ == "__main__":
    main()
