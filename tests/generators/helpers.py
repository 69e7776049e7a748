"""Shared helpers for generator tests: iterate instances, find solution values, evaluate exact text."""
from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np

from examprep import generators
from examprep.document import Matrix, Math
from examprep.problem import Part, Problem

CI_SEEDS = range(20)


def instances(names: list[str] | None = None, seeds=CI_SEEDS) -> Iterator[Problem]:
    gens = generators.load_all()
    for name in names or sorted(gens):
        g = gens[name]
        for level in g.levels:
            for cf in ((False, True) if g.calculator_free else (False,)):
                for seed in seeds:
                    yield generators.build(name, seed, level, cf)


def close_to(part: Part, value: Any) -> bool:
    try:
        got = np.asarray(value, dtype=float)
        want = np.asarray(part.expected, dtype=float)
    except (TypeError, ValueError):
        return False
    if got.shape != want.shape and not (got.size == want.size == 1):
        return False      # a wrong shape is never "close", even when the flattened entries agree
    return all(part.tolerance.accepts(g, w) for g, w in zip(got.ravel(), want.ravel()))


def solution_values(problem: Problem, part_id: str) -> list[Any]:
    out = []
    for step in problem.solution:
        if step.part == part_id:
            out += [b.values for b in step.blocks if isinstance(b, Matrix)]
            out += [b.latex for b in step.blocks if isinstance(b, Math)]
    return out


def statement_numbers(problem: Problem) -> list[float]:
    nums: list[float] = []

    def walk(v: Any) -> None:
        if isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            nums.append(float(v))

    for b in problem.statement:
        if isinstance(b, Matrix):
            walk(b.values)
    return nums


def sig_digits_ok(x: float, sig: int = 3) -> bool:
    return x == 0 or float(f"{x:.{sig}g}") == x


def eval_exact(text: str) -> float:
    """Evaluate a generated (trusted) exact answer string: + - * / ^ parentheses, e, ln, sqrt."""
    import ast
    import re

    src = re.sub(r"\bln\s+(\d+)", r"ln(\1)", text).replace("^", "**")
    tree = ast.parse(src, mode="eval")

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id == "e":
            return math.e
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.Div: lambda: a / b if b else math.inf, ast.Pow: lambda: a ** b}
            return ops[type(node.op)]()
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return {"ln": math.log, "sqrt": math.sqrt}[node.func.id](ev(node.args[0]))
        raise ValueError(f"unexpected {ast.dump(node)} in {text!r}")

    return ev(tree)


# -------------------------------------------------------------- torch helpers of the per-generator tests

def t64(x: Any, grad: bool = False):
    """A float64 torch tensor (torch imported here: only the tests that skip without torch call it)."""
    import torch

    return torch.tensor(np.asarray(x, dtype=float), dtype=torch.float64, requires_grad=grad)


def agree(got: Any, want: Any, rtol: float = 1e-12, atol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=rtol, atol=atol)


def close(a: Any, b: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol, atol=atol)


def answers(p: Problem) -> dict[str, Any]:
    return {q.id: q.expected for q in p.parts}
