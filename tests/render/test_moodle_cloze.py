"""Moodle export read by the strict cloze reader in moodle_cloze.py (Moodle's documented grammar,
not the exporter's code), for every generator at levels 1-3 and the bundled recipes."""
import re
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest

from examprep import generators, sheets
from examprep.problem import EXACT, Misconception, Part
from examprep.render import moodle

from .moodle_cloze import GRADES, ClozeError, parse_questiontext


def _flat(v):
    return [x for y in v for x in _flat(y)] if isinstance(v, list) else [v]


@pytest.mark.parametrize("text, message", [
    ("{1:NUMBERICAL:=3}", "unknown cloze type"),
    ("{1:NUMERICAL:=3:0.1~%33%2:0.1}", "grade 33% is not one Moodle accepts"),
    ("{1:NUMERICAL:=3:0.1#see \\(W_{1}\\)}", "an unescaped '}' closed the field early"),
    ("{1:NUMERICAL:=3:0.1#see", "never closes"),
    ("{1:NUMERICAL:=3:0.1#a # b}", "unescaped '#'"),
    ("{1:NUMERICAL:%50%3:0.1}", "exactly one 100 % answer"),
    ("{1:NUMERICAL:=3e:0.1}", "not a Moodle number"),
    ("{1:MULTICHOICE:=a~}", "an empty answer"),
])
def test_the_reader_refuses_what_moodle_would_misread(text, message):
    with pytest.raises(ClozeError, match=re.escape(message)):
        parse_questiontext(text)


def test_the_reader_reads_escapes_and_grades():
    [f] = parse_questiontext(r"x {2:NM:=0.5:0.005#right \} \# \~~%33.33333%1,5:0.1#half~-2:0#no}")
    assert f["weight"] == 2 and [a["grade"] for a in f["alternatives"]] == [100, 33.33333, 0]
    assert f["alternatives"][0]["feedback"] == "right } # ~" and f["alternatives"][1]["value"] == 1.5


def _check(problem):
    q = moodle.question(problem, "q1")
    text = q.findtext("questiontext/text")
    maths = re.findall(r"\\\((.*?)\\\)", text, re.S) + re.findall(r"\\\[(.*?)\\\]", text, re.S)
    assert text.count(r"\(") == text.count(r"\)") and text.count(r"\[") == text.count(r"\]")
    assert "$" not in text                                         # MathJax reads \( \) and \[ \], not dollars
    for m in maths:
        assert not re.search(r"\\mathrm\{[A-Za-z]\\_", m), m       # W_1 is a subscript, not a literal "W_1"
    if q.get("type") == "numerical":
        assert all(a.get("fraction") in GRADES for a in q.findall("answer"))
        return
    if q.get("type") == "essay":
        return
    fields = parse_questiontext(text)
    expected = [(part, v) for part in problem.parts if part.kind != "written"
                for v in ([part.expected] if part.kind == "choice" else _flat(part.expected))]
    assert len(fields) == len(expected)
    for f, (part, v) in zip(fields, expected):
        right = next(a for a in f["alternatives"] if a["grade"] == 100)
        if part.kind == "choice":
            assert f["type"] == "MULTICHOICE" and right["answer"] == v
        elif isinstance(v, (int, float)):
            assert f["type"] == "NUMERICAL" and right["value"] == pytest.approx(float(v), rel=1e-12, abs=1e-12)
            bound = 0.0 if part.kind == "integer" or part.tolerance.rule == "exact" else part.tolerance.bound(v)
            assert right["tolerance"] == pytest.approx(bound, rel=1e-9, abs=1e-15)
            for wrong in f["alternatives"]:
                if wrong is not right:
                    assert abs(wrong["value"] - float(v)) > right["tolerance"] + wrong["tolerance"] - 1e-12


@pytest.mark.parametrize("name", sorted(generators.load_all()))
def test_every_generator_at_every_level_reads_as_moodle_reads_it(name):
    for level in (1, 2, 3):
        _check(generators.build(name, 0, level))


@pytest.mark.parametrize("recipe", ["midterm", "cnn", "rnn", "transformer", "optimization"])
def test_every_bundled_recipe_reads_back(recipe):
    sheet = sheets.build_sheet(sheets.load_recipe(recipe), 2024)
    root = ET.fromstring(moodle.sheet_xml(sheet).encode())
    assert len(root.findall("question")) == 1 + len(sheet.copies[0].problems)
    for p in sheet.copies[0].problems:
        _check(p)


@pytest.mark.parametrize("credit, grade", [(0.0, "0"), (0.5, "50"), (0.4, "40"), (0.35, "33.33333"), (0.99, "90"),
                                           (1 / 3, "33.33333"), (0.04, "0")])
def test_partial_credit_is_the_largest_moodle_grade_not_above_it(credit, grade):
    part = Part("n", "How many?", "integer", 3, tolerance=EXACT,
                misconceptions=(Misconception("m", 5, "off by two", credit=credit),))
    [f] = parse_questiontext(moodle._numerical_field(part, 3, [(5.0, "off by two", credit)], 1))
    assert f["alternatives"][1]["grade"] == float(grade)
    p = replace(generators.build("softmax-cross-entropy", 3, 1), parts=[part])
    q = moodle.question(p, "q")
    assert q.get("type") == "numerical" and [a.get("fraction") for a in q.findall("answer")] == ["100", grade]


def test_a_choice_parts_mistaken_option_carries_its_feedback_and_credit():
    """An authored question's choice mistake: `%0%option#why` in its MULTICHOICE field (issue 37 attack)."""
    from importlib import resources

    from examprep.authoring import build_question, load_question

    spec = load_question(str(resources.files("examprep") / "bank" / "questions" / "softmax-own-parts.toml"))
    problem = build_question(spec, 3)
    _check(problem)
    part = problem.part("negative")
    [m] = part.misconceptions
    field = parse_questiontext(moodle.question(problem, "q1").findtext("questiontext/text"))[-1]
    assert field["type"] == "MULTICHOICE"
    by_answer = {a["answer"]: a for a in field["alternatives"]}
    assert (by_answer[m.value]["grade"], by_answer[m.value]["feedback"]) == (0.0, m.explanation)
    assert by_answer[part.expected]["grade"] == 100
    assert all(a["feedback"] == "" for k, a in by_answer.items() if k != m.value)
    half = replace(part, misconceptions=(replace(m, credit=0.5),))
    [f] = parse_questiontext(moodle._part_fields(half, [1]))
    assert next(a for a in f["alternatives"] if a["answer"] == m.value)["grade"] == 50
