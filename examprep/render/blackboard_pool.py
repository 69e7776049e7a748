"""Blackboard's pool package: the zip Blackboard Original imports under Course Tools → Tests,
Surveys, and Pools → Pools → Import (and Ultra under Question banks → Import), laid out as R/exams'
``exams2blackboard`` writes it: ``imsmanifest.xml`` (``bb:`` resources of type
``assessment/x-bb-qti-pool``), ``.bb-package-info`` and one ``res00001.dat`` per pool — a QTI 1.2
``questestinterop`` with Blackboard's ``bbmd_`` metadata. One pool for a common sheet; with
per-student variants a pool per variant, titled with its code.

Unlike the Upload Questions file (``blackboard-txt``), each question carries its points (the
``SCORE`` variable's maximum and ``qmd_absolutescore_max``) and feedback: the worked solution
after any answer to a problem's first question, and after a wrong answer the known mistakes (value
or option, with the grade report's explanation). Blackboard's Numeric question has one
correct answer and a correct and an incorrect feedback, so mistakes are listed, not tied to their
values. The questions are the Canvas export's (examprep.render.canvas.problem_questions: one
per scalar answer, each with its problem's statement, small answers scaled as that says).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from examprep import escape
from examprep.render.canvas import Question, problem_questions
from examprep.render.lms import mistakes, number_text, zip_bytes

BB = "http://www.blackboard.com/content-packaging/"
TYPES = {"numerical_question": "Numeric", "multiple_choice_question": "Multiple Choice",
         "short_answer_question": "Fill in the Blank", "essay_question": "Essay"}


def _text(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    e = ET.SubElement(parent, tag, attrs)
    if text is not None:
        e.text = text
    return e


def _html(parent: ET.Element, html: str) -> None:
    _text(_text(_text(parent, "material"), "mat_extension"), "mat_formattedtext", html, type="HTML")


def _meta(item: ET.Element, ident: str, kind: str, points: float) -> None:
    m = _text(item, "itemmetadata")
    for tag, value in (("bbmd_asi_object_id", ident), ("bbmd_asitype", "Item"), ("bbmd_assessmenttype", "Pool"),
                       ("bbmd_sectiontype", "Subsection"), ("bbmd_questiontype", kind),
                       ("bbmd_is_from_cartridge", "false"), ("bbmd_is_disabled", "false"),
                       ("bbmd_negative_points_ind", "N"), ("bbmd_canvas_fullcrdt_ind", "false"),
                       ("bbmd_all_fullcredit_ind", "false"), ("bbmd_numbertype", "none"),
                       ("bbmd_partialcredit", "false"), ("bbmd_orientationtype", "vertical"),
                       ("bbmd_is_extracredit", "false"), ("qmd_absolutescore_max", f"{points:g}"),
                       ("qmd_weighting", "0.0"), ("qmd_instructornotes", None)):
        _text(m, tag, value)


def _feedback(item: ET.Element, ident: str, html: str) -> None:
    fb = _text(item, "itemfeedback", ident=ident, view="All")
    _html(_text(_text(fb, "flow_mat", **{"class": "Block"}), "flow_mat", **{"class": "FORMATTED_TEXT_BLOCK"}), html)


def _item(section: ET.Element, q: Question, ident: str, choice_mistakes: str) -> None:
    kind = TYPES[q.kind]
    item = _text(section, "item", title=q.title, maxattempts="1")
    _meta(item, ident, kind, q.points)
    flow = _text(_text(item, "presentation"), "flow", **{"class": "Block"})
    _html(_text(_text(flow, "flow", **{"class": "QUESTION_BLOCK"}), "flow", **{"class": "FORMATTED_TEXT_BLOCK"}), q.html)
    resp = _text(flow, "flow", **{"class": "RESPONSE_BLOCK"})
    rid = f"{ident}_response"
    if q.kind == "multiple_choice_question":
        rc = _text(_text(resp, "response_lid", ident=rid, rcardinality="Single", rtiming="No"), "render_choice",
                   shuffle="No")
        for k, option in enumerate(q.expected[0]):
            label = _text(_text(rc, "flow_label", **{"class": "Block"}), "response_label", ident=f"{ident}_c{k}",
                          rshuffle="No")
            _html(_text(label, "flow_mat", **{"class": "FORMATTED_TEXT_BLOCK"}), escape.html(option))
    else:
        tag = "response_num" if q.kind == "numerical_question" else "response_str"
        rows = {"rows": "8"} if q.kind == "essay_question" else {}
        _text(_text(resp, tag, ident=rid, rcardinality="Single"), "render_fib", **rows)
    proc = _text(item, "resprocessing")
    _text(_text(proc, "outcomes"), "decvar", varname="SCORE", vartype="Decimal", defaultval="0", minvalue="0",
          maxvalue=f"{q.points:g}", cutvalue=f"{q.points:g}")
    if q.kind != "essay_question":             # an essay is marked by hand
        cond = _text(proc, "respcondition", title="correct")
        var = _text(cond, "conditionvar")
        if q.kind == "numerical_question":     # R/exams' form: the range and the exact value
            value, lo, hi = q.expected
            _text(var, "vargte", number_text(lo), respident=rid)
            _text(var, "varlte", number_text(hi), respident=rid)
            _text(var, "varequal", number_text(value), respident=rid)
        elif q.kind == "multiple_choice_question":
            _text(var, "varequal", f"{ident}_c{q.expected[1]}", respident=rid, case="No")
        else:
            _text(var, "varequal", str(q.expected), respident=rid, case="No")
        _text(cond, "setvar", f"{q.points:g}", varname="SCORE", action="Set")
        _text(cond, "displayfeedback", feedbacktype="Response", linkrefid="correct")
        other = _text(proc, "respcondition", title="incorrect")
        _text(_text(other, "conditionvar"), "other")
        _text(other, "setvar", "0", varname="SCORE", action="Set")
        _text(other, "displayfeedback", feedbacktype="Response", linkrefid="incorrect")
    _feedback(item, "correct", q.feedback or "<p>Correct.</p>")
    _feedback(item, "incorrect", (q.incorrect or choice_mistakes) + q.feedback or "<p>Not correct.</p>")


def _choice_mistakes(p: Any) -> dict[str, str]:
    """Each choice part's known mistakes as the incorrect-answer feedback: the option and why."""
    out = {}
    for part in p.parts:
        found = [m for m in mistakes(part)[0] if m.choice is not None]
        if found:
            items = "".join(f"<li>{escape.html(m.choice)}: {escape.html(m.explanation)}</li>" for m in found)
            out[part.id] = f"<p>Known mistakes and the options they pick:</p><ul>{items}</ul>"
    return out


def pool_xml(title: str, ident: str, problems: list, warnings: list[str], where: str) -> bytes:
    root = ET.Element("questestinterop")
    a = _text(root, "assessment", title=title)
    m = _text(a, "assessmentmetadata")
    for tag, value in (("bbmd_asi_object_id", ident), ("bbmd_asitype", "Assessment"),
                       ("bbmd_assessmenttype", "Pool"), ("qmd_absolutescore_max", "0.0"), ("qmd_weighting", "0.0")):
        _text(m, tag, value)
    section = _text(a, "section")
    sm = _text(section, "sectionmetadata")
    for tag, value in (("bbmd_asi_object_id", f"{ident}_section"), ("bbmd_asitype", "Section"),
                       ("bbmd_assessmenttype", "Pool"), ("bbmd_sectiontype", "Subsection")):
        _text(sm, tag, value)
    n = 0
    for k, p in enumerate(problems, 1):
        qs = problem_questions(p, k, warnings, where)
        stem, rest = qs[0].html, qs[1:]
        choice = _choice_mistakes(p)
        parts = {f"q{k} ({chr(ord('a') + i)})": part.id for i, part in enumerate(p.parts)}
        for q in rest:
            n += 1
            q.html = stem + q.html
            _item(section, q, f"{ident}_item_{n:04d}", choice.get(parts.get(q.title, ""), "")
                  if q.kind == "multiple_choice_question" else "")
    ET.indent(root, space=" ")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"


def manifest_xml(pools: list[tuple[str, str]]) -> bytes:
    ET.register_namespace("bb", BB)
    root = ET.Element("manifest", {"identifier": "man00001"})
    _text(root, "organizations")
    res = _text(root, "resources")
    for name, title in pools:
        _text(res, "resource", **{f"{{{BB}}}file": f"{name}.dat", f"{{{BB}}}title": title, "identifier": name,
                                  "type": "assessment/x-bb-qti-pool",
                                  "{http://www.w3.org/XML/1998/namespace}base": name})
    ET.indent(root, space=" ")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"


def package(sheet: Any) -> tuple[bytes, list[str]]:
    """The sheet as a Blackboard pool package (zip bytes), and the warnings of parts left out."""
    warnings: list[str] = []
    copies = [("", sheet.copies[0].problems)] if not sheet.variants else [(c.code, c.problems) for c in sheet.copies]
    pools, files = [], {}
    for k, (code, problems) in enumerate(copies, 1):
        name = f"res{k:05d}"
        title = sheet.recipe.title + (f" — variant {code}" if code else "")
        pools.append((name, title))
        files[f"{name}.dat"] = pool_xml(title, f"examprep_{name}", problems, warnings,
                                        f"variant {code}" if code else "")
    warnings = [" ".join(w.replace("canvas:", "blackboard:").replace("Canvas", "Blackboard").split())
                for w in dict.fromkeys(warnings)]
    return zip_bytes({"imsmanifest.xml": manifest_xml(pools), ".bb-package-info": b"cx.package.info.version=6.0\n"}
                     | files), warnings
