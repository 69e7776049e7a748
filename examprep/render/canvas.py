"""Canvas quiz export: the QTI 1.2 zip Canvas imports (Settings → Import Course Content → "QTI .zip
file"; classic quizzes, which New Quizzes can migrate), laid out as text2qti writes it.

Canvas's numerical question takes one number, so a problem becomes a text question holding its
statement (``text_only_question``), then one ``numerical_question`` per scalar answer: a vector or
matrix part gives one question per entry ("entry [2, 1]"), each worth the part's points over its
entries. Not a fill-in-multiple-blanks question: Canvas compares those blanks as text, with no
numeric tolerance. Each accepts exactly examprep's interval (expected ± the part's bound, as an
exact answer or the range around it, the way text2qti writes "x +- m"). Canvas mishandles numbers
below 1e-4 (text2qti refuses them), so a part with a non-zero answer, range end or tolerance below
1e-4 is scaled by a power of ten and its prompt says so ("type the value × 10⁵"); a part with a
value that is not finite is refused with a warning naming it. Choices are
``multiple_choice_question``s, exact expressions ``short_answer_question``s (the canonical form),
written parts ``essay_question``s whose general feedback holds the model answer and rubric. Math is
LaTeX between \\( \\), which Canvas's MathJax renders. With per-student variants, one quiz of
question groups: each question of the sheet a group holding that question of every variant (its
problem's statement included), from which Canvas draws one per student at random; item
identifiers and titles carry the variant code. Known mistakes: a choice's is its option's answer feedback;
Canvas counts every answer of a numerical question as correct, so a number's mistakes are listed
(value and explanation) in the question's incorrect-answer feedback. With --canvas-per-student (the
sheet's canvas_per_student), each student's variant is its own quiz, titled with the variant code.
"""
from __future__ import annotations

import hashlib
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from typing import Any

from examprep import escape
from examprep.render import accepted, choices_shown, model_answer_text, moodle
from examprep.render.lms import entries, is_numeric, mistakes, number_text, part_letter, zip_bytes

QTI12 = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
CCCV = "http://canvas.instructure.com/xsd/cccv1p0"
IMSCC = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
SMALL = 1e-4


@dataclass
class Question:
    kind: str                 # Canvas question_type
    title: str
    points: float
    html: str
    expected: Any = None      # numerical: (value, lo, hi); choice: (options, right); short answer: text
    feedback: str = ""        # general feedback (the worked solution), shown after any answer
    incorrect: str = ""       # shown after a wrong answer: the known mistakes of a numerical answer
    option_feedback: dict[int, str] = field(default_factory=dict)    # choice index → its known mistake


def _scale(part: Any) -> tuple[int, str | None]:
    """The power of ten a part's answers are typed in (0: as they are), or a refusal."""
    ents = entries(part)
    if not all(math.isfinite(e.expected) and math.isfinite(e.bound) for e in ents):
        return 0, f"part ({part.id}) has an answer that is not a finite number; Canvas cannot take it"
    sizes = [abs(x) for e in ents for x in (e.expected, e.expected - e.bound, e.expected + e.bound) if x != 0]
    sizes += [e.bound for e in ents if e.bound > 0]
    small = min(sizes, default=1.0)
    if small >= SMALL:
        return 0, None
    return math.ceil(math.log10(SMALL / small) - 1e-12), None


_SUPER = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def problem_questions(p: Any, number: int, warnings: list[str], where: str) -> list[Question]:
    qs = [Question("text_only_question", f"q{number} {p.title}", 0.0,
                   moodle._statement_html(p))]
    first = True
    for i, part in enumerate(p.parts):
        letter = part_letter(i)
        prompt = (f"<p><strong>q{number} ({letter})</strong> {moodle._math_text(part.prompt)} "
                  f"<em>[{escape.html(accepted(part))}]</em></p>")
        feedback = moodle.solution_html(p) if first else ""
        if part.kind == "written":
            qs.append(Question("essay_question", f"q{number} ({letter})", part.points, prompt,
                               feedback=f"<p>Model answer and rubric: {escape.html(model_answer_text(part))}</p>"))
        elif part.kind == "choice":
            opts = choices_shown(part)
            picked = {opts.index(m.choice): f"<p>{escape.html(m.explanation)}</p>"
                      for m in mistakes(part)[0] if m.choice in opts}
            qs.append(Question("multiple_choice_question", f"q{number} ({letter})", part.points, prompt,
                               (opts, opts.index(str(part.expected))), feedback, option_feedback=picked))
        elif is_numeric(part):
            power, refused = _scale(part)
            if refused:
                warnings.append(f"canvas: {where} q{number} {refused}; it is left out")
                continue
            ents = entries(part)
            f = 10.0 ** power
            note = (f" <strong>Type the value × 10{str(power).translate(_SUPER)}</strong> "
                    f"(for 3.2 × 10{str(-power).translate(_SUPER)}, type 3.2).") if power else ""
            known = mistakes(part)[0]
            for e in ents:
                where_in = f" Entry {e.label()}." if e.index else ""
                value = e.expected * f
                text = prompt + (f"<p>{where_in}{note}</p>" if where_in or note else "")
                qs.append(Question("numerical_question", f"q{number} ({letter}){e.label()}", part.points / len(ents),
                                   text, (value, value - e.bound * f, value + e.bound * f), feedback,
                                   _mistake_list(known, e.index, f)))
                feedback = ""
        else:
            qs.append(Question("short_answer_question", f"q{number} ({letter})", part.points, prompt,
                               str(part.exact or part.expected), feedback))
        first = False
    return qs


def _mistake_list(known: list, index: tuple[int, ...], f: float) -> str:
    """The incorrect-answer feedback of one numerical entry: each known mistake that gives this
    entry a wrong value, with that value (4 significant figures, as typed) and its explanation.
    Canvas cannot tie feedback to a wrong value: every answer of a numerical question is a correct one."""
    rows = [(value * f, m.explanation) for m in known for e, value, _ in m.values if e.index == index]
    if not rows:
        return ""
    items = "".join(f"<li>{escape.html(f'{v:.4g}')}: {escape.html(why)}</li>" for v, why in rows)
    return f"<p>Known mistakes and the values they give:</p><ul>{items}</ul>"


# ------------------------------------------------------------------------------ QTI 1.2 XML

def _ident(*parts: str) -> str:
    return "examprep_" + hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    e = ET.SubElement(parent, f"{{{QTI12}}}{tag}", attrs)
    if text is not None:
        e.text = text
    return e


def _meta(item: ET.Element, fields: list[tuple[str, str]]) -> None:
    qm = _sub(_sub(item, "itemmetadata"), "qtimetadata")
    for label, entry in fields:
        f = _sub(qm, "qtimetadatafield")
        _sub(f, "fieldlabel", label)
        _sub(f, "fieldentry", entry)


def _material(parent: ET.Element, text: str) -> None:
    _sub(_sub(parent, "material"), "mattext", text, texttype="text/html")


def _num(x: float) -> str:
    return number_text(x) if abs(x) >= SMALL or x == 0 else repr(float(x))


def _item(section: ET.Element, q: Question, ident: str) -> None:
    item = _sub(section, "item", ident=ident, title=q.title)
    answer_ids = ""
    choice_ids: list[str] = []
    if q.kind == "numerical_question":
        answer_ids = f"{ident}_answer"
    elif q.kind == "multiple_choice_question":
        choice_ids = [f"{ident}_c{k}" for k in range(len(q.expected[0]))]
        answer_ids = ",".join(choice_ids)
    _meta(item, [("question_type", q.kind), ("points_possible", f"{q.points:g}"), ("original_answer_ids", answer_ids),
                 ("assessment_question_identifierref", f"{ident}_ref")])
    pres = _sub(item, "presentation")
    _material(pres, q.html)
    if q.kind == "text_only_question":
        return
    if q.kind == "multiple_choice_question":
        lid = _sub(pres, "response_lid", ident="response1", rcardinality="Single")
        rc = _sub(lid, "render_choice")
        for cid, text in zip(choice_ids, q.expected[0]):
            _material(_sub(rc, "response_label", ident=cid), escape.html(text))
    else:
        rs = _sub(pres, "response_str", ident="response1", rcardinality="Single")
        attrs = {"fibtype": "Decimal"} if q.kind == "numerical_question" else {}
        fib = _sub(rs, "render_fib", **attrs)
        _sub(fib, "response_label", ident="answer1", **({} if q.kind == "numerical_question" else {"rshuffle": "No"}))
    proc = _sub(item, "resprocessing")
    _sub(_sub(proc, "outcomes"), "decvar", maxvalue="100", minvalue="0", varname="SCORE", vartype="Decimal")
    if q.kind == "essay_question":              # graded by hand: text2qti's "other" condition, no score
        _sub(_sub(_sub(proc, "respcondition", **{"continue": "No"}), "conditionvar"), "other")
    if q.feedback:
        cond = _sub(proc, "respcondition", **{"continue": "Yes"})
        _sub(_sub(cond, "conditionvar"), "other")
        _sub(cond, "displayfeedback", feedbacktype="Response", linkrefid="general_fb")
    for k, _ in sorted(q.option_feedback.items()):        # as Canvas exports an answer's comment
        cond = _sub(proc, "respcondition", **{"continue": "Yes"})
        _sub(_sub(cond, "conditionvar"), "varequal", choice_ids[k], respident="response1")
        _sub(cond, "displayfeedback", feedbacktype="Response", linkrefid=f"{choice_ids[k]}_fb")
    if q.kind != "essay_question":
        cond = _sub(proc, "respcondition", **{"continue": "No"})
        var = _sub(cond, "conditionvar")
        if q.kind == "numerical_question":
            value, lo, hi = q.expected
            either = _sub(var, "or")
            _sub(either, "varequal", _num(value), respident="response1")
            both = _sub(either, "and")            # as text2qti writes "x +- m" (and an integer: m = 0)
            _sub(both, "vargte", _num(lo), respident="response1")
            _sub(both, "varlte", _num(hi), respident="response1")
        elif q.kind == "multiple_choice_question":
            _sub(var, "varequal", choice_ids[q.expected[1]], respident="response1")
        else:
            _sub(var, "varequal", q.expected, respident="response1")
        _sub(cond, "setvar", "100", action="Set", varname="SCORE")
    if q.incorrect:                  # reached only when the correct condition (continue="No") did not hold
        cond = _sub(proc, "respcondition", **{"continue": "Yes"})
        _sub(_sub(cond, "conditionvar"), "other")
        _sub(cond, "displayfeedback", feedbacktype="Response", linkrefid="general_incorrect_fb")
    if q.feedback:
        fb = _sub(item, "itemfeedback", ident="general_fb")
        _material(_sub(fb, "flow_mat"), q.feedback)
    if q.incorrect:
        _material(_sub(_sub(item, "itemfeedback", ident="general_incorrect_fb"), "flow_mat"), q.incorrect)
    for k, text in sorted(q.option_feedback.items()):
        _material(_sub(_sub(item, "itemfeedback", ident=f"{choice_ids[k]}_fb"), "flow_mat"), text)


def assessment_xml(title: str, ident: str, questions: list[Question],
                   groups: list[tuple[str, list[tuple[str, Question]]]] | None = None) -> bytes:
    """One quiz: its questions in order, or ``groups`` (title, [(variant code, question)]): one
    question group each, from which Canvas draws one item per student, as Canvas exports a
    question group (selection_number 1, points_per_item) and R/exams' exams2canvas writes one."""
    ET.register_namespace("", QTI12)
    root = ET.Element(f"{{{QTI12}}}questestinterop", {
        f"{{{XSI}}}schemaLocation": f"{QTI12} http://www.imsglobal.org/xsd/ims_qtiasiv1p2p1.xsd"})
    a = _sub(root, "assessment", ident=ident, title=title)
    qm = _sub(a, "qtimetadata")
    f = _sub(qm, "qtimetadatafield")
    _sub(f, "fieldlabel", "cc_maxattempts")
    _sub(f, "fieldentry", "1")
    section = _sub(a, "section", ident="root_section")
    for k, q in enumerate(questions):
        _item(section, q, _ident(ident, str(k)))
    for gtitle, members in groups or []:
        g = _sub(section, "section", ident=_ident(ident, "group", gtitle), title=gtitle)
        sel = _sub(_sub(g, "selection_ordering"), "selection")
        _sub(sel, "selection_number", "1")
        _sub(_sub(sel, "selection_extension"), "points_per_item", f"{members[0][1].points:g}")
        for code, q in members:
            _item(g, q, f"{_ident(ident, gtitle)}_{re.sub(r'[^A-Za-z0-9_-]', '-', code)}")
    return _xml(root)


def meta_xml(title: str, ident: str, points: float) -> bytes:
    ET.register_namespace("", CCCV)

    def s(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
        e = ET.SubElement(parent, f"{{{CCCV}}}{tag}", attrs)
        e.text = text
        return e

    root = ET.Element(f"{{{CCCV}}}quiz", {"identifier": ident, f"{{{XSI}}}schemaLocation":
                                          f"{CCCV} https://canvas.instructure.com/xsd/cccv1p0.xsd"})
    for tag, text in (("title", title), ("description", "<p>Made by examprep.</p>"), ("shuffle_answers", "false"),
                      ("scoring_policy", "keep_highest"), ("quiz_type", "assignment"),
                      ("points_possible", f"{points:g}"), ("show_correct_answers", "true"),
                      ("allowed_attempts", "1"), ("one_question_at_a_time", "false"), ("available", "false")):
        s(root, tag, text)
    asg = s(root, "assignment", identifier=f"{ident}_assignment")
    for tag, text in (("title", title), ("workflow_state", "unpublished"), ("quiz_identifierref", ident),
                      ("points_possible", f"{points:g}"), ("grading_type", "points"),
                      ("submission_types", "online_quiz")):
        s(asg, tag, text)
    return _xml(root)


def manifest_xml(ident: str, quizzes: list[str]) -> bytes:
    ET.register_namespace("", IMSCC)

    def s(parent: ET.Element, tag: str, **attrs: str) -> ET.Element:
        return ET.SubElement(parent, f"{{{IMSCC}}}{tag}", attrs)

    root = ET.Element(f"{{{IMSCC}}}manifest", {"identifier": f"{ident}_manifest"})
    s(root, "organizations")
    res = s(root, "resources")
    for q in quizzes:
        r = s(res, "resource", identifier=q, type="imsqti_xmlv1p2")
        s(r, "file", href=f"{q}/{q}.xml")
        s(r, "dependency", identifierref=f"{q}_dependency")
        dep = s(res, "resource", identifier=f"{q}_dependency",
                type="associatedcontent/imscc_xmlv1p1/learning-application-resource", href=f"{q}/assessment_meta.xml")
        s(dep, "file", href=f"{q}/assessment_meta.xml")
    return _xml(root)


def _xml(root: ET.Element) -> bytes:
    ET.indent(root, space="  ")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8", xml_declaration=False) + b"\n"


def _grouped(sheet: Any, warnings: list[str]) -> list[tuple[str, list[tuple[str, Question]]]]:
    """A class's variants as question groups: one per question of the sheet ("q3 (a)[1, 2]"), holding
    that question of every variant (once per variant code). Each item carries its problem's
    statement, since Canvas draws each group's item on its own: a text-only stem could come from
    another variant than the questions after it."""
    groups: dict[str, dict[str, Question]] = {}
    for c in sheet.copies:
        for k, p in enumerate(c.problems, 1):
            qs = problem_questions(p, k, warnings, f"variant {c.code}")
            stem = qs[0].html
            for q in qs[1:]:
                groups.setdefault(q.title, {}).setdefault(c.code, replace(
                    q, title=f"{q.title} (variant {c.code})", html=stem + q.html))
    out = []
    for title, members in groups.items():
        points = {q.points for q in members.values()}
        if len(points) > 1:
            warnings.append(f"canvas: {title} is worth {' or '.join(f'{x:g}' for x in sorted(points))} points in "
                            f"different variants; its group gives each the first one's")
        out.append((title, list(members.items())))
    return out


def package(sheet: Any) -> tuple[bytes, list[str]]:
    """The sheet as a Canvas QTI zip, and the warnings of parts left out. With per-student variants:
    one quiz of question groups (Canvas draws a variant per question per student), or, with the
    sheet's canvas_per_student, one quiz per student's variant."""
    warnings: list[str] = []
    base = _ident(getattr(sheet, "printed_id", None) or sheet.recipe.title)
    if sheet.variants and not getattr(sheet, "canvas_per_student", False):
        ident = _ident(base, "groups")
        groups = _grouped(sheet, warnings)
        files = {f"{ident}/{ident}.xml": assessment_xml(sheet.recipe.title, ident, [], groups),
                 f"{ident}/assessment_meta.xml": meta_xml(sheet.recipe.title, ident,
                                                          sum(m[0][1].points for _, m in groups))}
        warnings = [" ".join(w.split()) for w in dict.fromkeys(warnings)]
        return zip_bytes({"imsmanifest.xml": manifest_xml(base, [ident])} | files), warnings
    copies = [("", sheet.copies[0].problems)] if not sheet.variants else [(c.code, c.problems) for c in sheet.copies]
    files: dict[str, bytes] = {}
    quizzes = []
    for code, problems in copies:
        ident = _ident(base, code)
        title = sheet.recipe.title + (f" — variant {code}" if code else "")
        questions = [q for k, p in enumerate(problems, 1)
                     for q in problem_questions(p, k, warnings, f"variant {code}" if code else "")]
        quizzes.append(ident)
        files[f"{ident}/{ident}.xml"] = assessment_xml(title, ident, questions)
        files[f"{ident}/assessment_meta.xml"] = meta_xml(title, ident, sum(q.points for q in questions))
    warnings = [" ".join(w.split()) for w in dict.fromkeys(warnings)]
    return zip_bytes({"imsmanifest.xml": manifest_xml(base, quizzes)} | files), warnings
