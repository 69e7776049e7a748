"""What issue 25's two features cost, each against a baseline measured in the same run.

1. `examprep anki`'s deck (every concept question and N problems per topic, rendered to card HTML
   and written as an .apkg by genanki) against the baseline of building the same problems alone
   (generators.build): the share the cards and the package add.
2. `review --optimize`'s fit (the log turned into FSRS items, fsrs-rs's outlier count, the fit, and
   the log losses of the fitted and the current parameters) against the baseline of fsrs-rs's
   compute_parameters alone on the same items, for simulated logs of growing size.

Usage: python bench/anki.py [--problems 3] [--repeat 3]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examprep import generators  # noqa: E402
from examprep.deck import write_deck  # noqa: E402
from examprep.review_optimize import fit, review_history  # noqa: E402
from tests.quiz import simulated_reviews as sim  # noqa: E402


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench_deck(problems: int, repeat: int) -> None:
    gens = list(generators.load_all().values())

    def build_only() -> None:
        for g in gens:
            for k in range(problems):
                generators.build(g.name, k, g.levels[k % len(g.levels)])

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "deck.apkg"
        ours = best(lambda: write_deck(out, force=True, problems=problems), repeat)
        size = out.stat().st_size
    base = best(build_only, repeat)
    cards = len(gens) * problems
    print(f"1. anki deck, {cards} problems + the concept bank ({size / 1024:.0f} KiB)  {ours:.3f} s   "
          f"baseline building the {cards} problems alone: {base:.3f} s   ratio {ours / base:.3g}×")


def bench_fit(repeat: int) -> None:
    from fsrs_rs_python import DEFAULT_PARAMETERS, FSRS

    for items, days in ((100, 240), (300, 365), (1000, 365)):
        rows = sim.rows(sim.simulate(items=items, days=days, seed=10))
        fsrs_items = review_history(rows).fsrs_items()
        ours = best(lambda rows=rows: fit(rows), repeat)
        base = best(lambda fsrs_items=fsrs_items: FSRS(list(DEFAULT_PARAMETERS)).compute_parameters(fsrs_items), repeat)
        print(f"2. review --optimize, {len(rows):6d} reviews  {ours * 1e3:8.1f} ms   "
              f"baseline fsrs-rs compute_parameters alone: {base * 1e3:.1f} ms   ratio {ours / base:.3g}×")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    bench_deck(args.problems, args.repeat)
    bench_fit(args.repeat)


if __name__ == "__main__":
    main()
