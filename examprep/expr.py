"""The safe evaluator of a question's ``where`` condition, its computed parts' ``value`` and its
mistakes' ``value``: a small expression language, parsed
by Python's own parser (``ast.parse``, which only builds a tree) and evaluated here node by node
over a whitelist — nothing is ever passed to ``eval``, no attribute, no import, no call but the
functions below.

Allowed: numbers, True/False, the question's parameter names, lists ``[a, b]``, indexing
``logits[0]`` and ``w[1][0]`` (``w[1, 0]`` too), arithmetic ``+ - * / // % **``, comparisons
(chained: ``0 < x <= 3``), ``and``, ``or``, ``not``, ``x if c else y``, and the functions
distinct, min, max, sum, abs, len, all, any, round, exp, log (natural) and sqrt.

``distinct(v)``: every entry of v (flattened) differs from every other.
"""
from __future__ import annotations

import ast
import math
import operator
from typing import Any

import numpy as np


class ExprError(ValueError):
    """An expression (a condition or a value) that is not in the language, or fails on the values given; the message says why."""


MAX_POWER = 64        # 10**64 is plenty for a condition; 9**9**9 would take the machine
MAX_BITS = 1024       # every intermediate whole number: nesting powers ((2**64)**64)**64 must not hang
MAX_DEPTH = 40        # of the expression's tree: 400 nested minus signs must not exhaust the stack
MAX_ROUND = 20        # round(x, n): |n| at most this (round(5, -10**60) would compute 10**(10**60))
MAX_LENGTH = 500


def _flat(v: Any) -> list:
    return np.asarray(v, dtype=float).ravel().tolist()


def _real(v: Any) -> float:
    """A number for exp, log and sqrt (a list or true/false is a TypeError that names it)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"expected a number, got {'a list' if isinstance(v, list) else repr(v)} (index a list first)")
    return v


def _distinct(v: Any) -> bool:
    flat = _flat(v)
    return len(set(flat)) == len(flat)


FUNCTIONS = {
    "distinct": _distinct,
    "min": lambda *a: min(_flat(a[0])) if len(a) == 1 else min(a),
    "max": lambda *a: max(_flat(a[0])) if len(a) == 1 else max(a),
    "sum": lambda v: sum(_flat(v)),
    "abs": lambda v: np.abs(np.asarray(v, dtype=float)).tolist() if isinstance(v, list) else abs(v),
    "len": lambda v: len(v),
    "all": lambda v: all(_flat(v)),
    "any": lambda v: any(_flat(v)),
    "round": lambda v, n=0: round(v, int(n)),
    "exp": lambda v: math.exp(_real(v)),
    "log": lambda v: math.log(_real(v)),          # natural; ValueError (a message) at or below 0
    "sqrt": lambda v: math.sqrt(_real(v)),
}

# names an expression reads as themselves, never as a parameter: a parameter so named would be shadowed
RESERVED = frozenset({"true", "True", "false", "False", *FUNCTIONS})

ARITY = {"distinct": (1, 1), "min": (1, None), "max": (1, None), "sum": (1, 1), "abs": (1, 1), "len": (1, 1),
         "all": (1, 1), "any": (1, 1), "round": (1, 2), "exp": (1, 1), "log": (1, 1), "sqrt": (1, 1)}


def _arity(name: str) -> str:
    lo, hi = ARITY[name]
    if hi is None:
        return "one or more arguments"
    if lo == hi:
        return "1 argument" if lo == 1 else f"{lo} arguments"
    return f"{lo} or {hi} arguments"


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
            ast.NotIn: lambda a, b: a not in b}


def parse(text: str) -> ast.Expression:
    """The condition's tree, checked against the language (ExprError for anything outside it)."""
    if not isinstance(text, str) or not text.strip():
        raise ExprError("empty expression")
    if len(text) > MAX_LENGTH:
        raise ExprError(f"expression longer than {MAX_LENGTH} characters")
    source = text.strip()
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as err:
        column = err.offset if err.offset and 0 < err.offset <= len(source) else len(source)
        at = f"at column {column}" if column < len(source) else f"at the end (column {len(source)})"
        raise ExprError(f"not an expression: {err.msg} {at}") from None
    except (RecursionError, MemoryError):
        raise ExprError(f"nested too deeply (at most {MAX_DEPTH} levels)") from None
    depth = _depth(tree)
    if depth > MAX_DEPTH:
        raise ExprError(f"nested too deeply ({depth} levels; at most {MAX_DEPTH})")
    for node in ast.walk(tree):
        if isinstance(node, (ast.Expression, ast.Load, ast.And, ast.Or, ast.Not, ast.USub, ast.UAdd)):
            continue
        if isinstance(node, (ast.BoolOp, ast.UnaryOp, ast.Compare, ast.IfExp, ast.List, ast.Tuple, ast.Subscript,
                             ast.Name)):
            continue
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            continue
        if type(node) in _BINARY or type(node) in _COMPARE:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
            continue
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS or node.keywords:
                name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
                raise ExprError(f"{name}(…) is not allowed; the functions are {', '.join(FUNCTIONS)}")
            lo, hi = ARITY[node.func.id]
            if len(node.args) < lo or hi is not None and len(node.args) > hi:
                raise ExprError(f"{node.func.id}() takes {_arity(node.func.id)}, got {len(node.args)} in "
                                f"'{ast.unparse(node)}'")
            continue
        if isinstance(node, ast.Attribute):
            raise ExprError(f"'.{node.attr}' is not allowed: no attributes in an expression")
        if isinstance(node, ast.Constant):
            raise ExprError(f"{node.value!r} is not allowed: numbers and true/false only")
        raise ExprError(f"'{ast.unparse(node)}' is not allowed in an expression")
    return tree


def _depth(tree: ast.AST) -> int:
    """The tree's depth, counted without recursion (the tree may be deeper than the stack)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        # a chain of binary operators (1 + 2 + … + 40) nests to the left in the tree: its left operand
        # is one more term of the same level, not a level deeper (evaluating it recurses once a term,
        # which MAX_LENGTH bounds)
        stack.extend((child, d if isinstance(node, ast.BinOp) and child is node.left and isinstance(child, ast.BinOp)
                      else d + 1) for child in ast.iter_child_nodes(node))
    return deepest


def names(text: str) -> set[str]:
    """The parameter names an expression reads (function names excluded)."""
    tree = parse(text)
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called}


def evaluate(text: str | ast.Expression, values: dict[str, Any]) -> Any:
    """The expression's value on ``values`` (parameter name → number or nested list).

    Raises ExprError for a name that is not a parameter, an index out of range, a division by zero
    or a power too large, naming what went wrong."""
    tree = parse(text) if isinstance(text, str) else text
    return _eval(tree.body, values)


def condition(text: str | ast.Expression, values: dict[str, Any]) -> bool:
    """Whether the condition holds on ``values``: its value must be true/false or a number (a list
    is an ExprError: `logits` alone is not a condition, `distinct(logits)` is)."""
    v = evaluate(text, values)
    if isinstance(v, list):
        raise ExprError("the condition gives a list, not true/false; compare it or use distinct/all/any")
    return bool(v)


def _eval(node: ast.AST, env: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in ("true", "True"):
            return True
        if node.id in ("false", "False"):
            return False
        if node.id not in env:
            raise ExprError(f"unknown name {node.id!r} (the parameters are {', '.join(sorted(env)) or 'none'})")
        return env[node.id]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_eval(e, env) for e in node.elts]
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            result: Any = True
            for v in node.values:
                result = _eval(v, env)
                if not result:
                    return result
            return result
        result = False
        for v in node.values:
            result = _eval(v, env)
            if result:
                return result
        return result
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return not v
        _number(v, node)
        return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env), _eval(node.right, env)
        _number(a, node.left)
        _number(b, node.right)
        if isinstance(node.op, ast.Pow):
            if abs(b) > MAX_POWER:
                raise ExprError(f"power {b} too large in '{ast.unparse(node)}' (at most {MAX_POWER})")
            if isinstance(a, int) and isinstance(b, int) and b > 0 and (abs(a).bit_length() - 1) * b > MAX_BITS:
                raise ExprError(f"'{ast.unparse(node)}' is too large (a whole number of more than {MAX_BITS} bits)")
        try:
            result = _BINARY[type(node.op)](a, b)
        except ZeroDivisionError:
            raise ExprError(f"division by zero in '{ast.unparse(node)}'") from None
        except OverflowError:
            raise ExprError(f"'{ast.unparse(node)}' is too large") from None
        if isinstance(result, float) and math.isinf(result) and not (isinstance(a, float) and math.isinf(a)
                                                                    or isinstance(b, float) and math.isinf(b)):
            raise ExprError(f"'{ast.unparse(node)}' is too large (infinite)")
        if isinstance(result, int) and result.bit_length() > MAX_BITS:
            raise ExprError(f"'{ast.unparse(node)}' is too large (a whole number of more than {MAX_BITS} bits)")
        return result
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, env)
            try:
                ok = _COMPARE[type(op)](left, right)
            except TypeError:
                raise ExprError(f"cannot compare in '{ast.unparse(node)}'") from None
            if not ok:
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body, env) if _eval(node.test, env) else _eval(node.orelse, env)
    if isinstance(node, ast.Subscript):
        v = _eval(node.value, env)
        index = _eval(node.slice, env)
        for i in index if isinstance(index, list) else [index]:
            # NaN and ±inf (1e309) are no whole numbers: int() of them was a traceback
            if isinstance(i, bool) or not (isinstance(i, int) or isinstance(i, float) and i * 0 == 0 and i.is_integer()):
                raise ExprError(f"index {i!r} in '{ast.unparse(node)}' is not a whole number")
            if not isinstance(v, list):
                raise ExprError(f"'{ast.unparse(node.value)}' cannot be indexed that deep")
            if not -len(v) <= i < len(v):
                raise ExprError(f"index {i:g} out of range in '{ast.unparse(node)}' (length {len(v)})")
            v = v[int(i)]
        return v
    if isinstance(node, ast.Call):
        name = node.func.id                              # type: ignore[attr-defined]
        args = [_eval(a, env) for a in node.args]
        if name == "round" and len(args) == 2 and not (isinstance(args[1], (int, float)) and abs(args[1]) <= MAX_ROUND):
            raise ExprError(f"round()'s digits must be a number from -{MAX_ROUND} to {MAX_ROUND} in "
                            f"'{ast.unparse(node)}'")
        try:
            result = FUNCTIONS[name](*args)
        except OverflowError:
            raise ExprError(f"'{ast.unparse(node)}' is too large") from None
        except (TypeError, ValueError) as err:
            raise ExprError(f"'{ast.unparse(node)}': {err}") from None
        return result
    raise ExprError(f"'{ast.unparse(node)}' is not allowed in an expression")     # parse() refuses it first


def _number(v: Any, node: ast.AST) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ExprError(f"'{ast.unparse(node)}' is not a number (index a list first: logits[0])")
