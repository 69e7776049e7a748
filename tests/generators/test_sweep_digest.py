"""Every generated problem stays the same, whole: one SHA-256 per (generator, level, calculator-free)
over seeds 0–9 of everything a Problem holds (params, statement, parts with their answers,
misconceptions, ECF recipes and hints, worked solution, conventions, variant).

The golden test (test_golden.py) checks answers to 1e-12 on three seeds; this one covers more seeds
and every field, so a speed-up that changes any problem's text or structure fails here, naming the
generator and level. Numbers enter the digest as text to 6 significant figures (−0 as 0): stable on
any machine, whatever order BLAS sums in. A change that alters a topic's problems must bump that
generator's version; then regenerate with

    EXAMPREP_UPDATE_GOLDEN=1 python -m pytest tests/generators/test_sweep_digest.py
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from examprep import generators

DIGESTS = Path(__file__).resolve().parents[1] / "golden" / "sweep.json"
SEEDS = range(10)


def stable(value: Any) -> Any:
    """``value`` (a Problem's JSON form) with every float as text to 6 significant figures."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [stable(v) for v in value]
    if isinstance(value, float):
        text = f"{value:.6g}"
        return "0" if text == "-0" else text
    return value


def digest(problems: list) -> str:
    text = json.dumps([stable(p.to_dict()) for p in problems], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def snapshot() -> dict[str, dict[str, Any]]:
    out = {}
    for name, g in sorted(generators.load_all().items()):
        entry: dict[str, Any] = {"version": g.version}
        for level in g.levels:
            for cf in ((False, True) if g.calculator_free else (False,)):
                key = f"L{level}-{'cf' if cf else 'std'}"
                entry[key] = digest([generators.build(name, seed, level, cf) for seed in SEEDS])
        out[name] = entry
    return out


def test_stable_text_rounds_floats_and_keeps_the_rest():
    assert stable({"a": [0.1 + 0.2, -0.0, 1e-20, 3, "x", None, True]}) == {
        "a": ["0.3", "0", "1e-20", 3, "x", None, True]}


def test_every_problem_of_a_sweep_is_unchanged():
    now = snapshot()
    if os.environ.get("EXAMPREP_UPDATE_GOLDEN"):
        DIGESTS.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        pytest.skip("sweep digests rewritten")
    stored = json.loads(DIGESTS.read_text(encoding="utf-8"))
    assert set(now) == set(stored), (f"generators added or removed: {sorted(set(now) ^ set(stored))}; "
                                     "regenerate (see module doc)")
    changed = [f"{name} {key}" for name, entry in now.items() for key, value in entry.items()
               if key != "version" and stored[name].get(key) != value]
    versions = [name for name in now if now[name]["version"] != stored[name]["version"]]
    assert not versions, f"version bumped for {versions}: regenerate the digests (see module doc)"
    assert not changed, f"problems changed without a version bump: {', '.join(changed)}"
