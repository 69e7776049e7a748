"""Benchmark of `examprep sheet`, end to end (build, render, compile, write), wall-clock time.

1. One 20-problem sheet (20 topics at level 2) with problems and solutions PDFs.
   Goal (issue 6): ≤ 2 s.  Baseline, measured in the same run: building the same 20 problems
   alone (generators only) — the ratio is what rendering and typesetting cost on top.
2. Exam variants (issues 26, 39): the midterm for a class (one variant each, from a roster and
   a secret): problems PDF, key and answer templates (per-student worked solutions only with
   --solutions, so not here), against the common midterm sheet (one copy, which keeps its
   solutions PDF) end to end, measured in the same run; both ratios printed:
     acceptance check  40 variants ≤ 10× one common sheet
     the class         200 variants ≤ 30 s on 2 cores (its ratio printed beside)
3. Where a student's CPU time goes: each stage of a variant run timed in this process (CPU
   seconds, all threads; Typst lays out in several), per student.

Usage: python bench/sheet.py [--students 200] [--acceptance 40] [--repeat 3] [--quick]
(--quick: the acceptance check and the breakdown only). The machine's load average is printed
before and after: on a shared box the wall-clock figures move with it, the ratios less.
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


SECRET = "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae\n"


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def cpu_breakdown(n: int = 8) -> dict[str, float]:
    """CPU seconds per student of each stage of a variant run (in this process, one stage after
    the other): unlike wall-clock time these do not move with the machine's load."""
    from examprep import keys
    from examprep.render.markdown import sheet_markdown
    from examprep.render.pdf import compile_copies, merge_pdfs
    from examprep.render.typst.sheet import sheet_source

    roster = [sheets.Student(f"c{i}", f"Student {i}") for i in range(n)]
    stages: dict[str, float] = {}

    def stage(name, fn):
        t0 = time.process_time()
        value = fn()
        stages[name] = (time.process_time() - t0) / n
        return value

    sheet = stage("generation (problems, figures; scrypt once)", lambda: sheets.build_sheet(
        sheets.load_recipe("midterm"), 7, roster=roster, secret=SECRET.strip().encode()))
    # two chunks of n/2 copies, so that there is a join to time (a run of PDF_CHUNK copies or fewer
    # has none); Typst's time per copy hardly depends on the chunk's size. pypdf (the join) is imported
    # first: a run imports it once, not once per student
    import pypdf  # noqa: F401
    chunk = max(1, n // 2)
    groups = [sheet.copies[i:i + chunk] for i in range(0, n, chunk)]
    sources = stage("Typst source (problems)", lambda: [sheet_source(sheet, solutions=False, copies=g) for g in groups])
    pdfs = stage("Typst layout and PDF (problems)", lambda: [compile_copies(src)[0] for src in sources])
    stage("joining the chunks", lambda: merge_pdfs(pdfs))
    stage("key", lambda: keys.key_to_json(sheets.make_key(sheet)))
    stage("answer templates", lambda: [keys.answer_template(c.problems, student_id=c.student.id)
                                       for c in sheet.copies])
    stage("Markdown (with --format md)", lambda: [sheet_markdown(sheet, solutions=s) for s in (False, True)])
    return stages


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, default=200)
    ap.add_argument("--acceptance", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the acceptance check and the breakdown only")
    args = ap.parse_args()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    print(f"examprep sheet benchmark — {cpus} CPUs, load average {load()} (1/5/15 min)")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        n = [0]
        if not args.quick:
            topics = sorted(generators.load_all())[:20]
            recipe = sheets.recipe_from_topics(topics, difficulty=2)

            def one_sheet() -> None:
                n[0] += 1
                sheets.make_sheet(topics=[",".join(topics)], difficulty=2, seed=7, formats="pdf",
                                  out=str(tmp / f"twenty-{n[0]}"))

            t_sheet = timed(one_sheet, args.repeat)
            t_build = timed(lambda: sheets.build_problems(recipe, 7), args.repeat)
            print(f"20-problem sheet, problems + solutions PDF   {t_sheet:7.2f} s   (goal ≤ 2 s)")
            print(f"  baseline: the same 20 problems, generators only  {t_build:7.3f} s   "
                  f"ratio {t_sheet / t_build:6.1f}×")

        secret = tmp / "secret.txt"
        secret.write_text(SECRET)

        def common() -> None:
            n[0] += 1
            sheets.make_sheet(recipe="midterm", seed=7, formats="pdf", out=str(tmp / f"mid-{n[0]}"))

        def variants(count: int) -> float:
            roster = tmp / f"roster-{count}.csv"
            roster.write_text("student_id,name\n" + "".join(f"s{1000 + i},Student {i}\n" for i in range(count)))
            n[0] += 1
            t0 = time.perf_counter()
            sheets.make_sheet(recipe="midterm", seed=7, formats="pdf", roster=str(roster), secret_file=str(secret),
                              out=str(tmp / f"var-{n[0]}"))
            return time.perf_counter() - t0

        common()                                       # imports and the PDF workers' first start
        t_common = timed(common, args.repeat)
        print(f"the common midterm sheet (1 copy: problems + solutions PDF, key, template)   {t_common:7.2f} s   baseline")
        runs = [(args.acceptance, 10.0, None)] + ([] if args.quick else [(args.students, None, 30.0)])
        for count, goal, seconds in runs:
            t = variants(count)
            label = "acceptance check" if seconds is None else "the class"
            wall = f"   (goal ≤ {seconds:.0f} s)" if seconds else ""
            print(f"{label}: {count} variants, problems PDF, key, templates   {t:7.2f} s{wall}")
            print(f"  ratio {t / t_common:6.1f}× the common sheet{f' (goal ≤ {goal:.0f}×)' if goal else ''}   "
                  f"{t / count:.3f} s per student")

        stages = cpu_breakdown()
        total = sum(v for k, v in stages.items() if not k.startswith("Markdown"))
        print(f"CPU seconds per student (8 variants, each stage in this process; {cpus} CPUs):")
        for name, value in stages.items():
            print(f"  {name:<46} {value:6.3f} s")
        print(f"  {'total without Markdown':<46} {total:6.3f} s → {args.students} students ≈ "
              f"{total * args.students:.0f} CPU-s, ≥ {total * args.students / cpus:.0f} s on {cpus} idle CPUs")
    print(f"load average after the run {load()}")


if __name__ == "__main__":
    main()
