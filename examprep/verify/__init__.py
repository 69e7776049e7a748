"""`examprep verify` and the tests: independent torch references of the numpy engine.

Wherever torch has the operation it is used as torch users would use it (torch.nn modules,
torch.nn.functional and autograd); conventions torch lacks (the lecture's GRU blend, ε added to σ)
are written in torch from their papers' formulas, separately from the engine. One module per
subject area, as engine/ and solve/: ``verify/<area>.py``.

Each area's module ends with its TOPICS table (solve topic → Reference(reference, random)),
gathered here into TOPICS. ``REFERENCES[topic](params)`` takes a solve-contract params dict
(defaults as the contract) and returns {answer name: numpy value}; ``random_params(topic, rng)`` draws a valid params dict;
``verify()`` checks the engine against the references on random instances.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from examprep import solve
from examprep.verify import (
    activations, attention, bptt, conv, counts, decoder, dense, dropout, groupnorm, minimize, network, norm, optim,
    pool, positions, regression, residual, rnn, schedule, softmax,
)
from examprep.verify._torch import Reference

AREAS = (activations, attention, bptt, conv, counts, decoder, dense, dropout, groupnorm, minimize, network, norm, optim,
         pool, positions, regression, residual, rnn, schedule, softmax)
# each area's TOPICS table, gathered: adding a topic is a row in its area's table
TOPICS: dict[str, Reference] = {topic: row for area in AREAS for topic, row in area.TOPICS.items()}
REFERENCES: dict[str, Callable[[dict], dict]] = {topic: row.reference for topic, row in TOPICS.items()}


def random_params(topic: str, rng: np.random.Generator) -> dict:
    """A random valid instance of a topic (sizes small, values of order 1). KeyError for a topic
    without a reference."""
    return TOPICS[topic].random(rng)


# ---------------------------------------------------------------------------- the check itself

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


def _ragged(value: Any) -> bool:
    """A list of lists of different lengths (network-shapes' output shapes, say)."""
    return isinstance(value, (list, tuple)) and len({np.shape(v) for v in value}) > 1


def _compare(ours: Any, theirs: Any) -> tuple[float, float, bool]:
    if _ragged(ours) or _ragged(theirs):         # integer structures: equal or not
        same = _ragged(ours) and _ragged(theirs) and [list(map(float, np.ravel(v))) for v in ours] == \
            [list(map(float, np.ravel(v))) for v in theirs]
        return (0.0, 0.0, True) if same else (float("inf"), float("inf"), False)
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
