"""Start-up time of `examprep --help` and of every `examprep COMMAND --help` (median of N runs),
against the baseline of a bare `python -c pass` measured in the same run.

Usage: python bench/startup.py [--runs 15] [--commands solve train]
Goal (issue 26): `examprep --help` ≤ 3.5× the baseline, every `examprep COMMAND --help` ≤ 4×.
The commands are read from the app itself (`examprep --help` lists them), so a new command is
measured without editing this file.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HELP_GOAL, COMMAND_GOAL = 3.5, 4.0


def median_time(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def command_names(base: list[str]) -> list[str]:
    """The commands `examprep --help` lists (the rows of its Commands panel)."""
    out = subprocess.run(base + ["--help"], capture_output=True, text=True, check=False,
                         env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}).stdout
    section = out.split("Commands", 1)[-1]
    return re.findall(r"^[│|] ([a-z][a-z-]*)\s", section, re.M)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--commands", nargs="*", help="only these commands (default: every command)")
    args = ap.parse_args()
    exe = shutil.which("examprep")
    base = [exe] if exe else [sys.executable, "-m", "examprep"]
    commands = args.commands if args.commands is not None else command_names(base)
    baseline = median_time([sys.executable, "-c", "pass"], args.runs)
    print(f"baseline `python -c pass`: {baseline * 1000:.0f} ms")
    worst = 0.0
    for argv, goal in [(["--help"], HELP_GOAL)] + [([c, "--help"], COMMAND_GOAL) for c in commands]:
        t = median_time(base + argv, args.runs)
        ratio = t / baseline
        worst = max(worst, ratio / goal)
        verdict = "ok" if ratio <= goal else "over"
        print(f"examprep {' '.join(argv):<26} {t * 1000:6.0f} ms  {ratio:4.1f}× baseline "
              f"(goal ≤ {goal:g}×: {verdict})")
    print(f"{'all within their goals' if worst <= 1 else 'some over their goals'} "
          f"(worst: {worst:.2f} of its goal)")


if __name__ == "__main__":
    main()
