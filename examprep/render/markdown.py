"""Markdown rendering with LaTeX math ($…$ inline, $$…$$ display), for reports, Moodle and PDF."""
from __future__ import annotations

import re
from typing import Any

from examprep import document as d
from examprep.exact import to_latex
from examprep.render import plural


def number(x: Any, digits: int = 4) -> str:
    if isinstance(x, str):
        return to_latex(x)
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int):
        return str(x)
    if x is None:
        return r"-\infty"
    f = float(x)
    if f == int(f) and abs(f) < 1e15:
        return str(int(f))
    return f"{f:.{digits}g}"


def latex_value(values: Any, digits: int = 4) -> str:
    if isinstance(values, list) and values and isinstance(values[0], list):
        rows = [" & ".join(number(v, digits) for v in row) for row in values]
        return r"\begin{bmatrix} " + r" \\ ".join(rows) + r" \end{bmatrix}"
    if isinstance(values, list):
        return r"\begin{bmatrix} " + " & ".join(number(v, digits) for v in values) + r" \end{bmatrix}"
    return number(values, digits)


_NAMES = {"α": r"\alpha", "α (exact)": r"\alpha"}


_SYMBOL = re.compile(r"([A-Za-z])(?:_([A-Za-z0-9]{1,2}))?('*)")


def _name(name: str) -> str:
    """A value's name as LaTeX: a symbol with a short subscript as a subscript (W_1 → W_{1},
    W_ih → W_{ih}, as the PDF prints it; once ``\\mathrm{W\\_1}``, which MathJax shows as a literal
    "W_1"), a list of symbols each so, other names as upright words (grad_weight)."""
    if name in _NAMES:
        return _NAMES[name]
    if name.startswith("\\"):
        return name
    symbols = [_SYMBOL.fullmatch(s) for s in name.split(", ")]
    if all(symbols):
        return ", ".join(f"{m.group(1)}{'_{' + m.group(2) + '}' if m.group(2) else ''}{m.group(3)}" for m in symbols)
    return name if len(name) <= 2 else r"\mathrm{" + name.replace("_", r"\_") + "}"


def block(b: Any) -> str:
    if isinstance(b, d.Text):
        return b.text
    if isinstance(b, d.Math):
        return f"$$\n{b.latex}\n$$"
    if isinstance(b, d.Matrix):
        if isinstance(b.values, list) and b.values and isinstance(b.values[0], list) and (b.row_labels or b.col_labels):
            head = ["", *(b.col_labels or [""] * len(b.values[0]))]
            lines = [f"**{b.name}**", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            for label, row in zip(b.row_labels or [""] * len(b.values), b.values):
                lines.append("| " + " | ".join([label, *(f"${number(v)}$" for v in row)]) + " |")
            return "\n".join(lines)
        return f"$$\n{_name(b.name)} = {latex_value(b.values)}\n$$"
    if isinstance(b, d.Table):
        lines = ["| " + " | ".join(b.header) + " |", "|" + "---|" * len(b.header)]
        lines += ["| " + " | ".join(c if isinstance(c, str) else number(c) for c in row) + " |" for row in b.rows]
        return "\n".join(lines)
    if isinstance(b, d.Heatmap):
        head = ["", *b.col_labels]
        lines = [f"**{b.title}**", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for label, row in zip(b.row_labels or [""] * len(b.values), b.values):
            lines.append("| " + " | ".join([label, *(f"{float(v):.2f}" for v in row)]) + " |")
        return "\n".join(lines)
    raise TypeError(f"unknown block {b!r}")


def problem(p: Any, *, solution: bool = False, number_: int | None = None, answers: bool = True) -> str:
    """One Problem as Markdown: statement, lettered parts with points, and optionally the worked
    solution and the answers."""
    head = f"{number_}. " if number_ is not None else ""
    out = [f"## {head}{p.title}", "",
           f"*{p.generator} · level {p.difficulty} · seed {p.seed}"
           + (" · calculator-free" if p.calculator_free else "") + f" · {plural(p.points, 'point')}*", ""]
    for b in p.statement:
        out += [block(b), ""]
    if p.conventions:
        out += ["Conventions: " + "; ".join(f"{k}: {v}" for k, v in p.conventions.items()) + ".", ""]
    for i, part in enumerate(p.parts):
        out.append(f"**({chr(97 + i)})** {part.prompt} *[{part.points:g} pt; {part.form()}; "
                   f"{part.tolerance.describe()}]*")
        out.append("")
    if solution:
        out += ["### Worked solution", ""]
        for n, step in enumerate(p.solution, 1):
            out += [f"**Step {n}. {step.title}**" + (f" (part {step.part})" if step.part else ""), ""]
            for b in step.blocks:
                out += [block(b), ""]
        if answers:
            out += ["### Answers", ""]
            for i, part in enumerate(p.parts):
                val = part.exact if isinstance(part.exact, str) else part.expected
                shown = latex_value(val) if not isinstance(val, str) else number(val)
                out.append(f"- **({chr(97 + i)}) {part.id}**: ${shown}$")
            out.append("")
    return "\n".join(out).rstrip() + "\n"
