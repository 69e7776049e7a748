"""Benchmark of `examprep solve --batch`: throughput on the public cases repeated to 10,000 lines.

Prints, in one run:
- end to end: `examprep solve --batch` as a subprocess (start-up included), solves per second;
- per topic, in process: our engine's solves/s against the baseline, the independent torch
  reference implementations (examprep.verify) on the same params, and the ratio.

The per-topic table adds the exam topics' cases (shared/cases/exam-topics.json, --extra), so every
topic of the contract's two tables is measured. The end-to-end line runs public.json's cases mixed with
the newer topics' cases kept here, in bench/cases/*.json (one file per group of new topics, {"topic",
"params"} each), so they count in the 2,000 solves/s too; both tables measure them.

Usage: python bench/solve.py [--lines 10000] [--cases PATH] [--extra PATH] [--mix PATH ...]
Goal (issue 2): ≥ 2,000 solves/s end to end.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=10_000)
    ap.add_argument("--cases", type=Path, default=ROOT.parent / "shared" / "cases" / "public.json")
    ap.add_argument("--extra", type=Path, default=ROOT.parent / "shared" / "cases" / "exam-topics.json")
    ap.add_argument("--mix", type=Path, nargs="*", default=sorted((ROOT / "bench" / "cases").glob("*.json")))
    args = ap.parse_args()
    if not args.cases.exists():
        sys.exit(f"no cases file at {args.cases}: pass --cases")
    cases = json.loads(args.cases.read_text())
    cases += [c for path in args.mix for c in json.loads(path.read_text())]
    feed = [json.dumps({"id": i, "topic": c["topic"], "params": c["params"]})
            for i, c in zip(range(args.lines), (cases * (args.lines // len(cases) + 1)))]
    text = "\n".join(feed) + "\n"

    exe = shutil.which("examprep")
    cmd = [exe, "solve", "--batch"] if exe else [sys.executable, "-m", "examprep", "solve", "--batch"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=text, capture_output=True, text=True, env=dict(os.environ))
    wall = time.perf_counter() - t0
    answered = sum(1 for line in proc.stdout.splitlines() if '"answer"' in line)
    print(f"end to end: {args.lines} lines in {wall:.2f} s = {args.lines / wall:,.0f} solves/s "
          f"({answered} answered, exit {proc.returncode}); goal ≥ 2,000 solves/s")

    from examprep import solve
    try:
        from examprep.verify import REFERENCES
    except ImportError:
        REFERENCES = {}
        print("(torch not installed: no baseline column)")
    by_topic: dict[str, list[dict]] = defaultdict(list)
    extra = json.loads(args.extra.read_text()) if args.extra.exists() else []
    for c in cases + extra:
        by_topic[c["topic"]].append(c["params"])
    print(f"\n{'topic':<22}{'ours solves/s':>15}{'torch ref solves/s':>20}{'ratio':>8}")
    for topic, plist in sorted(by_topic.items()):
        reps = max(1, 2000 // len(plist))
        t0 = time.perf_counter()
        for _ in range(reps):
            for p in plist:
                solve.answer_only(topic, p)
        ours = reps * len(plist) / (time.perf_counter() - t0)
        if topic in REFERENCES:
            full = [solve.resolve_params(solve.TOPICS[topic], p) for p in plist]
            reps_ref = max(1, 300 // len(plist))
            t0 = time.perf_counter()
            for _ in range(reps_ref):
                for p in full:
                    REFERENCES[topic](p)
            ref = reps_ref * len(plist) / (time.perf_counter() - t0)
            print(f"{topic:<22}{ours:>15,.0f}{ref:>20,.0f}{ours / ref:>7.1f}×")
        else:
            print(f"{topic:<22}{ours:>15,.0f}{'—':>20}{'':>8}")


if __name__ == "__main__":
    main()
