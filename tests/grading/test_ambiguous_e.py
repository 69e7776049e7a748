"""'2e+1' next to Euler's e (issue 14, item 9): in an expression part, where e is a constant and
'2e' means 2·e, '<number>e[+-]<digits>' without spaces is ambiguous and refused as unreadable; in
number, vector and matrix parts it stays scientific notation."""
import json
import math

import pytest
from typer.testing import CliRunner

from examprep import generators
from examprep.answers import check_part, parse_answer
from examprep.cli import app
from examprep.problem import EXACT, Part, EcfRule, Tolerance

runner = CliRunner()
CONSTANT = Part("c", "c", "expression", math.e / (2 * math.e + 1), tolerance=Tolerance("sigfigs", 3),
                exact="e/(2e + 1)")
FORMULA = Part("d", "d", "expression", "p_i - y_i", tolerance=EXACT, exact="p_i - y_i", variables=("p_i", "y_i"))


@pytest.mark.parametrize("text,hint", [
    ("e/(2e+1)", "'2e+1' at column 4 is ambiguous: write 2*e + 1 or 2e1"),
    ("2e+1", "ambiguous: write 2*e + 1 or 2e1"),
    ("e/(2.5e-3)", "ambiguous: write 2.5*e - 3 or 2.5*10^-3"),
    ("1/(1 + 3e+10)", "ambiguous: write 3*e + 10 or 3e10"),
])
def test_number_e_sign_digits_is_ambiguous_in_an_expression(text, hint):
    for part in (CONSTANT, FORMULA):
        r = check_part(part, text)
        assert r.status == "unparseable" and hint in r.feedback, (part.id, r.feedback)


@pytest.mark.parametrize("text", ["e/(2e + 1)", "e/(2*e+1)", "e/(2e1)", "e/(2 e + 1)", "e/(2E+1)", "e/(2e^1 + 1)"])
def test_unambiguous_forms_are_read(text):
    r = check_part(CONSTANT, text)
    assert r.status in ("correct", "wrong"), r.feedback
    assert (r.status == "correct") == (text not in ("e/(2e1)", "e/(2E+1)")), (text, r.feedback)


def test_a_number_from_toml_or_json_is_not_text_and_never_ambiguous():
    part = Part("c", "c", "expression", 1e-05, tolerance=Tolerance("sigfigs", 3), exact="10^-5")
    assert check_part(part, 1e-05).status == "correct"          # repr(1e-05) is '1e-05'


@pytest.mark.parametrize("text,value", [("2e+1", 20.0), ("2e-3", 0.002), ("2E+1", 20.0), ("-1.5e+2", -150.0)])
def test_it_stays_scientific_notation_in_number_parts(text, value):
    part = Part("x", "x", "number", value)
    assert parse_answer(part, text) == value and check_part(part, text).status == "correct"


def test_it_stays_scientific_notation_in_vectors_and_matrices():
    vec = Part("v", "v", "vector", [20.0, 0.002], shape=(2,))
    mat = Part("m", "m", "matrix", [[20.0, 0.002], [1.0, 0.0]], shape=(2, 2))
    assert parse_answer(vec, "[2e+1, 2e-3]") == [20.0, 0.002]
    assert parse_answer(mat, "[2e+1 2e-3; 1 0]") == [[20.0, 0.002], [1.0, 0.0]]
    assert check_part(mat, "[[2e+1, 2e-3], [1e+0, 0]]").status == "correct"


def test_the_templates_2e_3_example_stays_valid(tmp_path):
    res = runner.invoke(app, ["generate", "softmax-cross-entropy", "--seed", "1", "--template", str(tmp_path / "a.toml")])
    assert res.exit_code == 0, res.output
    assert "2e-3" in (tmp_path / "a.toml").read_text()
    assert parse_answer(Part("x", "x", "number", 0.002), "2e-3") == 0.002


def test_no_carried_forward_credit_is_built_on_the_misreading():
    # (b) = 2·(a): e/(2e+1) for (a) is asked again (a batch grades it unreadable and carries the
    # key's value), so 2*e/(2e+1) for (b), read as 2e/20 in a number part, earns nothing
    from examprep.grading import grade_submission
    from examprep.problem import Problem

    a = Part("a", "a", "expression", math.e / (2 * math.e + 1), tolerance=Tolerance("sigfigs", 3), exact="e/(2e + 1)")
    b = Part("b", "b", "number", 2 * math.e / (2 * math.e + 1), ecf_rule=EcfRule("scale", {"x": {"$ref": "a"}, "factor": 2.0}))
    problem = Problem("t", 1, 0, 1, "t", {}, [], [a, b], [])
    res = grade_submission([problem], {"q1.a": "e/(2e+1)", "q1.b": "2*e/(2e+1)"})
    statuses = {r.part_id: (r.status, r.value) for _, _, r in res.parts()}
    assert statuses["a"] == ("unparseable", None)
    assert statuses["b"][0] == "wrong"


def test_the_quiz_asks_again_without_cost(tmp_path, monkeypatch):
    monkeypatch.setenv("EXAMPREP_HOME", str(tmp_path / "home"))
    problem = generators.build("softmax-cross-entropy", 7, 1)
    typed = [json.dumps(p.expected) if p.kind != "expression" else p.exact for p in problem.parts]
    derivation = [i for i, p in enumerate(problem.parts) if p.kind == "expression"][0]
    lines = typed[:derivation] + ["p_i - y_i + 0*2e+1"] + typed[derivation:]
    res = runner.invoke(app, ["quiz", "--topic", "softmax-cross-entropy", "--seed", "7", "--count", "1"],
                        input="".join(f"{line}\n" for line in lines + [""]), env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert "Cannot read that" in res.output and "ambiguous: write 2*e + 1 or 2e1" in res.output
    assert "this does not count" in res.output
    from examprep.history import History

    with History() as h:
        statuses = [a.status for a in h.attempts()]
    assert statuses == ["correct"] * len(problem.parts), res.output
