"""A Moodle calculated question's formula in examprep's expression language (examprep/expr.py).

Moodle's formulas (docs.moodle.org, "Calculated question type": "Available functions") are PHP
arithmetic over wildcards ``{a}`` with functions such as ``pow(x, y)``, ``sqrt(x)``, ``pi()``,
``log(x)`` (natural), ``log10(x)``. The wildcards become the parameters' names, and the text is
parsed by Python's parser into a tree (never evaluated) and rewritten: ``pow(x, y)`` → ``x ** y``,
``pi()`` → its value, ``log10(x)`` → ``log(x) / log(10)``, ``fmod``/trigonometry refused by name.
The result is checked by ``expr.parse``, the evaluator's own whitelist, so nothing it cannot walk
gets through.
"""
from __future__ import annotations

import ast
import math
import re

from examprep import expr

# Moodle's functions that the evaluator has under the same name and meaning
SAME = {"abs", "sqrt", "exp", "log", "min", "max", "round"}


class FormulaError(ValueError):
    """A formula examprep's expression language cannot express (the message says what)."""


_WILDCARD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class _Rewrite(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name is None or node.keywords:
            raise FormulaError(f"'{ast.unparse(node)}' is not a function call Moodle's formulas hold")
        if name == "pi" and not node.args:
            return ast.Constant(math.pi)
        if name == "pow" and len(node.args) == 2:
            return ast.BinOp(node.args[0], ast.Pow(), node.args[1])
        if name == "log10" and len(node.args) == 1:
            return ast.BinOp(ast.Call(ast.Name("log", ast.Load()), node.args, []), ast.Div(),
                             ast.Call(ast.Name("log", ast.Load()), [ast.Constant(10)], []))
        if name in SAME:
            return node
        raise FormulaError(f"{name}() has no counterpart in examprep's expressions (functions: "
                           f"{', '.join(expr.FUNCTIONS)}, and pow, pi, log10)")


def translate(formula: str, wildcards: set[str]) -> str:
    """The formula as an expression over the wildcards' names; FormulaError naming what cannot be carried."""
    text = " ".join(str(formula).split())
    used = set(_WILDCARD.findall(text))
    unknown = used - wildcards
    if unknown:
        raise FormulaError(f"the formula uses {', '.join('{' + u + '}' for u in sorted(unknown))}, which no "
                           "dataset defines")
    bare = _WILDCARD.sub(lambda m: m.group(1), text)
    if "{" in bare or "}" in bare:
        raise FormulaError(f"'{text}' has a brace that is not a wildcard {{name}}")
    try:
        tree = ast.parse(bare, mode="eval")
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        raise FormulaError(f"'{text}' is not a formula examprep can read") from None
    try:
        rewritten = ast.unparse(ast.fix_missing_locations(_Rewrite().visit(tree)))
        expr.parse(rewritten)
    except expr.ExprError as err:
        raise FormulaError(f"'{text}': {err}") from None
    names = expr.names(rewritten)
    stray = names - wildcards - set(expr.FUNCTIONS)
    if stray:
        raise FormulaError(f"'{text}' names {', '.join(sorted(stray))}, which is neither a wildcard nor a function")
    return rewritten
