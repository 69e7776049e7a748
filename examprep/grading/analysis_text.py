"""Item analysis as the instructor reads it: a compact rich summary for the terminal (80 columns)
and analysis.pdf, drawn with Typst's built-in shapes only (rect, circle, line, place: no package
from Typst's online registry, so it compiles offline as the sheets do).

Both read the dict examprep.grading.analysis.analyse returns; an undefined statistic (None) is
"undefined", never NaN. Here, beside the analysis, not in examprep.render: it reads grading's
results, and render sits below grading (docs/code.md, "Layers").
"""
from __future__ import annotations

from typing import Any

import numpy as np
from rich.console import Group
from rich.table import Table
from rich.text import Text

from examprep.answers.files import printable
from examprep.grading.analysis import EASY, HARD, LOW_DISCRIMINATION, MIN_ANSWERS, review_reasons
from examprep.render.typst.latex import typst_string

UNDEFINED = "undefined"


def fmt(x: float | None, spec: str = ".2f") -> str:
    return UNDEFINED if x is None else format(x, spec)


def to_review(result: dict[str, Any]) -> list[tuple[dict[str, Any], list[str]]]:
    return [(p, why) for p in result["parts"] if (why := review_reasons(p))]


def headline(result: dict[str, Any]) -> str:
    points = sum(p["points"] for p in result["parts"])
    return (f"{result['students']} student{'s' if result['students'] != 1 else ''} · "
            f"mean {fmt(result['mean'], '.1f')}/{points:g} · sd {fmt(result['sd'], '.1f')} · "
            f"α {fmt(result['alpha'])} · SEM {fmt(result['sem'], '.1f')}")


def terminal_summary(result: dict[str, Any], left_out: list[str], *, title: str, limit: int = 8) -> Any:
    """A rich Group: the headline (under ``title``, analysis.pdf's heading), the parts
    to review and why, the top misconceptions with their share among the top and bottom 27%, and the
    variant groups; each table capped at ``limit`` rows (the files hold everything)."""
    out: list[Any] = [Text(printable(title), style="bold"), Text(headline(result), style="bold")]
    review = to_review(result)
    if review:
        t = Table(title=f"Parts to review ({len(review)} of {len(result['parts'])})", title_justify="left",
                  expand=False, pad_edge=False)
        t.add_column("part", no_wrap=True)
        t.add_column("diff.", justify="right")
        t.add_column("discr.", justify="right")
        t.add_column("why")
        for p, why in review[:limit]:
            t.add_row(Text(printable(p["part"])), fmt(p["difficulty"]), fmt(p["discrimination"]), "; ".join(why))
        if len(review) > limit:
            t.add_row("…", "", "", f"{len(review) - limit} more in item-analysis.csv")
        out.append(t)
    else:
        out.append(Text(f"No part to review: every difficulty within {HARD}–{EASY}, "
                        f"every discrimination ≥ {LOW_DISCRIMINATION}."))
    mis = top_misconceptions(result)
    if mis:
        t = Table(title="Most frequent misconceptions", title_justify="left", pad_edge=False)
        t.add_column("part", no_wrap=True)
        t.add_column("misconception", overflow="fold")
        t.add_column("n", justify="right")
        t.add_column("top 27%", justify="right")
        t.add_column("bottom 27%", justify="right")
        for part, m in mis[:limit]:
            t.add_row(Text(printable(part)), Text(printable(m["misconception"])), str(m["count"]), fmt(m["top_share"], ".0%"),
                      fmt(m["bottom_share"], ".0%"))
        out.append(t)
    for g in result["groups"]:
        sizes = ", ".join(f"{v['variant']} {v['students']} ({fmt(v['difficulty'])})" for v in g["variants"])
        style = "yellow" if g["flag"] else ""
        out.append(Text(f"{g['question']} variants: {sizes}: {g['note']}", style=style))
    if left_out:
        out.append(Text(f"Left out until marked: {', '.join(left_out)} (written parts pending; merge --marks)"))
    return Group(*out)


def top_misconceptions(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every part's top misconceptions, most frequent first."""
    found = [(p["part"], m) for p in result["parts"] for m in p["misconceptions"]]
    return sorted(found, key=lambda pm: (-pm[1]["count"], pm[0]))


# ----------------------------------------------------------------------------- analysis.pdf

def _s(text: str) -> str:
    return typst_string(text)


def typst_source(result: dict[str, Any], totals: list[float], title: str = "Item analysis",
                 left_out: list[str] = ()) -> str:
    """analysis.pdf's Typst source: the headline, a histogram of totals, the item map (difficulty
    against discrimination, review zones shaded), the misconceptions as bars with their
    explanations, and the parts to review."""
    lines = ['#set page(paper: "a4", margin: 1.8cm, numbering: "1 / 1")',
             '#set text(size: 10pt)',
             f"#text(size: 16pt, weight: \"bold\")[#{_s(title)}]\n",
             f"#{_s(headline(result))}\n",
             "Difficulty is the mean fraction of a part's points earned; discrimination the correlation of a "
             "part's score with the total of the other parts (item–rest). Parts in a shaded zone "
             f"(difficulty below {HARD} or above {EASY}, discrimination below {LOW_DISCRIMINATION}) are worth a look; "
             f"a part fewer than {MIN_ANSWERS} students answered is \"too few answers\" instead, and left off the map.\n"]
    if left_out:
        lines.append(f"#{_s('Left out until marked (written parts pending): ' + ', '.join(left_out))}\n")
    lines += ["== Totals", _histogram(totals, sum(p["points"] for p in result["parts"])),
              "== Item map", _item_map(result["parts"])]
    lines += ["#pagebreak()", "== Most frequent misconceptions", _misconception_bars(result),
              "== Parts to review", _review_table(result)]
    if result["groups"]:
        lines += ["== Variant groups", _groups_table(result["groups"])]
    return "\n".join(lines) + "\n"


def _histogram(totals: list[float], points: float, width: float = 15.0, height: float = 5.0) -> str:
    if not totals:
        return "No student."
    bins = 10
    top = points if points > 0 else max(max(totals), 1.0)
    counts, edges = np.histogram(np.clip(totals, 0, top), bins=bins, range=(0, top))
    peak = max(int(counts.max()), 1)
    bw = width / bins
    out = [f"#box(width: {width + 1}cm, height: {height + 1.2}cm)["]
    out.append(f"  #place(dx: 1cm, dy: {height}cm, line(length: {width}cm, stroke: 0.6pt))")
    out.append(f"  #place(dx: 1cm, dy: 0cm, line(angle: 90deg, length: {height}cm, stroke: 0.6pt))")
    for i, c in enumerate(counts):
        h = (height - 0.5) * int(c) / peak      # headroom for the tallest bar's count
        x = 1 + i * bw
        if c:
            out.append(f"  #place(dx: {x + 0.05:.3f}cm, dy: {height - h:.3f}cm, rect(width: {bw - 0.1:.3f}cm, "
                       f"height: {h:.3f}cm, fill: rgb(\"#4a78b5\")))")
            out.append(f"  #place(dx: {x:.3f}cm, dy: {max(height - h - 0.45, 0):.3f}cm, box(width: {bw:.3f}cm, "
                       f"align(center, text(size: 7pt)[{int(c)}])))")
    for i in range(0, bins + 1, 2):
        out.append(f"  #place(dx: {1 + i * bw - 0.5:.3f}cm, dy: {height + 0.15:.3f}cm, box(width: 1cm, "
                   f"align(center, text(size: 7pt)[{edges[i]:g}])))")
    out.append(f"  #place(dx: 1cm, dy: {height + 0.6:.3f}cm, box(width: {width}cm, align(center, "
               f"text(size: 8pt)[total points (out of {points:g})])))")
    out.append("]")
    return "\n".join(out)


def _item_map(parts: list[dict[str, Any]], width: float = 14.0, height: float = 9.0) -> str:
    """Difficulty (x, 0–1) against discrimination (y, −1–1)."""
    def x(d: float) -> float:
        return 1.2 + width * d

    def y(r: float) -> float:
        return height * (1 - (r + 1) / 2)

    zone = 'fill: rgb("#f6d6d6"), stroke: none'
    out = [f"#box(width: {width + 1.5}cm, height: {height + 1.3}cm)["]
    out.append(f"  #place(dx: {x(0):.3f}cm, dy: 0cm, rect(width: {width * HARD:.3f}cm, height: {height}cm, {zone}))")
    out.append(f"  #place(dx: {x(EASY):.3f}cm, dy: 0cm, rect(width: {width * (1 - EASY):.3f}cm, "
               f"height: {height}cm, {zone}))")
    out.append(f"  #place(dx: {x(0):.3f}cm, dy: {y(LOW_DISCRIMINATION):.3f}cm, rect(width: {width}cm, "
               f"height: {height - y(LOW_DISCRIMINATION):.3f}cm, {zone}))")
    out.append(f"  #place(dx: {x(0):.3f}cm, dy: 0cm, rect(width: {width}cm, height: {height}cm, stroke: 0.6pt))")
    out.append(f"  #place(dx: {x(0):.3f}cm, dy: {y(0):.3f}cm, line(length: {width}cm, stroke: (dash: \"dashed\", "
               "thickness: 0.4pt)))")
    for t in (0, 0.2, 0.4, 0.6, 0.8, 1.0):
        out.append(f"  #place(dx: {x(t) - 0.5:.3f}cm, dy: {height + 0.1:.3f}cm, box(width: 1cm, "
                   f"align(center, text(size: 7pt)[{t:g}])))")
    for t in (-1, -0.5, 0, 0.2, 0.5, 1):
        out.append(f"  #place(dx: 0cm, dy: {y(t) - 0.17:.3f}cm, box(width: 1cm, align(right, "
                   f"text(size: 7pt)[{t:g}])))")
    out.append(f"  #place(dx: {x(0):.3f}cm, dy: {height + 0.55:.3f}cm, box(width: {width}cm, align(center, "
               "text(size: 8pt)[difficulty (fraction of points earned)])))")
    out.append(f"  #place(dx: {x(0) + 0.15:.3f}cm, dy: 0.1cm, text(size: 8pt)[discrimination (item–rest r)])")
    undefined, few = [], []
    for p in parts:
        d, r = p["difficulty"], p["discrimination"]
        if p.get("answers", MIN_ANSWERS) < MIN_ANSWERS:
            few.append(p["part"])
            continue
        if d is None or r is None:
            undefined.append(p["part"])
            continue
        colour = "#b53a3a" if review_reasons(p) else "#2f5d99"
        out.append(f"  #place(dx: {x(d) - 0.08:.3f}cm, dy: {y(r) - 0.08:.3f}cm, circle(radius: 0.08cm, "
                   f"fill: rgb(\"{colour}\")))")
        if review_reasons(p):
            out.append(f"  #place(dx: {x(d) + 0.1:.3f}cm, dy: {y(r) - 0.2:.3f}cm, "
                       f"text(size: 6pt, fill: rgb(\"{colour}\"))[#{_s(p['part'])}])")
    out.append("]")
    if undefined:
        note = "Not on the map (difficulty or discrimination undefined): " + ", ".join(undefined)
        out.append(f"\n#text(size: 8pt)[#{_s(note)}]")
    if few:
        note = f"Not on the map (too few answers, fewer than {MIN_ANSWERS}): " + ", ".join(few)
        out.append(f"\n#text(size: 8pt)[#{_s(note)}]")
    return "\n".join(out)


def _misconception_bars(result: dict[str, Any], limit: int = 10) -> str:
    mis = top_misconceptions(result)[:limit]
    if not mis:
        return "No misconception was recognised in any answer."
    peak = max(m["count"] for _, m in mis)
    rows = []
    for part, m in mis:
        w = 6.0 * m["count"] / peak
        share = (f"top 27%: {fmt(m['top_share'], '.0%')}, bottom 27%: {fmt(m['bottom_share'], '.0%')}")
        rows.append(f"  [#{_s(part)}], [#box(width: {w:.3f}cm, height: 0.35cm, fill: rgb(\"#c9822b\")) "
                    f"#text(size: 8pt)[{m['count']}]],\n"
                    f"  [], [#text(size: 8pt)[*#{_s(m['misconception'])}*: #{_s(m['explanation'] or '')} "
                    f"(#{_s(share)})]],")
    return "#table(columns: (auto, 1fr), stroke: none, inset: 3pt,\n" + "\n".join(rows) + "\n)"


def _review_table(result: dict[str, Any]) -> str:
    review = to_review(result)
    if not review:
        return (f"No part to review: every difficulty within {HARD}–{EASY} and every discrimination at least "
                f"{LOW_DISCRIMINATION}.")
    rows = [f"  [#{_s(p['part'])}], [{fmt(p['difficulty'])}], [{fmt(p['discrimination'])}], [#{_s('; '.join(why))}],"
            for p, why in review]
    return ("#table(columns: (auto, auto, auto, 1fr), inset: 4pt, stroke: 0.4pt,\n"
            "  table.header([*part*], [*difficulty*], [*discrimination*], [*why*]),\n" + "\n".join(rows) + "\n)")


def _groups_table(groups: list[dict[str, Any]]) -> str:
    rows = []
    for g in groups:
        sizes = ", ".join(f"{v['variant']}: {v['students']} students, difficulty {fmt(v['difficulty'])}"
                          for v in g["variants"])
        rows.append(f"  [#{_s(g['question'])}], [#{_s(sizes)}], [#{_s(g['note'])}],")
    return ("#table(columns: (auto, 1fr, auto), inset: 4pt, stroke: 0.4pt,\n"
            "  table.header([*question*], [*groups*], [*verdict*]),\n" + "\n".join(rows) + "\n)")
