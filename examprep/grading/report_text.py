"""Grading reports: the class table and per-student feedback (terminal), a Markdown feedback file
per student, Gradescope's results.json, and CSV/JSON exports. They only read results. Here, not in
examprep.render, because they read grading's results: a renderer reads Problems and documents only,
and render sits below grading (docs/code.md, "Layers").

Output file names never use a student id raw: examprep.fileio.safe_name, the one name a student's
files get everywhere (answer templates too).
"""
from __future__ import annotations

import csv
import io
import json
import re
import textwrap
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.measure import Measurement
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from examprep.answers import PartResult, raw_text
from examprep.answers.files import printable
from examprep.answers.parse import decimal_comma_on
from examprep.answers.tokens import normalise
from examprep.escape import markdown_cell, markdown_heading as heading, terminal
from examprep.fileio import safe_name
from examprep.grading.batch import BatchResult
from examprep.grading.grade import SubmissionResult, address, summarise
from examprep.problem import Problem
from examprep.render import fmt_points, model_answer_text, shape_answer
from examprep.values import rounded

STATUS_STYLE = {"correct": "green", "ecf": "cyan", "misconception": "yellow", "wrong": "red", "blank": "dim",
                "unparseable": "magenta", "pending": "blue", "marked": "green"}
STATUS_WORD = {"correct": "correct", "ecf": "carried forward", "misconception": "misconception", "wrong": "wrong",
               "blank": "no answer", "unparseable": "unreadable", "pending": "to be marked by hand",
               "marked": "marked by hand"}
HAND = ("pending", "marked")       # a written part's statuses: shown in summaries only where a key has one


def key_answer(part: Any) -> str:
    """The key's answer to a part as text: its exact form or value, or a written part's model answer."""
    if part.kind == "written":
        return model_answer_text(part)
    return part.exact or shape_answer(part) or fmt_value(part.expected)


def unique_names(results: list[SubmissionResult]) -> list[str]:
    """One distinct safe file name per result (duplicates of one id get -2, -3, …;
    comparison is case-insensitive for case-insensitive file systems)."""
    seen: dict[str, int] = {}
    names = []
    for res in results:
        base = safe_name(res.student_id)
        k = base.lower()
        seen[k] = seen.get(k, 0) + 1
        names.append(base if seen[k] == 1 else f"{base}-{seen[k]}")
    return names


def fmt_value(value: Any, digits: int = 4) -> str:
    """A parsed answer in one line: numbers to ``digits`` significant figures, lists bracketed;
    with decimal commas (examprep.answers.parse.decimal_comma) "0,5" and "[0,1; 0,9]"."""
    if decimal_comma_on() and isinstance(value, (float, list)):
        if isinstance(value, list):
            return "[" + "; ".join(fmt_value(v, digits) for v in value) + "]"
        return _fmt_value(value, digits).replace(".", ",")
    return _fmt_value(value, digits)


def _fmt_value(value: Any, digits: int) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "∞" if value > 0 else "−∞"
        return rounded(value, digits)
    if isinstance(value, list):
        return "[" + ", ".join(fmt_value(v, digits) for v in value) + "]"
    return str(value)


def answer_text(r: PartResult, n: int = 80) -> str | None:
    """What the student wrote and, where it reads differently, the value it was read as:
    "1/3 (read as 0.3333)", "[0.1 0.2 0.7]", "e/(2e + 1)". None for no answer."""
    pieces = answer_pieces(r, n)
    if pieces is None:
        return None
    shown, read = pieces
    return shown if read is None else f"{shown} (read as {read})"


def answer_pieces(r: PartResult, n: int = 80) -> tuple[str, str | None] | None:
    """answer_text's two pieces: what the student wrote (its first ``n`` characters, then "…") and
    the value it was read as, None where that only repeats what was written; None for no answer.
    Whether it repeats is decided on the whole answer: a long written answer, cut, is not "read
    as" itself."""
    raw = raw_text(r.raw)
    if raw is None or not raw.strip():
        return None
    raw = raw.strip()
    shown = raw if len(raw) <= n else raw[:n] + "…"
    if r.value is None:
        return shown, None
    read = fmt_value(r.value)
    return shown, None if _reads_as(raw, r.value, read) else read


_LAYOUT = str.maketrans("", "", " ,*\t")


def _reads_as(raw: str, value: Any, shown: str) -> bool:
    """Is the value just the raw text read back (so "read as" would only repeat it)? Unicode
    forms count as written (−0.5 is -0.5)."""
    if isinstance(value, str) and (raw == value.strip() or raw.endswith("…") and value.startswith(raw[:-1])):
        return True          # a written answer or a choice: the text itself (raw_text cuts a long one)
    raw = normalise(raw)
    if raw.translate(_LAYOUT) == shown.translate(_LAYOUT) or raw == str(value):
        return True
    try:
        return json.loads(raw) == value if raw[:1] == "[" else float(raw) == value
    except (ValueError, TypeError, RecursionError):
        return False


_points = fmt_points         # one score formatter for grade and the quiz

# ----------------------------------------------------------------------------- terminal

def class_table(results: list[SubmissionResult], limit: int | None = 200, *, width: int | None = None,
                wide: bool = False, conflicts: Any = ()) -> Any:
    """A rich table, one row per student: student, total, percentage and flags (carried
    forward, misconceptions, blanks, unreadable, warnings), with one column per question when
    those fit in ``width`` columns (always with ``wide``, which may need more; print it with
    table_width()). No score or total is ever cut. At most ``limit`` rows (the caption says how
    many were left out: the CSV export has them all). ``conflicts`` (examprep.grading.identity.Conflict):
    students graded from none of their submissions, a row each after them, total "conflict"."""
    shown = results if limit is None or len(results) <= limit else results[:limit]
    table = _class_table(results, shown, per_question=True, conflicts=conflicts)
    if wide or width is None:
        return table
    cut = {printable(r.student_id)[:15] if len(printable(r.student_id)) > 16 else printable(r.student_id)
           for r in shown}
    layouts: list[dict[str, Any]] = [{"per_question": True, "conflicts": conflicts}]
    if len(cut) == len({r.student_id for r in shown}):      # long ids end in "…" only while they stay apart
        layouts.append({"per_question": True, "id_width": 16, "conflicts": conflicts})
    for layout in layouts:
        table = _class_table(results, shown, **layout)
        if table_width(table, minimum=True) <= width:
            return _flags_to_width(results, shown, layout, table, width)
    layout = {"per_question": False, "conflicts": conflicts}
    table = _flags_to_width(results, shown, layout, _class_table(results, shown, **layout), width)
    table.caption = ((table.caption + "; ") if table.caption else "") + \
        f"scores per question do not fit in {width} columns: --wide shows them, --csv FILE has them"
    return table


def _flags_to_width(results: list[SubmissionResult], shown: list[SubmissionResult], layout: dict[str, Any],
                    table: Any, width: int) -> Any:
    """The table again with its flags column as wide as the terminal leaves it (15 columns fit
    beside any id, so more is only given where the table's natural width has room: at 80 columns
    a row's flags wrapped after 15 characters in a 55-column table)."""
    room = width - table_width(table)
    if room <= 0:
        return table
    return _class_table(results, shown, **layout, flags_width=15 + room)


def table_width(table: Any, minimum: bool = False) -> int:
    """The columns a table needs: its natural width, or with ``minimum`` the least it can be
    squeezed to without cutting a cell that must stay whole."""
    console = Console(width=100_000)
    m = Measurement.get(console, console.options, table)
    return m.minimum if minimum else m.maximum


def _class_table(results: list[SubmissionResult], shown: list[SubmissionResult], per_question: bool,
                 id_width: int | None = None, flags_width: int = 15, conflicts: Any = ()) -> Any:
    n_q = max((len(r.problems) for r in results), default=0) if per_question else 0
    table = Table(box=box.SIMPLE_HEAVY, title=f"{len(results)} submission{'s' if len(results) != 1 else ''}",
                  pad_edge=per_question)     # the compact table gives its edges' two columns to the ids
    if id_width:
        table.add_column("student", no_wrap=True, overflow="ellipsis", max_width=id_width)
    else:                # ids stay whole (up to 24 characters): the flags wrap first
        longest = max((len(printable(r.student_id)) for r in shown), default=7)
        table.add_column("student", overflow="fold", min_width=min(max(longest, 7), 24))
    for q in range(1, n_q + 1):
        table.add_column(f"q{q}", justify="right", no_wrap=True)
    table.add_column("total", justify="right", style="bold", no_wrap=True)
    table.add_column("%", justify="right", no_wrap=True)
    table.add_column("flags", style="dim", min_width=12, max_width=flags_width)    # they wrap before an id is cut
    if len(shown) < len(results):
        table.caption = f"first {len(shown)} of {len(results)} students; --csv FILE lists them all"
    for res in shown:
        cells = []
        for q in range(n_q):
            if q < len(res.problems):
                pr = res.problems[q]
                full = pr.score >= pr.max_score - 1e-9
                style = "green" if full else "yellow" if pr.score > 0 else "red"
                cells.append(f"[{style}]{_points(pr.score)}/{_points(pr.max_score)}[/]")
            else:
                cells.append("")
        counts = res.counts()
        notes = ", ".join(f"{counts[s]} {STATUS_WORD[s] if s != 'pending' else 'to mark'}"
                          for s in ("ecf", "misconception", "blank", "unparseable", "pending") if counts[s])
        if res.warnings:
            notes += ("; " if notes else "") + f"{len(res.warnings)} warning{'s' if len(res.warnings) > 1 else ''}"
        table.add_row(escape(res.student_id), *cells, f"{_points(res.score)}/{_points(res.max_score)}",
                      f"{res.percent:.0f}", notes)
    for c in conflicts:                 # graded from none of their submissions: listed below the table
        table.add_row(escape(c.student_id), *[""] * n_q, "[red]conflict[/]", "",
                      f"{len(c.sources)} submissions, not graded")
    return table


def conflict_markdown(conflict: Any) -> str:
    """A conflicted student's report (examprep.grading.identity.Conflict): no scores, the files
    involved and how the conflict is resolved."""
    lines = [f"# Feedback — {_md(conflict.student_id)}", "",
             "**Not graded: this submission is in conflict.**", "", f"Why: {_md(conflict.reason)}.", "",
             "Submissions involved:", ""]
    lines += [f"- {_md(src)}" for src in conflict.sources]
    lines += ["", f"To resolve: {_md(conflict.hint)}; then grade again."]
    return "\n".join(lines)


def escape(text: str) -> str:
    """Student text for rich markup: printable, with its square brackets escaped."""
    return terminal(text)


def _to_mark(res: SubmissionResult) -> str:
    """" · 3 pt to mark" when written parts wait for hand marks: the score is not final yet."""
    pending = sum(r.max_score for _, _, r in res.parts() if r.status == "pending")
    return f" · {_points(pending)} pt to mark" if pending else ""


def feedback_view(res: SubmissionResult, *, show_answers: bool = False) -> Any:
    """One student's feedback: per question, each part's result and score, the answer as read,
    then the feedback and (when wrong) the rule; the key's answer too with ``show_answers``."""
    blocks: list[Any] = []
    head = Text.assemble((printable(res.student_id), "bold"), (f"  {printable(res.name)}" if res.name else "", ""),
                         (f"  {_points(res.score)}/{_points(res.max_score)} ({res.percent:.0f}%)", "bold"),
                         (_to_mark(res), STATUS_STYLE["pending"]),
                         (f"  variant {printable(res.variant)}" if res.variant else "", "dim"),
                         (f"  {printable(res.source)}", "dim"))
    blocks.append(head)
    for w in res.warnings:
        blocks.append(Text(f"warning: {printable(w)}", style="yellow"))
    for pr in res.problems:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        for i, r in enumerate(pr.parts):
            style = STATUS_STYLE[r.status]
            body = Text.assemble((STATUS_WORD[r.status], style + " bold"),
                                 (f" ({printable(r.misconception.id)})" if r.misconception else "", style),
                                 (f"  {_points(r.score)}/{_points(r.max_score)}", "bold"))
            shown = answer_text(r)
            if shown is not None:
                body.append("  your answer ", style="dim")
                body.append(printable(shown))
            if show_answers and not r.full_marks:
                part = pr.problem.parts[i]
                body.append("  answer ", style="dim")
                body.append(key_answer(part))
            if r.status not in ("correct", "blank") and r.feedback != STATUS_WORD[r.status]:
                body.append("\n" + printable(r.feedback))
            elif r.note:                 # how a correct answer was accepted (a decimal approximation, x > 0)
                body.append("\n" + printable(r.note), style="dim")
            if r.status in ("wrong", "unparseable"):
                body.append(f"\nrule: {r.rule}", style="dim")
            grid.add_row(Text(f"({Problem.label(i)}) {printable(r.part_id)}"), body)
        title = f"q{pr.number} {pr.problem.title} — {_points(pr.score)}/{_points(pr.max_score)}"
        blocks.append(Panel(grid, title=Text(printable(title)), title_align="left", box=box.ROUNDED))   # not markup
    return Group(*blocks)


SHORT = {"correct": "right", "ecf": "ECF", "misconception": "misc", "wrong": "wrong", "blank": "blank",
         "unparseable": "unread", "pending": "todo", "marked": "hand"}


def summary_view(results: list[SubmissionResult], top: int = 8, *, width: int | None = None) -> Any:
    """The class summary: mean per question, how the parts went (counts of each verdict), and
    the most frequent misconceptions with their explanations. Within ``width`` columns every
    header stays whole (question titles shorten first; see _summary_tables)."""
    questions, mis = summarise(results)
    blocks: list[Any] = _summary_tables(questions, width)
    if mis:
        mt = Table(box=box.SIMPLE, title="most frequent misconceptions", title_justify="left")
        mt.add_column("part", no_wrap=True)
        mt.add_column("misconception", no_wrap=True)
        mt.add_column("n", justify="right")
        mt.add_column("explanation", overflow="fold")
        for addr, mid, count, expl in mis[:top]:
            mt.add_row(escape(addr), escape(mid), str(count), escape(expl))
        if len(mis) > top:
            mt.caption = f"{len(mis) - top} more in --json"
        blocks.append(mt)
    return Group(*blocks)


def _summary_table(questions: list[Any], statuses: list[str], question_width: int, *, mean: bool = True,
                   title: str = "class summary (parts per verdict)", caption: str | None = None) -> Any:
    qt = Table(box=box.SIMPLE, title=title, title_justify="left", padding=(0, 1), caption=caption,
               caption_justify="left")
    qt.add_column("question", no_wrap=True, overflow="ellipsis", max_width=question_width)
    if mean:
        qt.add_column("mean", justify="right", no_wrap=True, min_width=11)
    for s in statuses:
        qt.add_column(SHORT[s], justify="right", style=STATUS_STYLE[s], no_wrap=True, min_width=len(SHORT[s]))
    for q in questions:
        pct = 100 * q.mean / q.max_score if q.max_score else 0
        qt.add_row(escape(f"{q.label} {q.title}"), *([f"{_points(q.mean)}/{_points(q.max_score)} {pct:.0f}%"] if mean else []),
                   *[str(q.statuses[s] or "") for s in statuses])
    return qt


def _summary_tables(questions: list[Any], width: int | None) -> list[Any]:
    """The class summary's table(s) in ``width`` columns, every header whole (issue 36: at 80
    columns `todo` and `hand` were cut off): the titles shorten first, down to "q17 Va…"; then the
    verdicts no part has leave (the caption names them); then the verdicts are shared out among
    the fewest tables that fit."""
    hand = any(q.statuses[s] for q in questions for s in HAND)
    shown = [s for s in STATUS_WORD if s not in HAND or any(q.statuses[s] for q in questions)]
    natural = 11 if hand else 16
    table = _summary_table(questions, shown, natural)
    if width is None or table_width(table) <= width:
        return [table]
    least = max(len("question"), max((len(q.label) for q in questions), default=3) + 4)      # "q17 Va…"

    def squeezed(statuses: list[str], **kw: Any) -> Any:
        """The table with its titles as wide as ``width`` leaves them, or None where even "q17 Va…" does not fit."""
        others = table_width(_summary_table(questions, statuses, least, **kw)) - least
        room = min(natural, width - others)
        return _summary_table(questions, statuses, room, **kw) if room >= least else None

    found = squeezed(shown)
    if found is not None:
        return [found]
    used = [s for s in shown if any(q.statuses[s] for q in questions)]
    unused = [SHORT[s] for s in shown if s not in used]
    note = f"no part was {', '.join(unused[:-1])} or {unused[-1]}" if len(unused) > 1 else \
        f"no part was {unused[0]}" if unused else None
    found = squeezed(used, caption=note)
    if found is not None:
        return [found]
    for k in range(2, len(used) + 1):       # then the fewest tables of about as many verdicts each
        size = -(-len(used) // k)
        groups = [used[i:i + size] for i in range(0, len(used), size)]
        kws = [{"mean": n == 0, "caption": note if n == len(groups) - 1 else None,
                "title": "class summary (parts per verdict)" if n == 0 else "class summary, continued"}
               for n in range(len(groups))]
        tables = [squeezed(group, **kw) for group, kw in zip(groups, kws)]
        if all(t is not None for t in tables):
            return tables
    return [_summary_table(questions, used, least, caption=note)]     # narrower than any table: rich cuts it


# ----------------------------------------------------------------------------- Markdown

def _md(text: str) -> str:
    """Text from a student (or a file) inside Markdown: printable, on one line, and as
    examprep.escape.markdown_cell makes it: <script>, <img onerror=…> show as text, [x](javascript:…)
    is no link and a '|' does not split a table cell."""
    return markdown_cell(printable(str(text).replace("\r\n", " ").replace("\n", " ")))


def _md_code(text: str) -> str:
    """Text a student wrote as a Markdown code span in a table cell: shown verbatim, so no Markdown,
    HTML or math is read from it (MathJax and GitHub skip code: a written "\\(p - y\\)" or "$x$" is
    not typeset, and a backslash is not doubled); on one line, a fence longer than any run of
    backticks in it, and "|" as "\\|", which GFM tables read as "|" inside the span."""
    text = printable(" ".join(str(text).split()))
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text[:1] == "`" or text[-1:] == "`" else ""
    body = text.replace("|", "\\|")
    return f"{fence}{pad}{body}{pad}{fence}"


def _md_answer(r: PartResult) -> str:
    """The "your answer" cell: what was written, as code (_md_code), then what it was read as."""
    pieces = answer_pieces(r)
    if pieces is None:
        return "—"
    shown, read = pieces
    return _md_code(shown) + ("" if read is None else f" (read as {_md(read)})")


WHOLE = 80          # a written answer longer than this, or of several lines, is shown whole below its table


def _whole_written(part: Any, r: PartResult) -> str | None:
    """A written answer too long or of too many lines for a table cell, whole; None for any other."""
    text = raw_text(r.raw, None) if part.kind == "written" else None
    if text is None or not text.strip():
        return None
    text = text.strip()
    return text if len(text) > WHOLE or "\n" in text else None


def _md_block(text: str) -> list[str]:
    """Text a student wrote as a fenced code block: verbatim (no Markdown, HTML or math is read from
    it, as in _md_code), its own lines kept, each wrapped at 100 characters for the reader."""
    lines = [w for line in text.splitlines() for w in (textwrap.wrap(printable(line), 100) or [""])]
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return [f"{fence}text", *lines, fence]


def markdown_report(res: SubmissionResult, *, show_answers: bool = False) -> str:
    """A student's feedback as Markdown: score, then per question a table of parts; a long written
    answer is shown whole below its question's table (a table cell holds one line)."""
    lines = [f"# Feedback — {heading(res.student_id)}" + (f" ({heading(res.name)})" if res.name else ""), "",
             f"**Score: {_points(res.score)} / {_points(res.max_score)} ({res.percent:.0f}%)**", ""]
    if res.variant:
        lines += [f"Variant: {_md(res.variant)}", ""]
    for w in res.warnings:
        lines.append(f"> warning: {_md(w)}")
    if res.warnings:
        lines.append("")
    for pr in res.problems:
        lines += [f"## q{pr.number}. {heading(pr.problem.title)} — {_points(pr.score)} / {_points(pr.max_score)}", ""]
        head = "| part | result | score | your answer |" + (" answer |" if show_answers else "") + " feedback |"
        lines += [head, "|" + "---|" * (6 if show_answers else 5)]
        below: list[str] = []
        for i, r in enumerate(pr.parts):
            status = STATUS_WORD[r.status] + (f" ({printable(r.misconception.id)})" if r.misconception else "")
            name = f"({Problem.label(i)}) {_md_code(r.part_id)}"
            whole = _whole_written(pr.problem.parts[i], r)
            if whole is not None:
                below += ["", f"**{name}, your answer:**", "", *_md_block(whole)]
            shown = "shown in full below the table" if whole is not None else _md_answer(r)
            cells = [name, status, f"{_points(r.score)}/{_points(r.max_score)}", shown]
            if show_answers:
                part = pr.problem.parts[i]
                cells.append(_md(key_answer(part)))
            fb = r.note if r.status == "correct" else r.feedback
            if r.status in ("wrong", "unparseable"):
                fb += f" — rule: {r.rule}"
            cells.append(_md(fb))
            lines.append("| " + " | ".join(cells) + " |")
        lines += below + [""]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- Gradescope

def gradescope_json(res: SubmissionResult, *, visibility: str = "visible", show_answers: bool = False) -> dict[str, Any]:
    """Gradescope's autograder results: {"score", "output", "visibility", "tests": [one per part:
    {"name", "score", "max_score", "output", "visibility", "status"}]}."""
    tests = []
    for pr in res.problems:
        for i, r in enumerate(pr.parts):
            out = [f"{STATUS_WORD[r.status]}" + (f" ({r.misconception.id})" if r.misconception else "")]
            if r.status != "correct" and r.feedback != STATUS_WORD[r.status]:
                out.append(r.feedback)
            elif r.note:
                out.append(r.note)
            shown = answer_text(r, 200)
            if shown is None:
                shown = "—"
            elif r.value is None:                        # unreadable: what was written, so it can be checked
                shown = repr(shown) + " (could not be read)"
            out.append(f"your answer: {shown}")
            if show_answers:
                part = pr.problem.parts[i]
                out.append(f"answer: {key_answer(part)}")
            out.append(f"rule: {r.rule}")
            test = {"name": f"q{pr.number}({Problem.label(i)}) {r.part_id} — {pr.problem.title}",
                    "score": round(r.score, 4), "max_score": r.max_score, "output": "\n".join(out),
                    "visibility": visibility, "status": "passed" if r.full_marks else "failed"}
            if r.status == "pending":        # neither passed nor failed until it is marked
                del test["status"]
            tests.append(test)
    output = f"{res.student_id}: {_points(res.score)}/{_points(res.max_score)}"
    if res.warnings:
        output += "\n" + "\n".join(f"warning: {w}" for w in res.warnings)
    return {"score": round(res.score, 4), "output": output, "visibility": visibility, "tests": tests}


# ----------------------------------------------------------------------------- CSV / JSON

def csv_text(results: list[SubmissionResult], conflicts: Any = ()) -> str:
    """One row per student: id, name, source, per question and per part scores, total, max, %,
    misconceptions, warnings, then per part the answer as written ("q1.loss answer"); a student
    in conflict (examprep.grading.identity.Conflict) has "conflict" as total, the sources and the
    reason, and no scores. Cells that a spreadsheet would run as a formula (=, +, -, @ first) are
    prefixed with '."""
    addresses: list[str] = []
    n_q = max((len(r.problems) for r in results), default=0)
    for res in results:
        for addr, _, _ in res.parts():
            if addr not in addresses:
                addresses.append(addr)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["student_id", "name", "source", "variant", *[f"q{q}" for q in range(1, n_q + 1)], *addresses,
                "total", "max", "percent", "misconceptions", "warnings", *[f"{a} answer" for a in addresses]])
    for res in results:
        per_part = {addr: r for addr, _, r in res.parts()}
        q_scores = [_points(res.problems[q].score) if q < len(res.problems) else "" for q in range(n_q)]
        mis = "; ".join(f"{a}:{r.misconception.id}" for a, _, r in res.parts() if r.misconception)
        w.writerow([safe_cell(res.student_id), safe_cell(res.name), safe_cell(res.source), safe_cell(res.variant), *q_scores,
                    *[("pending" if per_part[a].status == "pending" else _points(per_part[a].score))
                      if a in per_part else "" for a in addresses],
                    _points(res.score), _points(res.max_score), f"{res.percent:.1f}", mis,
                    safe_cell(" | ".join(res.warnings)),
                    *[safe_cell(raw_text(per_part[a].raw) or "") if a in per_part else "" for a in addresses]])
    for c in conflicts:
        w.writerow([safe_cell(c.student_id), "", safe_cell(" | ".join(c.sources)), "", *[""] * (n_q + len(addresses)),
                    "conflict", "", "", "", safe_cell(f"conflict: {c.reason}"), *[""] * len(addresses)])
    return buf.getvalue()


CELL_LIMIT = 32_000        # a spreadsheet cell holds 32,767 characters


def safe_cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: printable, at most CELL_LIMIT characters, and a leading
    =, +, -, @, tab or CR (a formula) prefixed with '."""
    text = printable(text)          # no ESC sequence for a terminal that shows the file, no lone surrogate
    if len(text) > CELL_LIMIT:
        text = text[:CELL_LIMIT - 1] + "…"
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_surrogates(text: str) -> str:
    """Lone surrogates as the escape \\udcff: UTF-8 cannot encode them, and in a JSON string the
    escape reads back as the same value."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dump_json(data: Any, indent: int | None = None) -> str:
    """JSON text that any UTF-8 file or terminal takes (see ``_no_surrogates``)."""
    return _no_surrogates(json.dumps(data, ensure_ascii=False, allow_nan=False, indent=indent))


def json_text(batch: BatchResult) -> str:
    questions, mis = summarise(batch.results)
    data = {"format": "examprep-grades", "key": batch.key_info, "warnings": batch.warnings,
            "submissions": [r.to_dict() for r in batch.results], "unreadable": batch.unreadable, "notes": batch.notes,
            "conflicts": [c.to_dict() for c in batch.conflicts], "unknown_ids": [u.to_dict() for u in batch.unknown],
            "summary": {"questions": [{"question": q.label, "title": q.title, "mean": round(q.mean, 4),
                                       "max_score": q.max_score, "statuses": dict(q.statuses)} for q in questions],
                        "misconceptions": [{"part": a, "misconception": m, "count": c, "explanation": e}
                                           for a, m, c, e in mis]}}
    # compact: json.dumps with an indent runs the pure-Python encoder, 10× slower on a class
    return dump_json(data)


__all__ = ["address", "class_table", "csv_text", "feedback_view", "gradescope_json", "json_text", "markdown_report",
           "safe_cell", "safe_name", "summary_view", "unique_names"]
