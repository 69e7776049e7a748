"""Blackboard "Upload Questions" files (Tests, Surveys and Pools → Upload Questions; Ultra: Reuse
questions → Upload questions).

Blackboard's documented rules: a tab-delimited text file, one question per row, the first field
the question type, no header row, no blank lines, at most 250 rows per file (Ultra's limit;
Original's is 500), answers words in English. A problem's scalar answers are ``NUM`` rows
(question text, answer, tolerance: examprep's absolute bound at that answer), choices ``MC``
rows (at most 20 answers, exactly one "correct"), exact expressions ``FIB`` rows (the canonical
form), written parts ``ESS`` rows whose example answer is the model answer with its rubric.
Blackboard has no text-only row, so the first row of each problem carries its statement (the
"text stem") and the rows after it name the problem they belong to. Math is plain text (the
LaTeX without dollars); a field never holds a tab or a line break. A sheet longer than 250 rows
is split into numbered files; with per-student variants each student gets a file.
"""
from __future__ import annotations

import re
from typing import Any

from examprep import document as d
from examprep import escape
from examprep.fileio import safe_name
from examprep.render import accepted, choices_shown, markdown, model_answer_text
from examprep.render.lms import entries, is_numeric, number_text, part_letter, plain

MAX_ROWS = 250
MAX_CHOICES = 20


def field(text: str) -> str:
    """One field: no tab, no line break, no runs of spaces."""
    return re.sub(r"\s+", " ", text).strip()


def _value_text(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_value_text(x) for x in v) + "]"
    return markdown.number(v) if isinstance(v, (int, float)) else str(v)


def block_text(b: Any) -> str:
    if isinstance(b, d.Text):
        return plain(b.text)
    if isinstance(b, d.Math):
        return plain(f"${b.latex}$")
    if isinstance(b, d.Matrix):
        return f"{b.name} = {_value_text(b.values)}."
    if isinstance(b, d.Table):
        rows = [" | ".join(plain(str(h)) for h in b.header)]
        rows += [" | ".join(plain(c) if isinstance(c, str) else markdown.number(c) for c in r) for r in b.rows]
        return "Table: " + "; ".join(rows) + "."
    if isinstance(b, d.Heatmap):
        return f"{b.title}: " + "; ".join(
            f"{b.row_labels[i] if i < len(b.row_labels) else ''}: " + ", ".join(f"{float(v or 0):.2f}" for v in row)
            for i, row in enumerate(b.values)) + "."
    return getattr(b, "title", "") or ""


def problem_rows(p: Any, number: int, warnings: list[str], where: str = "") -> list[list[str]]:
    stem = " ".join(t for t in (block_text(b) for b in p.statement) if t)
    if p.conventions:
        stem += " Conventions: " + "; ".join(f"{k}: {v}" for k, v in p.conventions.items()) + "."
    rows: list[list[str]] = []
    for i, part in enumerate(p.parts):
        letter = part_letter(i)
        head = f"q{number} {p.title}: {stem} " if not rows else f"q{number} (continued) "
        text = f"{head}({letter}) {plain(part.prompt)} [{part.points:g} pt; {accepted(part)}]"
        if part.kind == "written":
            rows.append(_html_fields(["ESS", text, model_answer_text(part)]))
        elif part.kind == "choice":
            options = choices_shown(part)
            if len(options) > MAX_CHOICES:
                warnings.append(f"blackboard: {where}q{number} part ({part.id}) has {len(options)} choices; "
                                f"Blackboard takes at most {MAX_CHOICES}; it is left out")
                continue
            row = ["MC", text]
            for o in options:
                row += [o, "correct" if o == str(part.expected) else "incorrect"]
            rows.append(_html_fields(row))
        elif is_numeric(part):
            ents = entries(part)
            for e in ents:
                share = f" ({part.points / len(ents):.3g} pt)" if e.index else ""
                entry = f" Entry {e.label()}{share}." if e.index else ""
                rows.append(_html_fields(["NUM", text + entry, number_text(e.expected), number_text(e.bound)]))
                text = f"q{number} (continued) ({letter}) {plain(part.prompt)}"
        else:
            rows.append(_html_fields(["FIB", text, str(part.exact or part.expected)]))
    return [[field(f) for f in row] for row in rows]


def _html_fields(row: list[str]) -> list[str]:
    """Blackboard shows a question's text, its choices and an essay's example answer as HTML: they
    are escaped (a question's "<script>" is shown, never run). Numbers and a fill-in-the-blank's
    answer, which Blackboard compares with what a student types, are left as they are."""
    shown = {"MC": {1, *range(2, len(row), 2)}, "ESS": {1, 2}}.get(row[0], {1})
    return [escape.html(f) if i in shown else f for i, f in enumerate(row)]


def _file(rows: list[list[str]]) -> bytes:
    return "".join("\t".join(r) + "\n" for r in rows).encode("utf-8")


def _chunks(name: str, rows: list[list[str]]) -> dict[str, bytes]:
    if len(rows) <= MAX_ROWS:
        return {f"{name}.txt": _file(rows)}
    return {f"{name}-{k // MAX_ROWS + 1}.txt": _file(rows[k:k + MAX_ROWS]) for k in range(0, len(rows), MAX_ROWS)}


def files(sheet: Any) -> tuple[dict[str, bytes], list[str]]:
    """The sheet's upload files (``blackboard.txt``, or ``blackboard-1.txt``… past 250 rows; with
    variants ``blackboard/<student id>.txt``), and the warnings of parts left out."""
    warnings: list[str] = []
    out: dict[str, bytes] = {}
    if not sheet.variants:
        rows = [r for k, p in enumerate(sheet.copies[0].problems, 1) for r in problem_rows(p, k, warnings)]
        out |= _chunks("blackboard", rows)
    else:
        for c in sheet.copies:
            rows = [r for k, p in enumerate(c.problems, 1)
                    for r in problem_rows(p, k, warnings, f"variant {c.code} ")]
            out |= _chunks(f"blackboard/{safe_name(c.student.id)}", rows)
    return out, list(dict.fromkeys(warnings))
