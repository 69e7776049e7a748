"""Markdown rendering with LaTeX math ($…$ inline, $$…$$ display): blocks and problems (for `generate
--markdown`, reports and Moodle) and whole practice sheets (problems.md, solutions.md)."""
from __future__ import annotations

import math
import re
from typing import Any

from examprep import document as d
from examprep.document import name_latex
from examprep.escape import markdown as esc
from examprep.escape import markdown_cell as cell
from examprep.escape import markdown_math as math_esc
from examprep.escape import markdown_text as prose
from examprep.exact import is_exact_form, to_latex
from examprep.render import (accepted, answer_form, decimal_comma, decimals, part_note, plural, prose_decimals,
                             prose_symbols, receptive_field_rows)
from examprep.render.worked import worked_steps
from examprep.values import latex_number, snap
from examprep.problem import Problem


def number(x: Any, digits: int = 4) -> str:
    """A value as LaTeX, as the PDF prints it: integers plainly, floats to ``digits`` significant
    figures (4.54 \times 10^{-5}, not 4.54e-05), float noise as 0, ±∞ (None: a masked score, −∞),
    exact strings typeset."""
    if isinstance(x, str):
        return to_latex(x)
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int):
        return str(x)
    if x is None:
        return r"-\infty"
    f = float(x)
    if math.isinf(f):
        return r"-\infty" if f < 0 else r"\infty"
    if math.isnan(f):
        return r"\text{undefined}"
    return decimals(latex_number(f, digits), MATH_COMMA)


MATH_COMMA = "{,}"      # a decimal comma in LaTeX math: braced, so not spaced as punctuation


def latex_value(values: Any, digits: int = 4) -> str:
    """A scalar, vector or matrix as LaTeX (a bmatrix); float noise relative to the largest entry
    shows as 0 (values.snap)."""
    values = snap(values)
    if isinstance(values, list) and values and isinstance(values[0], list):
        rows = [" & ".join(number(v, digits) for v in row) for row in values]
        return r"\begin{bmatrix} " + r" \\ ".join(rows) + r" \end{bmatrix}"
    if isinstance(values, list):
        return r"\begin{bmatrix} " + " & ".join(number(v, digits) for v in values) + r" \end{bmatrix}"
    return number(values, digits)


def text(value: str) -> str:
    """A problem's own prose (a statement, prompt, convention, step title or mistake) as Markdown: the
    symbols it types (d_k, W_hn: examprep.render.prose_symbols) as $…$ math beside its own, numbers
    with the sheet's decimal sign, the rest escaped (examprep.escape.markdown_text)."""
    return prose(prose_decimals(prose_symbols(value), MATH_COMMA))


def text_cell(value: str) -> str:
    """text() for a table cell: the prose as escape.markdown_cell makes it, its math kept."""
    pieces = re.split(r"(\$[^$]+\$)", prose_decimals(prose_symbols(value), MATH_COMMA))
    return "".join(f"${math_esc(p[1:-1])}$" if len(p) > 1 and p[0] == p[-1] == "$" else cell(p) for p in pieces)


def block(b: Any) -> str:
    if isinstance(b, d.Text):
        return text(b.text)
    if isinstance(b, d.Math):
        return f"$$\n{math_esc(decimals(b.latex, MATH_COMMA))}\n$$"
    if isinstance(b, d.Matrix):
        if isinstance(b.values, list) and b.values and isinstance(b.values[0], list) and (b.row_labels or b.col_labels):
            head = ["", *(b.col_labels or [""] * len(b.values[0]))]
            lines = [f"**{esc(b.name)}**", "", "| " + " | ".join(map(cell, head)) + " |", "|" + "---|" * len(head)]
            for label, row in zip(b.row_labels or [""] * len(b.values), snap(b.values)):
                lines.append("| " + " | ".join([cell(label), *(f"${math_esc(number(v))}$" for v in row)]) + " |")
            return "\n".join(lines)
        return f"$$\n{math_esc(f'{name_latex(b.name)} = {latex_value(b.values)}')}\n$$"
    if isinstance(b, d.Table):
        lines = ["| " + " | ".join(map(text_cell, b.header)) + " |", "|" + "---|" * len(b.header)]
        lines += ["| " + " | ".join(text_cell(c) if isinstance(c, str) else number(c) for c in row) + " |" for row in b.rows]
        return "\n".join(lines)
    if isinstance(b, d.Heatmap):
        head = ["", *b.col_labels]
        lines = [f"**{esc(b.title)}**", "", "| " + " | ".join(map(cell, head)) + " |", "|" + "---|" * len(head)]
        for label, row in zip(b.row_labels or [""] * len(b.values), b.values):
            lines.append("| " + " | ".join([cell(label), *(decimals(f"{float(v):.2f}") for v in row)]) + " |")
        return "\n".join(lines)
    raise TypeError(f"unknown block {b!r}")


def problem(p: Any, *, solution: bool = False, number_: int | None = None, answers: bool = True) -> str:
    """One Problem as Markdown: statement, lettered parts with points, and optionally the worked
    solution and the answers."""
    head = f"{number_}. " if number_ is not None else ""
    out = [f"## {head}{esc(p.title)}", "",
           f"*{p.generator} · level {p.difficulty} · seed {p.seed}"
           + (" · calculator-free" if p.calculator_free else "") + f" · {plural(p.points, 'point')}*", ""]
    for b in p.statement:
        out += [block(b), ""]
    if p.conventions:
        out += ["Conventions: " + text("; ".join(f"{k}: {v}" for k, v in p.conventions.items())) + ".", ""]
    for i, part in enumerate(p.parts):
        how = part.form() if part.kind == "written" else f"{part.form()}; {accepted(part)}"
        out.append(f"**({Problem.label(i)})** {text(part.prompt)} *[{part.points:g} pt; {how}]*")
        out.append("")
    if solution:
        out += ["### Worked solution", ""]
        for n, step in enumerate(worked_steps(p), 1):
            out += [f"**Step {n}. {text(step.title)}**" + (f" (part {esc(step.part)})" if step.part else ""), ""]
            for b in step.blocks:
                out += [block(b), ""]
        if answers:
            out += ["### Answers", ""]
            for i, part in enumerate(p.parts):
                val = part.exact if isinstance(part.exact, str) else part.expected
                shown = latex_value(val) if not isinstance(val, str) else number(val)
                out.append(f"- **({Problem.label(i)}) {part.id}**: ${shown}$")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


# ------------------------------------------------------------------------------ sheets

def _md_value(v: Any) -> str:
    """A value as Markdown: LaTeX math, or plain text for words (a choice)."""
    if isinstance(v, str) and not is_exact_form(v):
        return cell(v)
    return f"${latex_value(v)}$"


def _md_answer(part: Any) -> str:
    if part.kind == "written":          # the worked solution shows the model answer and rubric, once
        return "the model answer and rubric above"
    if isinstance(part.exact, str) and part.exact:
        approx = f" \\approx {latex_value(part.expected)}" if isinstance(part.expected, (int, float)) else ""
        return f"${number(part.exact)}{approx}$"
    if isinstance(part.exact, list):
        return f"${latex_value(part.exact)}$"
    return _md_value(part.expected)


def _md_block(b: Any) -> str:
    if isinstance(b, d.Matrix) and isinstance(b.values, str) and not is_exact_form(b.values):
        return f"{esc(b.name)} = {esc(b.values)}"          # words, not math
    return block(b)


def _md_figure(fig: Any) -> list[str]:
    if isinstance(fig, d.Heatmap):
        return [block(fig), ""]
    lines = ["**Receptive field of the middle output** (units it depends on, top layer first):", ""]
    lines += [f"- {row}" for row in receptive_field_rows(fig)]
    lines += ["", f"Span at the input: {fig.receptive_field} positions.", ""]
    return lines


def sheet_markdown(sheet: Any, *, solutions: bool) -> str:
    """The sheet as Markdown with LaTeX math: the same content as the PDF (header, instructions,
    score table, problems; with ``solutions`` the worked steps, answers and typical mistakes);
    numbers with decimal commas for a recipe with ``decimal_comma``, as its answers are written."""
    with decimal_comma(sheet.recipe.decimal_comma):
        return _sheet_markdown(sheet, solutions)


def _sheet_markdown(sheet: Any, solutions: bool) -> str:
    r = sheet.recipe
    guide = sheet.instructions()
    out: list[str] = []
    for c, copy in enumerate(sheet.copies):
        if c:
            out += ["", "---", ""]
        out += [f"# {esc(r.title)}{' — solutions' if solutions else ''}", ""]
        bits = [b for b in (esc(r.course), plural(r.minutes, "minute") if r.minutes else "", plural(copy.points, "point"),
                            plural(len(copy.problems), "problem")) if b]
        bits.append(f"variant {copy.code}" if copy.code else f"sheet {sheet.printed_id}")
        out += [" · ".join(bits), ""]
        if copy.student:
            out += [f"**Name:** {esc(copy.student.name) or '—'} · **Student ID:** {esc(copy.student.id)}", ""]
        elif not solutions:
            out += ["**Name:** ______________________ · **Student ID:** ______________", ""]
        if solutions:
            out += [prose_decimals(guide[1], MATH_COMMA), ""]
        else:
            out += ["## Instructions", ""] + [f"- {prose_decimals(line, MATH_COMMA)}" for line in guide] + [""]
            n = len(copy.problems)
            out += ["| Problem | " + " | ".join(str(k + 1) for k in range(n)) + " | Total |",
                    "|---|" + "---|" * (n + 1),
                    "| Points | " + " | ".join(decimals(f"{p.points:g}") for p in copy.problems)
                    + f" | {decimals(f'{copy.points:g}')} |",
                    "| Score |" + " |" * (n + 1), ""]
        for k, p in enumerate(copy.problems):
            out += [f"## Problem {k + 1} — {esc(p.title)}", "", f"*{plural(p.points, 'point')} · about {round(p.minutes)} min*",
                    ""]
            for b in p.statement:
                out += [_md_block(b), ""]
            if p.conventions:
                out += ["*Conventions:* " + text("; ".join(f"{key}: {v}" for key, v in p.conventions.items())) + ".", ""]
            for i, part in enumerate(p.parts):
                note = (part_note(part) if part.kind in ("choice", "written")
                        else decimals(f"{answer_form(part)} · {part.tolerance.describe()}"))
                out += [f"**({Problem.label(i)})** {text(part.prompt)} "
                        f"*[{decimals(f'{part.points:g}')} pt · {note} · answer `q{k + 1}.{part.id}`]*", ""]
            if not solutions:
                continue
            letters = {part.id: Problem.label(i) for i, part in enumerate(p.parts)}
            out += ["### Worked solution", ""]
            for n, st in enumerate(worked_steps(p), 1):
                target = f" → ({letters[st.part]})" if st.part in letters else ""
                out += [f"**Step {n}. {text(st.title)}**{target}", ""]
                for b in st.blocks:
                    out += [_md_block(b), ""]
            out += ["### Answers", "", "| Part | Answer | Accepted | Points |", "|---|---|---|---|"]
            for i, part in enumerate(p.parts):
                out.append(f"| ({Problem.label(i)}) {cell(part.id)} | {_md_answer(part)} | {accepted(part)} | "
                           f"{decimals(f'{part.points:g}')} |")
            out.append("")
            for fig in copy.extras.get(k, []):
                out += _md_figure(fig)
            mistakes = [f"- ({Problem.label(i)}) {_md_value(m.value)} — {text(m.explanation)}"
                        for i, part in enumerate(p.parts) for m in part.misconceptions]
            if mistakes:
                out += ["### Typical mistakes", ""] + mistakes + [""]
        if not solutions:
            out += ["*— end of the sheet —*", ""]
    return "\n".join(out).rstrip() + "\n"
