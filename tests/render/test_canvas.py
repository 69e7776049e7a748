"""Canvas QTI 1.2: each kind of question has the structure text2qti (which Canvas users rely on)
writes for the same question, generated here from its own quiz text; every file of an export
parses back, and its numbers are the answers with examprep's tolerance."""
import html
import io
import math
import re
import zipfile
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
from text2qti.config import Config
from text2qti.qti import QTI
from text2qti.quiz import Quiz
from typer.testing import CliRunner

from examprep import generators, sheets
from examprep.sheets import variants
from examprep.cli import app
from examprep.problem import Tolerance
from examprep.render import canvas

NS = {"q": canvas.QTI12}
IDENT = re.compile(r"(text2qti|examprep)_\w+")


def _flat(v):
    return [x for y in v for x in _flat(y)] if isinstance(v, list) else [v]


def _assessment(z: zipfile.ZipFile) -> list[ET.Element]:
    return [ET.fromstring(z.read(n)) for n in z.namelist()
            if n.endswith(".xml") and "/" in n and not n.endswith("assessment_meta.xml")]


def _items(root: ET.Element) -> list[ET.Element]:
    return root.findall(".//q:item", NS)


def _type(item: ET.Element) -> str:
    for f in item.iterfind(".//q:qtimetadatafield", NS):
        if f.findtext("q:fieldlabel", namespaces=NS) == "question_type":
            return f.findtext("q:fieldentry", namespaces=NS)
    raise AssertionError("no question_type")


def _skeleton(e: ET.Element) -> tuple:
    """Tags, attribute names and the values that are not identifiers or numbers, recursively:
    the structure Canvas's importer reads, without the content."""
    attrs = tuple(sorted((k, "" if k in ("ident", "title", "linkrefid") or IDENT.fullmatch(v) else v)
                         for k, v in e.attrib.items()))
    return (e.tag.split("}")[1], attrs, tuple(_skeleton(c) for c in e))


@pytest.fixture(scope="module")
def text2qti_items():
    """text2qti's own output for a stem, a numerical question with a worked solution, an essay
    with feedback and a multiple-choice question."""
    source = """Quiz title: T

Text: The stem.

Title: num
Points: 2
1.  What?
... The worked solution.
=   0.3775 +- 0.0005

Title: essay
Points: 3
2.  Explain.
... Model answer.
____

Title: mc
Points: 1
3.  Pick.
a)  one
*b) two
"""
    quiz = Quiz(source, config=Config(), source_name="<test>")
    z = zipfile.ZipFile(io.BytesIO(QTI(quiz).zip_bytes()))
    [root] = _assessment(z)
    return {_type(i): i for i in _items(root)}, z


@pytest.fixture(scope="module")
def midterm():
    sheet = sheets.build_sheet(sheets.load_recipe("midterm"), 2024)
    data, warnings = canvas.package(sheet)
    return sheet, zipfile.ZipFile(io.BytesIO(data)), warnings


def _strip_feedback(item: ET.Element) -> ET.Element:
    item = ET.fromstring(ET.tostring(item))
    proc = item.find("q:resprocessing", NS)
    for cond in list(proc if proc is not None else []):
        if cond.find("q:displayfeedback", NS) is not None and cond.get("continue") == "Yes":
            proc.remove(cond)
    for fb in item.findall("q:itemfeedback", NS):
        item.remove(fb)
    return item


def _without_incorrect(item: ET.Element) -> ET.Element:
    """The item without its incorrect-answer feedback (the known mistakes; tests/render/test_lms_mistakes.py
    compares that with text2qti's "-" feedback)."""
    item = ET.fromstring(ET.tostring(item))
    proc = item.find("q:resprocessing", NS)
    for cond in list(proc if proc is not None else []):
        if cond.find("q:displayfeedback[@linkrefid='general_incorrect_fb']", NS) is not None:
            proc.remove(cond)
    for fb in item.findall("q:itemfeedback[@ident='general_incorrect_fb']", NS):
        item.remove(fb)
    return item


def test_every_question_kind_is_built_as_text2qti_builds_it(text2qti_items, midterm):
    theirs, _ = text2qti_items
    _, z, _ = midterm
    [root] = _assessment(z)
    mine: dict[str, list[ET.Element]] = {}
    for item in _items(root):
        mine.setdefault(_type(item), []).append(item)
    assert set(mine) == {"text_only_question", "numerical_question", "essay_question"}
    for kind, items in mine.items():
        ref = theirs[kind]
        with_feedback = [i for i in items if i.find("q:itemfeedback", NS) is not None]
        if kind != "text_only_question":            # a worked solution, as text2qti's "..." general feedback
            assert with_feedback and _skeleton(_without_incorrect(with_feedback[0])) == _skeleton(ref)
        for item in items:
            assert _skeleton(_strip_feedback(item)) == _skeleton(_strip_feedback(ref)), kind


def test_choices_are_built_as_text2qti_builds_them(text2qti_items):
    theirs, _ = text2qti_items
    concept = sheets.build_sheet(sheets.recipe_from_topics(["attention"], count=1, difficulty=1), 1)
    from examprep.sources.concepts import concept_problem, packaged_bank

    bank = packaged_bank()
    choice = next(c for c in bank.questions.values() if c.kind == "choice")
    p = concept_problem(choice, 0, bank.version)
    p = replace(p, parts=[replace(p.parts[0], choices=("one", "two"), expected="two")])
    sheet = replace(concept, copies=[replace(concept.copies[0], problems=[p])])
    [root] = _assessment(zipfile.ZipFile(io.BytesIO(canvas.package(sheet)[0])))
    item = next(i for i in _items(root) if _type(i) == "multiple_choice_question")
    assert _skeleton(_strip_feedback(item)) == _skeleton(_strip_feedback(theirs["multiple_choice_question"]))
    labels = item.findall(".//q:response_label", NS)
    assert [lab.findtext(".//q:mattext", namespaces=NS) for lab in labels] == ["one", "two"]
    assert item.findtext(".//q:respcondition[@continue='No']//q:varequal", namespaces=NS) == labels[1].get("ident")


def test_the_numbers_are_text2qtis_for_the_same_question(text2qti_items):
    theirs, _ = text2qti_items
    ref = theirs["numerical_question"]
    q = canvas.Question("numerical_question", "num", 2, "<p>What?</p>", (0.3775, 0.3775 - 0.0005, 0.3775 + 0.0005))
    root = ET.fromstring(canvas.assessment_xml("T", "examprep_x", [q]))
    [item] = _items(root)
    for tag in ("varequal", "vargte", "varlte"):
        assert float(item.findtext(f".//q:{tag}", namespaces=NS)) == pytest.approx(
            float(ref.findtext(f".//q:{tag}", namespaces=NS)), abs=1e-12)


def test_every_file_parses_back_with_the_answers(midterm):
    sheet, z, warnings = midterm
    assert warnings == []
    manifest = ET.fromstring(z.read("imsmanifest.xml"))
    hrefs = [f.get("href") for f in manifest.iter() if f.tag.endswith("}file")]
    assert sorted(hrefs) == sorted(n for n in z.namelist() if n != "imsmanifest.xml")
    for name in z.namelist():
        ET.fromstring(z.read(name))                            # every file is well-formed XML
    [root] = _assessment(z)
    items = _items(root)
    k = 0
    for number, p in enumerate(sheet.copies[0].problems, 1):
        assert _type(items[k]) == "text_only_question" and items[k].get("title") == f"q{number} {p.title}"
        k += 1
        for part in p.parts:
            if part.kind == "written":
                assert _type(items[k]) == "essay_question"
                fb = html.unescape("".join(items[k].find("q:itemfeedback", NS).itertext()))
                assert part.model_answer in fb and all(line in fb for line in part.rubric)
                k += 1
                continue
            values = _flat(part.expected)
            points = 0.0
            for v in values:
                item = items[k]
                assert _type(item) == "numerical_question"
                exact = float(item.findtext(".//q:varequal", namespaces=NS))
                lo = float(item.findtext(".//q:vargte", namespaces=NS))
                hi = float(item.findtext(".//q:varlte", namespaces=NS))
                bound = 0.0 if part.kind == "integer" or part.tolerance.rule == "exact" else part.tolerance.bound(v)
                assert exact == pytest.approx(float(v), abs=1e-12)
                assert lo == pytest.approx(float(v) - bound, abs=1e-12) and hi == pytest.approx(float(v) + bound, abs=1e-12)
                for x in (exact, lo, hi):
                    assert x == 0 or abs(x) >= canvas.SMALL               # nothing Canvas mishandles
                points += float(next(f.findtext("q:fieldentry", namespaces=NS)
                                     for f in item.iterfind(".//q:qtimetadatafield", NS)
                                     if f.findtext("q:fieldlabel", namespaces=NS) == "points_possible"))
                k += 1
            assert points == pytest.approx(part.points, rel=1e-3)
    assert k == len(items)


def _one_part_sheet(part):
    base = sheets.build_sheet(sheets.recipe_from_topics(["softmax-cross-entropy"], count=1, difficulty=1), 1)
    p = base.copies[0].problems[0]
    p = replace(p, parts=[part])
    return replace(base, copies=[replace(base.copies[0], problems=[p])])


def test_small_answers_are_scaled_and_the_prompt_says_so():
    p = generators.build("softmax-cross-entropy", 1, 1)
    part = replace(p.parts[0], kind="vector", expected=[3.2e-5, 1.5e-5], tolerance=Tolerance("rtol", 0.01, 0.0), shape=(2,))
    data, warnings = canvas.package(_one_part_sheet(part))
    [root] = _assessment(zipfile.ZipFile(io.BytesIO(data)))
    nums = [i for i in _items(root) if _type(i) == "numerical_question"]
    assert len(nums) == 2 and warnings == []
    for item, v in zip(nums, [3.2e-5, 1.5e-5]):
        text = item.findtext(".//q:mattext", namespaces=NS)
        assert "Type the value × 10³" in text and "for 3.2 × 10⁻³, type 3.2" in text
        exact = float(item.findtext(".//q:varequal", namespaces=NS))
        lo = float(item.findtext(".//q:vargte", namespaces=NS))
        assert exact == pytest.approx(v * 1e3) and exact - lo == pytest.approx(v * 1e3 * 0.01)
        assert min(abs(exact), exact - lo) >= canvas.SMALL


def test_a_part_canvas_cannot_take_is_refused_with_a_warning_naming_it(tmp_path):
    p = generators.build("softmax-cross-entropy", 1, 1)
    part = replace(p.parts[0], kind="number", expected=math.inf, shape=None)
    data, warnings = canvas.package(_one_part_sheet(part))
    assert len(warnings) == 1 and f"q1 part ({part.id})" in warnings[0] and "not a finite number" in warnings[0]
    [root] = _assessment(zipfile.ZipFile(io.BytesIO(data)))
    assert [_type(i) for i in _items(root)] == ["text_only_question"]


@pytest.fixture(scope="module")
def class_sheet():
    roster = [sheets.Student("a1", "A"), sheets.Student("b2", "B"), sheets.Student("c3", "C")]
    secret = b"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    return sheets.build_sheet(sheets.load_recipe("cnn"), 1, roster=roster, secret=secret)


def test_canvas_per_student_gives_one_quiz_each(class_sheet):
    sheet = replace(class_sheet, canvas_per_student=True)
    z = zipfile.ZipFile(io.BytesIO(canvas.package(sheet)[0]))
    roots = _assessment(z)
    titles = sorted(r.find("q:assessment", NS).get("title") for r in roots)
    assert titles == sorted(f"CNN practice sheet — variant {c.code}" for c in sheet.copies)


def test_a_class_is_one_quiz_of_question_groups_drawing_one_variant_each(class_sheet):
    """As Canvas exports a question group (and R/exams' exams2canvas writes one): a section with
    selection_number 1 and points_per_item, its items one per variant, identified by the code."""
    z = zipfile.ZipFile(io.BytesIO(canvas.package(class_sheet)[0]))
    [root] = _assessment(z)
    top = root.find("q:assessment/q:section", NS)
    groups = top.findall("q:section", NS)
    assert top.findall("q:item", NS) == [] and groups
    codes = {c.code for c in class_sheet.copies}
    total = 0.0
    for g in groups:
        assert g.findtext("q:selection_ordering/q:selection/q:selection_number", namespaces=NS) == "1"
        per_item = float(g.findtext(".//q:selection_extension/q:points_per_item", namespaces=NS))
        items = g.findall("q:item", NS)
        assert {i.get("ident").rsplit("_", 1)[1] for i in items} == codes      # every variant, by its code
        for item in items:
            code = item.get("ident").rsplit("_", 1)[1]
            assert item.get("title").endswith(f"(variant {code})")
            points = [f.findtext("q:fieldentry", namespaces=NS) for f in item.iterfind(".//q:qtimetadatafield", NS)
                      if f.findtext("q:fieldlabel", namespaces=NS) == "points_possible"]
            assert float(points[0]) == per_item
        total += per_item
    # each group draws one item: the quiz is worth the sheet's points (every part Canvas can take)
    assert total == pytest.approx(sum(p.points for p in class_sheet.copies[0].problems))
    meta = ET.fromstring(z.read(next(n for n in z.namelist() if n.endswith("assessment_meta.xml"))))
    assert float(meta.findtext("{http://canvas.instructure.com/xsd/cccv1p0}points_possible")) == pytest.approx(total)


def test_sheet_command_says_canvas_draws_variants_at_random(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\na1,A\nb2,B\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["sheet", "-t", "softmax-cross-entropy", "--seed", "3", "--format", "canvas", "--roster",
                                   str(roster), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert "Canvas draws a variant per question per student at random" in " ".join(res.output.split())
    res = CliRunner().invoke(app, ["sheet", "-t", "softmax-cross-entropy", "--seed", "3", "--format", "canvas",
                                   "--canvas-per-student", "--out", str(tmp_path / "p")])
    assert res.exit_code == 2 and "--canvas-per-student" in res.output and "--roster" in res.output
    rebuild = variants.rebuild_command(recipe=None, topics=["softmax-cross-entropy"], count=None, difficulty=None,
                                       seed=3, roster="r.csv", secret_file="s.hex", title=None, course=None,
                                       decimal_comma=False, formats="canvas", canvas_per_student=True)
    assert rebuild.endswith("--canvas-per-student")     # the class's rebuild command keeps the choice


def test_sheet_command_writes_the_zip(tmp_path):
    res = CliRunner().invoke(app, ["sheet", "--recipe", "cnn", "--seed", "3", "--format", "canvas",
                                   "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert zipfile.ZipFile(tmp_path / "o" / "canvas.zip").namelist()[0] == "imsmanifest.xml"
