"""IMS QTI 2.1 content package: OpenOLAT, ILIAS, Inspera, Blackboard's QTI import.

The zip holds ``imsmanifest.xml`` (IMS Content Packaging 1.1), ``test.xml`` (one
``assessmentTest``: a section per question slot, in order; with per-student variants each
section holds every variant and selects one) and ``items/qN.xml``, one ``assessmentItem`` per
problem. Each scalar answer is one response (a vector or matrix part: one text entry per entry,
laid out as the matrix), scored by ``<equal toleranceMode="absolute">`` around the expected value
with the absolute error examprep accepts there (``Tolerance.bound``): the same interval, without
examprep's few units in the last place of float noise — the closest stricter rule. Choices are
``choiceInteraction``s, exact expressions a case-insensitive ``stringMatch`` of the canonical form
(stricter: examprep also accepts equivalent forms), written parts ``extendedTextInteraction``s
with the model answer and rubric in a ``rubricBlock`` for the scorer. Math is MathML made by
latex2mathml from the LaTeX examprep's other renderers print; the worked solution is the
item's modal feedback, and each known mistake a response condition that adds its own modal
feedback (the grade report's explanation) to FEEDBACK (cardinality multiple).
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from examprep import document as d
from examprep.exact import is_exact_form
from examprep.problem import Problem
from examprep.render import accepted, choices_shown, markdown
from examprep.render.worked import worked_steps
from examprep.render.lms import Slot, entries, is_numeric, mistakes, part_letter, question_name, slots, zip_bytes

QTI = "http://www.imsglobal.org/xsd/imsqti_v2p1"
CP = "http://www.imsglobal.org/xsd/imscp_v1p1"
MATHML = "http://www.w3.org/1998/Math/MathML"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
QTI_XSD = "http://www.imsglobal.org/xsd/qti/qtiv2p1/imsqti_v2p1p2.xsd"
CP_XSD = "http://www.imsglobal.org/xsd/imscp_v1p1.xsd"

ET.register_namespace("", QTI)
ET.register_namespace("m", MATHML)
ET.register_namespace("xsi", XSI)


def _q(tag: str) -> str:
    return f"{{{QTI}}}{tag}"


def _el(parent: ET.Element | None, tag: str, attrs: dict[str, str] | None = None, text: str | None = None) -> ET.Element:
    e = ET.Element(_q(tag), attrs or {}) if parent is None else ET.SubElement(parent, _q(tag), attrs or {})
    if text is not None:
        e.text = text
    return e


# ------------------------------------------------------------------------------ math and text

def mathml(latex: str, display: str = "inline") -> ET.Element | None:
    """The LaTeX as a MathML <math> element (latex2mathml), or None where it cannot convert it."""
    from latex2mathml.converter import convert

    try:
        return ET.fromstring(convert(latex, display=display))
    except Exception:    # noqa: BLE001  (latex2mathml raises many types; the text is printed instead)
        return None


def _append_text(parent: ET.Element, text: str) -> None:
    if not text:
        return
    if len(parent):
        last = parent[-1]
        last.tail = (last.tail or "") + text
    else:
        parent.text = (parent.text or "") + text


def inline(parent: ET.Element, text: str) -> None:
    """Text with $…$ LaTeX into ``parent``: MathML for the math, the rest as text."""
    pos = 0
    for m in re.finditer(r"\$([^$]+)\$", text):
        _append_text(parent, text[pos:m.start()])
        math = mathml(m.group(1))
        if math is None:
            _append_text(parent, m.group(1))
        else:
            parent.append(math)
        pos = m.end()
    _append_text(parent, text[pos:])


def _math_block(parent: ET.Element, latex: str) -> None:
    p = _el(parent, "p")
    math = mathml(latex, "block")
    if math is None:
        p.text = latex
    else:
        p.append(math)


def _table(parent: ET.Element, header: list[Any] | None, rows: list[tuple[str, list[Any]]]) -> None:
    table = _el(parent, "table")
    if header:
        tr = _el(_el(table, "thead"), "tr")
        for h in header:
            inline(_el(tr, "th"), str(h))
    body = _el(table, "tbody")
    for label, cells in rows:
        tr = _el(body, "tr")
        if label is not None:
            inline(_el(tr, "th"), label)
        for c in cells:
            inline(_el(tr, "td"), c if isinstance(c, str) else markdown.number(c))


def block(parent: ET.Element, b: Any) -> None:
    """One document block as XHTML (and MathML) inside ``parent``."""
    if isinstance(b, d.Text):
        inline(_el(parent, "p"), b.text)
    elif isinstance(b, d.Math):
        _math_block(parent, b.latex)
    elif isinstance(b, d.Matrix):
        vals = b.values
        if isinstance(vals, str) and not is_exact_form(vals):
            _el(parent, "p", text=f"{b.name} = {vals}")
        elif isinstance(vals, list) and vals and isinstance(vals[0], list) and (b.row_labels or b.col_labels):
            inline(_el(parent, "p"), f"${markdown.name_latex(b.name)}$ =")
            labels = b.row_labels or [""] * len(vals)
            _table(parent, [""] + list(b.col_labels) if b.col_labels else None,
                   [(labels[i] if i < len(labels) else "", row) for i, row in enumerate(vals)])
        else:
            _math_block(parent, f"{markdown.name_latex(b.name)} = {markdown.latex_value(vals)}")
    elif isinstance(b, d.Table):
        _table(parent, list(b.header), [(None, list(row)) for row in b.rows])
    elif isinstance(b, d.Heatmap):
        _el(parent, "p", text=b.title)
        _table(parent, [""] + list(b.col_labels),
               [(b.row_labels[i] if i < len(b.row_labels) else "", [f"{float(v or 0):.2f}" for v in row])
                for i, row in enumerate(b.values)])
    else:      # figures drawn for the PDFs: their caption stands in
        _el(parent, "p", text=getattr(b, "title", "") or type(b).__name__)


# ------------------------------------------------------------------------------ items

def response_id(i: int, index: tuple[int, ...] = ()) -> str:
    return "RESPONSE_" + part_letter(i).upper() + "".join(f"_{k}" for k in index)


def _float(x: float) -> str:
    return repr(float(x))


def _declare(item: ET.Element, ident: str, base: str, correct: str | None) -> None:
    decl = _el(item, "responseDeclaration", {"identifier": ident, "cardinality": "single", "baseType": base})
    if correct is not None:
        _el(_el(decl, "correctResponse"), "value", text=correct)


def _add_score(cond: ET.Element, points: float) -> None:
    s = _el(cond, "setOutcomeValue", {"identifier": "SCORE"})
    total = _el(s, "sum")
    _el(total, "variable", {"identifier": "SCORE"})
    _el(total, "baseValue", {"baseType": "float"}, _float(points))


def _rule(rp: ET.Element, test: ET.Element, points: float) -> None:
    """responseProcessing: add ``points`` to SCORE where ``test`` holds (a response left empty is NULL: no points)."""
    cond = _el(_el(rp, "responseCondition"), "responseIf")
    cond.append(test)
    _add_score(cond, points)


def _equal(ident: str, expected: float, bound: float) -> ET.Element:
    if bound == 0:
        eq = ET.Element(_q("equal"), {"toleranceMode": "exact"})
    else:
        eq = ET.Element(_q("equal"), {"toleranceMode": "absolute", "tolerance": f"{_float(bound)} {_float(bound)}"})
    _el(eq, "variable", {"identifier": ident})
    _el(eq, "baseValue", {"baseType": "float"}, _float(expected))
    return eq


def _prompt(parent: ET.Element, part: Any, i: int) -> ET.Element:
    p = _el(parent, "p")
    _el(p, "strong", text=f"({part_letter(i)})")
    _append_text(p, " ")
    inline(p, part.prompt)
    _append_text(p, " ")
    _el(p, "em", text=f"[{part.points:g} pt; {accepted(part)}]")
    return p


def _numeric_part(body: ET.Element, item: ET.Element, rp: list, part: Any, i: int) -> None:
    ents = entries(part)
    share = part.points / len(ents)
    for e in ents:
        ident = response_id(i, e.index)
        _declare(item, ident, "float", _float(e.expected))
        rp.append((_equal(ident, e.expected, e.bound), share))
    if not isinstance(part.expected, list):
        p = _el(body, "p")
        _el(p, "textEntryInteraction", {"responseIdentifier": response_id(i), "expectedLength": "12"})
        return
    matrix = bool(part.expected) and isinstance(part.expected[0], list)
    row = None
    tbody = _el(_el(body, "table"), "tbody")
    for e in ents:
        if row is None or (matrix and e.index[1] == 1):
            row = _el(tbody, "tr")
        _el(_el(row, "td"), "textEntryInteraction", {"responseIdentifier": response_id(i, e.index), "expectedLength": "8"})


def _choice_part(body: ET.Element, item: ET.Element, rp: list, part: Any, i: int) -> None:
    options = choices_shown(part)
    ident = response_id(i)
    right = f"C{options.index(str(part.expected)) + 1}"
    _declare(item, ident, "identifier", right)
    inter = _el(body, "choiceInteraction", {"responseIdentifier": ident, "shuffle": "false", "maxChoices": "1"})
    for k, text in enumerate(options, 1):
        inline(_el(inter, "simpleChoice", {"identifier": f"C{k}"}), text)
    test = ET.Element(_q("match"))
    _el(test, "variable", {"identifier": ident})
    _el(test, "baseValue", {"baseType": "identifier"}, right)
    rp.append((test, part.points))


def _expression_part(body: ET.Element, item: ET.Element, rp: list, part: Any, i: int) -> None:
    ident = response_id(i)
    want = str(part.exact or part.expected)
    _declare(item, ident, "string", want)
    _el(_el(body, "p"), "textEntryInteraction", {"responseIdentifier": ident, "expectedLength": "24"})
    test = ET.Element(_q("stringMatch"), {"caseSensitive": "false"})
    _el(test, "variable", {"identifier": ident})
    _el(test, "baseValue", {"baseType": "string"}, want)
    rp.append((test, part.points))


def _written_part(body: ET.Element, item: ET.Element, part: Any, i: int, top: ET.Element) -> None:
    ident = response_id(i)
    _declare(item, ident, "string", None)
    _el(body, "extendedTextInteraction", {"responseIdentifier": ident,
                                          "expectedLines": str(min(max(5 * round(part.points), 5), 40))})
    rubric = _el(top, "rubricBlock", {"view": "scorer"})     # the schema allows it in the item body only
    _el(rubric, "p", text=f"({part_letter(i)}) Model answer: {part.model_answer}")
    if part.rubric:
        ul = _el(rubric, "ul")
        for line in part.rubric:
            _el(ul, "li", text=line)


def _mistake(item: ET.Element, rp: ET.Element, part: Any, m: Any, i: int, k: int) -> None:
    """A known mistake of part i: the response that makes it adds MISTAKE_X_k to FEEDBACK (a value:
    every entry where the mistake differs from the answer within its own bound, which never reaches
    the correct range; a choice: the option it picks), shown as modal feedback with its explanation."""
    ident = f"MISTAKE_{part_letter(i).upper()}_{k}"
    options = choices_shown(part) if m.choice is not None else []
    if m.choice is not None and m.choice not in options:
        return
    cond = _el(_el(rp, "responseCondition"), "responseIf")
    if m.choice is not None:
        test = _el(cond, "match")
        _el(test, "variable", {"identifier": response_id(i)})
        _el(test, "baseValue", {"baseType": "identifier"}, f"C{options.index(m.choice) + 1}")
    else:
        test = _el(cond, "and")
        for e, value, bound in m.values:
            test.append(_equal(response_id(i, e.index), value, bound))
    add = _el(_el(cond, "setOutcomeValue", {"identifier": "FEEDBACK"}), "multiple")
    _el(add, "variable", {"identifier": "FEEDBACK"})
    _el(add, "baseValue", {"baseType": "identifier"}, ident)
    modal = _el(item, "modalFeedback", {"outcomeIdentifier": "FEEDBACK", "showHide": "show", "identifier": ident,
                                        "title": f"Known mistake in ({part_letter(i)})"})
    _el(modal, "p", text=m.explanation)


def _solution(parent: ET.Element, problem: Any) -> None:
    _el(parent, "h4", text="Worked solution")
    for n, step in enumerate(worked_steps(problem), 1):
        _el(_el(parent, "p"), "strong", text=f"Step {n}. {step.title}")
        for b in step.blocks:
            block(parent, b)
    _el(parent, "h4", text="Answers")
    ul = _el(parent, "ul")
    for i, part in enumerate(problem.parts):
        li = _el(ul, "li", text=f"({Problem.label(i)}) {part.id}: ")
        if part.kind == "written":
            _append_text(li, "see the model answer (marked by hand)")
            continue
        val = part.exact if isinstance(part.exact, str) else part.expected
        if isinstance(val, str) and not is_exact_form(val):
            _append_text(li, val)
        else:
            inline(li, "$" + (markdown.number(val) if isinstance(val, str) else markdown.latex_value(val)) + "$")


def item_xml(problem: Any, identifier: str, title: str) -> ET.Element:
    """One problem as an assessmentItem: one response per scalar answer, choice or written part."""
    item = ET.Element(_q("assessmentItem"), {
        f"{{{XSI}}}schemaLocation": f"{QTI} {QTI_XSD}", "identifier": identifier, "title": title,
        "adaptive": "false", "timeDependent": "false"})
    body = ET.Element(_q("itemBody"))
    for b in problem.statement:
        block(body, b)
    if problem.conventions:
        conv = "; ".join(f"{k}: {v}" for k, v in problem.conventions.items())
        _el(_el(body, "p"), "em", text=f"Conventions. {conv}")
    rules: list[tuple[ET.Element, float]] = []
    for i, part in enumerate(problem.parts):
        div = _el(body, "div", {"class": "part"})
        _prompt(div, part, i)
        if part.kind == "written":
            _written_part(div, item, part, i, body)
        elif part.kind == "choice":
            _choice_part(div, item, rules, part, i)
        elif is_numeric(part):
            _numeric_part(div, item, rules, part, i)
        else:
            _expression_part(div, item, rules, part, i)
    for ident, base in (("SCORE", "float"), ("MAXSCORE", "float")):
        decl = _el(item, "outcomeDeclaration", {"identifier": ident, "cardinality": "single", "baseType": base})
        value = "0" if ident == "SCORE" else f"{float(problem.points):g}"
        _el(_el(decl, "defaultValue"), "value", text=value)
    _el(item, "outcomeDeclaration", {"identifier": "FEEDBACK", "cardinality": "multiple", "baseType": "identifier"})
    item.append(body)
    rp = _el(item, "responseProcessing")
    for test, points in rules:
        _rule(rp, test, points)
    fb = _el(_el(rp, "setOutcomeValue", {"identifier": "FEEDBACK"}), "multiple")
    _el(fb, "baseValue", {"baseType": "identifier"}, "SOLUTION")
    for i, part in enumerate(problem.parts):
        for k, m in enumerate(mistakes(part)[0], 1):
            _mistake(item, rp, part, m, i, k)
    modal = _el(item, "modalFeedback", {"outcomeIdentifier": "FEEDBACK", "showHide": "show",
                                        "identifier": "SOLUTION", "title": "Worked solution"})
    _solution(modal, problem)
    return item


# ------------------------------------------------------------------------------ test and package

def _ident(slot: Slot, code: str) -> str:
    return f"q{slot.number}" + (f"-{re.sub(r'[^A-Za-z0-9_-]', '-', code)}" if code else "")


def test_xml(sheet: Any, identifier: str) -> ET.Element:
    test = ET.Element(_q("assessmentTest"), {f"{{{XSI}}}schemaLocation": f"{QTI} {QTI_XSD}",
                                             "identifier": identifier, "title": sheet.recipe.title})
    _el(test, "outcomeDeclaration", {"identifier": "SCORE", "cardinality": "single", "baseType": "float"})
    part = _el(test, "testPart", {"identifier": "part1", "navigationMode": "nonlinear", "submissionMode": "simultaneous"})
    top = _el(part, "assessmentSection", {"identifier": "sheet", "title": sheet.recipe.title, "visible": "true"})
    for slot in slots(sheet):
        sec = _el(top, "assessmentSection", {"identifier": f"slot{slot.number}", "title": f"Question {slot.number}",
                                             "visible": "false" if sheet.variants else "true"})
        if sheet.variants:
            _el(sec, "selection", {"select": "1"})
        for code, _ in slot.problems:
            ident = _ident(slot, code)
            _el(sec, "assessmentItemRef", {"identifier": ident, "href": f"items/{ident}.xml"})
    op = _el(test, "outcomeProcessing")
    s = _el(op, "setOutcomeValue", {"identifier": "SCORE"})
    _el(_el(s, "sum"), "testVariables", {"variableIdentifier": "SCORE"})
    return test


def manifest_xml(identifier: str, items: list[str]) -> ET.Element:
    def c(parent: ET.Element | None, tag: str, attrs: dict[str, str] | None = None) -> ET.Element:
        t = f"{{{CP}}}{tag}"
        return ET.Element(t, attrs or {}) if parent is None else ET.SubElement(parent, t, attrs or {})

    man = c(None, "manifest", {"identifier": f"MANIFEST-{identifier}",
                               f"{{{XSI}}}schemaLocation": f"{CP} {CP_XSD}"})
    c(man, "organizations")
    res = c(man, "resources")
    test = c(res, "resource", {"identifier": f"RES-{identifier}", "type": "imsqti_test_xmlv2p1", "href": "test.xml"})
    c(test, "file", {"href": "test.xml"})
    for ident in items:
        c(test, "dependency", {"identifierref": f"RES-{ident}"})
    for ident in items:
        r = c(res, "resource", {"identifier": f"RES-{ident}", "type": "imsqti_item_xmlv2p1",
                                "href": f"items/{ident}.xml"})
        c(r, "file", {"href": f"items/{ident}.xml"})
    return man


def _xml(root: ET.Element) -> bytes:
    ET.indent(root, space=" ")
    return (b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8", xml_declaration=False)
            + b"\n")


README = """examprep QTI 2.1 package: {title}

Import the whole zip (IMS content package with imsmanifest.xml): OpenOLAT (Tests > Import),
ILIAS (Test > Import), Inspera, Blackboard (Tests > Import QTI 2.1 package).

test.xml holds one section per question, in the sheet's order{variants}.
items/qN.xml: one assessmentItem per problem, one response per answer (a vector or matrix part:
one box per entry), each scalar worth its part's points shared equally among its entries.

How answers are scored. examprep accepts |answer - expected| <= bound, where the bound follows the
part's stated rule (e.g. "to 3 significant figures": half a unit in the third figure, with a
floor of 0.001 near zero). Each response is scored by
<equal toleranceMode="absolute" tolerance="bound bound"> around the expected value with exactly
that bound, so a QTI player accepts the same interval examprep grade does, less the few units in
the last place of float noise examprep adds (the closest stricter rule). Integers and exact
answers use toleranceMode="exact". Exact expressions are matched as text against the canonical
form (case-insensitive): stricter than examprep, which also accepts equivalent forms.
A "to N significant figures, written with exactly N" part is checked on its value only: QTI
cannot see how many figures were written. Written parts are extended-text responses marked by
hand; their model answers and rubrics are in a rubricBlock shown to scorers.
Each known mistake (a value or option examprep names when grading) is a response condition: the
response that makes it shows a modal feedback with the explanation examprep's grade report gives
(a value is matched within its own bound, which never reaches the correct range; a mistake within
tolerance of the answer cannot be told apart and is left out). The worked solution is each item's
modal feedback too. Math is MathML (made with latex2mathml).
"""


def package(sheet: Any) -> bytes:
    """The sheet as a QTI 2.1 content package (zip bytes)."""
    ident = f"examprep-{sheet.printed_id}" if getattr(sheet, "printed_id", None) else "examprep"
    ident = re.sub(r"[^A-Za-z0-9_.-]", "-", ident)
    files: dict[str, bytes] = {}
    items = []
    for slot in slots(sheet):
        for code, p in slot.problems:
            iid = _ident(slot, code)
            items.append(iid)
            files[f"items/{iid}.xml"] = _xml(item_xml(p, iid, question_name(slot, code, p)))
    first = {"imsmanifest.xml": _xml(manifest_xml(ident, items)), "test.xml": _xml(test_xml(sheet, ident)),
             "README.txt": README.format(title=sheet.recipe.title, variants=(
                 "; with variants each section holds every student's variant and selects one at random"
                 if sheet.variants else "")).encode("utf-8")}
    return zip_bytes(first | files)

