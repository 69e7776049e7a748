"""The sheet's cheaper layouts draw what the grids and tables they replaced drew (issue 26).

Typst lays a cell of an auto grid column out three times (column width, row height, the row),
so the sheet's labelled matrices, answer lines, part headings and typical-mistakes rows use
stacks and measured boxes instead. Each test typesets the same content both ways, with the
sheet's own preamble, as PNG pages (Typst's rasteriser), and compares them pixel by pixel. The
old markup is written out here as the reference.
"""
import struct
import zlib

import pytest

from examprep.render.typst.sheet import _PREAMBLE


def _pixels(png: bytes):
    """The 8-bit RGBA samples of a PNG as Typst writes it (any row filter): a numpy array, one row each."""
    import numpy as np

    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(png):
        n = struct.unpack(">I", png[pos:pos + 4])[0]
        kind, data = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", data[:10])
            assert (depth, colour) == (8, 6), "Typst's PNGs are 8-bit RGBA"
        elif kind == b"IDAT":
            idat += data
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, width * 4 + 1)
    out = np.zeros((height, width * 4), dtype=np.int64)
    prev = np.zeros(width * 4, dtype=np.int64)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int64)
        if kind == 1:        # Sub: each byte adds the one 4 to its left
            line = line.reshape(width, 4).cumsum(axis=0).reshape(-1) % 256
        elif kind == 2:      # Up
            line = (line + prev) % 256
        elif kind in (3, 4):  # Average, Paeth: left to right
            for x in range(width * 4):
                a = int(line[x - 4]) if x >= 4 else 0
                b, c = int(prev[x]), (int(prev[x - 4]) if x >= 4 else 0)
                if kind == 3:
                    line[x] = (line[x] + (a + b) // 2) % 256
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) % 256
        out[y] = line
        prev = line
    return out


def _render(body: str, height: str) -> list[bytes]:
    import typst

    page = f"#set page(width: 17.4cm, height: {height}, margin: 6pt, footer: none)\n"
    pages = typst.compile((_PREAMBLE + page + body).encode(), format="png", ppi=72, ignore_system_fonts=True)
    return pages if isinstance(pages, list) else [pages]


def _largest_difference(old: str, new: str, height: str = "9cm") -> int:
    """The largest difference of a sample between the two renders (0: the same pages)."""
    a, b = _render(old, height), _render(new, height)
    assert len(a) == len(b), f"{len(a)} pages became {len(b)}"
    worst = 0
    for pa, pb in zip(a, b):
        if pa != pb:        # Typst's PNG encoding is deterministic: equal bytes, equal pixels
            xa, xb = _pixels(pa), _pixels(pb)
            assert xa.shape == xb.shape, f"page size {xa.shape} became {xb.shape}"
            worst = max(worst, int(abs(xa - xb).max()))
    return worst


LABELLED_GRID = r"""
#let labelled-grid(name, rows, cols, n, cells) = {
  let top = if cols.len() > 0 { 1 } else { 0 }
  let m = calc.div-euclid(cells.len(), n)
  let last = top + m - 1
  let body = ()
  if top == 1 { body += ([], [], ..cols.map(c => text(size: 8pt, fill: ink, c)), []) }
  for i in range(m) {
    body += (text(size: 8pt, fill: ink, rows.at(i, default: "")), [], ..cells.slice(i * n, i * n + n), [])
  }
  let br = 0.7pt + black
  block(breakable: false, grid(columns: 2, column-gutter: 4pt, align: horizon, [#name $=$], table(
    columns: (auto, 3pt) + n * (auto,) + (3pt,), align: right + horizon,
    inset: (x, y) => if x == 1 or x == n + 2 { (x: 0pt, y: 3pt) } else { (x: 4pt, y: 3pt) },
    stroke: (x, y) => if y < top { none } else if x == 1 {
      (left: br, top: if y == top { br }, bottom: if y == last { br })
    } else if x == n + 2 { (right: br, top: if y == top { br }, bottom: if y == last { br }) },
    ..body)))
}
"""


@pytest.mark.parametrize("args", [
    '[$W_(i h)$], ("r1", "r2", "z1"), (), 2, ([$0$], [$-0.5$], [$0.5$], [$0.5$], [$12.25$], [$0$])',
    '[#"data";], ("n=1", "n=2"), ("x_1", "x_2", "y"), 3, ([$0$], [$0$], [$3$], [$-1$], [$1$], [$1$])',
    '[$z$], ("n=1",), (), 1, ([$display(frac(1, 2))$],)',
])
def test_a_labelled_matrix_in_a_stack_draws_what_the_grid_drew(args):
    assert _largest_difference(f"{LABELLED_GRID}\n#labelled-grid({args})", f"#labelled({args})") == 0


ANSWER_GRID = r"""
#let answer-grid(label, ref, body) = grid(columns: (auto, auto, 1fr), column-gutter: 8pt,
  align: (left + horizon, left + horizon, right + bottom),
  text(size: 9pt)[Answer (#label)], body, text(size: 7pt, fill: ink, font: "DejaVu Sans Mono", ref))
"""


@pytest.mark.parametrize("box", ["cells(1, 3)", "cells(4, 4)", "cells(2, 1)", "cell(5cm)"])
def test_an_answer_line_in_a_stack_draws_what_the_grid_drew(box):
    assert _largest_difference(f'{ANSWER_GRID}\n#answer-grid("b", "q3.h_new", {box})',
                               f'#answer("b", "q3.h_new", {box})') == 0


def test_a_choice_keeps_the_grid_that_shrinks_its_row_beside_the_reference():
    options = 'block(width: 100%, { set par(leading: 0.9em); (box[○ #"yes";], box[○ #"no";]).join(h(1.4em)) })'
    assert _largest_difference(f'{ANSWER_GRID}\n#answer-grid("c", "q1.choice", {options})',
                               f'#answer-wide("c", "q1.choice", {options})') == 0


PART_GRID = r"""
#let row-grid(label, prompt, pts) = grid(columns: (1.7em, 1fr, auto), column-gutter: 4pt, [*(#label)*], prompt, pts)
"""
PROMPTS = ['[#"The output length after layer 1 (conv).";]',
           '[#"A long prompt that wraps: " #lorem(60) $display(frac(n + 2 p - k, s)) + 1$]',
           '[$h_t = tanh(W_(i h) x_t + W_(h h) h_(t - 1))$ #"for each step"]']


@pytest.mark.parametrize("prompt", PROMPTS)
@pytest.mark.parametrize("pts", ["1 pt", "12 pts"])
def test_a_part_heading_in_a_measured_stack_draws_what_the_grid_drew(prompt, pts):
    points = f"text(size: 9pt, fill: ink)[{pts}]"
    assert _largest_difference(f'{PART_GRID}\n#block(width: 100%)[#row-grid("m", {prompt}, {points})]',
                               f'#block(width: 100%)[#label-row("m", {prompt}, {points})]') == 0


MISTAKES = [("[(a)]", "[$31$]", '[#"Output sizes round down: ⌊(n + 2p − d(k−1) − 1)/s⌋ + 1, not up.";]'),
            ("[(b)]", '[$display(mat(delim: "[", column-gap: #0.9em, 6, 26, 26))$]', "[#lorem(40)]"),
            ("[(m)]", "[$-0.125$]", '[#"Padding is added on both sides: n + 2p.";]'),
            ("[(b)]", '[$display(mat(delim: "[", 1, 2; 3, 4))$]', '[#"A conv layer outputs one channel per filter.";]')]


@pytest.mark.parametrize("rows", [MISTAKES, MISTAKES[:1], MISTAKES * 12], ids=["four", "one", "over a page"])
def test_the_typical_mistakes_rows_draw_what_the_table_drew(rows):
    """Every other row shaded; the table shaded each cell, the rows shade the whole row at once,
    so where cells meet the grey may differ by anti-aliasing (2/255 at most), nothing else."""
    cells = ", ".join(", ".join(r) for r in rows)
    table = (f"#text(size: 9pt, table(columns: (auto, auto, 1fr), stroke: none, inset: (x: 4pt, y: 5pt), "
             f"align: (left + horizon, left + horizon, left + horizon), "
             f"fill: (x, y) => if calc.odd(y) {{ luma(96%) }}, {cells}))")
    new = "#text(size: 9pt, mistakes(" + ", ".join(f"({', '.join(r)})" for r in rows) + "))"
    assert _largest_difference(table, new) <= 2
