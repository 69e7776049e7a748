"""A value prints the same in an authored question's statement and in its worked solution."""
from __future__ import annotations

from examprep.authoring import build_question, parse_question
from examprep.render import markdown

DENSE = '''
[question]
id = "big-dense"
title = "A dense layer with a large input"
solve = "dense"
text = "The weights are {weight}, the bias {bias}, the input x = {x}, the output gradient {grad_output}."

[question.params]
x = [12345.6, 0.000012345]
weight = [[1.0, 0.0]]
bias = [0.0]
grad_output = [1.0]

[[question.part]]
answer = "output"
prompt = "The output y."
points = 2
'''


def test_a_statement_prints_a_value_as_its_solution_does():
    p = build_question(parse_question(DENSE, "big-dense.toml"), 1)
    page = markdown.problem(p, solution=True)
    statement, solution = page.split("### Worked solution")
    big, small = markdown.number(12345.6), markdown.number(0.000012345)
    assert (big, small) == (r"1.235 \times 10^{4}", r"1.234 \times 10^{-5}")    # 4 s.f., as the PDF prints
    assert f"x = $[{big}, {small}]$" in statement                               # once "12346" and "0.00001234"
    assert rf"\mathrm{{output}} = \begin{{bmatrix}} {big} \end{{bmatrix}}" in solution    # y = x₁ = 12345.6
    plain = markdown.problem(build_question(parse_question(DENSE.replace("[12345.6, 0.000012345]", "[3, 0.25]"),
                                                           "q.toml"), 1), solution=True)
    assert "x = $[3, 0.25]$" in plain and r"\begin{bmatrix} 3 \end{bmatrix}" in plain    # short values plainly

