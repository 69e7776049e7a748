"""Moodle XML: the file's structure, and the cloze syntax of every question checked by a parser
written here from Moodle's documentation (not our writer): weights, answer lists, tolerances,
exactly one correct answer per field, escaped special characters."""
import html
import re
from dataclasses import replace
import xml.etree.ElementTree as ET
from fractions import Fraction

import pytest

from examprep import generators, sheets
from examprep.problem import EXACT, Part
from examprep.render import moodle

FIELD = re.compile(r"\{(\d+):(NUMERICAL|NM|MULTICHOICE|MC|SHORTANSWER|SA):((?:\\.|[^\\}])*)\}")


def _split(body: str, sep: str) -> list[str]:
    """Split on ``sep`` not preceded by a backslash."""
    out, cur, i = [], "", 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            cur += body[i:i + 2]
            i += 2
            continue
        if body[i] == sep:
            out.append(cur)
            cur = ""
        else:
            cur += body[i]
        i += 1
    return out + [cur]


def parse_field(weight: str, kind: str, body: str) -> dict:
    answers = []
    for raw in _split(body, "~"):
        m = re.fullmatch(r"(=|%(-?\d+(?:\.\d+)?)%)?(.*)", raw, re.S)
        fraction = 100.0 if m.group(1) == "=" else float(m.group(2)) if m.group(2) else 0.0
        value, *feedback = _split(m.group(3), "#")
        assert len(feedback) <= 1, f"unescaped # in {raw!r}"
        ans = {"fraction": fraction, "feedback": feedback[0] if feedback else ""}
        if kind in ("NUMERICAL", "NM"):
            number, *tol = value.split(":")
            assert re.fullmatch(r"-?\d+(\.\d+)?", number), f"not a Moodle number: {number!r}"
            assert len(tol) == 1 and re.fullmatch(r"\d+(\.\d+)?", tol[0]), f"bad tolerance in {raw!r}"
            ans |= {"value": float(number), "tol": float(tol[0])}
        else:
            ans["value"] = value
        for special in "}#~":
            assert re.search(rf"(?<!\\)\{special}", ans["feedback"]) is None, raw
        answers.append(ans)
    assert sum(a["fraction"] == 100 for a in answers) == 1, body
    return {"weight": int(weight), "kind": kind, "answers": answers}


def _flat(v):
    return [x for y in v for x in _flat(y)] if isinstance(v, list) else [v]


@pytest.fixture(scope="module", params=["midterm", "transformer"])
def sheet(request):
    return sheets.build_sheet(sheets.load_recipe(request.param), 2024)


@pytest.fixture(scope="module")
def root(sheet):
    text = moodle.sheet_xml(sheet)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<quiz>')
    return ET.fromstring(text.encode("utf-8"))


def test_structure(root, sheet):
    qs = root.findall("question")
    assert qs[0].get("type") == "category"
    assert qs[0].findtext("category/text") == f"$course$/top/examprep/{sheet.recipe.title}"
    problems = sheet.copies[0].problems
    assert len(qs) == 1 + len(problems)
    for q, p in zip(qs[1:], problems):
        written = all(part.kind == "written" for part in p.parts)
        assert q.get("type") == "essay" if written else q.get("type") in ("cloze", "numerical")
        if written:      # graded by hand in Moodle: the model answers and rubrics are for the graders
            assert q.findtext("defaultgrade") == f"{p.points:g}" and q.findtext("responseformat") == "editor"
            info = html.unescape(q.findtext("graderinfo/text"))
            assert all(part.model_answer in info and all(r in info for r in part.rubric) for part in p.parts)
        assert q.findtext("name/text").startswith(f"q{problems.index(p) + 1} {p.title}")
        assert q.find("questiontext").get("format") == "html" and q.findtext("questiontext/text")
        assert "Worked solution" in q.findtext("generalfeedback/text")


def test_every_cloze_field_parses_and_holds_the_answer(root, sheet):
    for q, p in zip(root.findall("question")[1:], sheet.copies[0].problems):
        if q.get("type") != "cloze":
            continue
        text = q.findtext("questiontext/text")
        assert "$" not in re.sub(r"\\\(|\\\)|\\\[|\\\]", "", text) or "$course$" in text     # math is \( \)
        fields = [parse_field(*m.groups()) for m in FIELD.finditer(text)]
        leftovers = FIELD.sub("", text)
        assert not re.search(r"\{\d+:[A-Z]+:", leftovers), "a malformed cloze field"
        expected = [v for part in p.parts for v in _flat(part.expected)]
        assert len(fields) == len(expected)
        k = 0
        weight_of = {}
        for part in p.parts:
            if part.kind == "choice":
                f = fields[k]
                assert f["kind"] == "MULTICHOICE"
                options = [re.sub(r"\\(.)", r"\1", a["value"]) for a in f["answers"]]
                assert options == sorted(part.choices, key=str.casefold)        # never the generator's order
                assert next(a for a in f["answers"] if a["fraction"] == 100)["value"] == part.expected
                weight_of[part.id] = f["weight"]
                k += 1
                continue
            vals = _flat(part.expected)
            for v in vals:
                f = fields[k]
                right = next(a for a in f["answers"] if a["fraction"] == 100)
                assert f["kind"] == "NUMERICAL" and right["value"] == pytest.approx(float(v), rel=1e-12, abs=1e-12)
                bound = 0.0 if part.tolerance.rule == "exact" or part.kind == "integer" else part.tolerance.bound(v)
                assert right["tol"] == pytest.approx(bound, rel=1e-9, abs=1e-15)
                for wrong in f["answers"]:
                    if wrong["fraction"] == 0:      # a misconception never overlaps the right answer
                        assert abs(wrong["value"] - float(v)) > right["tol"] + wrong["tol"] - 1e-12
                weight_of.setdefault(part.id, 0)
                weight_of[part.id] += f["weight"]
                k += 1
        # weights are proportional to points
        ratios = {Fraction(weight_of[part.id]) / Fraction(part.points).limit_denominator(1000) for part in p.parts}
        assert len(ratios) == 1


def test_single_number_problems_are_numerical_questions():
    # no generator asks a single question today; a problem cut down to its loss part stands in
    full = generators.build("softmax-cross-entropy", 3, 1)
    loss = next(part for part in full.parts if part.kind == "number")
    p = replace(full, parts=[loss])
    q = moodle.question(p, "q1 test")
    assert q.get("type") == "numerical"
    answers = q.findall("answer")
    assert answers[0].get("fraction") == "100"
    assert float(answers[0].findtext("text")) == pytest.approx(float(p.parts[0].expected), rel=1e-12)
    assert q.findtext("defaultgrade") == f"{p.parts[0].points:g}"
    assert float(answers[0].findtext("tolerance")) == pytest.approx(loss.tolerance.bound(loss.expected))
    for wrong in answers[1:]:
        assert wrong.get("fraction") == "0" and wrong.findtext("feedback/text")
        gap = abs(float(wrong.findtext("text")) - float(loss.expected))
        assert gap > float(answers[0].findtext("tolerance")) + float(wrong.findtext("tolerance"))


@pytest.mark.parametrize("text", ['a } b', 'c # d', 'e ~ f', 'g / h', 'i " j', 'k \\ l', '<b> & x'])
def test_feedback_specials_are_escaped(text):
    part = Part("n", "How many?", "integer", 3, tolerance=EXACT)
    field = moodle._numerical_field(part, 3, [(5.0, text)], 1)
    parsed = parse_field(*FIELD.fullmatch(field).groups())
    assert re.sub(r"\\(.)", r"\1", parsed["answers"][1]["feedback"]).replace("&lt;", "<").replace(
        "&gt;", ">").replace("&amp;", "&") == text


def test_variants_go_to_one_category_per_question_slot():
    roster = [sheets.Student("a1", "A"), sheets.Student("b2", "B")]
    secret = b"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    sheet = sheets.build_sheet(sheets.load_recipe("cnn"), 1, roster=roster, secret=secret)
    root = ET.fromstring(moodle.sheet_xml(sheet).encode())
    cats = [q.findtext("category/text") for q in root.findall("question") if q.get("type") == "category"]
    assert cats == [f"$course$/top/examprep/CNN practice sheet/q{k}" for k in range(1, 10)]
    names = [q.findtext("name/text") for q in root.findall("question") if q.get("type") != "category"]
    assert len(names) == 18 and all(sheet.copies[0].code in n or sheet.copies[1].code in n for n in names)


def test_symbol_names_are_subscripts_not_literal_underscores():
    # \mathrm{W\_1} showed a literal "W_1" in Moodle's MathJax; a symbol's subscript is a subscript
    p = generators.build("mlp-backprop", 0, 1)
    xml = ET.tostring(moodle.question(p, "q"), encoding="unicode")
    assert "W_{1}" in xml and "W_{2}" in xml and r"\mathrm{W\_" not in xml
    from tests.sheets.helpers import corpus

    for name in corpus()[2]:
        latex = moodle.block_html(replace(generators.build("attention", 0, 1).statement[1], name=name, values=[1.0]))
        if re.fullmatch(r"[A-Za-z]_[A-Za-z0-9]{1,2}'*", name):
            assert rf"\mathrm{{{name[0]}\_" not in latex and f"{name[0]}_{{{name[2:].rstrip(chr(39))}}}" in latex, (
                name, latex)
        elif "_" in name and " " not in name:
            assert r"\mathrm{" in latex, (name, latex)      # identifiers such as grad_weight stay words
