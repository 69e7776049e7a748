"""Terminal rendering with rich: worked solutions, matrices as aligned tables, topic lists."""
from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
from typing import Any

import numpy as np
import typer
from rich import box
from rich.console import Console, Group
from rich.measure import Measurement
from rich.padding import Padding
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from examprep import document as d
from examprep.problem import Problem
from examprep.render import plural, prose_symbols, shape_answer
from examprep.render.latex import to_text
from examprep.render.worked import worked_steps
from examprep.solve import REQUIRED, TOPICS
from examprep.solve.reference import ecf_text
from examprep.values import fmt_number, snap


def console(no_color: bool = False, *, markup: bool = True) -> Console:
    """The terminal's console. Never emoji (":question:" in a topic or title stays as written);
    ``markup`` False: every string printed is text, as written, and styles come from Text objects
    (the quiz's and a problem's output, where the text is a question's, a key's or a student's)."""
    return Console(no_color=no_color or bool(os.environ.get("NO_COLOR")), highlight=False,
                   soft_wrap=False, emoji=False, markup=markup)


def value_renderable(value: Any, digits: int = 6, row_labels: list | None = None,
                     col_labels: list | None = None) -> Any:
    """A scalar as text, a vector as a one-row table, a matrix as an aligned table (float noise
    relative to the largest entry shows as 0: values.snap)."""
    try:
        if isinstance(value, np.ndarray):
            value = value.tolist()
    except ImportError:  # pragma: no cover
        pass
    value = snap(value)
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, tuple)) and value[0] \
            and isinstance(value[0][0], (list, tuple)):
        # three or more axes (channels × H × W, heads × n × n): one labelled block per leading index
        return Group(*(part for i, sub in enumerate(value)
                       for part in (Text(f"[{i}]", style="dim"), value_renderable(sub, digits))))
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, tuple)):
        table = Table(box=box.SQUARE, show_header=bool(col_labels), padding=(0, 1))
        if row_labels:
            table.add_column(style="dim")
        for j, _ in enumerate(value[0]):
            table.add_column(col_labels[j] if col_labels else "", justify="right")
        for i, row in enumerate(value):
            cells = [fmt_number(v, digits) for v in row]
            table.add_row(*([row_labels[i]] if row_labels else []), *cells)
        return table
    if isinstance(value, (list, tuple)):
        if value and isinstance(value[0], str):
            return Text(", ".join(value))
        return Text("[" + ", ".join(fmt_number(v, digits) for v in value) + "]")
    if isinstance(value, dict):
        table = Table(box=None, show_header=False, padding=(0, 1))
        table.add_column(style="cyan")
        table.add_column(justify="right")
        for k, v in value.items():
            table.add_row(str(k), fmt_number(v))
        return table
    return Text(fmt_number(value, digits) if not isinstance(value, str) else value)


def values_block(values: dict[str, Any]) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold cyan", no_wrap=True)
    grid.add_column()
    for name, val in values.items():
        grid.add_row(name, value_renderable(val))
    return grid


def print_solution(solution: Any, *, no_color: bool = False) -> None:
    """Print a solve.Solution: conventions, each step (formula and values), then the answer."""
    out = console(no_color)
    title = TOPICS[solution.topic].title if solution.topic in TOPICS else solution.topic
    out.print(Text(f"{solution.topic} — {title}", style="bold"))
    if solution.conventions:
        conv = Table.grid(padding=(0, 2))
        conv.add_column(style="dim")
        conv.add_column()
        for k, v in solution.conventions.items():
            conv.add_row(k, v)
        out.print(Panel(conv, title="conventions", title_align="left", box=box.ROUNDED, expand=False))
    for n, step in enumerate(solution.steps, 1):
        out.print(Text(f"Step {n}. {step.title}", style="bold"))
        out.print(Text("  " + to_text(step.formula), style="yellow"))
        if step.values:
            out.print(Padding(values_block(step.values), (0, 0, 0, 4)))
    out.print(Panel(values_block(solution.answer), title="answer", title_align="left",
                    box=box.HEAVY, expand=False, border_style="green"))


def print_topic_answers(t: Any, *, no_color: bool = False) -> None:
    """One solve topic for a question's author: its parameters, then each answer a part may name
    with its known mistakes (the feedback a student gets) and whether an ECF rule carries it."""
    out = console(no_color)
    out.print(Text.assemble((t.name, "bold cyan"), "  ", (t.title, "dim")))
    for p in t.params:
        default = "required" if p.default is REQUIRED else "optional" if p.default is None else f"default {p.default!r}"
        out.print(Padding(Text.assemble((p.name, "bold"), f"  {p.kind}", (f" · {default}", "dim")), (0, 0, 0, 2),
                          expand=False))        # no padding to the terminal's width: `| grep` sees clean lines
    out.print(Text("answers (a question part's answer = \"NAME\"):", style="dim"))
    for a in t.listed_answers():            # then a worked step's value with mistakes of its own
        ecf = t.ecf.get(a, ())
        form = ("  a shape (10×26×26)" if a in t.shapes else "  a list of shapes (3×28×28; 864)" if a in t.shape_lists
                else "" if a in t.answers else "  a worked step's value, not an answer")
        rules = ", ".join(ecf_text(e, code="") for e in ecf)
        head = textwrap.wrap(f"{a}{form}" + (f"  ECF: {rules}" if ecf else ""), width=max(out.width - 2, 30),
                             subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
        for i, line in enumerate(head):             # one print a line, as the mistakes below
            text = Text(line, style="dim")
            if i == 0:
                text.stylize("bold green", 0, len(a))
            out.print(Padding(text, (0, 0, 0, 2), expand=False))
        for m in t.mistakes.get(a, ()):
            # the explanation wrapped under its own first word, the id standing out to its left
            lines = textwrap.wrap(f"{m.id}  {m.why}", width=max(out.width - 6, 30), subsequent_indent="  ",
                                  break_long_words=False, break_on_hyphens=False)
            for i, line in enumerate(lines):        # one print a line: a block would pad them to its widest
                text = Text(line)
                if i == 0:
                    text.stylize("yellow", 0, len(m.id))
                out.print(Padding(text, (0, 0, 0, 6), expand=False))


def print_topic_list(topics: dict, *, no_color: bool = False) -> None:
    """The solve topics with their parameters (defaults in brackets) and answer names."""
    out = console(no_color)

    def params(t: Any) -> str:
        parts = []
        for p in t.params:
            if p.default is REQUIRED:
                parts.append(p.name)
            elif p.default is None:
                parts.append(f"[{p.name}]")
            else:
                parts.append(f"{p.name}={fmt_number(p.default) if not isinstance(p.default, str) else repr(p.default)}")
        return ", ".join(parts)

    if out.width < 110:          # a narrow terminal: one entry per topic, its lines indented under it
        for t in topics.values():
            out.print(Text.assemble((t.name, "bold cyan"), "  ", (t.title, "dim")))
            out.print(Padding(Text.assemble(("parameters ", "dim"), params(t)), (0, 0, 0, 4), expand=False))
            out.print(Padding(Text.assemble(("answer ", "dim"), (", ".join(t.answers), "green")), (0, 0, 0, 4), expand=False))
        out.print(Text("[name]: optional; name=value: its default", style="dim"))
        return
    table = Table(box=box.SIMPLE_HEAVY, show_lines=False)
    table.add_column("topic", style="bold cyan", no_wrap=True)
    table.add_column("parameters (default)")
    table.add_column("answer", style="green")
    for t in topics.values():
        table.add_row(t.name, Group(Text(t.title, style="dim"), Text(params(t))), ", ".join(t.answers))
    out.print(table)


# ------------------------------------------------------------------------------------ problems

def inline(text: str) -> str:
    """A problem's prose for the terminal: its $…$ inline LaTeX, and the symbols it types as the
    course writes them (d_k, h_{t−1}: examprep.render.prose_symbols), rewritten as the terminal
    prints all math (to_text: dₖ, hₜ₋₁; a subscript of several letters stays as written, W_hn, as
    $W_{hn}$ prints)."""
    return re.sub(r"\$([^$]+)\$", lambda m: to_text(m.group(1)), prose_symbols(text))


def _label(name: str) -> str:
    return to_text(name) if "\\" in name else name


def block_renderable(block: Any) -> Any:
    if isinstance(block, d.Text):
        return Text(inline(block.text))
    if isinstance(block, d.Math):
        return Padding(Text(to_text(block.latex), style="yellow"), (0, 0, 0, 2))
    if isinstance(block, d.Matrix):
        if not isinstance(block.values, list):
            return Text.assemble((_label(block.name), "bold cyan"), " = ", fmt_number(block.values, 4))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold cyan", no_wrap=True)
        grid.add_column()
        vals = block.values
        grid.add_row(_label(block.name),
                     value_renderable(vals, 4, block.row_labels if vals and isinstance(vals[0], list) else None,
                                      block.col_labels))
        return grid
    if isinstance(block, d.Table):
        table = Table(*map(inline, block.header), box=box.SIMPLE)
        for row in block.rows:
            table.add_row(*(fmt_number(c, 4) if not isinstance(c, str) else inline(c) for c in row))
        return table
    if isinstance(block, d.Heatmap):
        return HeatmapView(block)
    return Text(str(block))


class HeatmapView:
    """A Heatmap that fits the console: weights to two decimals where the width allows, else as
    whole percentages, else as one shade character per key (░▒▓█); keys that still do not fit
    (long inputs) continue in bands below, each naming its key range. Labels are never cut."""

    SHADES = " ░▒▓█"

    def __init__(self, block: Any):
        self.block = block

    @staticmethod
    def _style(v: float) -> str:
        return f"on color({int(232 + v * 23)})" + (" black" if v > 0.5 else "")

    def _shade(self, v: float) -> str:
        return self.SHADES[min(int(v * len(self.SHADES)), len(self.SHADES) - 1)]

    def _rows(self):
        b = self.block
        for label, row in zip(b.row_labels or [""] * len(b.values), b.values):
            yield label, [min(max(float(v), 0.0), 1.0) for v in row]

    def _cols(self) -> list[str]:
        n = max((len(r) for r in self.block.values), default=0)
        labels = list(self.block.col_labels)
        return labels + [""] * (n - len(labels))

    def _table(self, percent: bool, padding: int) -> Table:
        b = self.block
        table = Table("", box=box.SIMPLE, title=f"{b.title} (weights in %)" if percent else b.title,
                      padding=(0, padding), collapse_padding=True)
        for c in self._cols():
            table.add_column(c, justify="right", no_wrap=True)
        for label, row in self._rows():
            table.add_row(label, *[Text(f"{round(v * 100):d}" if percent else f"{v:.2f}", style=self._style(v))
                                   for v in row])
        return table

    def _shades(self, width: int) -> Group:
        b = self.block
        cols = self._cols()
        rows = list(self._rows())
        label_w = max((len(label) for label, _ in rows), default=0)
        band = max(1, width - label_w - 1)
        lines = [Text(f"{b.title} (one column per key, shaded ░▒▓█ from 0 to 1)")]
        if any(len(c) > 1 for c in cols):
            lines.append(Text("keys: " + " ".join(cols), style="dim"))
        for start in range(0, len(cols), band):
            stop = min(start + band, len(cols))
            if len(cols) > band:
                lines.append(Text(f"keys {start + 1}–{stop} of {len(cols)}", style="dim"))
            lines.append(Text(" " * (label_w + 1) + "".join((c or " ")[0] for c in cols[start:stop]), style="bold"))
            for label, row in rows:
                line = Text(f"{label:>{label_w}} ")
                for v in row[start:stop]:
                    line.append(self._shade(v), style=self._style(v))
                lines.append(line)
        return Group(*lines)

    def __rich_console__(self, console: Console, options: Any):
        for table in (self._table(False, 1), self._table(True, 1), self._table(True, 0)):
            if Measurement.get(console, options.update_width(10_000), table).maximum <= options.max_width:
                yield table
                return
        yield self._shades(options.max_width)


def print_problem(problem: Any, *, solution: bool = False, no_color: bool = False, number: int | None = None) -> None:
    """A Problem in the terminal: statement, parts with points and expected form, and on request
    the worked solution and answers."""
    out = console(no_color, markup=False)
    head = f"{number}. " if number is not None else ""
    meta = _problem_meta(problem)
    body = [block_renderable(b) for b in problem.statement]
    if problem.conventions:
        body.append(Text("Conventions: " + inline("; ".join(f"{k}: {v}" for k, v in problem.conventions.items())),
                         style="dim"))
    for i, part in enumerate(problem.parts):
        how = part.form() if part.kind == "written" else f"{part.form()} · {part.tolerance.describe()}"
        body.append(Text.assemble((f"({Problem.label(i)}) ", "bold"), inline(part.prompt),
                                  (f"  [{part.points:g} pt · {how}]", "dim")))
    out.print(Panel(Group(*body), title=Text(f"{head}{problem.title}"), subtitle=Text(meta), title_align="left",
                    subtitle_align="right", box=box.ROUNDED))         # Text: a str title is read as markup
    if solution:
        print_worked_solution(problem, out)


def _problem_meta(problem: Any) -> str:
    """"gru-step · level 1 · seed 7 · 6 points": what rebuilds a problem, and its worth."""
    return (f"{problem.generator} · level {problem.difficulty} · seed {problem.seed}"
            + (" · calculator-free" if problem.calculator_free else "") + f" · {plural(problem.points, 'point')}")


def print_problem_line(problem: Any, *, number: int | None = None) -> None:
    """A problem written to a key but not shown (`generate --key` without --show): one plain line
    with its title and what rebuilds it (the seed, which is random when not given)."""
    typer.echo(f"{f'{number}. ' if number is not None else ''}{problem.title} — {_problem_meta(problem)}")


def print_worked_solution(problem: Any, out: Console) -> None:
    steps = []

    for n, step in enumerate(worked_steps(problem), 1):
        steps.append(Text(f"Step {n}. {inline(step.title)}" + (f"  → part {step.part}" if step.part else ""), style="bold"))
        for b in step.blocks:
            steps.append(Padding(block_renderable(b), (0, 0, 0, 2)))
    answers = Table.grid(padding=(0, 2))
    answers.add_column(style="bold green", no_wrap=True)
    answers.add_column()
    for i, part in enumerate(problem.parts):
        exact = part.exact if isinstance(part.exact, str) else None
        if part.kind == "written":
            answers.add_row(f"({Problem.label(i)}) {part.id}", Text("marked by hand: see the model answer and rubric"))
            continue
        exact = exact or shape_answer(part)        # a shape as the sheet prints it: 16×24×24
        answers.add_row(f"({Problem.label(i)}) {part.id}", Text(exact) if exact else value_renderable(part.expected, 4))
    steps.append(Panel(answers, title="answers", title_align="left", box=box.HEAVY, border_style="green", expand=False))
    out.print(Panel(Group(*steps), title="worked solution", title_align="left", box=box.ROUNDED))


def print_generators(gens: dict, *, no_color: bool = False) -> None:
    """`examprep topics`: each generator's name, title, syllabus line and levels; a table on a wide
    terminal, and on a narrow one (under 110 columns: four columns there wrap into fragments) one
    entry per topic: its name and levels, then its title and syllabus line, each wrapped under itself."""
    out = console(no_color)
    if out.width < 110:
        for g in gens.values():
            needs = "".join(f" (needs --{r})" for r in getattr(g, "requires", ()))
            out.print(Text.assemble((g.name, "bold cyan"), "  ", ("levels ", "dim"),
                                    ",".join(map(str, g.levels)) + (" ·cf" if g.calculator_free else "")))
            out.print(Padding(Text(g.title + needs), (0, 0, 0, 4), expand=False))
            out.print(Padding(Text(g.syllabus, style="dim"), (0, 0, 0, 4), expand=False))
        out.print(Text("·cf: has a --calculator-free variant", style="dim"))
        return
    table = Table(box=box.SIMPLE_HEAVY)
    table.add_column("topic", style="bold cyan", no_wrap=True)
    table.add_column("title")
    table.add_column("syllabus", style="dim")
    table.add_column("levels", justify="center")
    for g in gens.values():
        needs = "".join(f" (needs --{r})" for r in getattr(g, "requires", ()))
        table.add_row(g.name, g.title + needs, g.syllabus,
                      ",".join(map(str, g.levels)) + (" ·cf" if g.calculator_free else ""))
    out.print(table)
    out.print(Text("·cf: has a --calculator-free variant", style="dim"))


# ------------------------------------------------------------------------------------ verify

def print_verify(rows: list, *, instances: int, seed: int, no_color: bool = False, title: str | None = None) -> None:
    """`examprep verify`: one row per topic (instances, largest differences, pass or FAIL) in 80
    columns for the longest topic, then each failing topic's first disagreement."""
    out = console(no_color)
    table = Table(title=title or f"engine vs torch ({instances} random instances per topic, seed {seed})")
    widest = max((len(r.topic) for r in rows), default=5)
    for col, just in (("topic", "left"), ("instances", "right"), ("max |diff|", "right"),
                      ("max rel", "right"), ("result", "left")):
        table.add_column(col, justify=just, no_wrap=True, min_width=widest if col == "topic" else len(col))
    for r in rows:
        table.add_row(r.topic, str(r.instances), f"{r.max_abs_diff:.1e}", f"{r.max_rel_diff:.1e}",
                      "[green]pass[/]" if r.passed else f"[red]FAIL[/] ({r.failures})")
    out.print(table)
    for r in rows:
        if not r.passed:
            out.print(f"[red]{r.topic}[/]: first disagreement: {r.first_failure}", soft_wrap=True)


# ------------------------------------------------------------------------------------ sheets

class StepProgress:
    """The one progress helper: a step that takes more than a couple of seconds shows its progress
    on stderr, as a live bar (with the time left) on a terminal, else as a few plain lines.

    Call it as ``progress(what, done, total)``; ``total=None`` is a step of unknown length (a
    pulsing bar until the next step starts). A step of 2 or fewer is not shown (a one-copy
    sheet's two PDFs take seconds). ``plain`` maps a step to the line printed for it where there is
    no terminal ("typeset {done} of {total} PDF parts"; a step it does not name prints nothing),
    each update, or with ``lines`` only as each ``1/lines`` of the step is done."""

    SHEET = {"PDF parts": "typeset {done} of {total} PDF parts"}

    def __init__(self, plain: dict[str, str] | None = None, lines: int | None = None):
        self.bar = None
        self.tasks: dict[str, int] = {}
        self.plain = self.SHEET if plain is None else plain
        self.lines = lines
        self.said: dict[str, int] = {}            # plain lines: the last step said
        self.unknown: set[str] = set()            # bar: the steps of unknown length still running

    def __enter__(self) -> "StepProgress":
        if sys.stderr.isatty():
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                console=Console(stderr=True), transient=True)
            self.bar.start()
        return self

    def __call__(self, what: str, done: int, total: int | None) -> None:
        if total is not None and total <= 2:
            return
        if self.bar is not None:
            if what not in self.tasks:
                for name in self.unknown:              # a step of unknown length ends where the next begins
                    self.bar.update(self.tasks[name], total=1, completed=1)
                self.unknown = set()
                self.tasks[what] = self.bar.add_task(f"{what}", total=total)
            if total is None:
                self.unknown.add(what)
            self.bar.update(self.tasks[what], completed=done, total=total)
        elif what in self.plain:
            if total is None:                            # unknown length: one line
                if what in self.said:
                    return
                self.said[what] = 0
            elif self.lines:                             # a line as each 1/lines of the step is done
                step = done * self.lines // total
                if step <= self.said.get(what, 0):
                    return
                self.said[what] = step

            typer.echo(self.plain[what].format(done=done, total=total), err=True)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()


def print_recipes(recipes: dict) -> None:
    """`examprep sheet --list`: each bundled recipe and its problems, wrapped at the terminal's width."""
    width = max(40, shutil.get_terminal_size((80, 24)).columns) - 1
    for name, r in recipes.items():
        typer.echo(f"{name:<12} {r.title} — {plural(r.problem_count, 'problem')}{f', {r.minutes} min' if r.minutes else ''}")
        items = [f"{i.topic}{f' ×{i.count}' if i.count > 1 else ''}" + (f" (L{i.difficulty})" if i.generated else "")
                 for i in r.items]
        line = " " * 13
        for k, item in enumerate(items):               # whole items per line, wrapped at the terminal's width
            piece = item + ("," if k < len(items) - 1 else "")
            if len(line) > 13 and len(line) + 1 + len(piece) > width:
                typer.echo(line)
                line = " " * 13
            line += ("" if len(line) == 13 else " ") + piece
        typer.echo(line)


def print_sheet_summary(result: Any) -> None:
    """What `examprep sheet` made: its warnings (stderr), then the sheet, its size and every file written."""
    for warning in result.warnings:
        typer.echo(f"warning: {warning}", err=True)
    sh = result.sheet
    first = sh.copies[0]
    r = sh.recipe
    secret = getattr(sh, "seed_secret", False)
    what = plural(len(sh.copies), "variant") if sh.variants else "seed not printed" if secret else f"seed {sh.seed}"
    typer.echo(f"{r.title}: {plural(len(first.problems), 'problem')}, {plural(first.points, 'point')}, "
               f"about {round(first.minutes)} min "
               f"of work{f' for {r.minutes} min allowed' if r.minutes else ''} ({what}; sheet {sh.printed_id})")
    if secret and not sh.variants:      # the instructor's terminal only: whoever has the seed has the key
        typer.echo(f"seed {sh.seed} (kept in key.json; the copies print sheet {sh.printed_id} instead): "
                   f"`--seed {sh.seed}` rebuilds this sheet; keep it private", err=True)
    shown = [p for p in result.written if p.parent == result.out_dir]
    for path in shown:
        typer.echo(f"  {path}")
    folders: dict[Any, int] = {}               # per-student files, counted by their folder
    for path in result.written:
        if path.parent != result.out_dir:
            folders[path.parent] = folders.get(path.parent, 0) + 1
    for folder, count in folders.items():
        kind = {"answers": "answer template", "problems": "PDF", "solutions": "PDF"}.get(folder.name, "file")
        typer.echo(f"  {folder}/ ({plural(count, kind)}, one per student)")
    for note in getattr(result, "notes", []):
        typer.echo(f"  {note}")
    removed = getattr(result, "removed", [])
    if removed:
        names = ", ".join(str(p.relative_to(result.out_dir)) for p in removed[:3]) + (", …" if len(removed) > 3 else "")
        typer.echo(f"  removed {plural(len(removed), 'file')} of the run this one replaced: {names}")
