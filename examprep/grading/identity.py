"""Who a submission belongs to (issue 35): one grade per student, and never a classmate's.

A class's submissions are sorted out before any is graded:

- **owner**: where files follow an LMS download's naming (Moodle's ``Full Name_12345_assignsubmission_file_…``,
  Canvas's ``lastfirst_12345_67890_…`` or ``lastfirst_late_12345_67890_…``) or ``--id-from-filename``'s
  pattern, the file's owner is who the submission system says uploaded it. With a roster the owner
  is the roster's student whose ``lms_id`` (or, failing that column, whose name) is the file name's;
  without one, ``--id-from-filename``'s ``id`` group is the owner's student id (an LMS's participant
  number is not a student id, so Moodle and Canvas names need a roster to be checked). A
  ``student_id`` in a file that is not its owner's is a conflict; a file without one takes its owner's.
- **roster**: where one is given, it is the only source of valid ids; an id not on it is named and
  never graded.
- **one submission per id**: several submissions (files, or rows of a class CSV or JSON list) for
  one id are one when their answers are identical as read (the same parts, the same values, the
  same variant: a re-download or a double upload, noted), else a conflict: the student gets no
  grade from any of them until all but one are removed, or ``--newest`` takes the newest file by
  modification time (said, with both times).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from examprep.answers.files import excerpt
from examprep.errors import ParamError
from examprep.grading.grade import flatten_answers

MOODLE = re.compile(r"^(?P<name>.+?)_(?P<lms_id>\d+)_assignsubmission_[a-z]+_")
CANVAS = re.compile(r"^(?P<name>[a-z0-9]+)(?P<late>_late)?_(?P<lms_id>\d+)_(?P<attachment>\d+)_")


@dataclass(frozen=True)
class Owner:
    """Who uploaded a file, as its name says: ``system`` (Moodle, Canvas or the pattern), the LMS's
    participant id and name, and the student id (None until a roster maps it)."""

    system: str
    lms_id: str = ""
    name: str = ""
    student_id: str | None = None

    def said(self) -> str:
        """"Ada Lovelace's upload (Moodle participant 12345)"."""
        who = self.name or self.student_id or self.lms_id
        if self.system == "pattern":
            return f"{who}'s file (by --id-from-filename)"
        what = "participant" if self.system == "Moodle" else "user"
        return f"{who}'s upload ({self.system} {what} {self.lms_id})"


@dataclass
class Conflict:
    """A student who gets no grade: the submissions involved and why."""

    student_id: str
    sources: list[str]
    reason: str
    hint: str = "remove all but one, or rerun with --newest to take the newest file"

    def line(self) -> str:
        return f"student {self.student_id!r}: {self.reason}: {'; '.join(self.sources)}; not graded ({self.hint})"

    def to_dict(self) -> dict[str, Any]:
        return {"student_id": self.student_id, "status": "conflict", "reason": self.reason, "sources": self.sources}


@dataclass(slots=True)
class Unknown:
    """An id not on the roster (or a file whose owner the roster lacks): named, not graded. A class
    file may hold a million of them: each keeps only its id, its sources (file and row) and, for an
    owner the roster lacks, why; its line is made when asked for."""

    student_id: str
    sources: list[str]
    text: str = ""          # the whole line, for an owner the roster lacks; "" for an id not on roster_path
    roster_path: str = ""
    near: str = ""          # the roster's id that differs only in case (a hint, never used to grade)

    @property
    def line(self) -> str:
        hint = f" (did you mean {self.near!r}?)" if self.near else ""
        return self.text or (f"student id {self.student_id!r} is not on the roster {self.roster_path}{hint}: "
                             f"{'; '.join(self.sources)}; not graded")

    def to_dict(self) -> dict[str, Any]:
        return {"student_id": self.student_id, "status": "unknown id", "reason": self.line, "sources": self.sources}


@dataclass
class Sorted:
    """The submissions to grade, the conflicts, the ids not on the roster (one line each) and notes."""

    subs: list[Any]
    conflicts: list[Conflict] = field(default_factory=list)
    unknown: list[Unknown] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)     # files --id-from-filename gives no owner: not graded


def id_pattern(text: str | None) -> re.Pattern[str] | None:
    """--id-from-filename's regex, checked: it compiles and has a named group ``id``. Raises ParamError."""
    if text is None:
        return None
    try:
        pattern = re.compile(text)
    except re.error as err:
        raise ParamError(f"--id-from-filename {excerpt(text, 80)}: not a regular expression ({err})") from None
    if "id" not in pattern.groupindex:
        raise ParamError(f"--id-from-filename {excerpt(text, 80)}: no group named id; write it as (?P<id>...), "
                         r"e.g. '^(?P<id>s\d+)_'")
    return pattern


def owner_of(path: Path, pattern: re.Pattern[str] | None) -> Owner | None:
    """The owner a file's name gives: --id-from-filename's pattern when given, else Moodle's or
    Canvas's download naming; None when the name follows none of them."""
    name = path.name
    if pattern is not None:
        m = pattern.search(name)
        return Owner("pattern", student_id=m.group("id")) if m and m.group("id") else None
    m = MOODLE.match(name)
    if m:
        return Owner("Moodle", m.group("lms_id"), m.group("name"))
    m = CANVAS.match(name)
    if m:
        return Owner("Canvas", m.group("lms_id"), m.group("name"))
    return None


def _key(name: str) -> str:
    return re.sub(r"[^\w]", "", name.casefold())


class RosterIndex:
    """A roster's students by id, lms_id, full name and Canvas's "lastfirst" (built once per class)."""

    def __init__(self, roster: list[Any]):
        self.by: dict[str, dict[str, list[Any]]] = {"id": {}, "lms_id": {}, "Moodle": {}, "Canvas": {}}
        for st in roster:
            for what, value in (("id", st.id), ("lms_id", getattr(st, "lms_id", "")),
                                ("Moodle", _key(st.name)), ("Canvas", _key(_last_first(st.name)))):
                if value:
                    self.by[what].setdefault(value, []).append(st)

    def find(self, what: str, value: str) -> list[Any]:
        return self.by[what].get(value, [])


def resolve(owner: Owner, roster: RosterIndex | None) -> tuple[Owner, str]:
    """``owner`` with its student id from the roster (by lms_id, else by name: Moodle's full name,
    Canvas's "lastfirst"), and why none was found ("" when found or when there is no roster)."""
    if roster is None:
        return owner, ""
    if owner.system == "pattern":
        sid = owner.student_id or ""
        hit = roster.find("id", sid) or roster.find("lms_id", sid)
        return (Owner("pattern", name=hit[0].name, student_id=hit[0].id), "") if len(hit) == 1 else \
            (owner, "not on the roster (by its id or lms_id column)")
    hit = roster.find("lms_id", owner.lms_id) or roster.find(owner.system, _key(owner.name))
    if len(hit) == 1:
        return Owner(owner.system, owner.lms_id, hit[0].name or owner.name, hit[0].id), ""
    if hit:
        tell = f"none of their lms_ids is {owner.lms_id}" if all(getattr(st, "lms_id", "") for st in hit) \
            else "give each an lms_id on the roster"
        return owner, f"not one student: {len(hit)} on the roster are called {owner.name!r} ({tell})"
    return owner, "not on the roster (by its lms_id column or name)"


def _last_first(name: str) -> str:
    first, _, last = name.strip().rpartition(" ")
    return last + first


def canonical(sub: Any) -> str:
    """A submission's answers and variant as one string: two submissions are identical when these
    are. Each part's answer as text (a number as JSON writes it, a string stripped), by its address
    (q1.loss, nested tables flattened), blank answers left out: the file's format, key order,
    comments and layout do not count; 0.5 and 0.50 differ."""
    def text(value: Any) -> str:
        return value.strip() if isinstance(value, str) else json.dumps(value, sort_keys=True, default=repr)

    flat = {k: text(v) for k, v in flatten_answers(sub.answers).items()}
    return json.dumps([{k: v for k, v in flat.items() if v}, sub.variant.strip()], sort_keys=True)


def sort_out(subs: list[Any], file_of: dict[int, Path], *, roster: list[Any] | None = None,
             roster_path: str = "", pattern: re.Pattern[str] | None = None, newest: bool = False) -> Sorted:
    """Sort a class's submissions (examprep.answers.files.Submission, in file order; ``file_of``:
    id(sub) to the file it came from) into the ones to grade, the conflicts and the unknown ids."""
    out = Sorted([])
    owners: dict[Path, tuple[Owner, str]] = {}
    index = RosterIndex(roster) if roster is not None else None
    lms_named = 0
    claims: dict[str, list[tuple[Any, str]]] = {}
    kept: list[Any] = []
    unmatched: dict[Path, None] = {}
    uploader: dict[int, str] = {}           # id(sub): who its file's name says uploaded it (absent: no word)
    for sub in subs:
        path = file_of[id(sub)]
        if path not in owners:
            found = owner_of(path, pattern)
            owners[path] = resolve(found, index) if found else (None, "")        # type: ignore[assignment]
        owner, why = owners[path]
        if owner is None:
            if pattern is None:
                kept.append(sub)
            elif path not in unmatched:       # a pattern given is the only word on whose a file is
                unmatched[path] = None
            continue
        if why and owner.system == "pattern":     # the id the name gave is not on the roster: not a claim
            out.unknown.append(Unknown(owner.student_id or "", [sub.source],
                                       f"{sub.source}: the id --id-from-filename gives its name, {owner.student_id!r}, "
                                       f"is not on the roster {roster_path}; not graded"))
            continue
        if owner.student_id is None:
            if roster is None:              # an LMS's participant number is not a student id: unchecked
                lms_named += 1
                kept.append(sub)
                uploader[id(sub)] = f"{owner.system} {owner.lms_id}"      # unchecked: an uploader, not an id
            else:
                out.unknown.append(Unknown("", [sub.source], f"{sub.source}: {owner.said()} is {why}; not graded"))
            continue
        if sub.id_from == "file" and sub.student_id != owner.student_id:
            claims.setdefault(owner.student_id, []).append(
                (sub, f"file {sub.source} is {owner.said()} but claims student_id {sub.student_id}"))
            continue
        if sub.id_from != "file":
            sub.student_id, sub.id_from = owner.student_id, "owner"
        kept.append(sub)
        uploader[id(sub)] = f"student {owner.student_id}"
    if unmatched:
        shown = f"--id-from-filename {excerpt(pattern.pattern, 80)}"          # type: ignore[union-attr]
        if len(unmatched) == len(owners):
            first = next(iter(unmatched))
            out.unmatched.append(f"{shown} matches no file's name with a non-empty id group ({len(owners)} file"
                                 f"{'s' if len(owners) != 1 else ''}, e.g. {first.name}); none graded")
        else:
            out.unmatched += [f"{p}: its name does not match {shown} (no id from it); not graded" for p in unmatched]
    if lms_named:
        out.notes.append(f"{lms_named} submission{'s' if lms_named != 1 else ''} in files named as an LMS download "
                         "names them: give --roster (with an lms_id column, or the students' names) to check "
                         "that each file's student_id is its uploader's")
    if roster is not None:
        on_roster = {s.id for s in roster}
        folded = {s.id.casefold(): s.id for s in roster}      # the roster refuses ids that differ only in case
        unknown: dict[str, list[str]] = {}
        for sub in kept:
            if sub.student_id not in on_roster:
                unknown.setdefault(sub.student_id, []).append(sub.source)
        kept = [s for s in kept if s.student_id in on_roster]
        for sid, sources in unknown.items():
            near = folded.get(sid.casefold(), "")
            out.unknown.append(Unknown(sid, sources, roster_path=roster_path, near=near))
    by_id: dict[str, list[Any]] = {}
    for sub in kept:
        by_id.setdefault(sub.student_id, []).append(sub)
    for sid, claimed in claims.items():
        own = by_id.pop(sid, [])
        reason = claimed[0][1] + (f" (and {len(claimed) - 1} more)" if len(claimed) > 1 else "")
        out.conflicts.append(Conflict(sid, [s.source for s, _ in claimed] + [s.source for s in own], reason,
                                      "fix or remove the file: its name says whose it is"))
    for sid, group in by_id.items():
        if len(group) == 1:
            out.subs.append(group[0])
            continue
        if len({canonical(s) for s in group}) == 1:
            out.notes.append(f"student {sid!r}: {len(group)} identical submissions ({'; '.join(s.source for s in group)}): "
                             f"graded once, from {group[0].source}")
            out.subs.append(group[0])
            continue
        blocker = _newest_cannot(group, file_of, uploader)
        if blocker:
            reason = f"{len(group)} submissions with different answers ({blocker})"
            out.conflicts.append(Conflict(sid, [s.source for s in group], reason, "remove all but one"))
            continue
        taken, why = _newest(group, file_of)
        if taken is not None and newest:
            out.notes.append(f"student {sid!r}: {len(group)} different submissions; --newest took {why}")
            out.subs.append(taken)
            continue
        reason = f"{len(group)} submissions with different answers" + (f" ({why})" if taken is None else "")
        out.conflicts.append(Conflict(sid, [s.source for s in group], reason,
                                      "remove all but one" if taken is None else Conflict.hint))
    order = {id(s): i for i, s in enumerate(subs)}
    out.subs.sort(key=lambda s: order[id(s)])
    out.conflicts.sort(key=lambda c: c.student_id)
    return out


def _newest_cannot(group: list[Any], file_of: dict[int, Path], uploader: dict[int, str]) -> str:
    """Why --newest must not choose between ``group``'s submissions ("" when it may): rows of one
    file have one time; files whose names say different uploaders (or one says and another does
    not) are a claim on a classmate's id, and the newest of them may be the forger's."""
    files = [file_of[id(s)] for s in group]
    if len(set(files)) < len(files):
        return "--newest cannot choose: several are rows of one file"
    if len({uploader.get(id(s), "") for s in group}) > 1:
        return "--newest cannot choose: their files' names say different uploaders"
    return ""


def _newest(group: list[Any], file_of: dict[int, Path]) -> tuple[Any | None, str]:
    """The submission of the newest file by modification time, and what to say; (None, why) when
    two share the newest time (rows of one class file, or files written in one second)."""
    def mtime(sub: Any) -> float:
        try:
            return file_of[id(sub)].stat().st_mtime
        except OSError:
            return float("-inf")

    ranked = sorted(group, key=mtime, reverse=True)
    if mtime(ranked[0]) == mtime(ranked[1]):
        return None, f"--newest cannot choose: {ranked[0].source} and {ranked[1].source} have the same modification time"
    def when(sub: Any) -> str:
        t = mtime(sub)
        return "unknown" if t == float("-inf") else datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")

    others = ", ".join(f"{s.source} (modified {when(s)})" for s in ranked[1:])
    return ranked[0], f"{ranked[0].source}, the newest file (modified {when(ranked[0])}), over {others}"
