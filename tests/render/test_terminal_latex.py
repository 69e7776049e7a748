"""The terminal shows every built-in problem's formulas without raw LaTeX: each command a statement or
worked solution uses is one render/latex.py converts (a generator that writes a new one, say \\psi for
an output activation, fails here until the terminal knows it)."""
from __future__ import annotations

import re

from examprep import generators
from examprep.document import Math
from examprep.render.latex import to_text


def _formulas(x):
    if isinstance(x, Math):
        yield x.latex
    elif isinstance(x, (list, tuple)):
        for y in x:
            yield from _formulas(y)
    elif hasattr(x, "__dict__"):
        for v in vars(x).values():
            yield from _formulas(v)


def test_every_generators_formulas_reach_the_terminal_without_latex_commands():
    left = {}
    for name, gen in generators.load_all().items():
        for level in gen.levels:
            problem = generators.build(name, 0, level)
            for formula in _formulas([problem.statement, problem.solution]):
                for command in re.findall(r"\\[A-Za-z]+", to_text(formula)):
                    left.setdefault(command, f"{name} L{level}: {formula}")
    assert not left, f"LaTeX the terminal shows raw: {left}"
