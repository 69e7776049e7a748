"""Worked steps show their formulas with the problem's numbers put in (receptive-field: each layer's
sizes, the per-layer effective kernels, jumps and receptive fields, the "same" layer's padding), in
every renderer, while the Problem stays as it is. The numbers put in are checked by evaluating the
substituted formula (its LaTeX read back as arithmetic here) against the step's own result."""
import copy
import dataclasses
import math
import re

import pytest

from examprep import generators
from examprep.document import Math, Matrix
from examprep.render.markdown import problem as problem_markdown
from examprep.render.terminal import print_problem
from examprep.render.worked import worked_steps


def evaluate(latex: str) -> float:
    """Our substituted LaTeX (numbers, + − ·, \\frac, ⌊ ⌋, ⌈ ⌉, \\max) as a Python value."""
    s = latex.replace(r"\cdot", "*").replace(r"\max", "max").replace(r",\ ", ", ")
    s = re.sub(r"\\left\\lfloor(.*?)\\right\\rfloor", r"math.floor(\1)", s)
    s = re.sub(r"\\lceil(.*?)\\rceil", r"math.ceil(\1)", s)
    s = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"((\1)/(\2))", s)
    s = s.replace("/ ", "/")
    assert re.fullmatch(r"[\d\s+\-*/().,a-z]*", s), s           # nothing but arithmetic is left
    return eval(s, {"math": math, "max": max})


@pytest.fixture(scope="module")
def problem():
    return generators.build("receptive-field", 5, 3)        # conv, max-pool, conv and a "same" layer


def test_each_substituted_formula_gives_the_steps_own_result(problem):
    checked = 0
    for step in worked_steps(problem):
        maths = [b.latex for b in step.blocks if isinstance(b, Math)]
        values = {b.name: b.values for b in step.blocks if isinstance(b, Matrix)}
        name = next(iter(values))
        if name in ("effective_kernel", "quotient", "output_size") and step.part.startswith("size_"):
            assert evaluate(maths[0].rsplit(" = ", 1)[1]) == values[name]
            checked += 1
        elif name in ("effective_kernels", "jumps", "receptive_fields"):
            shown = [evaluate(eq.split(" = ")[1]) for eq in maths[1].split(r",\quad ")]
            assert shown == values[name]
            checked += 1
        elif name == "output_size" and step.part == "same_output":
            assert evaluate(maths[0].rsplit(" = ", 1)[1]) == values[name]
            checked += 1
        elif name == "pad_before":
            total = evaluate(maths[1].split(" = ", 1)[1])
            assert total == values["pad_before"] + values["pad_after"]
            checked += 1
    assert checked == 3 * 3 + 3 + 2


def test_the_numbers_are_the_layers_own(problem):
    layers, n = problem.params["layers"], problem.params["input_size"]
    steps = worked_steps(problem)
    first = next(s for s in steps if s.part == "size_1" and "quotient" in {getattr(b, "name", "") for b in s.blocks})
    L = layers[0]
    k_eff = L["dilation"] * (L["kernel_size"] - 1) + 1
    assert first.blocks[0].latex.endswith(rf"\frac{{{n} + 2 \cdot {L['padding']} - {k_eff}}}{{{L['stride']}}} + 1")


def test_the_problem_itself_is_unchanged(problem):
    before = copy.deepcopy(problem.to_dict())
    worked_steps(problem)
    assert problem.to_dict() == before
    assert [b.latex for s in problem.solution for b in s.blocks if isinstance(b, Math)][0] == r"k_{\text{eff}} = d(k-1) + 1"


def test_other_problems_and_other_shapes_are_shown_as_stored(problem):
    gru = generators.build("gru-step", 1, 1)
    assert worked_steps(gru) == gru.solution
    odd = dataclasses.replace(problem, params={"input_size": 30})            # no layers: nothing to put in
    assert worked_steps(odd)[:3] == odd.solution[:3]


def test_the_terminal_the_markdown_and_the_pdf_show_them(problem, capsys, monkeypatch):
    from examprep.render.typst.sheet import _solution

    n, L = problem.params["input_size"], problem.params["layers"][0]
    monkeypatch.setenv("COLUMNS", "100")
    print_problem(problem, solution=True, no_color=True)
    assert f"({n} + 2 · {L['padding']} - " in capsys.readouterr().out
    assert rf"\frac{{{n} + 2 \cdot {L['padding']} - " in problem_markdown(problem, solution=True)
    assert f"frac({n} + 2 ⋅ {L['padding']} - " in "\n".join(_solution(problem, [], strict=True))
