"""Exact match by source length: the information bottleneck of an RNN encoder–decoder without
attention, shown on the built-in string tasks (docs/rnn.md).

For each run directory (trained on `reverse`, `sort` or `copy`, with `--lengths`), translate the
task's held-out pairs (greedy) and print the share translated exactly, per band of source length.

    python bench/exact_by_length.py RUN [RUN ...] [--pairs 1000] [--band 10] [--seed 1] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examprep.train.data import get_task  # noqa: E402
from examprep.train.serve import Translator  # noqa: E402


def by_length(run: Path, pairs: int, band: int, seed: int) -> dict:
    translator = Translator.load(run)
    data, training = translator.loaded.data, translator.loaded.meta.get("training", {})
    task = get_task(data["task"], training.get("lengths"))
    held = task.heldout_pairs(pairs, seed)
    outputs = translator.translate([s for s, _ in held])
    bands: dict[str, list[int]] = {}
    low, high = task.lengths
    for (source, target), output in zip(held, outputs):
        start = low + (len(source) - low) // band * band
        key = f"{start}-{min(start + band - 1, high)}"
        bands.setdefault(key, [0, 0])
        bands[key][0] += output == target
        bands[key][1] += 1
    cfg = translator.loaded.config
    name = f"{cfg.arch}" + (f" {cfg.cell} attention={cfg.attention}" if cfg.arch == "rnn-seq2seq" else "")
    order = sorted(bands, key=lambda k: int(k.split("-")[0]))
    return {"run": str(run), "model": name, "task": data["task"], "pairs": len(held),
            "exact_match": sum(b[0] for b in bands.values()) / len(held),
            "bands": {k: {"exact_match": bands[k][0] / bands[k][1], "pairs": bands[k][1]} for k in order}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--pairs", type=int, default=1000, help="held-out pairs per run")
    ap.add_argument("--band", type=int, default=10, help="width of a length band, in characters")
    ap.add_argument("--seed", type=int, default=1, help="seed of the held-out draw")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    args = ap.parse_args()
    results = [by_length(run, args.pairs, args.band, args.seed) for run in args.runs]
    bands = list(dict.fromkeys(k for r in results for k in r["bands"]))
    print("exact match by source length (held-out pairs, greedy decoding)")
    print(f"{'model':40s} {'task':8s} " + " ".join(f"{b:>7s}" for b in bands) + "     all")
    for r in results:
        cells = [f"{100 * r['bands'][b]['exact_match']:6.1f}%" if b in r["bands"] else "      -" for b in bands]
        print(f"{r['model']:40s} {r['task']:8s} " + " ".join(cells) + f" {100 * r['exact_match']:6.1f}%")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
