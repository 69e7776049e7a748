"""What one guess at a variant secret costs an attacker who holds a printed copy (sheet id,
student id, variant code): the stretched derivation (scrypt, then HMAC-SHA256) against the
baseline of the old one (one HMAC-SHA256 under the secret itself), measured in the same run.

Usage: python bench/variant_secret.py [--runs 5]      Goal (issue 15): >= 0.1 s per guess, so a
million guesses take days (the old derivation: about 6 s for a million).
"""
from __future__ import annotations

import argparse
import statistics
import time

from examprep import sheets


def median_seconds(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    runs = ap.parse_args().runs
    secret = sheets.new_secret().encode()
    sheet_id, student = "midterm-2024", "s1001"
    n = 20_000
    old = median_seconds(lambda: [sheets.variant_seed(secret, sheet_id, student) for _ in range(n)], runs) / n
    new = median_seconds(lambda: sheets.variant_seed(sheets.stretch_secret(secret, sheet_id), sheet_id, student), runs)
    kdf = sheets.SECRET_KDF
    print(f"kdf: scrypt n={kdf['n']}, r={kdf['r']}, p={kdf['p']} ({128 * kdf['n'] * kdf['r'] / 2 ** 20:.0f} MiB per guess)")
    print(f"baseline, old derivation (one HMAC):   {old * 1e6:9.2f} µs per guess; a million guesses: {old * 1e6:,.1f} s")
    print(f"stretched derivation (scrypt + HMAC):  {new * 1e3:9.1f} ms per guess; a million guesses: "
          f"{new * 1e6 / 86400:,.1f} days on one core")
    print(f"ratio stretched / old: {new / old:,.0f}x   (goal: >= 0.1 s per guess: {'met' if new >= 0.1 else 'NOT met'})")


if __name__ == "__main__":
    main()
