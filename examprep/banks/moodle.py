"""Moodle XML (docs.moodle.org/en/Moodle_XML_format) read into imported questions.

numerical → a computed part whose value is the 100 % answer, its tolerance an absolute error; the
other answers with feedback become its mistakes (a grade above 0 % their credit). multichoice with
one right option → a choice part, each wrong option's feedback a mistake. truefalse → a choice of
"True" and "False". shortanswer → a written part (examprep matches no text: the accepted answers
become the rubric); essay → a written part, its grader information the model answer. calculated /
calculatedsimple → the wildcards' datasets become drawn parameters (decimals 0: integers;
otherwise decimals with step 10⁻ᵈ), the formula a computed part through
``banks.formula``; tolerance type relative → rtol, nominal → atol. cloze → one part per embedded
field ({N:NUMERICAL:…}, {N:MULTICHOICE:…}, {N:SHORTANSWER:…}, and their short names), the field
replaced in the text by its part's label. Anything else is named as not carried.
"""
from __future__ import annotations

import re
from xml.etree.ElementTree import Element

from examprep.banks.formula import FormulaError, translate
from examprep.banks.model import (Imported, absolute_tolerance, choice_part, literal, number, numeric_part,
                                  points_of, relative_tolerance, text_braces, written_part)
from examprep.banks.source import BankError, child, children, local
from examprep.escape import html_text
from examprep.expr import RESERVED

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
KEYWORDS = frozenset({"and", "or", "not", "if", "else", "in", "is", "lambda", "for", "None"})


def field_text(el: Element | None) -> str:
    """The plain text of a Moodle text field (<questiontext format="html"><text>…</text>)."""
    if el is None:
        return ""
    inner = child(el, "text")
    raw = (inner.text if inner is not None else el.text) or ""
    if el.get("format", "html") in ("html", "moodle_auto_format"):
        return html_text(raw)
    return "\n\n".join(" ".join(p.split()) for p in re.split(r"\n\s*\n", raw) if p.strip())


def _answers(el: Element) -> list[tuple[float, Element]]:
    out = []
    for a in children(el, "answer"):
        try:
            out.append((number(a.get("fraction", "0")), a))
        except ValueError:
            out.append((0.0, a))
    return out


def read_moodle(root: Element, where: str) -> list[Imported]:
    if local(root.tag) != "quiz":
        raise BankError(f"{where}: the root element is <{local(root.tag)}>, not Moodle XML's <quiz>")
    out = []
    for i, el in enumerate(children(root, "question"), 1):
        kind = el.get("type", "")
        if kind == "category":
            continue
        name = field_text(child(el, "name")) or f"question {i}"
        q = Imported(name=name, title=name, text=field_text(child(el, "questiontext")))
        reader = READERS.get(kind)
        if reader is None:
            q.skipped = f"Moodle question type '{kind}' has no counterpart in examprep (types read: " \
                        f"{', '.join(READERS)})"
        else:
            reader(q, el)
            if kind not in ("calculated", "calculatedsimple", "cloze"):   # those mark their own placeholders
                q.text = text_braces(q.text)
        if any(local(f.tag) == "file" for f in el.iter()) and not q.skipped:
            q.notes.append("embedded files (images are shown by their alt text)")
        if child(el, "generalfeedback") is not None and field_text(child(el, "generalfeedback")) and not q.skipped:
            q.notes.append("the general feedback (examprep's worked solution comes from the parts)")
        out.append(q)
    return out


def _numerical(q: Imported, el: Element) -> None:
    points = points_of(_text(el, "defaultgrade") or 1, q)
    answers = _answers(el)
    right = [(f, a) for f, a in answers if f >= 100]
    if not right:
        q.skipped = "no answer with grade 100%"
        return
    try:
        value = number(_text(right[0][1], "text"))
        tol = number(_text(right[0][1], "tolerance") or 0)
    except ValueError:
        q.skipped = f"the right answer {_text(right[0][1], 'text')!r} is not a number ('*' matches anything)"
        return
    if len(right) > 1:
        q.notes.append(f"{len(right) - 1} more answer(s) graded 100% (only the first is kept)")
    mistakes = []
    for f, a in answers:
        if f >= 100:
            continue
        why = field_text(child(a, "feedback"))
        try:
            wrong = number(_text(a, "text"))
        except ValueError:
            q.notes.append(f"the answer {_text(a, 'text')!r} (not a number)")
            continue
        if not why:
            q.notes.append(f"the answer {literal(wrong)} without feedback")
            continue
        m = {"id": f"answer-{len(mistakes) + 1}", "value": literal(wrong), "why": " ".join(why.split())}
        if 0 < f < 100:
            m["credit"] = round(f / 100, 4)
        mistakes.append(m)
    if children(el, "units") and any(children(u, "unit") for u in children(el, "units")):
        q.notes.append("units (the answer is read as a bare number)")
    q.parts.append(numeric_part("answer", "Your answer.", literal(value), absolute_tolerance(tol), points, mistakes))


def _multichoice(q: Imported, el: Element) -> None:
    if _text(el, "single").lower() in ("false", "0"):
        q.skipped = "several options can be right (multiple-answer multichoice); a choice part has one"
        return
    answers = _answers(el)
    options = [field_text(a) for _, a in answers]
    best = max(range(len(answers)), key=lambda i: answers[i][0], default=None)
    if best is None or answers[best][0] < 100:
        q.skipped = "no option graded 100%"
        return
    if any(f < 0 for f, _ in answers):
        q.notes.append("negative grades for wrong options (examprep gives 0)")
    _choice(q, options, best, [(field_text(child(a, "feedback")), f / 100) for f, a in answers],
            points_of(_text(el, "defaultgrade") or 1, q))


def _truefalse(q: Imported, el: Element) -> None:
    answers = _answers(el)
    texts = [_text(a, "text").strip().lower() for _, a in answers]
    if sorted(texts) != ["false", "true"]:
        q.skipped = "a true/false question without the answers true and false"
        return
    options = ["True", "False"]
    right = texts[max(range(2), key=lambda i: answers[i][0])]
    feedback = {options.index(t.capitalize()): (field_text(child(a, "feedback")), 0.0) for t, (_, a) in
                zip(texts, answers)}
    _choice(q, options, options.index(right.capitalize()), [feedback[0], feedback[1]],
            points_of(_text(el, "defaultgrade") or 1, q))


def _choice(q: Imported, options: list[str], correct: int, feedback: list[tuple[str, float]], points: float) -> None:
    if not 2 <= len(options) <= 26 or any(not o for o in options):
        q.skipped = f"{len(options)} options (some empty); a choice part has 2 to 26"
        return
    if len({o.casefold() for o in options}) < len(options):
        q.skipped = "two options with the same text"
        return
    q.parts.append(choice_part("choice", "Choose one.", options, correct, points,
                               {i: (" ".join(w.split()), c) for i, (w, c) in enumerate(feedback)}))


def _shortanswer(q: Imported, el: Element) -> None:
    right = [(f, _text(a, "text")) for f, a in _answers(el) if f > 0]
    if not right:
        q.skipped = "no accepted answer"
        return
    q.notes.append("text matching (examprep marks a text answer by hand: the accepted answers are its rubric)")
    rubric = [f"accept {t!r} ({literal(f)}%)" for f, t in right]
    q.parts.append(written_part("Your answer.", right[0][1], rubric, points_of(_text(el, "defaultgrade") or 1, q)))


def _essay(q: Imported, el: Element) -> None:
    model = field_text(child(el, "graderinfo"))
    q.parts.append(written_part("Your answer.", " ".join(model.split()), [], points_of(_text(el, "defaultgrade") or 1, q)))


def _calculated(q: Imported, el: Element) -> None:
    if "{=" in q.text:
        q.skipped = "a {=…} formula in the text (examprep's text shows parameters, not formulas)"
        return
    params: dict[str, dict] = {}
    for d in el.iter():
        if local(d.tag) != "dataset_definition":
            continue
        name = field_text(child(d, "name"))
        if not IDENT.match(name) or name in RESERVED or name in KEYWORDS:
            q.skipped = f"the wildcard {{{name}}} cannot be a parameter's name (letters, digits, _; not a function)"
            return
        try:
            lo, hi = number(_text(d, "minimum")), number(_text(d, "maximum"))
            decimals = int(number(_text(d, "decimals") or 0))
        except ValueError:
            q.skipped = f"the wildcard {{{name}}} has no numeric range"
            return
        if lo > hi or max(abs(lo), abs(hi)) > 1e9 or not 0 <= decimals <= 9:
            q.skipped = f"the wildcard {{{name}}}'s range [{literal(lo)}, {literal(hi)}] with {decimals} decimals"
            return
        if "log" in _text(d, "distribution").lower():
            q.notes.append(f"{{{name}}} drawn log-uniformly (examprep draws uniformly)")
        params[name] = ({"integers": [int(-(-lo // 1)), int(hi // 1)]} if decimals == 0 else
                        {"decimals": [lo, hi], "step": float(f"1e-{decimals}")})
    if not params:
        q.skipped = "no dataset defines a wildcard"
        return
    answers = [(f, a) for f, a in _answers(el) if f >= 100]
    if not answers:
        q.skipped = "no answer formula with grade 100%"
        return
    a = answers[0][1]
    try:
        value = translate(_text(a, "text"), set(params))
        tol = number(_text(a, "tolerance") or 0)
    except (FormulaError, ValueError) as err:
        q.skipped = f"the formula: {err}"
        return
    kind = _text(a, "tolerancetype") or "1"
    if kind == "3":
        q.notes.append("a geometric tolerance (carried as a relative one)")
    if len(answers) > 1 or len(_answers(el)) > len(answers):
        q.notes.append("answer formulas after the first (only the first, graded 100%, is kept)")
    q.params = params
    q.text = text_braces(q.text, set(params))
    q.parts.append(numeric_part("result" if "answer" in params else "answer", "Your answer.", value,
                                absolute_tolerance(tol) if kind == "2" else relative_tolerance(tol),
                                points_of(_text(el, "defaultgrade") or 1, q)))


# {N:TYPE:answers} in a cloze text; inside, } # ~ / " \ are escaped with a backslash
_FIELD = re.compile(r"\{(\d*):([A-Z_]+):((?:\\.|[^\\}])*)\}")
_SPLIT_ANSWERS = re.compile(r"(?<!\\)~")
_NUMERIC = {"NUMERICAL", "NM"}
_SHORT = {"SHORTANSWER", "SA", "MW", "SHORTANSWER_C", "SAC", "MWC"}


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _cloze_answers(body: str) -> list[tuple[float, str, str]]:
    """(grade %, answer, feedback) of a field's answers."""
    out = []
    for a in _SPLIT_ANSWERS.split(body):
        grade = 0.0
        if a.startswith("="):
            grade, a = 100.0, a[1:]
        else:
            m = re.match(r"%(-?[\d.]+)%", a)
            if m:
                grade, a = float(m.group(1)), a[m.end():]
        pieces = re.split(r"(?<!\\)#", a, maxsplit=1)
        value, why = pieces[0], pieces[1] if len(pieces) > 1 else ""
        out.append((grade, value, " ".join(_unescape(why).split())))
    return out


def _cloze(q: Imported, el: Element) -> None:
    segments, pos = [], 0
    for n, m in enumerate(_FIELD.finditer(q.text)):
        label = chr(ord("a") + n) if n < 26 else f"z{n}"
        segments.append(text_braces(q.text[pos:m.start()]) + f"[({label})]")
        pos = m.end()
        weight = points_of(m.group(1) or 1, q)
        kind, answers = m.group(2), _cloze_answers(m.group(3))
        pid, prompt = f"blank_{label}", f"Blank ({label})."
        right = [i for i, (g, _, _) in enumerate(answers) if g >= 100]
        if not right:
            q.notes.append(f"blank ({label}): no answer graded 100%")
            continue
        if kind in _NUMERIC:
            try:
                value_text, _, tol_text = _unescape(answers[right[0]][1]).partition(":")
                value, tol = number(value_text), number(tol_text or 0)
            except ValueError:
                q.notes.append(f"blank ({label}): the answer {answers[right[0]][1]!r} is not a number")
                continue
            mistakes = []
            for g, raw, why in answers:
                wrong_text = _unescape(raw).partition(":")[0]
                if g >= 100 or not why or not re.fullmatch(r"\s*-?[\d.]+(e-?\d+)?\s*", wrong_text):
                    continue
                m_ = {"id": f"answer-{len(mistakes) + 1}", "value": literal(number(wrong_text)), "why": why}
                if g > 0:
                    m_["credit"] = round(g / 100, 4)
                mistakes.append(m_)
            q.parts.append(numeric_part(pid, prompt, literal(value), absolute_tolerance(tol), weight, mistakes))
        elif kind.startswith("MULTICHOICE") or kind in {"MC", "MCV", "MCH", "MCS", "MCVS", "MCHS"}:
            options = [html_text(_unescape(v)) for _, v, _ in answers]
            before = len(q.parts)
            _choice(q, options, right[0], [(w, g / 100) for g, _, w in answers], weight)
            if q.skipped:                      # one blank's options do not make the question uncarriable
                q.notes.append(f"blank ({label}): {q.skipped}")
                q.skipped = None
            elif len(q.parts) > before:
                q.parts[-1].update(id=pid, prompt=prompt)
        elif kind in _SHORT:
            q.notes.append(f"blank ({label}): text matching (marked by hand; the accepted answers are its rubric)")
            q.parts.append(written_part(prompt, _unescape(answers[right[0]][1]),
                                        [f"accept {_unescape(v)!r}" for g, v, _ in answers if g > 0], weight))
        else:
            q.notes.append(f"blank ({label}): the field type {kind} (several right options or unknown)")
    segments.append(text_braces(q.text[pos:]))
    q.text = "".join(segments)
    if not q.parts:
        q.skipped = "no embedded field examprep can carry"
        q.notes.clear()


def _text(el: Element, name: str) -> str:
    c = child(el, name)
    if c is None:
        return ""
    inner = child(c, "text")
    return ((inner.text if inner is not None else c.text) or "").strip()


READERS = {"numerical": _numerical, "multichoice": _multichoice, "truefalse": _truefalse, "shortanswer": _shortanswer,
           "essay": _essay, "calculated": _calculated, "calculatedsimple": _calculated, "cloze": _cloze}
