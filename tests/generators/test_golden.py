"""Determinism guard: the same (generator, version, seed, difficulty) gives the same parameters and
statement in any process, and answers equal to 1e-12 relative. A change that alters a topic's
problems must bump that generator's version; then regenerate with

    EXAMPREP_UPDATE_GOLDEN=1 python -m pytest tests/generators/test_golden.py
"""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from examprep import generators

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "problems.json"
SEEDS = (0, 1, 2)


def digest(problem) -> str:
    d = problem.to_dict()
    fixed = {"params": d["params"], "statement": d["statement"], "prompts": [p["prompt"] for p in d["parts"]]}
    return hashlib.sha256(json.dumps(fixed, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def snapshot() -> dict:
    out = {}
    for name, g in sorted(generators.load_all().items()):
        entries = {}
        for level in g.levels:
            for cf in ((False, True) if g.calculator_free else (False,)):
                for seed in SEEDS:
                    p = generators.build(name, seed, level, cf)
                    entries[f"L{level}-{'cf' if cf else 'std'}-s{seed}"] = {
                        "digest": digest(p), "answers": {part.id: part.expected for part in p.parts}}
        out[name] = {"version": g.version, "problems": entries}
    return out


def test_generators_match_the_golden_file():
    now = snapshot()
    if os.environ.get("EXAMPREP_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(now, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
        pytest.skip("golden file rewritten")
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    missing = set(now) - set(golden)
    assert not missing, f"generators without golden entries: {missing}; regenerate (see module doc)"
    for name, entry in now.items():
        old = golden[name]
        if entry["version"] != old["version"]:
            pytest.fail(f"{name}: version {old['version']} → {entry['version']}: regenerate the golden file")
        for key, got in entry["problems"].items():
            want = old["problems"][key]
            assert got["digest"] == want["digest"], (
                f"{name} {key}: the problem changed without a version bump (bump {name}'s version)")
            for part, value in want["answers"].items():
                if isinstance(value, str):
                    assert got["answers"][part] == value
                else:
                    # 1e-12 relative to the answer's scale: round-off zeros (1e-17) count as 0
                    scale = float(np.max(np.abs(np.asarray(value, dtype=float)), initial=0.0))
                    np.testing.assert_allclose(got["answers"][part], value, rtol=1e-12, atol=1e-12 * scale)


def test_same_problem_in_a_fresh_process():
    code = ("import json; from examprep import generators as g; "
            "print(json.dumps([g.build(n, 5, 2).to_dict() for n in sorted(g.load_all())]))")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    here = [generators.build(n, 5, 2).to_dict() for n in sorted(generators.load_all())]
    assert json.loads(res.stdout) == json.loads(json.dumps(here))


def test_stream_is_stable():
    s = generators.Stream("fixed", 1)
    assert [s.integer(0, 9) for _ in range(10)] == [4, 2, 4, 0, 1, 1, 2, 5, 2, 5]   # BLAKE2b: fixed forever
