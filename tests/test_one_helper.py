"""One helper per idea: no function body of any size is written twice in the package.

Two functions whose bodies (docstrings and local imports aside) have the same syntax tree are one idea written
twice, and the copies drift apart (a fix lands in one of them). Small bodies (a one-line getter)
are allowed to coincide."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "examprep"
MIN_NODES = 25          # smaller bodies (return a field, call one function) may coincide


def _body_key(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]                                     # the docstring may differ
    body = [stmt for stmt in body if not isinstance(stmt, (ast.Import, ast.ImportFrom))]    # and where names come from
    if sum(1 for stmt in body for _ in ast.walk(stmt)) < MIN_NODES:
        return None
    return ast.dump(ast.Module(body=body, type_ignores=[]), annotate_fields=False)


def test_no_function_body_is_written_twice():
    where = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (key := _body_key(node)):
                where[key].append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}")
    twice = [places for places in where.values() if len(places) > 1]
    assert not twice, "one idea written twice (keep one, import it): " + "; ".join(", ".join(p) for p in twice)

