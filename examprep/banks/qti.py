"""IMS QTI packages read into imported questions: QTI 2.1 (assessmentItem files listed in
imsmanifest.xml) and Canvas's QTI 1.2 export (questestinterop with Canvas's question_type metadata).

QTI 2.1 (IMS QTI v2.1 information model): the item body's text (interactions replaced by their
part's label, a scorer's rubricBlock left out) and one part per interaction: a textEntryInteraction
with a float or integer response → a computed part (its correctResponse; the tolerance of the
responseProcessing's <equal> on it, absolute or relative); a choiceInteraction with one right
choice → a choice part; an extendedTextInteraction → a written part. Canvas (QTI 1.2, as Canvas
exports and imports it): numerical_question → a computed part (the exact answer, or the middle of
a range, its half-width the tolerance); multiple_choice_question and true_false_question → a choice
part, an answer's feedback its mistake; essay_question and short_answer_question → a written part;
a text_only_question's text is put before the questions that follow it (Canvas puts a shared stem so).
"""
from __future__ import annotations

import copy
from pathlib import PurePosixPath
from xml.etree.ElementTree import Element, tostring

from examprep.banks.model import (Imported, absolute_tolerance, choice_part, literal, number, numeric_part,
                                  points_of, relative_tolerance, text_braces, written_part)
from examprep.banks.source import BankError, Package, child, children, descendants, local, parse_xml
from examprep.escape import html_text


def _plain(el: Element, drop: tuple[str, ...] = ()) -> str:
    """The text of an XML element holding XHTML (namespaces dropped, ``drop`` elements removed)."""
    el = copy.deepcopy(el)
    for e in el.iter():
        e.tag = local(e.tag)
        e.attrib.clear()
    for parent in list(el.iter()):
        for c in list(parent):
            if c.tag in drop:
                parent.remove(c)
    return html_text(tostring(el, encoding="unicode"))


# ------------------------------------------------------------------------------ QTI 2.1

def read_qti21(package: Package) -> list[Imported]:
    manifest = parse_xml(package.files["imsmanifest.xml"], f"{package.name}: imsmanifest.xml")
    hrefs = [r.get("href", "") for r in descendants(manifest, "resource") if "imsqti_item" in r.get("type", "")]
    out = []
    for href in hrefs:
        path = str(PurePosixPath(href))
        if path not in package.files:
            raise BankError(f"{package.name}: imsmanifest.xml lists {href}, which the package does not hold")
        out.append(read_item21(parse_xml(package.files[path], f"{package.name}: {path}"), path))
    return out


def read_item21(item: Element, where: str) -> Imported:
    if local(item.tag) != "assessmentItem":
        raise BankError(f"{where}: the root element is <{local(item.tag)}>, not QTI 2.1's <assessmentItem>")
    title = item.get("title") or item.get("identifier") or where
    q = Imported(name=title, title=title)
    declared = {d.get("identifier"): d for d in children(item, "responseDeclaration")}
    tolerances = {}
    for eq in descendants(item, "equal"):
        var = child(eq, "variable")
        if var is not None:
            tolerances[var.get("identifier")] = (eq.get("toleranceMode", "exact"), eq.get("tolerance", "0"))
    body = child(item, "itemBody")
    if body is None:
        q.skipped = "no itemBody"
        return q
    body = copy.deepcopy(body)
    n = 0
    for parent in list(body.iter()):
        for i, c in enumerate(list(parent)):
            if not local(c.tag).endswith("Interaction"):
                continue
            label = chr(ord("a") + n) if n < 26 else f"z{n}"
            n += 1
            _interaction21(q, c, label, declared.get(c.get("responseIdentifier")), tolerances)
            marker = Element("span")
            marker.text, marker.tail = f"[({label})]", c.tail
            parent.remove(c)
            parent.insert(i, marker)
    q.text = text_braces(_plain(body, drop=("rubricBlock",)))
    if not q.parts:
        q.skipped = "no interaction examprep can carry" + (f" ({'; '.join(q.notes)})" if q.notes else "")
        q.notes.clear()
    return q


def _correct(decl: Element | None) -> list[str]:
    cr = child(decl, "correctResponse") if decl is not None else None
    return [(v.text or "").strip() for v in children(cr, "value")] if cr is not None else []


def _interaction21(q: Imported, el: Element, label: str, decl: Element | None, tolerances: dict) -> None:
    kind = local(el.tag)
    prompt_el = child(el, "prompt")
    prompt = _plain(prompt_el) if prompt_el is not None else f"Blank ({label})."
    pid = f"blank_{label}"
    correct = _correct(decl)
    base = decl.get("baseType", "") if decl is not None else ""
    if kind == "textEntryInteraction" and base in ("float", "integer"):
        try:
            value = number(correct[0])
        except (IndexError, ValueError):
            q.notes.append(f"blank ({label}): no numeric correct response")
            return
        mode, tol_text = tolerances.get(el.get("responseIdentifier"), ("exact", "0"))
        try:
            tol = max(number(t) for t in tol_text.split()) if mode != "exact" else 0.0
        except ValueError:
            tol = 0.0
        q.parts.append(numeric_part(pid, prompt, literal(value),
                                    relative_tolerance(tol / 100) if mode == "relative" else absolute_tolerance(tol), 1))
    elif kind == "choiceInteraction" and el.get("maxChoices", "1") == "1" and len(correct) == 1:
        choices = descendants(el, "simpleChoice")
        ids = [c.get("identifier") for c in choices]
        options = [_plain(c) for c in choices]
        if correct[0] not in ids or not 2 <= len(options) <= 26 or len({o.casefold() for o in options}) < len(options):
            q.notes.append(f"blank ({label}): a choice whose options examprep cannot hold")
            return
        q.parts.append(choice_part(pid, prompt, options, ids.index(correct[0]), 1))
    elif kind in ("extendedTextInteraction", "textEntryInteraction"):
        if kind == "textEntryInteraction":
            q.notes.append(f"blank ({label}): text matching (marked by hand)")
        q.parts.append(written_part(prompt, correct[0] if correct else "", [f"accept {c!r}" for c in correct], 1))
    else:
        q.notes.append(f"blank ({label}): {kind} (no part kind in examprep)")


# ------------------------------------------------------------------------------ Canvas (QTI 1.2)

def read_canvas(package: Package) -> list[Imported]:
    out: list[Imported] = []
    for path, data in sorted(package.files.items()):
        if path == "imsmanifest.xml" or path.endswith("assessment_meta.xml"):
            continue
        root = parse_xml(data, f"{package.name}: {path}")
        if local(root.tag) == "questestinterop":
            out += read_questestinterop(root)
    return out


def _meta(item: Element) -> dict[str, str]:
    return {(child(f, "fieldlabel").text or "").strip(): (child(f, "fieldentry").text or "").strip()
            for f in descendants(item, "qtimetadatafield")
            if child(f, "fieldlabel") is not None and child(f, "fieldentry") is not None}


def _mattext(el: Element | None) -> str:
    mt = next(iter(descendants(el, "mattext")), None) if el is not None else None
    if mt is None:
        return ""
    return html_text(mt.text or "") if "html" in mt.get("texttype", "") else " ".join((mt.text or "").split())


def read_questestinterop(root: Element) -> list[Imported]:
    out, stem = [], ""
    for item in descendants(root, "item"):
        meta = _meta(item)
        kind = meta.get("question_type", "")
        text = _mattext(child(item, "presentation"))
        if kind == "text_only_question":
            stem = text
            continue
        title = item.get("title") or item.get("ident") or f"item {len(out) + 1}"
        q = Imported(name=title, title=title, text=text_braces("\n\n".join(t for t in (stem, text) if t)))
        points = points_of(meta.get("points_possible") or 1, q)
        reader = CANVAS.get(kind)
        if reader is None:
            q.skipped = f"Canvas question type '{kind or 'none'}' has no counterpart in examprep"
        else:
            reader(q, item, points)
        out.append(q)
    return out


def _full_marks(item: Element) -> list[Element]:
    """The respconditions that give the full score."""
    out = []
    for rc in descendants(item, "respcondition"):
        sv = child(rc, "setvar")
        if sv is not None and (sv.text or "").strip() in ("100", "100.0"):
            out.append(rc)
    return out


def _canvas_numerical(q: Imported, item: Element, points: float) -> None:
    rcs = _full_marks(item)
    if not rcs:
        q.skipped = "no answer with full marks"
        return
    cond = child(rcs[0], "conditionvar")
    try:
        exact = [number(e.text) for e in descendants(cond, "varequal")]
        lo = [number(e.text) for e in descendants(cond, "vargte") + descendants(cond, "vargt")]
        hi = [number(e.text) for e in descendants(cond, "varlte") + descendants(cond, "varlt")]
    except ValueError:
        q.skipped = "a numerical answer that is not a number"
        return
    if exact:
        value = exact[0]
        tol = max(([value - lo[0]] if lo else []) + ([hi[0] - value] if hi else []), default=0.0)
    elif lo and hi:
        value, tol = (lo[0] + hi[0]) / 2, (hi[0] - lo[0]) / 2
    else:
        q.skipped = "a numerical answer without a value or a closed range"
        return
    if len(rcs) > 1:
        q.notes.append(f"{len(rcs) - 1} more answer(s) with full marks (only the first is kept)")
    tol = float(f"{tol:.12g}")                 # the range's bounds as printed: 26.11 - 26.1 is not 0.01 in binary
    q.parts.append(numeric_part("answer", "Your answer.", literal(value), absolute_tolerance(tol), points))


def _canvas_choice(q: Imported, item: Element, points: float) -> None:
    labels = descendants(item, "response_label")
    ids = [lab.get("ident") for lab in labels]
    options = [_mattext(lab) for lab in labels]
    right = [(e.text or "").strip() for rc in _full_marks(item) for e in descendants(rc, "varequal")]
    if not right or right[0] not in ids:
        q.skipped = "no option with full marks"
        return
    if not 2 <= len(options) <= 26 or not all(options) or len({o.casefold() for o in options}) < len(options):
        q.skipped = "options examprep cannot hold (2 to 26 different texts)"
        return
    feedback_of = {f.get("ident"): _mattext(f) for f in descendants(item, "itemfeedback")}
    why: dict[int, tuple[str, float]] = {}
    for rc in descendants(item, "respcondition"):
        eq = [(e.text or "").strip() for e in descendants(rc, "varequal")]
        fb = [d.get("linkrefid") for d in children(rc, "displayfeedback")]
        if len(eq) == 1 and eq[0] in ids and fb and feedback_of.get(fb[0]):
            why[ids.index(eq[0])] = (feedback_of[fb[0]], 0.0)
    q.parts.append(choice_part("choice", "Choose one.", options, ids.index(right[0]), points, why))


def _canvas_written(q: Imported, item: Element, points: float) -> None:
    accepted = [(e.text or "").strip() for rc in _full_marks(item) for e in descendants(rc, "varequal")]
    if accepted:
        q.notes.append("text matching (marked by hand; the accepted answers are its rubric)")
    q.parts.append(written_part("Your answer.", accepted[0] if accepted else "",
                                [f"accept {a!r}" for a in accepted], points))


CANVAS = {"numerical_question": _canvas_numerical, "multiple_choice_question": _canvas_choice,
          "true_false_question": _canvas_choice, "short_answer_question": _canvas_written,
          "essay_question": _canvas_written}
