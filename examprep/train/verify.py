"""`examprep verify`: the numeric engine against torch on random instances of every topic torch
can compute. The torch side is examprep.train.engine_reference — the same module the tests use.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from examprep.train.engine_reference import REFERENCES, random_params

RTOL, ATOL = 1e-9, 1e-11


@dataclass
class TopicCheck:
    topic: str
    instances: int
    max_abs_diff: float
    max_rel_diff: float
    failures: int
    first_failure: dict | None = None     # {"params", "answer", "ours", "torch"} of the first disagreement

    @property
    def passed(self) -> bool:
        return self.failures == 0


def _compare(ours: Any, theirs: Any) -> tuple[float, float, bool]:
    a = np.asarray(ours, dtype=float)
    b = np.asarray(theirs, dtype=float)
    if a.shape != b.shape:
        return float("inf"), float("inf"), False
    diff = np.abs(a - b)
    abs_d = float(diff.max(initial=0.0))
    rel_d = float((diff / np.maximum(np.abs(b), 1e-300)).max(initial=0.0))
    return abs_d, rel_d, bool(np.all(diff <= ATOL + RTOL * np.abs(b)))


def verify(instances: int = 50, seed: int = 0, topics: list[str] | None = None,
           progress: Callable[[str], None] | None = None) -> list[TopicCheck]:
    """Check ``instances`` random instances per topic; returns one TopicCheck per topic.

    An engine error on a valid instance counts as a disagreement (reported in first_failure).
    """
    from examprep import solve

    rng = np.random.default_rng(seed)
    rows = []
    for topic in topics or sorted(REFERENCES):
        worst_abs = worst_rel = 0.0
        failures, first = 0, None
        for _ in range(instances):
            params = random_params(topic, rng)
            theirs = REFERENCES[topic](params)
            try:
                ours = solve.answer_only(topic, params)
            except Exception as err:  # the engine must answer every valid instance
                failures += 1
                first = first or {"params": params, "error": f"{type(err).__name__}: {err}"}
                continue
            bad = False
            for name, want in theirs.items():
                a, r, ok = _compare(ours.get(name), want)
                worst_abs, worst_rel = max(worst_abs, a), max(worst_rel, r)
                if not ok and first is None:
                    first = {"params": params, "answer": name, "ours": solve.jsonable(ours.get(name)),
                             "torch": solve.jsonable(np.asarray(want))}
                bad |= not ok
            failures += bad
        rows.append(TopicCheck(topic, instances, worst_abs, worst_rel, failures, first))
        if progress:
            progress(topic)
    return rows
