"""Benchmark of problem generation: problems per second per topic and mixed (levels 1–3, with
worked solutions and misconceptions), single process.

Baseline, measured in the same run: the bare engine call of each generator's main topic
(`solve.solve`, steps included) on the same problems' parameters — the ratio says how much the
framework (drawing, misconceptions, document, checks) costs on top of the engine.

Usage: python bench/generate.py [--seconds 1.0]     Goal (issues 3 and 4): ≥ 1,000 problems/s mixed.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examprep import generators, solve  # noqa: E402

MAIN_TOPIC = {"attention": "attention", "softmax-cross-entropy": "cross-entropy", "gru-step": "gru-cell",
              "receptive-field": "receptive-field"}
# Transformer/counting generators whose problem params are their main topic's params at every level
MAIN_TOPIC |= {"layer-norm": "layer-norm", "causal-mask": "causal-mask", "lora": "lora", "scaling-law": "scaling-law"}
# Backprop/CNN/RNN generators likewise (activation, residual and rnn-step change topic by level: no baseline)
MAIN_TOPIC |= {"dense-backward": "dense", "mlp-backprop": "mlp-backprop", "linear-regression": "linear-regression",
               "conv2d": "conv2d", "max-pool": "max-pool", "vanishing-gradient": "vanishing-gradient",
               "lstm-step": "lstm-cell"}


def rate(fn, seconds: float) -> float:
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn(n)
        n += 1
    return n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=1.0)
    secs = ap.parse_args().seconds
    gens = generators.load_all()
    names = sorted(gens)
    print(f"{'topic':<26}{'problems/s':>12}{'engine-only/s':>16}{'overhead':>10}")
    for name in names:
        ours = rate(lambda i, name=name: generators.build(name, i, 1 + i % 3), secs)
        topic = MAIN_TOPIC.get(name)
        if topic:
            samples = [generators.build(name, i, 1 + i % 3).params for i in range(30)]
            keys = {p.name for p in solve.TOPICS[topic].params}
            if topic == "receptive-field":
                samples = [{"layers": [{k: L[k] for k in ("kernel_size", "stride", "dilation")} for L in s["layers"]]}
                           for s in samples]
            samples = [{k: v for k, v in s.items() if k in keys} for s in samples]
            base = rate(lambda i, topic=topic, samples=samples: solve.solve(topic, samples[i % len(samples)]), secs)
            print(f"{name:<26}{ours:>12,.0f}{base:>16,.0f}{base / ours:>9.1f}×")
        else:
            print(f"{name:<26}{ours:>12,.0f}{'—':>16}")
    mixed = rate(lambda i: generators.build(names[i % len(names)], i, 1 + (i // len(names)) % 3,
                                            i % 5 == 0 and gens[names[i % len(names)]].calculator_free), secs * 2)
    print(f"{'mixed (all topics, levels, 20% calculator-free)':<26} {mixed:,.0f} problems/s; goal ≥ 1,000")


if __name__ == "__main__":
    main()
