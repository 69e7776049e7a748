"""A simulated class for the item analysis: each student has an ability, and answers each part
right, with one of its known misconceptions, blank, or wrong, drawn deterministically from the
student's index, so abler students score higher (discrimination is positive)."""
from __future__ import annotations

import json
import random


def typed(value):
    """A value as answer files hold it: numbers and lists as they are, None (masked) as -inf."""
    if isinstance(value, list):
        return "[" + ", ".join(typed(v) for v in value) + "]"
    if value is None:
        return "-inf"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def answers(problems, i: int, n: int) -> dict[str, str]:
    rng = random.Random(i)
    ability = 0.25 + 0.7 * (i / max(n - 1, 1))
    out = {}
    for q, p in enumerate(problems, 1):
        for part in p.parts:
            if part.kind == "written":
                out[f"q{q}.{part.id}"] = "A written answer."
                continue
            r = rng.random()
            if r < ability:
                value = typed(part.expected)
            elif part.misconceptions and r < ability + (1 - ability) * 0.6:
                value = typed(part.misconceptions[0].value)
            elif r < ability + (1 - ability) * 0.8:
                value = ""
            else:
                value = "12345"
            out[f"q{q}.{part.id}"] = value
    return out


def write_class(key, folder, n: int | None = None) -> list[str]:
    """One JSON answer file per student of the key's variants (or n copies of its problems)."""
    folder.mkdir(parents=True, exist_ok=True)
    ids = sorted(key.variants) if key.variants else [f"s{i:03d}" for i in range(n or 0)]
    for i, sid in enumerate(ids):
        problems = key.variants[sid] if key.variants else key.problems
        data = {"student_id": sid, **answers(problems, i, len(ids))}
        (folder / f"{sid}.json").write_text(json.dumps(data))
    return ids
