"""Evaluate a part's Recipe, substituting earlier parts' values (error carried forward)."""
from __future__ import annotations

from typing import Any

import numpy as np

from examprep.engine.ops import OPS
from examprep.problem import Recipe


def substitute(value: Any, answers: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            ref = answers[value["$ref"]]
            return ref.tolist() if isinstance(ref, np.ndarray) else ref
        return {k: substitute(v, answers) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, answers) for v in value]
    return value


def evaluate(recipe: Recipe, answers: dict[str, Any]) -> Any:
    """The recipe's value with each {"$ref": id} replaced by ``answers[id]``.

    Raises KeyError when a referenced part has no answer, ExamprepError when the engine rejects
    the substituted values (a student's answer of the wrong shape, say).
    """
    args = substitute(recipe.args, answers)
    if recipe.op.startswith("solve:"):
        from examprep import solve

        out = solve.answer_only(recipe.op[len("solve:"):], args)
        return out[recipe.output] if recipe.output else out
    return OPS[recipe.op](**args)
