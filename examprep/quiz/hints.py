"""Hints at a prompt: first the part's hint, then the formula of its worked step, cut before the
first side that would give the answer away."""
from __future__ import annotations

import re

from examprep.answers import check_part
from examprep.document import Math
from examprep.problem import Part, Problem
from examprep.render.latex import to_text
from examprep.render.terminal import inline

def hint_text(problem: Problem, part: Part, level: int) -> str:
    """First hint: the part's hint; second: the formula of its worked-solution step, cut before
    the first side that gives the answer away (see formula_hint)."""
    if level == 1 and part.hint:
        return "Hint: " + inline(part.hint)
    formulas = [formula_hint(part, b.latex) for s in problem.solution if s.part == part.id
                for b in s.blocks if isinstance(b, Math)]
    formulas = [f for f in formulas if f]
    if formulas:
        return "Formula: " + "   ".join(dict.fromkeys(formulas))
    if part.hint:
        return "Hint: " + inline(part.hint)
    return "No more hints for this part: type s for the worked solution."


_RELATION = re.compile(r"(=|<|>|\\(?:leq?|geq?|approx|neq?)(?![A-Za-z]))")
_UNSUB = {c: "_" + b for b, c in zip("0123456789aeijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉ₐₑᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ")}


def _sides(latex: str) -> tuple[list[str], list[str]]:
    """A formula split at its top-level relations (=, <, >, \\le, \\approx, …): (sides, relations)."""
    sides, relations, depth, start = [], [], 0, 0
    i = 0
    while i < len(latex):
        c = latex[i]
        if c in "{(":
            depth += 1
        elif c in "})":
            depth -= 1
        elif depth == 0:
            m = _RELATION.match(latex, i)
            if m and not latex[max(i - 1, 0):i] == "\\":
                sides.append(latex[start:i])
                relations.append(m.group(0))
                i = start = m.end()
                continue
        i += 1
    sides.append(latex[start:])
    return sides, relations


def _gives_answer(part: Part, latex_side: str) -> bool:
    """Whether the grader would accept this side of a formula as the part's answer."""
    text = to_text(latex_side).strip()
    text = re.sub(r"\s*\(at .*$", "", text)                   # "1/4 (at x = 0)": the value is what counts
    for candidate in dict.fromkeys([text, "".join(_UNSUB.get(c, c) for c in text).replace("·", "*")]):
        if not candidate:
            continue
        try:
            if getattr(check_part(part, candidate, {}, ecf=True), "status", "") == "correct":
                return True
        except Exception:                          # noqa: BLE001 - text that is not an answer reveals nothing
            continue
    return False


def formula_hint(part: Part, latex: str) -> str:
    """A worked step's formula as a hint for ``part``, never its answer: cut before the first side
    the grader would accept as the answer (a derivation's result, a value such as "= 1/4"); for an
    expression part only "left = first right-hand side" (its later sides lead straight to the answer).
    Empty when nothing but the left-hand side would remain."""
    sides, relations = _sides(latex)
    keep = len(sides)
    if part.kind == "expression":
        keep = min(keep, 2)
    for i, side in enumerate(sides[:keep]):
        if _gives_answer(part, side):
            keep = i
            break
    if keep == 0 or (keep == 1 and len(sides) > 1):       # nothing, or a left-hand side alone
        return ""
    pieces = [sides[0]]
    for rel, side in zip(relations[:keep - 1], sides[1:keep]):
        pieces += [rel, side]
    return to_text("".join(pieces)).strip()
