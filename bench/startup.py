"""Start-up time of `examprep --help` and of every `examprep COMMAND --help` (median of N runs),
against the baseline of a bare `python -c pass` measured in the same run.

Usage: python bench/startup.py [--runs 10] [--commands solve train]
Goal (issue 26): `examprep --help` ≤ 3.5× the baseline, every `examprep COMMAND --help` ≤ 4×
(whole process, wall-clock median). Each line also gives the ratio of the processes' CPU time
(user + system, from the kernel's accounting of each child): on a machine others are using, wall
time measures the queue as much as the program, CPU time mostly the program.
Every command is run once before it is timed, with bytecode writing allowed: an installed examprep
has its .pyc files (pip compiles them), and a run that compiles the package's sources each time
(PYTHONDONTWRITEBYTECODE=1 without them) measures the compiler instead.
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
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_once(cmd: list[str]) -> tuple[float, float]:
    """The wall time and the CPU time (user + system, the kernel's account of the child) of one run."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} exited with {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime


def ratios(cmd: list[str], baseline: list[str], runs: int) -> tuple[float, float, float]:
    """``cmd``'s median wall time, and its median wall and CPU times over those of ``baseline``, the
    two run in turn so that both see the same load."""
    subprocess.run(cmd, capture_output=True, check=False, env=ENV)        # writes the bytecode it needs
    pairs = [(run_once(baseline), run_once(cmd)) for _ in range(runs)]
    median = lambda i, j: statistics.median(p[i][j] for p in pairs)      # noqa: E731
    return median(1, 0), median(1, 0) / median(0, 0), median(1, 1) / median(0, 1)


def command_names(base: list[str]) -> list[str]:
    """The commands `examprep --help` lists (the first word of each row of its Commands section)."""
    out = subprocess.run(base + ["--help"], capture_output=True, text=True, check=False,
                         env={**ENV, "COLUMNS": "200", "NO_COLOR": "1"}).stdout
    section = out.split("\nCommands:\n", 1)[-1]
    return re.findall(r"^  ([a-z][a-z-]*)  ", section, re.M)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--commands", nargs="*", help="only these commands (default: every command)")
    args = ap.parse_args()
    exe = shutil.which("examprep")
    base = [exe] if exe else [sys.executable, "-m", "examprep"]
    commands = args.commands if args.commands is not None else command_names(base)
    if not commands:
        sys.exit("found no commands in `examprep --help`")
    baseline = [sys.executable, "-c", "pass"]
    walls = [run_once(baseline)[0] for _ in range(args.runs)]
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; median of {args.runs} runs, "
          f"each beside a run of the baseline")
    print(f"baseline `python -c pass`: {statistics.median(walls) * 1000:.0f} ms")
    worst = 0.0
    for argv, goal in [(["--help"], HELP_GOAL)] + [([c, "--help"], COMMAND_GOAL) for c in commands]:
        wall, ratio, cpu_ratio = ratios(base + argv, baseline, args.runs)
        worst = max(worst, ratio / goal)
        verdict = "ok" if ratio <= goal else "over"
        print(f"examprep {' '.join(argv):<29} {wall * 1000:5.0f} ms {ratio:4.1f}× wall, "
              f"{cpu_ratio:4.1f}× CPU (goal ≤ {goal:g}×: {verdict})")
    print(f"{'all within their goals' if worst <= 1 else 'some over their goals'} "
          f"(worst: {worst:.2f} of its goal, wall)")


if __name__ == "__main__":
    main()
