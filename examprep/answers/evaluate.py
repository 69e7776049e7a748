"""The value of a parsed answer in floats, within the size rules (|x| ≤ 1e300, |exponent| ≤
MAX_EXPONENT unless the base is 0 or ±1), and the canonical text of a syntax tree."""
from __future__ import annotations

import math
import operator
from typing import Any

from examprep.answers.tokens import CONSTANTS, MAX_EXPONENT, MAX_MAGNITUDE, AnswerParseError


# The four arithmetic nodes, one table for every evaluator of a parsed answer (floats here; the
# interval, principal-branch and sympy evaluators of numeric.py and symbolic.py): each checks a
# zero divisor its own way first.
ARITHMETIC = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}

def checked(x: float) -> float:
    if x != x:
        raise AnswerParseError("the answer is undefined (e.g. 0/0 or the log of a negative number)")
    if abs(x) > MAX_MAGNITUDE and x not in (math.inf, -math.inf):
        raise AnswerParseError("number too large")
    return x


def call_function(fname: str, x: float) -> float:
    try:
        if fname == "exp":
            if x > 690:
                raise AnswerParseError("number too large (exp of more than 690)")
            return math.exp(x)
        if fname in ("ln", "log"):
            return math.log(x)
        if fname == "log10":
            return math.log10(x)
        if fname == "log2":
            return math.log2(x)
        if fname == "sqrt":
            return math.sqrt(x)
        if fname == "sin":
            return math.sin(x)
        if fname == "cos":
            return math.cos(x)
        if fname == "tan":
            return math.tan(x)
        if fname == "tanh":
            return math.tanh(x)
        if fname == "sigmoid":
            return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0
        if fname == "abs":
            return abs(x)
    except ValueError:
        raise AnswerParseError(f"{fname}({x:g}) is undefined") from None
    raise AnswerParseError(f"unknown function {fname!r}")   # unreachable: the parser whitelists


def _power(a: float, b: float) -> float:
    if abs(b) > MAX_EXPONENT and a not in (0.0, 1.0, -1.0):
        raise AnswerParseError(f"exponent too large ({b:.3g}; at most {MAX_EXPONENT:g})")
    if a == 0.0 and b < 0:
        raise AnswerParseError("division by zero (0 to a negative power)")
    try:
        r = a ** b
    except OverflowError:
        raise AnswerParseError("number too large") from None
    if isinstance(r, complex):
        raise AnswerParseError("a negative number to a fractional power is not a real number")
    return checked(r)


def evaluate(node: Any, env: dict[str, float] | None = None) -> float:
    """A scalar node's value as a float; ``env`` gives variables their values.

    Raises AnswerParseError for undefined results (0/0, log of a negative, a free variable) and
    for values beyond the size rules (|x| > 1e300, |exponent| > MAX_EXPONENT).
    """
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "const":
        return CONSTANTS[node[1]]
    if kind == "var":
        if env is None or node[1] not in env:
            raise AnswerParseError(f"{node[1]} has no value here: this answer is a number")
        return env[node[1]]
    if kind == "neg":
        return -evaluate(node[1], env)
    if kind == "pct":
        return evaluate(node[1], env) / 100.0
    if kind == "call":
        return checked(call_function(node[1], evaluate(node[2][0], env)))
    a = evaluate(node[1], env)
    b = evaluate(node[2], env)
    if kind == "div" and b == 0:
        raise AnswerParseError("division by zero")
    if kind in ARITHMETIC:
        return checked(ARITHMETIC[kind](a, b))
    if kind == "pow":
        return _power(a, b)
    raise AnswerParseError(f"cannot evaluate {kind}")   # unreachable


def has_names(node: Any, kinds: tuple[str, ...] = ("var",)) -> bool:
    """Does a node use a variable (or, with kinds=("const", "call"), anything beyond arithmetic)?"""
    if isinstance(node, list):
        return any(has_names(x, kinds) for x in node)
    if node[0] in kinds:
        return True
    if node[0] in ("num", "const", "var"):
        return False
    if node[0] == "call":
        return any(has_names(a, kinds) for a in node[2])
    return any(has_names(x, kinds) for x in node[1:])


def unparse(node: Any) -> str:
    """A node as canonical text in the accepted syntax (for feedback and reports)."""
    if isinstance(node, list):
        return "[" + ", ".join(unparse(x) for x in node) + "]"
    kind = node[0]
    if kind == "num":
        return node[2]
    if kind in ("const", "var"):
        return node[1]
    if kind == "neg":
        return "-" + _wrap(node[1], 3)
    if kind == "pct":
        return _wrap(node[1], 5) + "%"
    if kind == "call":
        return f"{node[1]}({unparse(node[2][0])})"
    ops = {"add": (" + ", 1), "sub": (" - ", 1), "mul": ("*", 2), "div": ("/", 2), "pow": ("^", 4)}
    sym, prec = ops[kind]
    left = _wrap(node[1], prec + (1 if kind == "pow" else 0))
    right = _wrap(node[2], prec + (0 if kind == "pow" else 1 if kind in ("sub", "div") else 0))
    return left + sym + right


def _prec(node: Any) -> int:
    return {"add": 1, "sub": 1, "mul": 2, "div": 2, "neg": 3, "pow": 4, "pct": 5}.get(node[0], 6)


def _wrap(node: Any, need: int) -> str:
    text = unparse(node)
    return f"({text})" if _prec(node) < need else text



def evaluate_all(value: Any, env: dict[str, float] | None = None) -> Any:
    """Evaluate every node of nested lists to floats (same nesting)."""
    if isinstance(value, list):
        return [evaluate_all(v, env) for v in value]
    return evaluate(value, env)


def check_exponents(node: Any) -> None:
    """The exponent rule, wherever the exponent appears: a^b with |b| > MAX_EXPONENT is refused
    unless a is the constant 0 or ±1 — also when a has variables, whatever their values at one
    point ((x − a)^6000 is refused although it is 0 where x = a). Innermost powers first."""
    if isinstance(node, list):
        for x in node:
            check_exponents(x)
        return
    kind = node[0]
    if kind in ("num", "const", "var"):
        return
    for child in (node[2] if kind == "call" else node[1:]):
        check_exponents(child)
    if kind != "pow" or has_names(node[2]):
        return
    try:
        b = evaluate(node[2])
    except AnswerParseError:
        return                       # the evaluation says what is wrong with the exponent itself
    if abs(b) <= MAX_EXPONENT:
        return
    if not has_names(node[1]):
        try:
            if evaluate(node[1]) in (0.0, 1.0, -1.0):
                return
        except AnswerParseError:
            return
    shown = f"{int(b)}" if b == int(b) and abs(b) < 1e15 else f"{b:.3g}"
    raise AnswerParseError(f"exponent too large ({shown}; at most {MAX_EXPONENT:g})")
