"""Moodle XML export: each problem becomes one question Moodle can grade by itself.

A problem with a single numeric part becomes a ``numerical`` question (its tolerance as an
absolute error, its misconceptions as 0 % answers whose feedback explains the mistake). Any other
problem becomes an embedded-answers (``cloze``) question: one NUMERICAL field per number (a grid
of fields for a vector or matrix), MULTICHOICE for choices, each part's points shared among its
fields. Math is LaTeX between \\( \\) and \\[ \\], rendered by Moodle's MathJax filter; the worked
solution is the general feedback.

Cloze syntax (Moodle docs, "Embedded Answers (Cloze) question type"):
``{WEIGHT:NUMERICAL:=VALUE:TOL#feedback~%0%WRONG:TOL#feedback}``; inside answers and feedback
the characters } # ~ / " \\ are escaped with a backslash.
"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from typing import Any

from examprep import document as d
from examprep import escape
from examprep.render import markdown
from examprep.exact import is_exact_form
from examprep.render import accepted, choices_shown, model_answer_text
from examprep.render.lms import number_text  # Moodle's numerical parser reads positional text, '.' point
from examprep.render.worked import worked_steps
from examprep.problem import Problem

_CLOZE_SPECIAL = re.compile(r'([}#~/"\\])')


def cloze_escape(text: str) -> str:
    """Plain text safe inside a cloze answer or feedback: HTML-escaped without entities that hold
    '#', then Moodle's special characters backslash-escaped."""
    return _CLOZE_SPECIAL.sub(r"\\\1", escape.html(text, quote=False))


# question_bank::fraction_options_full: the only answer grades Moodle accepts (percent)
FRACTIONS = ("100", "90", "83.33333", "80", "75", "70", "66.66667", "60", "50", "40", "33.33333", "30", "25", "20",
             "16.66667", "14.28571", "12.5", "11.11111", "10", "5", "0")


def moodle_fraction(credit: float) -> str:
    """A mistake's partial credit (0-1) as the largest grade Moodle accepts that does not exceed it."""
    return next(f for f in FRACTIONS if float(f) <= 100 * float(credit) + 1e-9)


def tolerance_of(part: Any, expected: float) -> float:
    """The part's tolerance at ``expected`` as Moodle's absolute error (0 for exact answers)."""
    if part.tolerance.rule == "exact" or part.kind == "integer":
        return 0.0
    return float(part.tolerance.bound(expected))


# ------------------------------------------------------------------------------ HTML of blocks

def _math_text(text: str) -> str:
    """HTML of a paragraph with $…$ inline LaTeX, as \\( … \\) for MathJax."""
    out, pos = [], 0
    for m in re.finditer(r"\$([^$]+)\$", text):
        out.append(escape.html(text[pos:m.start()]))
        out.append(r"\(" + escape.html(m.group(1)) + r"\)")
        pos = m.end()
    out.append(escape.html(text[pos:]))
    return "".join(out)


def block_html(b: Any) -> str:
    if isinstance(b, d.Text):
        return f"<p>{_math_text(b.text)}</p>"
    if isinstance(b, d.Math):
        return r"<p>\[" + escape.html(b.latex) + r"\]</p>"
    if isinstance(b, d.Matrix):
        vals = b.values
        if isinstance(vals, str) and not is_exact_form(vals):
            return f"<p>{escape.html(b.name)} = {escape.html(vals)}</p>"
        if isinstance(vals, list) and vals and isinstance(vals[0], list) and (b.row_labels or b.col_labels):
            head = ""
            if b.col_labels:
                head = "<tr><th></th>" + "".join(f"<th>{escape.html(c)}</th>" for c in b.col_labels) + "</tr>"
            rows = []
            for i, row in enumerate(vals):
                label = b.row_labels[i] if b.row_labels and i < len(b.row_labels) else ""
                rows.append(f"<tr><th>{escape.html(label)}</th>"
                            + "".join(rf"<td>\({escape.html(markdown.number(v))}\)</td>" for v in row) + "</tr>")
            return (rf"<p>\({escape.html(markdown.name_latex(b.name))}\) =</p>"
                    f'<table class="table table-sm" style="width:auto">{head}{"".join(rows)}</table>')
        return r"<p>\[" + escape.html(f"{markdown.name_latex(b.name)} = {markdown.latex_value(vals)}") + r"\]</p>"
    if isinstance(b, d.Table):
        head = "<tr>" + "".join(f"<th>{_math_text(h)}</th>" for h in b.header) + "</tr>"
        rows = "".join("<tr>" + "".join(f"<td>{_math_text(c) if isinstance(c, str) else markdown.number(c)}</td>" for c in row)
                       + "</tr>" for row in b.rows)
        return f'<table class="table table-sm" style="width:auto">{head}{rows}</table>'
    if isinstance(b, d.Heatmap):
        rows = []
        for i, row in enumerate(b.values):
            label = b.row_labels[i] if i < len(b.row_labels) else ""
            cells = "".join(f'<td style="background:rgb({_shade(v)},{_shade(v)},{_shade(v)});'
                            f'color:{"#fff" if (v or 0) > 0.55 else "#000"}">{float(v or 0):.2f}</td>' for v in row)
            rows.append(f"<tr><th>{escape.html(label)}</th>{cells}</tr>")
        head = "<tr><th></th>" + "".join(f"<th>{escape.html(c)}</th>" for c in b.col_labels) + "</tr>"
        return f"<p><em>{escape.html(b.title)}</em></p><table>{head}{''.join(rows)}</table>"
    raise TypeError(f"unknown block {b!r}")


def _shade(v: Any) -> int:
    w = min(max(float(v or 0), 0.0), 1.0)
    return round(255 * (1 - 0.7 * w))


def solution_html(problem: Any) -> str:
    """The worked solution and the answers, for Moodle's general feedback."""
    out = ["<h4>Worked solution</h4>"]
    for n, step in enumerate(worked_steps(problem), 1):
        out.append(f"<p><strong>Step {n}. {escape.html(step.title)}</strong></p>")
        out += [block_html(b) for b in step.blocks]
    out.append("<h4>Answers</h4><ul>")
    for i, part in enumerate(problem.parts):
        val = part.exact if isinstance(part.exact, str) else part.expected
        if isinstance(val, str) and not is_exact_form(val):
            out.append(f"<li>({Problem.label(i)}) {escape.html(part.id)}: {escape.html(val)}</li>")
            continue
        shown = markdown.number(val) if isinstance(val, str) else markdown.latex_value(val)
        out.append(rf"<li>({Problem.label(i)}) {escape.html(part.id)}: \({escape.html(shown)}\)</li>")
    out.append("</ul>")
    return "".join(out)


# ------------------------------------------------------------------------------ questions

def _flat(value: Any) -> list:
    if isinstance(value, list):
        return [x for v in value for x in _flat(v)]
    return [value]


def _numerical_field(part: Any, expected: float, wrongs: list[tuple[float, str] | tuple[float, str, float]],
                     weight: int) -> str:
    tol = tolerance_of(part, expected)
    answers = [f"={number_text(expected)}:{number_text(tol)}#{cloze_escape('Correct.')}"]
    seen = set()
    for value, why, *credit in wrongs:
        if value is None or not math.isfinite(value) or abs(value - expected) <= tol * (1 + 1e-9):
            continue
        key = round(value, 12)
        if key in seen:
            continue
        seen.add(key)
        wtol = min(tolerance_of(part, value), (abs(value - expected) - tol) / 2)    # never overlaps the right one
        grade = moodle_fraction(credit[0] if credit else 0.0)
        answers.append(f"%{grade}%{number_text(value)}:{number_text(wtol)}#{cloze_escape(why)}")
    return f"{{{weight}:NUMERICAL:{'~'.join(answers)}}}"


def _weights(problem: Any) -> tuple[list[list[int]], int]:
    """Integer cloze weights per field of each part (a part's points shared among its fields),
    scaled by the smallest factor that makes them all integers."""
    raw = []
    for part in problem.parts:
        n = 1 if part.kind in ("choice",) or not isinstance(part.expected, list) else len(_flat(part.expected))
        share = Fraction(part.points).limit_denominator(1000) / n
        raw.append([share] * n)
    scale = 1
    for row in raw:
        for w in row:
            scale = scale * w.denominator // math.gcd(scale, w.denominator)
    return [[int(w * scale) for w in row] for row in raw], scale


def _part_fields(part: Any, weights: list[int]) -> str:
    if part.kind == "choice":
        # a known mistake's option carries its feedback (and credit): Moodle's %N%option#feedback
        mistaken = {str(m.value): m for m in part.misconceptions}

        def option(c: str) -> str:
            if c == str(part.expected):
                return "=" + cloze_escape(c)
            m = mistaken.get(c)
            return (f"%{moodle_fraction(m.credit)}%{cloze_escape(c)}#{cloze_escape(m.explanation)}" if m is not None
                    else cloze_escape(c))

        opts = "~".join(option(c) for c in choices_shown(part))
        return f"{{{weights[0]}:MULTICHOICE:{opts}}}"
    expected = part.expected
    if not isinstance(expected, (list, int, float)) or isinstance(expected, bool):
        return f"{{{weights[0]}:SHORTANSWER:={cloze_escape(str(part.exact or expected))}}}"
    values = _flat(expected)
    mis = [(_flat(m.value) if isinstance(m.value, list) else [m.value], m.explanation, m.credit)
           for m in part.misconceptions]
    fields = []
    for j, v in enumerate(values):
        wrongs = []
        for vals, why, credit in mis:
            if len(vals) == len(values) and isinstance(vals[j], (int, float)) and not isinstance(vals[j], bool):
                wrongs.append((float(vals[j]), why, credit))
        fields.append(_numerical_field(part, float(v), wrongs, weights[j]))
    if not isinstance(expected, list):
        return fields[0]
    if expected and isinstance(expected[0], list):
        cols = len(expected[0])
        rows = ["<tr>" + "".join(f"<td>{fields[r * cols + c]}</td>" for c in range(cols)) + "</tr>"
                for r in range(len(expected))]
        return f'<table class="examprep-answer">{"".join(rows)}</table>'
    return "[ " + " , ".join(fields) + " ]"


def _prompt_html(part: Any, letter: str) -> str:
    return (f"<p><strong>({letter})</strong> {_math_text(part.prompt)} "
            f"<em>[{part.points:g} pt; {escape.html(accepted(part))}]</em></p>")


def _statement_html(problem: Any) -> str:
    out = [block_html(b) for b in problem.statement]
    if problem.conventions:
        conv = "; ".join(f"{k}: {v}" for k, v in problem.conventions.items())
        out.append(f"<p><small><em>Conventions.</em> {escape.html(conv)}</small></p>")
    return "".join(out)


def _text(parent: ET.Element, tag: str, value: str, fmt: str | None = None) -> ET.Element:
    el = ET.SubElement(parent, tag, {"format": fmt} if fmt else {})
    ET.SubElement(el, "text").text = value
    return el


def _essay(problem: Any, name: str) -> ET.Element:
    """A problem of written parts only as Moodle's essay question: graded by hand in Moodle, the
    model answers and rubrics in its information for graders."""
    q = ET.Element("question", {"type": "essay"})
    _text(q, "name", name)
    body = [_statement_html(problem)] + [_prompt_html(part, Problem.label(i)) for i, part in enumerate(problem.parts)]
    _text(q, "questiontext", "".join(body), "html")
    _text(q, "generalfeedback", solution_html(problem), "html")
    ET.SubElement(q, "defaultgrade").text = f"{problem.points:g}"
    ET.SubElement(q, "penalty").text = "0"
    ET.SubElement(q, "hidden").text = "0"
    ET.SubElement(q, "responseformat").text = "editor"
    ET.SubElement(q, "responserequired").text = "1"
    ET.SubElement(q, "responsefieldlines").text = str(min(max(5 * round(problem.points), 5), 40))
    ET.SubElement(q, "attachments").text = "0"
    info = "".join(f"<p><strong>({Problem.label(i)})</strong> {escape.html(model_answer_text(part))}</p>"
                   for i, part in enumerate(problem.parts))
    _text(q, "graderinfo", info, "html")
    _text(q, "responsetemplate", "", "html")
    return q


def question(problem: Any, name: str) -> ET.Element:
    """One problem as a Moodle <question> element: numerical, cloze, or essay for written parts
    only. In a cloze a written part is printed without a field (Moodle's cloze has no essay
    field): it is marked on paper or in a separate essay question."""
    if problem.parts and all(part.kind == "written" for part in problem.parts):
        return _essay(problem, name)
    single = (len(problem.parts) == 1 and problem.parts[0].kind in ("number", "integer")
              and isinstance(problem.parts[0].expected, (int, float)))
    q = ET.Element("question", {"type": "numerical" if single else "cloze"})
    _text(q, "name", name)
    if single:
        part = problem.parts[0]
        _text(q, "questiontext", _statement_html(problem) + _prompt_html(part, "a"), "html")
        _text(q, "generalfeedback", solution_html(problem), "html")
        ET.SubElement(q, "defaultgrade").text = f"{part.points:g}"
        ET.SubElement(q, "penalty").text = "0.3333333"
        ET.SubElement(q, "hidden").text = "0"
        expected = float(part.expected)
        answers = [(expected, "100", "Correct.")]
        answers += [(float(m.value), moodle_fraction(m.credit), m.explanation) for m in part.misconceptions
                    if isinstance(m.value, (int, float)) and not isinstance(m.value, bool)]
        tol = tolerance_of(part, expected)
        for value, fraction, why in answers:
            if fraction != "100" and abs(value - expected) <= tol:
                continue
            a = ET.SubElement(q, "answer", {"fraction": fraction, "format": "moodle_auto_format"})
            ET.SubElement(a, "text").text = number_text(value)
            ET.SubElement(a, "tolerance").text = number_text(
                tol if fraction == "100" else min(tolerance_of(part, value), (abs(value - expected) - tol) / 2))
            _text(a, "feedback", escape.html(why), "html")
        ET.SubElement(q, "units")      # none: every answer is a pure number
        ET.SubElement(q, "unitgradingtype").text = "0"
        ET.SubElement(q, "unitpenalty").text = "0"
        ET.SubElement(q, "showunits").text = "3"
        ET.SubElement(q, "unitsleft").text = "0"
        return q
    weights, _ = _weights(problem)
    body = [_statement_html(problem)]
    for i, part in enumerate(problem.parts):
        body.append(_prompt_html(part, Problem.label(i)))
        if part.kind != "written":
            body.append(f"<p>{_part_fields(part, weights[i])}</p>")
    _text(q, "questiontext", "".join(body), "html")
    _text(q, "generalfeedback", solution_html(problem), "html")
    ET.SubElement(q, "penalty").text = "0.3333333"
    ET.SubElement(q, "hidden").text = "0"
    return q


def _category(path: str) -> ET.Element:
    q = ET.Element("question", {"type": "category"})
    cat = ET.SubElement(q, "category")
    ET.SubElement(cat, "text").text = path
    return q


def _cat_name(text: str) -> str:
    return text.replace("/", "-").strip() or "examprep"


def sheet_xml(sheet: Any) -> str:
    """A sheet as a Moodle XML question file.

    A common sheet: one category ``examprep/<title>`` holding question q1…qN. With per-student
    variants: one category per question slot (``…/q1``) holding every student's variant of it,
    named by variant code — add a "random question" from each slot's category to a quiz.
    """
    root = ET.Element("quiz")
    base = f"$course$/top/examprep/{_cat_name(sheet.recipe.title)}"
    if not sheet.variants:
        root.append(_category(base))
        for k, p in enumerate(sheet.copies[0].problems, 1):
            origin = f"sheet {sheet.printed_id}" if getattr(sheet, "seed_secret", False) else f"seed {p.seed}"
            root.append(question(p, f"q{k} {p.title} ({p.generator}, level {p.difficulty}, {origin})"))
    else:
        slots = len(sheet.copies[0].problems)
        for k in range(slots):
            root.append(_category(f"{base}/q{k + 1}"))
            for copy in sheet.copies:
                p = copy.problems[k]
                root.append(question(p, f"q{k + 1} {p.title} (variant {copy.code})"))
    ET.indent(root, space=" ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
