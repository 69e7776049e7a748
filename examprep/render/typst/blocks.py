"""The document model as Typst markup: values, named matrices, tables, heatmaps and figures."""
from __future__ import annotations

import math
import re
from typing import Any, Iterable

from examprep import document as d
from examprep.exact import is_exact_form, to_latex
from examprep.render import decimals
from examprep.values import rounded, snap
from examprep.render.typst.latex import latex_to_typst, math_display, math_inline, prose, typst_string

_SHADE = 'rgb("#3a6ea5")'
MATH_COMMA = '#","'      # a decimal comma in Typst math: text, so neither a list separator nor spaced as one


def number(x: Any, digits: int = 4) -> str:
    """A value as Typst math: integers plainly, floats to ``digits`` significant figures, exact
    strings ("e^2/(1 + e^2)", "ln 2") typeset, words (a choice) upright, None (a masked score)
    as −∞."""
    if isinstance(x, str):
        return latex_to_typst(to_latex(x)) if is_exact_form(x) else typst_string(x)
    if isinstance(x, bool):
        return typst_string(str(x).lower())
    if x is None:
        return "-∞"
    f = float(x)
    if math.isinf(f):
        return "-∞" if f < 0 else "∞"
    if math.isnan(f):
        return typst_string("undefined")
    s = rounded(snap(f), digits)      # float noise of an exact 0 (a cancelled gradient) shows as 0
    if "e" in s:
        mant, exp = s.split("e")
        s = f"{mant} times 10^({int(exp)})".replace("times", "×")
    return decimals(s, MATH_COMMA)


def value_math(values: Any, digits: int = 4) -> str:
    """A scalar, vector (a bracketed row) or matrix as Typst math, at full size even inline; float
    noise relative to the largest entry shows as 0 (values.snap)."""
    values = snap(values)
    if isinstance(values, list) and values and isinstance(values[0], list):
        rows = "; ".join(", ".join(number(v, digits) for v in row) for row in values)
        return f'display(mat(delim: "[", column-gap: #0.9em, {rows}))'
    if isinstance(values, list):
        if not values:
            return "[ ]"
        return 'display(mat(delim: "[", column-gap: #0.9em, ' + ", ".join(number(v, digits) for v in values) + "))"
    return number(values, digits)


_GREEK_NAMES = {"α": "α", "α (exact)": "α"}


def name_markup(name: str) -> str:
    """A value's name as markup: math for symbols (W_ih, α, \\hat y), plain text for words
    (grad_weight, pad_before)."""
    if name in _GREEK_NAMES:
        return f"${_GREEK_NAMES[name]}$" + (f"#{typst_string(name[1:])};" if name != "α" else "")
    if name.startswith("\\"):
        return math_inline(name)
    m = re.fullmatch(r"([A-Za-z])(?:_([A-Za-z0-9]{1,2}))?('*)", name)
    if m:
        base, sub, primes = m.groups()
        subs = f"_({' '.join(sub)})" if sub else ""
        return f"${base}{subs}{primes}$"
    return f"#{typst_string(name)};"


def block(b: Any, *, strict: bool = False) -> str:
    """One document-model block as Typst markup."""
    if isinstance(b, d.Text):
        return prose(b.text, strict=strict)
    if isinstance(b, d.Math):
        return math_display(b.latex, strict=strict)
    if isinstance(b, d.Matrix):
        return matrix_markup(b)
    if isinstance(b, d.Table):
        cells = [f"[#strong[{prose(h, strict=strict)}]]" for h in b.header]
        for row in b.rows:
            cells += [f"[{prose(c, strict=strict) if isinstance(c, str) else '$' + number(c) + '$'}]" for c in row]
        return (f"#align(center, table(columns: {len(b.header)}, align: center + horizon, stroke: 0.4pt + luma(140), "
                f"inset: (x: 6pt, y: 4pt), fill: (x, y) => if y == 0 {{ luma(235) }}, {', '.join(cells)}))")
    if isinstance(b, d.Heatmap):
        return heatmap(b.values, b.row_labels, b.col_labels, b.title)
    raise TypeError(f"unknown block {b!r}")


def matrix_markup(b: d.Matrix) -> str:
    vals = b.values
    is_matrix = isinstance(vals, list) and vals and isinstance(vals[0], list)
    if is_matrix and (b.row_labels or b.col_labels):
        return f"#labelled([{name_markup(b.name)}], {_labelled_args(vals, b.row_labels, b.col_labels)})"
    if isinstance(vals, list) and vals and isinstance(vals[0], str) and not is_matrix:
        return f"{name_markup(b.name)} $=$ " + ", ".join(f"${number(v)}$" for v in vals)
    return f"{name_markup(b.name)} $= {value_math(vals)}$"


def _labelled_args(vals: list, row_labels: list | None, col_labels: list | None) -> str:
    rows = row_labels or []
    cols = col_labels or []
    body = ", ".join(f"[${number(v)}$]" for row in vals for v in row)
    return f"{_array(typst_string(r) for r in rows)}, {_array(typst_string(c) for c in cols)}, {len(vals[0])}, ({body},)"


def _array(items: Iterable[str]) -> str:
    """A Typst array literal (a one-element array needs its trailing comma; an empty one is ())."""
    items = list(items)
    return f"({', '.join(items)},)" if items else "()"


def heatmap(values: list[list[float]], row_labels: Iterable[str] = (), col_labels: Iterable[str] = (),
            title: str = "") -> str:
    """Weights in [0, 1] as a grid of shaded cells, each with its value (darker = larger)."""
    rows, cols = list(row_labels), list(col_labels)
    ncol = len(values[0]) if values else 0
    cells = []
    if cols:
        cells += (["[]"] if rows else []) + [f"[#text(size: 8pt, {typst_string(c)})]" for c in cols]
    for i, row in enumerate(values):
        if rows:
            cells.append(f"[#text(size: 8pt, {typst_string(rows[i] if i < len(rows) else '')})]")
        for v in row:
            w = 0.0 if v is None else min(max(float(v), 0.0), 1.0)
            shade = round(100 - 70 * w)
            ink = "white" if w > 0.55 else "black"
            cells.append(f"table.cell(fill: luma({shade}%))[#text(fill: {ink}, size: 8pt)[{decimals(f'{float(w):.2f}')}]]")
    head = f"#text(size: 8.5pt, style: \"italic\", {typst_string(title)}) \\ " if title else ""
    return (f"#block(breakable: false)[{head}#table(columns: {ncol + (1 if rows else 0)}, align: center + horizon, "
            f"stroke: 0.3pt + luma(60%), inset: 4pt, {', '.join(cells)})]")




def receptive_field_figure(fig: d.ReceptiveFieldFigure, width_pt: float = 300) -> str:
    """The stack drawn to scale, input at the bottom: each unit of level l is a cell as wide as
    ``jumps[l]`` input positions, centred over the inputs it reads; the units the top output
    depends on are shaded, padding cells are dashed."""
    lo_in, hi_in = min(fig.needed[0]), max(fig.needed[0])
    window = (lo_in - 2, hi_in + 3)                      # input positions shown, [a, b)
    unit = min(12.0, width_pt / (window[1] - window[0]))
    row_h, gap = 11.0, 9.0
    levels = len(fig.sizes)
    items = []
    for level in range(levels):
        y = (levels - 1 - level) * (row_h + gap)
        jump, size = fig.jumps[level], fig.sizes[level]
        off = fig.offsets[level] + (fig.fields[level] - jump) / 2     # left edge of unit 0's cell
        needed = set(fig.needed[level])
        first = math.floor((window[0] - off) / jump) - 1
        last = math.ceil((window[1] - off) / jump) + 1
        for u in range(first, last + 1):
            x0 = off + u * jump
            if x0 < window[0] or x0 + jump > window[1] + 1e-9:
                continue
            pad = u < 0 or u >= size
            if pad and u not in needed:
                continue
            fill = _SHADE if u in needed else "white"
            stroke = "(paint: luma(45%), thickness: 0.4pt, dash: \"dashed\")" if pad else "0.4pt + luma(35%)"
            items.append(f"place(dx: {(x0 - window[0]) * unit:.2f}pt, dy: {y:.2f}pt, rect(width: {jump * unit - 1:.2f}pt, "
                         f"height: {row_h}pt, fill: {fill}, stroke: {stroke}))")
        items.append(f"place(dx: {(window[1] - window[0]) * unit + 8:.2f}pt, dy: {y + 1:.2f}pt, "
                     f"text(size: 7.5pt, {typst_string(fig.labels[level])}))")
    height = levels * (row_h + gap)
    span = (f"#text(size: 8pt)[The shaded inputs are the receptive field of the middle output: "
            f"{hi_in - lo_in + 1} positions (dashed cells are padding).]")
    return (f"#block(breakable: false, above: 0.8em)[#box(width: 100%, height: {height:.1f}pt)[{'#' if items else ''}"
            f"{' #'.join(items)}] \\ {span}]")


def figure_source(title: str, blocks: list, footer: str | None = None) -> str:
    """A standalone figure: ``title`` (verbatim), the blocks, and an optional last line, on a page
    as large as its content."""
    lines = [f"#{typst_string(title)}"] + [block(b) for b in blocks]
    if footer is not None:
        lines.append(f"#{typst_string(footer)}")
    return "#set page(width: auto, height: auto, margin: 1.2cm)\n#set text(size: 10pt)\n" + "\n\n".join(lines)
