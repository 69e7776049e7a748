"""`grade --gradebook LMS FILE`: the grade-import CSV each LMS documents, one row per student with
the exam's total, matched on the identifier columns that LMS reads.

- canvas: Student, ID, SIS User ID, SIS Login ID, Section, then the exam as a new assignment
  column; the second row is "Points Possible" (Canvas matches on ID, SIS User ID or SIS Login ID).
- moodle: ID number, Username, Email address, Full name, the exam; the instructor maps one
  identifier column and the grade column on Moodle's CSV import page.
- blackboard: Last Name, First Name, Username, Student ID, then "<exam> [Total Pts: P Score]";
  Blackboard matches on Username, every field quoted (its comma-delimited format).
- brightspace: OrgDefinedId, Username (written "#name", as Brightspace's export does), "<exam>
  Points Grade", End-of-Line Indicator ("#").

Identifiers come from the roster's columns (id, name, email, username, sis_id); without a roster
from each submission's student_id, and columns nothing fills stay empty (with one warning). A
student on the roster with no submission gets an empty cell, never 0, and is listed; so is one
whose submission could not be read, listed as unreadable with the reason.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

from examprep.errors import ParamError
from examprep.grading.report_text import safe_cell

LMSES = ("canvas", "moodle", "blackboard", "brightspace")


@dataclass
class Gradebook:
    text: str
    missing: list[str] = field(default_factory=list)      # on the roster, no submission: an empty cell
    warnings: list[str] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # on the roster, (id, why) not read: an empty cell


@dataclass
class _Row:
    id: str
    name: str = ""
    email: str = ""
    username: str = ""
    sis_id: str = ""
    score: float | None = None


def check_lms(lms: str) -> str:
    name = lms.strip().lower()
    if name not in LMSES:
        raise ParamError(f"--gradebook: unknown LMS {lms!r}; expected one of {', '.join(LMSES)}")
    return name


def _fmt(score: float | None) -> str:
    return "" if score is None else f"{round(score, 4):g}"


def build(lms: str, results: list[Any], *, title: str, roster: list[Any] | None = None,
          conflicted: list[str] | None = None, unreadable: dict[str, str] | None = None) -> Gradebook:
    """The gradebook CSV for ``lms`` of graded ``results`` (SubmissionResult) and, if given, the
    ``roster`` (examprep.sheets.variants.Student). A ``conflicted`` student (examprep.grading.identity)
    gets an empty cell, as a missing one does, and is not listed as missing: the conflict is. A
    student of ``unreadable`` (id: the line saying why, BatchResult.unreadable_of) with no graded
    submission gets an empty cell and is listed as unreadable, with the reason, not as missing."""
    lms = check_lms(lms)
    warnings: list[str] = []
    by_id: dict[str, Any] = {}
    for res in results:
        if res.student_id in by_id:
            warnings.append(f"student {res.student_id!r} graded twice: the first submission's total is used")
            continue
        by_id[res.student_id] = res
    points = max((res.max_score for res in results), default=0.0)
    pending = sum(1 for res in results if any(r.status == "pending" for _, _, r in res.parts()))
    if pending:
        warnings.append(f"{pending} student{'s have' if pending != 1 else ' has'} written parts still to be marked: "
                        "their totals leave them out (merge the marks with --marks first)")
    rows: list[_Row] = []
    missing: list[str] = []
    not_read: list[tuple[str, str]] = []
    if roster is not None:
        on_roster = set()
        for st in roster:
            on_roster.add(st.id)
            res = by_id.get(st.id)
            if res is None and st.id in (unreadable or {}) and st.id not in (conflicted or ()):
                not_read.append((st.id, (unreadable or {})[st.id]))
            elif res is None and st.id not in (conflicted or ()):
                missing.append(st.id)
            rows.append(_Row(st.id, st.name or (res.name if res else ""), st.email, st.username, st.sis_id,
                             res.score if res is not None else None))
        extra = [sid for sid in by_id if sid not in on_roster]
        if extra:
            warnings.append(f"{len(extra)} graded student{'s are' if len(extra) != 1 else ' is'} not on the roster "
                            f"(written with their student id only): {', '.join(extra[:10])}"
                            + (" …" if len(extra) > 10 else ""))
            rows += [_Row(sid, by_id[sid].name, score=by_id[sid].score) for sid in extra]
    else:
        rows = [_Row(res.student_id, res.name, score=res.score) for res in by_id.values()]
        rows += [_Row(sid) for sid in conflicted or () if sid not in by_id]      # an empty cell, as on a roster
    text, empty = _WRITERS[lms](rows, title, points)
    if empty:
        warnings.append(f"{', '.join(empty)} left empty: "
                        + ("the roster has no such column" if roster is not None else "give --roster with them")
                        + f" ({lms} matches students on {_MATCH[lms]})")
    return Gradebook(text, missing, warnings, not_read)


_MATCH = {"canvas": "ID, SIS User ID or SIS Login ID", "moodle": "the identifier column chosen on import",
          "blackboard": "Username", "brightspace": "OrgDefinedId or Username"}


def _csv(rows: list[list[str]], quote_all: bool = False) -> str:
    """The rows as CSV, every cell one a spreadsheet shows as text (a roster name "=HYPERLINK(…)"
    is never run as a formula; scores are never negative, so they are untouched)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
    w.writerows([[safe_cell(str(c)) for c in row] for row in rows])
    return buf.getvalue()


def _empty(rows: list[_Row], columns: dict[str, str]) -> list[str]:
    """The named columns no row fills."""
    return [name for name, attr in columns.items() if rows and not any(getattr(r, attr) for r in rows)]


def _canvas(rows: list[_Row], title: str, points: float) -> tuple[str, list[str]]:
    # without a roster the student id is the SIS User ID: the institution's id is what students write
    out = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", title],
           ["    Points Possible", "", "", "", "", f"{points:g}"]]
    out += [[r.name, "", r.sis_id or r.id, r.username, "", _fmt(r.score)] for r in rows]
    return _csv(out), _empty(rows, {"Student": "name", "SIS Login ID": "username"})


def _moodle(rows: list[_Row], title: str, points: float) -> tuple[str, list[str]]:
    out = [["ID number", "Username", "Email address", "Full name", title]]
    out += [[r.sis_id or r.id, r.username, r.email, r.name, _fmt(r.score)] for r in rows]
    return _csv(out), _empty(rows, {"Username": "username", "Email address": "email", "Full name": "name"})


def _split(name: str) -> tuple[str, str]:
    first, _, last = name.strip().rpartition(" ")
    return (last, first) if first else (name.strip(), "")


def _blackboard(rows: list[_Row], title: str, points: float) -> tuple[str, list[str]]:
    out = [["Last Name", "First Name", "Username", "Student ID", f"{title} [Total Pts: {points:g} Score]"]]
    for r in rows:
        last, first = _split(r.name)
        out.append([last, first, r.username, r.sis_id or r.id, _fmt(r.score)])
    return _csv(out, quote_all=True), _empty(rows, {"Last Name": "name", "First Name": "name", "Username": "username"})


def _brightspace(rows: list[_Row], title: str, points: float) -> tuple[str, list[str]]:
    out = [["OrgDefinedId", "Username", f"{title} Points Grade", "End-of-Line Indicator"]]
    out += [[r.sis_id or r.id, f"#{r.username}" if r.username else "", _fmt(r.score), "#"] for r in rows]
    return _csv(out), _empty(rows, {"Username": "username"})


_WRITERS = {"canvas": _canvas, "moodle": _moodle, "blackboard": _blackboard, "brightspace": _brightspace}
