"""Start-up time of `examprep --help` and `examprep solve --help` (median of N runs), against the
baseline of a bare `python -c pass` measured in the same run.

Usage: python bench/startup.py [--runs 15]      Goal (issue 2): < 0.3 s each.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def median_time(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    runs = ap.parse_args().runs
    exe = shutil.which("examprep")
    base = [exe] if exe else [sys.executable, "-m", "examprep"]
    baseline = median_time([sys.executable, "-c", "pass"], runs)
    print(f"baseline `python -c pass`: {baseline * 1000:.0f} ms")
    for args in (["--help"], ["solve", "--help"], ["train", "--help"]):
        t = median_time(base + args, runs)
        print(f"examprep {' '.join(args):<14} {t * 1000:6.0f} ms  ({t / baseline:.1f}× baseline; goal < 300 ms)")


if __name__ == "__main__":
    main()
