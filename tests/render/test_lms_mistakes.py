"""Known mistakes in the LMS exports, read back by parsers written here (xml.etree, not the
exporters' code): for each mistake a response condition can catch, a response carrying its wrong
value (the right value elsewhere) triggers exactly that mistake's explanation, the text the grade
report shows; the right answer triggers none; a mistake within tolerance of the answer is left out."""
import html
import io
import zipfile
import xml.etree.ElementTree as ET

import pytest
from text2qti.config import Config
from text2qti.qti import QTI as QTI12Writer
from text2qti.quiz import Quiz

from examprep import sheets
from examprep.render import canvas, choices_shown, qti21

QTI = {"q": qti21.QTI}
# a matrix, a vector, a choice, scalars and integers with known mistakes
TOPICS = ["attention", "attention-scores", "causal-mask", "softmax-cross-entropy", "receptive-field", "lora", "gru-step"]


def _flat(v):
    return [x for y in v for x in _flat(y)] if isinstance(v, list) else [v]


@pytest.fixture(scope="module")
def sheet():
    return sheets.build_sheet(sheets.recipe_from_topics(TOPICS, count=1, difficulty=1), 3)


def _within(value: float, base: float, lo: float, hi: float) -> bool:
    return base - lo <= value <= base + hi


# ------------------------------------------------------------------ a QTI 2.1 response processor

def _eval(e: ET.Element, responses: dict, outcomes: dict):
    """The value of one QTI 2.1 expression (the operators the items use), per the QTI 2.1 spec."""
    tag = e.tag.split("}")[1]
    if tag == "baseValue":
        return float(e.text) if e.get("baseType") == "float" else e.text
    if tag == "variable":
        name = e.get("identifier")
        return responses[name] if name in responses else outcomes.get(name)
    args = [_eval(c, responses, outcomes) for c in e]
    if tag == "and":
        return all(args)
    if tag == "sum":
        return sum(args)
    if tag == "multiple":
        return [x for a in args for x in (a if isinstance(a, list) else [a] if a is not None else [])]
    if tag == "match":
        return args[0] == args[1]
    if tag == "stringMatch":
        return args[0] is not None and str(args[0]).lower() == str(args[1]).lower()
    if tag == "equal":
        if args[0] is None:
            return False
        if e.get("toleranceMode") == "exact":
            return float(args[0]) == float(args[1])
        lo, hi = (float(t) for t in e.get("tolerance").split())
        return _within(float(args[0]), float(args[1]), lo, hi)
    raise AssertionError(f"operator {tag} not expected in an item")


def _process(item: ET.Element, responses: dict) -> dict:
    outcomes = {"SCORE": 0.0, "FEEDBACK": None}
    for step in item.find("q:responseProcessing", QTI):
        tag = step.tag.split("}")[1]
        branches = [step] if tag == "setOutcomeValue" else [
            b for b in step if _eval(b[0], responses, outcomes)][:1]
        for b in branches:
            for s in ([b] if tag == "setOutcomeValue" else b[1:]):
                outcomes[s.get("identifier")] = _eval(s[0], responses, outcomes)
    return outcomes


def _shown(item: ET.Element, outcomes: dict) -> list[str]:
    return [" ".join(m.itertext()).strip() for m in item.findall("q:modalFeedback", QTI)
            if m.get("identifier") in (outcomes["FEEDBACK"] or []) and m.get("identifier") != "SOLUTION"]


def _right(item: ET.Element) -> dict:
    return {d.get("identifier"): (float(v.text) if d.get("baseType") == "float" else v.text)
            for d in item.findall("q:responseDeclaration", QTI) for v in d.findall("q:correctResponse/q:value", QTI)}


def _ids(i: int, part) -> list[str]:
    letter = "RESPONSE_" + chr(ord("A") + i)
    e = part.expected
    if isinstance(e, list) and e and isinstance(e[0], list):
        return [f"{letter}_{r + 1}_{c + 1}" for r, row in enumerate(e) for c in range(len(row))]
    if isinstance(e, list):
        return [f"{letter}_{r + 1}" for r in range(len(e))]
    return [letter]


def test_qti21_each_known_mistake_triggers_its_explanation(sheet):
    z = zipfile.ZipFile(io.BytesIO(qti21.package(sheet)))
    tied = 0
    seen = set()
    for k, p in enumerate(sheet.copies[0].problems, 1):
        item = ET.fromstring(z.read(f"items/q{k}.xml"))
        right = _right(item)
        out = _process(item, right)
        assert out["SCORE"] == pytest.approx(sum(x.points for x in p.parts if x.kind != "written"))
        assert out["FEEDBACK"] == ["SOLUTION"]           # the right answer: the worked solution only
        for i, part in enumerate(p.parts):
            for m in part.misconceptions:
                responses = dict(right)
                if part.kind == "choice":
                    if m.value not in choices_shown(part):
                        continue
                    responses[_ids(i, part)[0]] = f"C{choices_shown(part).index(m.value) + 1}"
                elif part.kind in ("number", "integer", "vector", "matrix"):
                    wrong = _flat(m.value)
                    ids = _ids(i, part)
                    if all(part.tolerance.accepts(w, v) or w == v for w, v in zip(wrong, _flat(part.expected))):
                        assert m.explanation not in _shown(item, _process(item, responses))
                        continue                    # within tolerance: cannot be told apart, left out
                    responses.update(zip(ids, (float(w) for w in wrong)))
                else:
                    continue
                shown = _shown(item, _process(item, responses))
                assert m.explanation in shown, (p.generator, part.id, m.id)
                tied += 1
                seen.add(part.kind)
    assert tied >= 10 and {"choice", "number", "integer", "vector", "matrix"} <= seen, (tied, seen)


# ------------------------------------------------------------------ a QTI 1.2 (Canvas) processor

Q12 = {"q": "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"}


def _holds(cond: ET.Element, response: str) -> bool:
    tag = cond.tag.split("}")[1]
    if tag == "conditionvar":
        return all(_holds(c, response) for c in cond)
    if tag == "other":
        return True
    if tag in ("or", "and"):
        return (any if tag == "or" else all)(_holds(c, response) for c in cond)
    if tag == "varequal":
        try:
            return float(response) == float(cond.text)
        except ValueError:
            return response == cond.text
    if tag in ("vargte", "varlte"):
        return float(response) >= float(cond.text) if tag == "vargte" else float(response) <= float(cond.text)
    raise AssertionError(f"condition {tag} not expected")


def _canvas_feedback(item: ET.Element, response: str) -> tuple[float, list[str]]:
    """QTI 1.2 response processing as Canvas runs it: conditions in order, a held one with
    continue="No" ends it; the score and the texts of the feedback shown."""
    score, shown = 0.0, []
    for cond in item.findall("q:resprocessing/q:respcondition", Q12):
        if not _holds(cond.find("q:conditionvar", Q12), response):
            continue
        for s in cond.findall("q:setvar", Q12):
            score = float(s.text)
        for d in cond.findall("q:displayfeedback", Q12):
            fb = item.find(f"q:itemfeedback[@ident='{d.get('linkrefid')}']", Q12)
            shown.append((d.get("linkrefid"), fb.findtext(".//q:mattext", namespaces=Q12)))
        if cond.get("continue") == "No":
            break
    return score, shown


def test_canvas_lists_each_numeric_mistake_and_ties_each_option_mistake(sheet):
    data, _ = canvas.package(sheet)
    z = zipfile.ZipFile(io.BytesIO(data))
    [name] = [n for n in z.namelist() if n.count("/") == 1 and not n.endswith("assessment_meta.xml")]
    items = ET.fromstring(z.read(name)).findall(".//q:item", Q12)
    by_title = {i.get("title"): i for i in items}
    checked = set()
    for k, p in enumerate(sheet.copies[0].problems, 1):
        for i, part in enumerate(p.parts):
            letter = chr(ord("a") + i)
            for m in part.misconceptions:
                if part.kind == "choice" and m.value in choices_shown(part):
                    item = by_title[f"q{k} ({letter})"]
                    ids = [r.get("ident") for r in item.iterfind(".//q:response_label", Q12)]
                    score, shown = _canvas_feedback(item, ids[choices_shown(part).index(m.value)])
                    assert score == 0 and html.unescape(f"<p>{m.explanation}</p>") in [
                        html.unescape(t) for _, t in shown], (p.generator, m.id)
                    checked.add("choice")
                elif part.kind in ("number", "integer", "vector", "matrix"):
                    exp, wrong = _flat(part.expected), _flat(m.value)
                    for n, (v, w) in enumerate(zip(exp, wrong)):
                        if part.tolerance.accepts(w, v) or w == v:
                            continue
                        item = [it for t, it in by_title.items() if t.startswith(f"q{k} ({letter})")][n]
                        score, shown = _canvas_feedback(item, repr(float(w)))
                        assert score == 0, (p.generator, m.id)     # the wrong value scores nothing ...
                        incorrect = dict(shown).get("general_incorrect_fb", "")
                        assert html.escape(m.explanation, quote=False) in incorrect.replace("&#x27;", "'"), (
                            p.generator, m.id)             # ... and the incorrect feedback names the mistake
                        assert f"{w:.4g}" in incorrect
                        score, shown = _canvas_feedback(item, repr(float(v)))
                        assert score == 100 and "general_incorrect_fb" not in dict(shown)
                        checked.add(part.kind)
    assert {"choice", "number", "integer", "vector", "matrix"} <= checked, checked


def test_canvas_incorrect_feedback_is_built_as_text2qti_builds_it(sheet):
    """text2qti's "-" (incorrect-answer) feedback: the same conditions and feedback blocks."""
    source = "Quiz title: T\n\nTitle: num\nPoints: 2\n1.  What?\n... Worked.\n-   Mistakes.\n=   0.3775 +- 0.0005\n"
    theirs = _zip_files(QTI12Writer(Quiz(source, config=Config(), source_name="t")))
    ref = ET.fromstring([b for n, b in theirs if n.count("/") == 1 and n.endswith(".xml")
                         and not n.endswith("assessment_meta.xml")][0]).find(".//q:item", Q12)
    data, _ = canvas.package(sheet)
    z = zipfile.ZipFile(io.BytesIO(data))
    [name] = [n for n in z.namelist() if n.count("/") == 1 and not n.endswith("assessment_meta.xml")]
    mine = [i for i in ET.fromstring(z.read(name)).iterfind(".//q:item", Q12)
            if i.find("q:itemfeedback[@ident='general_incorrect_fb']", Q12) is not None
            and i.find("q:itemfeedback[@ident='general_fb']", Q12) is not None]
    assert mine and _tags(mine[0].find("q:resprocessing", Q12)) == _tags(ref.find("q:resprocessing", Q12))
    assert ([f.get("ident") for f in mine[0].findall("q:itemfeedback", Q12)]
            == [f.get("ident") for f in ref.findall("q:itemfeedback", Q12)])


def _zip_files(qti) -> list[tuple[str, bytes]]:
    z = zipfile.ZipFile(io.BytesIO(qti.zip_bytes()))
    return [(n, z.read(n)) for n in z.namelist()]


def _tags(e: ET.Element) -> list:
    return [(c.tag, c.get("continue"), c.find("q:displayfeedback", Q12) is not None and
             c.find("q:displayfeedback", Q12).get("linkrefid")) for c in e]


# ------------------------------------------------------------------ Blackboard's pool package

def _bb_html(item: ET.Element, ident: str) -> str:
    return html.unescape("".join(item.find(f"itemfeedback[@ident='{ident}']").itertext()))


def _bb_verdict(item: ET.Element, response: str) -> str:
    """Which feedback Blackboard shows: a Numeric question's answer is its range (vargte to varlte,
    the exact value varequal inside it, as Blackboard's own exports and R/exams' write it); a
    choice's, its option's ident."""
    var = item.find("resprocessing/respcondition[@title='correct']/conditionvar")
    if item.findtext("itemmetadata/bbmd_questiontype") == "Numeric":
        lo, hi, exact = (float(var.findtext(t)) for t in ("vargte", "varlte", "varequal"))
        assert lo <= exact <= hi
        return "correct" if lo <= float(response) <= hi else "incorrect"
    return "correct" if var.findtext("varequal") == response else "incorrect"


def test_blackboard_pool_carries_points_and_each_known_mistake(sheet):
    from examprep.render import blackboard_pool

    data, warnings = blackboard_pool.package(sheet)
    z = zipfile.ZipFile(io.BytesIO(data))
    assert z.read(".bb-package-info") == b"cx.package.info.version=6.0\n"
    man = ET.fromstring(z.read("imsmanifest.xml"))
    bb = "{http://www.blackboard.com/content-packaging/}"
    [res] = man.findall("resources/resource")
    assert res.get("type") == "assessment/x-bb-qti-pool" and res.get(f"{bb}file") == "res00001.dat"
    items = ET.fromstring(z.read("res00001.dat")).findall("assessment/section/item")
    points = [float(i.find("resprocessing/outcomes/decvar").get("maxvalue")) for i in items]
    assert points == [float(i.findtext("itemmetadata/qmd_absolutescore_max")) for i in items]
    assert sum(points) == pytest.approx(sum(p.points for p in sheet.copies[0].problems)) and warnings == []
    checked = set()
    for k, p in enumerate(sheet.copies[0].problems, 1):
        for i, part in enumerate(p.parts):
            mine = [it for it in items if it.get("title").startswith(f"q{k} ({chr(ord('a') + i)})")]
            for m in part.misconceptions:
                if part.kind == "choice" and m.value in choices_shown(part):
                    [item] = mine
                    ids = [r.get("ident") for r in item.iterfind(".//response_label")]
                    assert _bb_verdict(item, ids[choices_shown(part).index(m.value)]) == "incorrect"
                    assert f"{m.value}: {m.explanation}" in _bb_html(item, "incorrect")
                    checked.add("choice")
                elif part.kind in ("number", "integer", "vector", "matrix"):
                    for item, v, w in zip(mine, _flat(part.expected), _flat(m.value)):
                        if part.tolerance.accepts(w, v) or w == v:
                            continue
                        assert _bb_verdict(item, repr(float(w))) == "incorrect", (p.generator, m.id)
                        assert m.explanation in _bb_html(item, "incorrect") and f"{w:.4g}" in _bb_html(item, "incorrect")
                        assert _bb_verdict(item, repr(float(v))) == "correct"
                        checked.add(part.kind)
        first = next(it for it in items if it.get("title").startswith(f"q{k} "))
        assert "Worked solution" in _bb_html(first, "correct") or "Step 1" in _bb_html(first, "correct")
    assert {"choice", "number", "integer", "vector", "matrix"} <= checked, checked
