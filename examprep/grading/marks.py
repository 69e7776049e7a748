"""Hand marks for written parts: `examprep grade KEY SUBS --marks marks.csv` merges them into
every output, and `--marks-template FILE` writes the rows to fill in.

marks.csv has a header row and the columns ``student_id``, ``part`` (as grades.json names it:
q3.w1), ``points`` and ``comment`` (optional); other columns (the template's name, max_points and
answer) are read past, except that a ``max_points`` that disagrees with the part's points is an
error (the file was made for another key). A row with empty points is not marked yet: the part
stays pending. A written part left blank is "no answer" (0 points): the template leaves it out,
and a row giving it points is an error (0 is read past). Any other bad row (more or fewer cells
than the header — a decimal comma —, an unterminated quote, an unknown student or part, a part
that is not written, points that are not a number, negative or above the part's, a part marked
twice) is a MarksError naming the file and row; the command writes nothing then.
"""
from __future__ import annotations

import csv
import difflib
import io
import math
from dataclasses import dataclass, replace
from typing import Any

from examprep.answers import raw_text
from examprep.answers.files import printable
from examprep.errors import ExamprepError
from examprep.fileio import read_user_text
from examprep.grading.grade import address
from examprep.grading.report_text import CELL_LIMIT, safe_cell

COLUMNS = ("student_id", "part", "points", "comment")
TEMPLATE_COLUMNS = ("student_id", "name", "part", "max_points", "points", "comment", "answer", "prompt")


class MarksError(ExamprepError):
    """A marks file that cannot be merged: one line naming the file, the row and what is wrong."""


@dataclass(frozen=True)
class Mark:
    student_id: str
    address: str
    points: float
    comment: str
    row: int
    max_points: str = ""           # as the template wrote it; checked against the part's points


def read_marks(path: str) -> tuple[list[Mark], list[str]]:
    """The marks of a CSV file (MarksError for a bad header or value) and the rows left pending."""
    text = read_user_text(path, f"--marks {path}", error=MarksError)
    reader = csv.reader(io.StringIO(text), strict=True)
    try:
        rows = list(reader)
    except csv.Error as err:        # an unterminated quote, a stray one inside a cell
        raise MarksError(f"{path}: line {reader.line_num}: not valid CSV: {err} (a quote left open?)") from None
    if not rows:
        raise MarksError(f"{path}: empty; the first row names the columns {', '.join(COLUMNS)}")
    header = [h.strip().lower() for h in rows[0]]
    missing = [c for c in COLUMNS[:3] if c not in header]
    if missing:
        raise MarksError(f"{path}: row 1: no {missing[0]!r} column; the header names {', '.join(COLUMNS)} "
                         "(`--marks-template FILE` writes one to fill in)")
    col = {c: header.index(c) for c in (*COLUMNS, "max_points") if c in header}
    marks: list[Mark] = []
    pending: list[str] = []
    for n, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise MarksError(f"{path}: row {n}: {len(row)} cells where the header has {len(header)} (a decimal "
                             "comma? write 2.5, or quote a cell that holds a comma)")

        def cell(name: str, row: list[str] = row) -> str:
            i = col.get(name)
            return row[i].strip() if i is not None and i < len(row) else ""

        sid, addr, pts = cell("student_id"), cell("part"), cell("points")
        if not sid or not addr:
            raise MarksError(f"{path}: row {n}: {'student_id' if not sid else 'part'} is empty")
        if not pts:
            pending.append(f"{sid} {addr}")
            continue
        try:
            value = float(pts)
        except ValueError:
            raise MarksError(f"{path}: row {n}: points {pts!r} is not a number") from None
        if not math.isfinite(value) or value < 0:
            raise MarksError(f"{path}: row {n}: points must be a number from 0 to the part's points, got {pts}")
        marks.append(Mark(sid, addr, value, cell("comment"), n, cell("max_points")))
    return marks, pending


def apply_marks(results: list[Any], marks: list[Mark], path: str) -> int:
    """Put each mark on its student's written part (status "marked", its points, the comment as
    feedback). Checks every row before changing anything; returns the number of parts marked."""
    by_id: dict[str, Any] = {}
    for res in results:
        by_id.setdefault(res.student_id, res)
    seen: dict[tuple[str, str], int] = {}
    targets = []
    for m in marks:
        res = by_id.get(m.student_id)
        if res is None:
            close = difflib.get_close_matches(m.student_id, list(by_id), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else "; no graded submission has that id"
            raise MarksError(f"{path}: row {m.row}: unknown student {m.student_id!r}{hint}")
        parts = {addr: (pr, i, r) for addr, pr, i, r in _indexed(res)}
        if m.address not in parts:
            written = [a for a, (pr, i, r) in parts.items() if pr.problem.parts[i].kind == "written"]
            close = difflib.get_close_matches(m.address, written, n=1, cutoff=0.5)
            hint = (f"; did you mean {close[0]}?" if close
                    else f"; {m.student_id}'s written parts: {', '.join(written) or 'none'}")
            raise MarksError(f"{path}: row {m.row}: {m.student_id} has no part {m.address!r}{hint}")
        pr, i, r = parts[m.address]
        part = pr.problem.parts[i]
        if part.kind != "written":
            raise MarksError(f"{path}: row {m.row}: {m.address} is not a written part (it is graded "
                             "automatically); only written parts take hand marks")
        if m.max_points:
            try:
                stated = float(m.max_points)
            except ValueError:
                stated = math.nan
            if not abs(stated - part.points) <= 1e-9:
                raise MarksError(f"{path}: row {m.row}: max_points {m.max_points} for {m.student_id} {m.address}, "
                                 f"which is worth {part.points:g} (a template of another key?)")
        if m.points > part.points + 1e-9:
            raise MarksError(f"{path}: row {m.row}: {m.points:g} points for {m.student_id} {m.address}, which is "
                             f"worth {part.points:g}")
        key = (m.student_id, m.address)
        if key in seen:
            raise MarksError(f"{path}: row {m.row}: {m.student_id} {m.address} is already marked in row {seen[key]}")
        seen[key] = m.row
        if r.status == "blank":         # nothing written: no answer, 0 points (an older template listed it)
            if m.points > 0:
                raise MarksError(f"{path}: row {m.row}: {m.student_id} {m.address}: no answer was written, so it "
                                 "earns no points (give 0 or leave the row out)")
            continue
        targets.append((pr, i, r, m))
    for pr, i, r, m in targets:
        pr.parts[i] = replace(r, status="marked", score=m.points, feedback=m.comment or _no_comment(m.points, r.max_score))
    return len(targets)


def _no_comment(points: float, max_points: float) -> str:
    """The feedback of a mark given without a comment (never written back into a template)."""
    return f"marked by hand: {points:g} of {max_points:g}"


def _text_cell(text: str) -> str:
    """A CSV cell of text a person reads and edits: its line breaks kept (the csv module quotes the
    cell), anything else unprintable escaped, and no leading = + - @ that a spreadsheet would run."""
    text = "\n".join(printable(line) for line in str(text).replace("\r\n", "\n").split("\n"))
    if len(text) > CELL_LIMIT:
        text = text[:CELL_LIMIT - 1] + "…"
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _indexed(res: Any) -> Any:
    for pr in res.problems:
        for i, r in enumerate(pr.parts):
            yield address(pr.number, r.part_id), pr, i, r


def template_text(results: list[Any]) -> str:
    """Every written part of every graded student that has an answer, one row each, with what they
    wrote and the prompt, the points column empty (a mark already merged is filled in)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(TEMPLATE_COLUMNS)
    for res in results:
        for addr, pr, i, r in _indexed(res):
            part = pr.problem.parts[i]
            if part.kind != "written" or r.status == "blank":      # nothing written: nothing to mark
                continue
            done = r.status == "marked"
            comment = r.feedback if done and r.feedback != _no_comment(r.score, r.max_score) else ""
            w.writerow([safe_cell(res.student_id), safe_cell(res.name), addr, f"{part.points:g}",
                        f"{r.score:g}" if done else "", _text_cell(comment),
                        _text_cell(raw_text(r.raw) or ""), _text_cell(part.prompt)])
    return buf.getvalue()
