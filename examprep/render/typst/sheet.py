"""The Typst source of a practice sheet: header, instructions, score table, problems with answer
boxes; with solutions, the worked steps, the answers table, figures and typical mistakes."""
from __future__ import annotations

import math
from typing import Any

from examprep import document as d
from examprep.render import accepted, choices_shown, decimal_comma, decimals, part_note, plural
from examprep.render.pdf import COPY_PAGES
from examprep.render.typst.blocks import block, heatmap, matrix_markup, number, receptive_field_figure, value_math
from examprep.render.worked import worked_steps
from examprep.render.typst.latex import latex_to_typst, prose, text, typst_string
from examprep.problem import Problem

_PREAMBLE = r"""
#set page(paper: "a4", margin: (x: 1.8cm, top: 1.6cm, bottom: 1.9cm), footer: context {
  let c = counter("copy").get().first()
  let p = here().page()
  if c > 0 {
    let start = query(label("copy-" + str(c)))
    let end = locate(label("copy-" + str(c) + "-end"))
    if p <= end.page() {
      let n = counter(page).get().first()
      let total = counter(page).at(end).first()
      set text(size: 8pt, fill: luma(40%))
      [#start.first().value #h(1fr) page #n of #total]
    }
  }
})
#set text(font: "Libertinus Serif", size: 10.5pt, lang: "en")
#show math.equation: set text(font: "New Computer Modern Math")
#set par(leading: 0.62em, spacing: 0.9em)
#let ink = luma(38%)
#let shade = rgb("#3a6ea5")
#let field(label, value) = box(width: 100%)[#label #box(width: 1fr, stroke: (bottom: 0.5pt),
  inset: (bottom: 2pt), outset: (bottom: 1pt))[#value]]
#let cell(w) = box(width: w, height: 0.8cm, stroke: 0.5pt + luma(45%))
#let cells(r, c) = {
  let br = 0.8pt + black
  table(columns: (4pt,) + c * (1.5cm,) + (4pt,), rows: r * (0.85cm,), inset: 2pt, align: center + horizon,
    stroke: (x, y) => if x == 0 { (left: br, top: if y == 0 { br }, bottom: if y == r - 1 { br }) }
      else if x == c + 1 { (right: br, top: if y == 0 { br }, bottom: if y == r - 1 { br }) },
    ..range(r).map(_ => ([], ..range(c).map(_ => box(width: 100%, height: 100%, stroke: 0.5pt + luma(45%))), [])).flatten())
}
// (in an unbreakable block: a stack whose children align to its middle or bottom would otherwise
// stretch to the height left on the page)
#let answer(label, ref, body) = block(breakable: false, stack(dir: ltr,
  align(horizon, text(size: 9pt)[Answer (#label)]), 8pt, align(horizon, body), 8pt, 1fr,
  align(bottom, text(size: 7pt, fill: ink, font: "DejaVu Sans Mono", ref))))
#let answer-wide(label, ref, body) = grid(columns: (auto, auto, 1fr), column-gutter: 8pt,
  align: (left + horizon, left + horizon, right + bottom),
  text(size: 9pt)[Answer (#label)], body, text(size: 7pt, fill: ink, font: "DejaVu Sans Mono", ref))
#let problem-head(n, title, info) = block(sticky: true, above: 1.6em, below: 0.8em, width: 100%)[
  #text(size: 12pt, weight: "bold")[Problem #n] #h(0.5em) #text(size: 12pt)[#title] #h(1fr) #text(size: 9pt, fill: ink)[#info]
  #v(-0.55em) #line(length: 100%, stroke: 0.5pt + luma(60%))
]
#let end-marker = [#v(1.2em) #align(center, text(size: 9pt, fill: ink)[— end of the sheet —])]
// a part's label, prompt and points side by side, as a grid of (1.7em, 1fr, auto) columns would
// place them; the grid lays the prompt out twice and the points three times, this once each
#let label-row(label, prompt, pts) = layout(size => {
  let w = measure(pts).width
  stack(dir: ltr, block(width: 1.7em)[*(#label)*], 4pt, block(width: size.width - 1.7em - 8pt - w, prompt), 4pt, pts)
})
#let part(label, prompt, pts, note, room, box-body, after: none) = block(breakable: false, above: 1.1em, width: 100%)[
  #label-row(label, prompt, text(size: 9pt, fill: ink)[#pts])
  #pad(left: 1.7em, top: -0.2em)[#text(size: 8.5pt, fill: ink)[#note]]
  #v(room)
  #pad(left: 1.7em, box-body)
  #after
]
#let labelled(name, rows, cols, n, cells) = {
  let top = if cols.len() > 0 { 1 } else { 0 }
  let m = calc.div-euclid(cells.len(), n)
  let last = top + m - 1
  let body = ()
  if top == 1 { body += ([], [], ..cols.map(c => text(size: 8pt, fill: ink, c)), []) }
  for i in range(m) {
    body += (text(size: 8pt, fill: ink, rows.at(i, default: "")), [], ..cells.slice(i * n, i * n + n), [])
  }
  let br = 0.7pt + black
  block(breakable: false, stack(dir: ltr, spacing: 4pt, align(horizon, [#name $=$]), align(horizon, table(
    columns: (auto, 3pt) + n * (auto,) + (3pt,), align: right + horizon,
    inset: (x, y) => if x == 1 or x == n + 2 { (x: 0pt, y: 3pt) } else { (x: 4pt, y: 3pt) },
    stroke: (x, y) => if y < top { none } else if x == 1 {
      (left: br, top: if y == top { br }, bottom: if y == last { br })
    } else if x == n + 2 { (right: br, top: if y == top { br }, bottom: if y == last { br }) },
    ..body))))
}
#show math.equation.where(block: true): set align(left)
#show math.equation.where(block: true): it => pad(left: 1.2em, it)
#let brief(label, prompt, pts, note) = block(breakable: false, above: 0.7em, width: 100%)[
  #label-row(label, [#prompt #text(size: 8.5pt, fill: ink)[(#note)]], text(size: 9pt, fill: ink)[#pts])
]
// the typical mistakes: label, value and explanation in rows, every other row shaded, as a table
// of (auto, auto, 1fr) columns would show them; a table lays each cell out two or three times
// (column widths, row height, the row), these rows once after measuring the first two columns
#let mistakes(..rows) = context {
  let rows = rows.pos()
  let w1 = calc.max(..rows.map(r => measure(r.at(0)).width)) + 8pt
  let w2 = calc.max(..rows.map(r => measure(r.at(1)).width)) + 8pt
  layout(size => for (i, r) in rows.enumerate() {
    block(above: 0pt, below: 0pt, breakable: false, width: 100%, fill: if calc.odd(i) { luma(96%) },
      stack(dir: ltr, align(horizon, box(width: w1, inset: (x: 4pt, y: 5pt), r.at(0))),
        align(horizon, box(width: w2, inset: (x: 4pt, y: 5pt), r.at(1))),
        align(horizon, box(width: size.width - w1 - w2, inset: (x: 4pt, y: 5pt), r.at(2)))))
  })
}
#let keep(body) = block(sticky: true, width: 100%, above: 0.9em, below: 0.9em, body)
#let step(title, target) = block(sticky: true, above: 0.9em, below: 0.5em)[
  *#title* #h(0.4em) #text(size: 9pt, fill: ink)[#target]]
"""


def _pts(x: float) -> str:
    return decimals(f"{x:g} pt" if x == 1 else f"{x:g} pts")


def _answer_box(part: Any) -> str:
    shape = tuple(part.shape or ())
    if part.kind == "matrix" and len(shape) == 2:
        return f"cells({shape[0]}, {shape[1]})"
    if part.kind == "vector" and len(shape) == 1:
        return f"cells(1, {shape[0]})"
    if part.kind == "choice" and part.choices:
        opts = ", ".join(f"box[○ #{typst_string(c)};]" for c in choices_shown(part))
        return f"block(width: 100%, {{ set par(leading: 0.9em); ({opts}).join(h(1.4em)) }})"
    return "cell(5cm)"




def _answer_call(part: Any) -> str:
    """The answer line's function: boxes of their own width sit in a stack, laid out once;
    a choice's full-width row of options needs the grid, which shrinks it beside the reference."""
    return "answer-wide" if part.kind == "choice" and part.choices else "answer"


RULED_PER_POINT = 3           # a written part's ruled lines: three a point, from 4 to 18


def _ruled(part: Any, ref: str) -> str:
    """A written part's answer space: ruled lines, as many as its points deserve, and its reference."""
    n = int(min(max(round(RULED_PER_POINT * float(part.points)), 4), 18))
    lines = " ".join("v(0.75cm); line(length: 100%, stroke: 0.4pt + luma(70%));" for _ in range(n))
    return (f"block(width: 100%, breakable: false, {{ {lines} align(right, text(size: 7pt, fill: ink, "
            f"font: \"DejaVu Sans Mono\", {typst_string(ref)})) }})")


def _room(part: Any) -> str:
    """Space to work, from the part's estimated minutes (the answer box comes after it)."""
    cm = min(max(0.45 * float(part.minutes), 1.0), 5.0)
    return f"{cm:.2f}cm"


def _statement(problem: Any, strict: bool) -> list[str]:
    """The statement's blocks and conventions, each sticky: a page never breaks between the
    problem's heading, its statement, its data and its first part (parts are unbreakable blocks;
    a statement taller than a page still breaks, as stickiness gives way then)."""
    out = [block(b, strict=strict) for b in problem.statement]
    if problem.conventions:
        conv = "; ".join(f"{k}: {v}" for k, v in problem.conventions.items())
        out.append(f"#text(size: 8.5pt, fill: ink)[#emph[Conventions.] {prose(conv, strict=strict)}]")
    return [f"#keep[{piece}]" for piece in out]


def _header(sheet: Any, copy: Any, solutions: bool, instructions: list[str], strict: bool) -> list[str]:
    r = sheet.recipe
    title = r.title + (" — solutions" if solutions else "")
    bits = []
    if r.minutes:
        bits.append(plural(r.minutes, "minute"))
    bits.append(plural(copy.points, "point"))
    bits.append(plural(len(copy.problems), "problem"))
    right = " · ".join(bits)
    if copy.code:
        right_box = (f"#box(stroke: 0.6pt, inset: (x: 6pt, y: 4pt), radius: 2pt)[#text(size: 8pt)[variant] "
                     f"#text(font: \"DejaVu Sans Mono\", size: 10pt, weight: \"bold\", {typst_string(copy.code)})]")
    else:
        right_box = f"#text(size: 8pt, fill: ink)[sheet #{typst_string(sheet.printed_id)};]"
    out = [f"#grid(columns: (1fr, auto), align: (left + bottom, right + bottom), row-gutter: 4pt,"
           f" [#text(size: 9pt, tracking: 0.6pt, fill: ink, upper({typst_string(r.course or 'examprep')}))],"
           f" [{right_box}],"
           f" [#text(size: 18pt, weight: \"bold\", {typst_string(title)})],"
           f" [#text(size: 9.5pt, {typst_string(right)})])",
           "#v(-0.3em)#line(length: 100%, stroke: 0.9pt)"]
    name = copy.student.name if copy.student else ""
    sid = copy.student.id if copy.student else ""
    if not solutions:
        out.append(f"#grid(columns: (1.6fr, 1fr), column-gutter: 1.2em,"
                   f" field([Name], [#{typst_string(name)};]), field([Student ID], [#{typst_string(sid)};]))")
        items = ", ".join(f"[{text(line, strict=strict)}]" for line in instructions)
        out.append(f"#block(width: 100%, fill: luma(97%), stroke: 0.5pt + luma(75%), inset: 9pt, radius: 3pt, above: 1.1em)"
                   f"[#text(weight: \"bold\")[Instructions] #v(-0.3em) #set text(size: 9.5pt)\n#list(tight: false, {items})]")
        out.append(_score_table(copy))
    else:
        who = f"{name} ({sid}) · " if copy.student else ""
        out.append(f"#text(size: 9.5pt, fill: ink)[{text(who + instructions[1], strict=strict)}]")
    return out


def _score_table(copy: Any) -> str:
    """Problem / Points / Score rows for the grader, in rows of equal columns (at most 14)."""
    n = len(copy.problems)
    labels = [str(k + 1) for k in range(n)] + ["Total"]
    points = [decimals(f"{p.points:g}") for p in copy.problems] + [decimals(f"{copy.points:g}")]
    rows = math.ceil(len(labels) / 14)
    per = math.ceil(len(labels) / rows)
    tables = []
    for r in range(rows):
        idx = list(range(r * per, min((r + 1) * per, len(labels))))
        pad = per - len(idx)
        head = [f"[*{labels[i]}*]" if labels[i] == "Total" else f"[{labels[i]}]" for i in idx]
        cells = ["[*Problem*]", *head, *["table.cell(stroke: none)[]"] * pad,
                 "[Points]", *[f"[{points[i]}]" for i in idx], *["table.cell(stroke: none)[]"] * pad,
                 "[Score]", *["[]"] * len(idx), *["table.cell(stroke: none)[]"] * pad]
        tables.append(f"#table(columns: (auto,) + ({per} * (1fr,)), rows: (auto, auto, 0.9cm), align: center + horizon,"
                      f" stroke: 0.5pt + luma(55%), inset: 4pt, {', '.join(cells)})")
    return "#v(0.4em)\n" + "\n".join(tables)


def _inline_values(blocks: list) -> bool:
    """True when a step's values are short enough to sit on the formula's line."""
    for b in blocks:
        if isinstance(b, d.Math):
            continue
        if not isinstance(b, d.Matrix):
            return False
        v = b.values
        if isinstance(v, list) and (len(v) > 4 or any(isinstance(x, list) for x in v)):
            return False
    return True


def _step_body(step: Any, strict: bool) -> list[str]:
    maths = [b for b in step.blocks if isinstance(b, d.Math)]
    values = [b for b in step.blocks if not isinstance(b, d.Math)]
    if len(maths) <= 1 and values and _inline_values(step.blocks):
        formula = f"$display({latex_to_typst(maths[0].latex, strict=strict)})$" if maths else ""
        shown = " #h(1.4em) ".join(matrix_markup(b) for b in values)
        sep = " #h(1em) #text(fill: ink)[→] #h(1em) " if formula else ""
        return [f"#pad(left: 1em)[#set text(top-edge: \"bounds\", bottom-edge: \"bounds\")\n{formula}{sep}{shown}]"]
    return [f"#pad(left: 1em)[{block(b, strict=strict)}]" for b in step.blocks]


def _after(end: bool) -> str:
    return ", after: end-marker" if end else ""


def _problem(sheet: Any, copy: Any, k: int, solutions: bool, strict: bool) -> list[str]:
    """One problem's Typst lines; the last part of a problem sheet's last problem carries the end
    marker inside its unbreakable block, so the marker never sits alone on a page of its own."""
    p = copy.problems[k]
    last = not solutions and k == len(copy.problems) - 1
    info = f"{plural(p.points, 'point')} · about {round(p.minutes)} min"
    out = [f"#problem-head({k + 1}, [#{typst_string(p.title)};], [{info}])"]
    out += _statement(p, strict)
    for i, part in enumerate(p.parts):
        note = part_note(part, listed=solutions)
        prompt = f"[{prose(part.prompt, strict=strict)}]"
        if solutions:
            out.append(f"#brief({typst_string(Problem.label(i))}, {prompt}, [{_pts(part.points)}], [#{typst_string(note)};])")
        elif part.kind == "written":
            ref = f"q{k + 1}.{part.id}"
            out.append(f"#part({typst_string(Problem.label(i))}, {prompt}, [{_pts(part.points)}], [#{typst_string(note)};], "
                       f"0cm, {_ruled(part, ref)}{_after(last and i == len(p.parts) - 1)})")
        else:
            ref = f"q{k + 1}.{part.id}"
            out.append(f"#part({typst_string(Problem.label(i))}, {prompt}, [{_pts(part.points)}], [#{typst_string(note)};], "
                       f"{_room(part)}, {_answer_call(part)}({typst_string(Problem.label(i))}, "
                       f"{typst_string(ref)}, {_answer_box(part)})"
                       f"{_after(last and i == len(p.parts) - 1)})")
    if solutions:
        out += _solution(p, copy.extras.get(k, []), strict)
    return out


def _solution(p: Any, extras: list, strict: bool) -> list[str]:
    letters = {part.id: Problem.label(i) for i, part in enumerate(p.parts)}
    out = ["#block(sticky: true, above: 1.2em)[#text(weight: \"bold\", fill: shade)[Worked solution]]"]
    for n, step in enumerate(worked_steps(p), 1):
        target = f"→ ({letters[step.part]})" if step.part in letters else ""
        out.append(f"#step([Step {n}. {prose(step.title, strict=strict)}], [{target}])")
        out += _step_body(step, strict)
    # a table.header repeats on each page the table spans, and Typst never leaves it (nor, through
    # the sticky title, the "Answers" title) alone at the bottom of a page
    cells = ["table.header([*Part*], [*Answer*], [*Accepted*], [*Points*])"]
    for i, part in enumerate(p.parts):
        shown = f"${value_math(part.expected)}$" if part.kind != "written" else ""
        if part.kind == "written":
            shown = "the model answer and rubric above"      # the worked solution shows them, once
        elif isinstance(part.exact, str) and part.exact:
            shown = f"${number(part.exact)}$" + (f" $≈ {value_math(part.expected)}$"
                                                   if isinstance(part.expected, (int, float)) else "")
        elif isinstance(part.exact, list):
            shown = f"${value_math(part.exact)}$"
        cells += [f"[({Problem.label(i)}) #{typst_string(part.id)};]", f"[{shown}]",
                  f"[#{typst_string(accepted(part))};]", f"[{decimals(f'{part.points:g}')}]"]
    out.append("#block(sticky: true, above: 1.1em)[#text(weight: \"bold\", fill: shade)[Answers]]")
    out.append("#table(columns: (auto, 1fr, auto, auto), align: (left + horizon, left + horizon, left + horizon,"
               " center + horizon), stroke: 0.4pt + luma(65%), inset: (x: 5pt, y: 6pt),"
               f" fill: (x, y) => if y == 0 {{ luma(93%) }}, {', '.join(cells)})")
    for fig in extras:
        if isinstance(fig, d.Heatmap):
            out.append(heatmap(fig.values, fig.row_labels, fig.col_labels, fig.title))
        elif isinstance(fig, d.ReceptiveFieldFigure):
            out.append(receptive_field_figure(fig))
    mistakes = []
    for i, part in enumerate(p.parts):
        for m in part.misconceptions:
            mistakes.append(f"([({Problem.label(i)})], [${value_math(m.value)}$], "
                            f"[{prose(m.explanation, strict=strict)}])")
    if mistakes:
        out.append("#block(sticky: true, above: 1.1em)[#text(weight: \"bold\", fill: shade)[Typical mistakes]]")
        out.append(f"#text(size: 9pt, mistakes({', '.join(mistakes)}))")
    return out


def sheet_source(sheet: Any, *, solutions: bool, strict: bool = False, copies: list | None = None) -> str:
    """The Typst source of a sheet (``examprep.sheets.Sheet``): one copy per student or a single
    copy, each starting on an odd page (duplex printing) with its own page numbers.

    ``copies``: only these copies of the sheet (a chunk of a long run of variants).
    Problems: header with course, title, name and student-id fields (printed for a variant),
    instructions with the tolerance rule, a score table, then each problem with its parts, points,
    room to work and an answer box shaped like the answer. Solutions: the same problems with the
    worked steps, an answers table, figures and the typical mistakes. With the recipe's
    ``decimal_comma``, numbers are printed with decimal commas (0,25), as its answers are written.
    """
    with decimal_comma(sheet.recipe.decimal_comma):      # numbers as the sheet's answers are written
        return _sheet_source(sheet, solutions, strict, copies)


def _sheet_source(sheet: Any, solutions: bool, strict: bool, copies: list | None) -> str:
    r = sheet.recipe
    lines = [f"#set document(title: {typst_string(r.title + (' — solutions' if solutions else ''))}, "
             f"author: {typst_string(r.course or 'examprep')}, date: none)", _PREAMBLE]
    guide = sheet.instructions()
    for c, copy in enumerate(sheet.copies if copies is None else copies):
        if c:
            lines.append("#pagebreak(to: \"odd\")")
        if copy.student:
            foot = f"{r.title} · {copy.student.name + ' · ' if copy.student.name else ''}{copy.student.id} · variant {copy.code}"
        else:
            foot = f"{r.title} · {sheet.printed_id}"
        if solutions:
            foot += " · solutions"
        # the footer finds its copy's two labels by the copy counter (a filler page between copies
        # is past the copy's end): querying every copy's markers on each page grew with the class
        lines.append(f"#counter(page).update(1)\n#counter(\"copy\").step()\n"
                     f"#metadata({typst_string(foot)}) <copy-{c + 1}>")
        lines += _header(sheet, copy, solutions, guide, strict)
        for k in range(len(copy.problems)):
            lines += _problem(sheet, copy, k, solutions, strict)
        # the copy's end, and its page count, which the PDF compile reads back (render.pdf.compile_copies)
        lines.append(f"#metadata(none) <copy-{c + 1}-end>\n"
                     f"#context [#metadata(counter(page).get().first()) <{COPY_PAGES}>]")
    # an even number of pages, as each joined chunk has: printed double-sided, the next file or
    # the next run of this one never starts on the back of the last page
    lines.append('#pagebreak(to: "odd", weak: true)')
    return "\n\n".join(lines) + "\n"
