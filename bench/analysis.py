"""Benchmark of the item analysis (issue 23): 10,000 students × 60 parts (12 questions of 5 parts,
one question in two structural variants, misconceptions, blanks, unreadable answers), from the
records grades.json holds to the full analysis (matrices, difficulty, item-rest discrimination,
top-3 misconceptions with their tails, per question, Cronbach's α, SEM, variant groups).

Baseline, measured in the same run on the same matrix: a plain numpy computation of the same
statistics (difficulty, item-rest r, α, SEM) with no records to read, no misconceptions and no
JSON. The ratio says what reading the records and the rest cost on top.

Usage: python bench/analysis.py [--students 10000] [--parts 60]
Goal (issue 23): under 2 s for 10,000 × 60 (in the analysis line).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from examprep.grading.analysis import analyse, csv_text, item_data  # noqa: E402


def records(n: int, k: int, seed: int = 1) -> tuple[list[dict], np.ndarray]:
    """grades.json-like submissions and the matrix of their scores."""
    rng = np.random.default_rng(seed)
    ability = rng.random(n)
    right = rng.random((n, k)) < (0.3 + 0.6 * ability)[:, None]
    blank = ~right & (rng.random((n, k)) < 0.2)
    points = rng.integers(1, 4, k).astype(float)
    X = np.where(right, points, 0.0)
    subs = []
    for i in range(n):
        problems = []
        for q in range(k // 5):
            parts = []
            for j in range(q * 5, q * 5 + 5):
                status = "correct" if right[i, j] else "blank" if blank[i, j] else "misconception"
                parts.append({"part": f"p{j}", "status": status, "score": X[i, j], "max_score": points[j],
                              "misconception": f"m{(i + j) % 4}" if status == "misconception" else None})
            problems.append({"question": f"q{q + 1}", "title": "", "variant": ("a" if i % 2 else "b") if q == 0 else "",
                             "parts": parts})
        subs.append({"student_id": f"s{i}", "problems": problems})
    return subs, X


def baseline(X: np.ndarray) -> dict:
    T = X.sum(axis=1)
    difficulty = X.mean(axis=0) / X.max(axis=0)
    rest = T[:, None] - X
    xc, rc = X - X.mean(0), rest - rest.mean(0)
    r = (xc * rc).sum(0) / np.sqrt((xc ** 2).sum(0) * (rc ** 2).sum(0))
    k = X.shape[1]
    alpha = k / (k - 1) * (1 - X.var(axis=0, ddof=1).sum() / T.var(ddof=1))
    sem = T.std(ddof=1) * np.sqrt(1 - alpha)
    return {"difficulty": difficulty, "discrimination": r, "alpha": alpha, "sem": sem}


def best(fn, repeat: int = 3) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, default=10_000)
    ap.add_argument("--parts", type=int, default=60)
    a = ap.parse_args()
    subs, X = records(a.students, a.parts)
    t_base, base = best(lambda: baseline(X))
    t_full, result = best(lambda: analyse(item_data(subs)))
    t_files, _ = best(lambda: (json.dumps(result), csv_text(result)), 1)
    assert abs(result["alpha"] - base["alpha"]) < 1e-4, (result["alpha"], base["alpha"])
    assert all(abs(p["discrimination"] - r) < 1e-4 for p, r in zip(result["parts"], base["discrimination"]))
    print(f"item analysis of {a.students:,} students × {a.parts} parts")
    print(f"  analysis (records → every statistic): {t_full:.3f} s   (goal: under 2 s)")
    print(f"  baseline (plain numpy on the matrix):  {t_base:.3f} s")
    print(f"  ratio analysis / baseline:              {t_full / t_base:.1f}×")
    print(f"  JSON + CSV text:                        {t_files:.3f} s")
    print(f"  α = {result['alpha']:.4f} (baseline {base['alpha']:.4f}), SEM = {result['sem']:.3f}")


if __name__ == "__main__":
    main()
