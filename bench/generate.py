"""Benchmark of problem generation: problems per second per topic and mixed (levels 1–3, with
worked solutions and misconceptions), single process.

Baseline, measured in the same run: the bare engine call of each generator's main topic
(`solve.solve`, steps included) on the same problems' parameters — the ratio says how much the
framework (drawing, misconceptions, document, checks) costs on top of the engine. A generator with
no one main topic (activation, residual, rnn-step… change topic by level) is measured against the
engine calls its problems are about: `solve.solve(topic, params)` for every solve topic and
parameters whose mistakes table the problem opens (`solve.mistakes(topic, params)`, recorded while
building the same problems), so every topic has a ratio. The generators that compute their answers
from a trained model (attention-from-model, gru-from-model, …: they need a --checkpoint) are not
measured, here or in the mixed rate.

A fourth column, "all engine/s", replays every distinct engine call the same problems make — their
misconceptions' calls, the direct engine calls of a generator and the calls of refused draws
included (recorded while building them: solve topics' computes and the examprep.engine functions a
generator calls itself, outermost calls only) — and "over all" is the problem's time over that: the
framework's own overhead (drawing, documents, checks, worked steps) beside all the engine work a
problem needs. The replay is engine calls only, no worked steps (the baseline's solve.solve builds
them), so a generator whose problems make few, cheap calls can replay faster than its baseline. The
goal is judged on the first ratio ("overhead", against the one engine call); the last one says how
much of it is engine work a problem cannot skip.

Rates are per CPU-second of this process (time.process_time), so a machine shared with other work
slows both sides alike; --wall measures wall-clock time instead.

Usage: python bench/generate.py [--seconds 1.0] [--wall]
Goals (issue 26): ≥ 3,000 problems/s mixed; no topic more than 4× its engine-only rate.

The mixed rate is printed three times: over every generator, over the generators that existed before
issue 19 (whose rate issue 19 had to keep within 10%), and over issue 19's ten (the questions real
exams ask: tables, channels, batch norm, BPTT, optimizers…), which do more engine work per problem.
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
# issue 19's generators (optimizer-step asks two optimizers at levels 2 and 3: no one main topic)
EXAM = ("network-shapes", "conv2d-channels", "avg-pool", "batch-norm", "mlp-regression", "logistic-regression",
        "self-attention", "rnn-bptt", "optimizer-step", "dropout")
MAIN_TOPIC |= {"network-shapes": "network-shapes", "conv2d-channels": "conv2d", "avg-pool": "avg-pool",
               "batch-norm": "batch-norm", "mlp-regression": "mlp-regression", "logistic-regression": "logistic-regression",
               "self-attention": "self-attention", "rnn-bptt": "rnn-bptt", "dropout": "dropout"}


CLOCK = time.process_time


def rate(fn, seconds: float) -> float:
    n, t0 = 0, CLOCK()
    while CLOCK() - t0 < seconds:
        fn(n)
        n += 1
    return n / (CLOCK() - t0)


def opened_tables(name: str, seeds: range) -> list[list[tuple[str, dict]]]:
    """Per problem (seed i at level 1 + i % 3), the (topic, params) of every solve.mistakes table its
    generator opens: the engine calls the problem is about."""
    real, calls = solve.mistakes, []

    def recording(topic, params, trace=None):
        calls[-1].append((topic, params))
        return real(topic, params, trace)

    solve.mistakes = recording
    try:
        for i in seeds:
            calls.append([])
            generators.build(name, i, 1 + i % 3)
    finally:
        solve.mistakes = real
    return calls


def engine_work(name: str, seeds: range) -> list[list[tuple]]:
    """Per problem (seed i at level 1 + i % 3), every distinct outermost engine call its build made
    (refused draws included), as (function, args, kwargs) to replay: solve topics' computes and the
    examprep.engine (and engine.ops) functions a generator calls itself."""
    from examprep import engine
    from examprep.engine import ops

    calls: list[list[tuple]] = []
    seen: set[str] = set()
    depth = [0]

    def recording(fn):
        def call(*args, **kwargs):
            if depth[0] == 0:
                key = f"{id(fn)}{args!r}{sorted(kwargs.items())!r}"
                if key not in seen:
                    seen.add(key)
                    calls[-1].append((fn, args, kwargs))
            depth[0] += 1
            try:
                return fn(*args, **kwargs)
            finally:
                depth[0] -= 1
        return call

    patched = [(t, "compute", t.compute) for t in solve.TOPICS.values()]
    patched += [(engine, f, getattr(engine, f)) for f in engine.__all__ if f != "Trace"]
    patched += [(ops, f, getattr(ops, f)) for f in dir(ops) if not f.startswith("_") and callable(getattr(ops, f))
                and getattr(getattr(ops, f), "__module__", "") == ops.__name__]
    for obj, attr, fn in patched:
        object.__setattr__(obj, attr, recording(fn))
    try:
        for i in seeds:
            calls.append([])
            seen.clear()
            generators.build(name, i, 1 + i % 3)
    finally:
        for obj, attr, fn in patched:
            object.__setattr__(obj, attr, fn)
    return calls


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--wall", action="store_true", help="wall-clock time instead of this process's CPU time")
    args = ap.parse_args()
    secs = args.seconds
    if args.wall:
        global CLOCK
        CLOCK = time.perf_counter
    gens = generators.load_all()
    names = sorted(gens)
    print(f"{'topic':<26}{'problems/s':>12}{'engine-only/s':>16}{'overhead':>10}{'all engine/s':>14}{'over all':>10}"
          f"   ({'wall-clock' if args.wall else 'per CPU-second'})")
    worst = []
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
            how = ""
        else:
            tables = opened_tables(name, range(30))

            def engine(i, tables=tables):
                for topic, params in tables[i % len(tables)]:
                    solve.solve(topic, params)
            base = rate(engine, secs)
            how = f"  ({'/'.join(dict.fromkeys(t for calls in tables for t, _ in calls))})"
        work = engine_work(name, range(30))

        def replay(i, work=work):
            for fn, a, kw in work[i % len(work)]:
                fn(*a, **kw)
        whole = rate(replay, secs)
        worst.append((base / ours, name))
        print(f"{name:<26}{ours:>12,.0f}{base:>16,.0f}{base / ours:>9.1f}×{whole:>14,.0f}{whole / ours:>9.1f}×{how}")
    ratio, name = max(worst)
    print(f"{'largest overhead':<26} {ratio:.1f}× ({name}); goal ≤ 4×")
    def mixed(pool: list[str]) -> float:
        return rate(lambda i: generators.build(pool[i % len(pool)], i, 1 + (i // len(pool)) % 3,
                                               i % 5 == 0 and gens[pool[i % len(pool)]].calculator_free), secs * 2)

    before = [n for n in names if n not in EXAM]
    print(f"{'mixed (all topics, levels, 20% calculator-free)':<26} {mixed(names):,.0f} problems/s; goal ≥ 3,000")
    print(f"{'mixed, the generators before issue 19':<26} {mixed(before):,.0f} problems/s ({len(before)} topics)")
    print(f"{'mixed, issue 19s ten':<26} {mixed(list(EXAM)):,.0f} problems/s")


if __name__ == "__main__":
    main()
