"""Grade a class: read every submission under the paths given (files or directories), grade each
against its variant, list the unreadable ones with their reasons; one bad file never stops the
batch. The key's carried-forward rules are checked first against the values it stored."""
from __future__ import annotations

import gc
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from examprep.answers.files import DEFAULT_LIMITS, SubmissionError, collect, excerpt, read_file
from examprep.answers.parse import decimal_comma
from examprep.errors import ParamError
from examprep.grading.grade import Settings, SubmissionResult, address, grade_submission
from examprep.grading.identity import id_pattern, sort_out
from examprep.grading.selftest import ecf_drift
from examprep.problem import Problem

@dataclass
class BatchResult:
    """A class's grading: the graded submissions, the unreadable ones (one line each, with the
    reason), notes (directory entries skipped, identical submissions of one id), warnings about the
    key (a carried-forward rule that changed since it was written), key_info for grades.json, the
    conflicts (examprep.grading.identity: students graded from none of their submissions) and the
    ids not on the roster (one line each, not graded)."""

    results: list[SubmissionResult]
    unreadable: list[str]
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    key_info: dict[str, Any] = field(default_factory=dict)
    other_sheet: list[str] = field(default_factory=list)    # the unreadable ones made for another sheet
    conflicts: list[Any] = field(default_factory=list)      # identity.Conflict
    unknown: list[Any] = field(default_factory=list)        # identity.Unknown: ids not on the roster, not graded
    unreadable_of: dict[str, str] = field(default_factory=dict)  # student id: its unreadable line (the first)

    @property
    def exit_code(self) -> int:
        return 1 if self.unreadable or self.conflicts or self.unknown else 0


def problems_for(key: Any, student_id: str, variant: str = "") -> tuple[list[Problem], str, str]:
    """The problems a student answered: their variant (by id, or by the variant code written in
    the submission), else the key's common problems. Returns (problems, variant, warning).
    Raises SubmissionError when the key has only variants and none is the student's."""
    if key.variants:
        if student_id in key.variants:
            return key.variants[student_id], key.variant_codes.get(student_id, student_id), ""
        if variant:
            want = variant.strip().casefold()
            for sid, code in key.variant_codes.items():
                if str(code).strip().casefold() == want and sid in key.variants:
                    return key.variants[sid], str(code), ""
                if str(sid).strip().casefold() == want and str(code) in key.variants:
                    return key.variants[str(code)], str(sid), ""
            for sid in key.variants:
                if sid.casefold() == want:
                    return key.variants[sid], sid, ""
        if key.problems:
            return key.problems, "", (f"no variant for student id {student_id!r} in the key: graded against "
                                      "the common problems")
        raise SubmissionError(f"no variant for student id {student_id!r} in this key"
                              + (f" (nor for variant code {variant!r})" if variant else "")
                              + "; check the id, or add variant = \"CODE\" from the sheet")
    return key.problems, "", ""


def other_sheet(key: Any, problems: list[Problem], sub: Any, variant: str, *, which: str = "",
                another: str = "") -> tuple[str | None, str | None]:
    """(why, note): why a filled-in answer template was made for another sheet than ``key`` (or
    another variant than the student's ``problems``), or None; and a note to warn with when only
    its title line differs. The template names its sheet's title on its first line and each
    question's title, generator and points beside it (keys.answer_template).

    Comments are not answers, and students edit them: only positive evidence refuses a file — a
    question whose comment still reads as the template wrote it and names another generator than
    the key's question of that number (or a number the key does not have). A title line alone
    (a student may add a name to it), points (an instructor may reweigh after the exam), an edited
    or deleted comment, a question left out: graded as usual, the title with a warning.
    """
    mark = getattr(sub, "template", None)
    if mark is None:
        return None, None
    titled = bool(mark.title and key.title and mark.title.strip() != key.title.strip())
    sheet = sheet_id(key)
    if mark.sheet and sheet and mark.sheet.casefold() != sheet.casefold():
        # the id the copies print, which a student has no reason to edit: two sheets of one recipe
        # (the same title and questions, other numbers) are told apart
        title = f" ({mark.title!r})" if titled else ""
        return f"answers for sheet {mark.sheet}{title}, not this key's sheet {sheet}{title and f' ({key.title!r})'}", None
    which = which or (f"{sub.student_id}'s variant has" if key.variants else "this key has")
    another = another or ("another variant" if key.variants else "another sheet")
    for n, (title, generator, _points) in sorted(mark.questions.items()):
        if n > len(problems):
            why = f"its q{n} is {title!r} ({generator}), {which} {len(problems)} question{'s' if len(problems) != 1 else ''}"
        elif generator != problems[n - 1].generator:
            want = problems[n - 1]
            why = f"its q{n} is {title!r} ({generator}), {which} {' '.join(want.title.split())!r} ({want.generator})"
        else:
            continue
        if titled:
            return f"answers for sheet {mark.title!r}, not this key's {key.title!r}: {why}", None
        return f"answers for {another} of {key.title!r}: {why}", None
    if titled:
        return None, f"the file's first line names the sheet {mark.title!r}, not this key's {key.title!r}"
    return None, None


def sheet_id(key: Any) -> str:
    """The id a sheet's copies (and its answer templates) print, from its key: "" for a key that
    `generate` wrote."""
    meta = getattr(key, "meta", None) or {}
    return str(meta.get("printed_id") or meta.get("sheet_id") or "")


def question_sets(key: Any) -> list[list[Problem]]:
    """One problem list per distinct sequence of generators among a key's variants (and its common
    problems): what a template's questions are compared with, once per kind, not once per student."""
    sets: dict[tuple[str, ...], list[Problem]] = {}
    for problems in (*key.variants.values(), *([key.problems] if key.problems else [])):
        sets.setdefault(tuple(p.generator for p in problems), problems)
    return list(sets.values())


def other_sheet_before_variant(key: Any, sub: Any, sets: list[list[Problem]]) -> str | None:
    """Why a filled-in template cannot be graded against a key with a variant per student, decided
    before the student's variant is looked up: made for another sheet (its printed sheet id, or the
    questions of none of the key's ``sets``, question_sets), or for a sheet without a roster (its
    answers.toml: no student_id). None when it may be one of this key's variants, or the key has none."""
    mark = getattr(sub, "template", None)
    if not key.variants or mark is None:
        return None
    which = "this key's variants have" if len(sets) == 1 else f"this key's first variant ({next(iter(key.variants))}'s) has"
    reasons = [other_sheet(key, problems, sub, "", which=which, another="another sheet")[0] for problems in sets]
    if all(reasons):
        return reasons[0]
    if sub.id_from in ("filename", "row") and sub.student_id not in key.variants and not key.problems \
            and not sub.variant:
        # a sheet made with a roster writes each student's id into their template: this is a sheet's
        # common answers.toml, or an id erased; "no variant for student id 'answers'" said neither
        return ("no student_id in this answer template, and this key has a variant per student (sheet --roster): "
                "answers to a sheet made without --roster are graded with that sheet's key; else write the "
                "student's id as student_id")
    return None


def grade_batch(key: Any, paths: list[str], settings: Settings | None = None, *, key_path: str | None = None,
                progress: Any = None, submitter: tuple[str, str] | None = None, roster: list[Any] | None = None,
                roster_path: str = "", id_from_filename: str | None = None, newest: bool = False,
                limits: Any = None) -> BatchResult:
    """Read every submission under ``paths`` (files or directories), grade the readable ones and
    list the unreadable ones with their reasons. Inputs are only read. Before grading, submissions
    are sorted out by owner and id (examprep.grading.identity.sort_out: ``roster``, the
    ``id_from_filename`` pattern, ``newest``): a conflicted student or an id not on the roster is
    listed, not graded.

    progress: an optional callable(done, total) called after each graded submission.
    submitter: (student id, how to name them) when the submission system says who submitted
    (Gradescope's metadata): every submission is graded against that student's own variant, whatever
    student_id or variant code it names, with a warning to the submitter when it names another.
    limits: what one file may hold (examprep.answers.files.Limits; its defaults when None): a file
    over a limit is one unreadable line and the rest is graded.
    Raises ParamError when ``paths`` holds no answer file at all, is the key itself, or is one
    answer file that cannot be graded (its reason: the wrong file was given; a usage error).
    """
    pattern = id_pattern(id_from_filename)
    linked: dict[Path, str] = {}
    files, notes = collect(paths, linked=linked)
    skipped: list = []
    if key_path is not None:
        kp = Path(key_path).resolve()
        skipped = [f for f in files if f.exists() and f.resolve() == kp]
        files = [f for f in files if f not in skipped]
        notes += [f"{f}: skipped (the key itself)" for f in skipped]
    if not files and skipped and len(paths) == 1 and Path(paths[0]).is_file():
        raise ParamError(f"{paths[0]}: this is the key itself, given as a submission; give the students' answer "
                         "files (.toml, .json, .csv) or a directory of them")
    if not files:
        raise ParamError("no answer files to grade: give SUBMISSION files (.toml, .json, .csv) or a directory of them")

    drift = ecf_drift(key)
    settings = replace(settings or Settings(), ecf_off=frozenset(drift.parts))
    key_info = {"title": key.title, "examprep_version": key.examprep_version, "format_version": key.format_version,
                "ecf_check": "absent" if key.ecf_check is None else "differs" if drift.parts else "passed",
                "ecf_without_credit": drift.addresses}
    subs = []
    unreadable: list[str] = []
    other: list[str] = []
    results: list[SubmissionResult] = []
    file_of: dict[int, Path] = {}
    unreadable_of: dict[str, str] = {}
    # A class makes millions of small acyclic objects: the cyclic collector would rescan them
    # again and again (a third of the time on 10,000 students), so it waits until the end.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for f in files:
            try:
                got, errors = read_file(f, limits or DEFAULT_LIMITS)
            except Exception as err:      # noqa: BLE001 - a defect of ours must not stop the class; it is named
                got, errors = [], [_internal(f, "read", err)]
            if got and f.suffix.lower() in (".csv", ".tsv"):
                stray = _no_part_column(key, f, got)
                if stray:
                    got, errors = [], [*errors, stray]
            for sub in got:
                file_of[id(sub)] = f
                if f in linked:
                    sub.warnings.append(linked[f])
            subs += got
            unreadable += [str(e) for e in errors]
            if errors and not got and f.suffix.lower() not in (".csv", ".tsv"):
                unreadable_of.setdefault(_whose(f, pattern), str(errors[0]))
        if submitter is not None:
            renamed = [_as_submitter(key, s, *submitter) for s in subs]
            file_of = {id(new): file_of[id(old)] for old, new in zip(subs, renamed) if id(old) in file_of}
            subs = renamed
        sorted_out = sort_out(subs, file_of, roster=roster, roster_path=roster_path, pattern=pattern, newest=newest)
        subs.clear()        # the ones not graded (an id not on the roster) keep only their id and source
        file_of.clear()
        notes += sorted_out.notes
        unreadable += sorted_out.unmatched

        with decimal_comma(bool(getattr(key, "meta", {}).get("decimal_comma"))):   # the sheet's setting, in its key
            _grade_all(key, sorted_out.subs, settings, results, unreadable, progress, other, unreadable_of)
    finally:
        if gc_was_enabled:
            gc.enable()
    if len(paths) == 1 and Path(paths[0]).is_file() and not results and len(unreadable) == 1 \
            and not sorted_out.conflicts and not sorted_out.unknown:
        # one answer file given alone, and refused: the wrong file (or key) was given, a usage error,
        # as a missing file is; in a batch the same file is one unreadable line and the rest is graded
        raise ParamError(unreadable[0])
    return BatchResult(results, unreadable, notes, drift.warnings, key_info, other, sorted_out.conflicts,
                       sorted_out.unknown, unreadable_of)


_WRITTEN_ID = re.compile(r'^[ \t]*"?student_id"?[ \t]*[=:][ \t]*"([^"\n]{1,200})"', re.M)


def _whose(path: Any, pattern: Any) -> str:
    """The student an unreadable file of one student is probably from, to name them beside the
    reason (a gradebook's empty cell is "unreadable", not "no submission"): --id-from-filename's id,
    else the student_id written near its top (TOML or JSON, read again whatever broke the file),
    else the file's name, as a readable file without a student_id is named."""
    if pattern is not None:
        m = pattern.search(path.name)
        if m and m.group("id"):
            return m.group("id")
    try:
        with open(path, "rb") as fh:
            head = fh.read(65536).decode("utf-8", "replace")
    except OSError:
        head = ""
    m = _WRITTEN_ID.search(head)
    return " ".join(m.group(1).split()) if m and m.group(1).strip() else path.stem


def _as_submitter(key: Any, sub: Any, student: str, shown: str) -> Any:
    """``sub`` as ``student``'s: a file cannot choose whose variant it is graded against. An id or
    variant code in it naming someone else is kept only in a warning."""
    code = str(key.variant_codes.get(student, student))
    named = sub.student_id if sub.id_from == "file" else ""
    why = ""
    if named and named.strip().casefold() != student.casefold():
        why = f"this file names {named!r} but was submitted by {shown}"
    elif sub.variant and sub.variant.strip().casefold() not in (code.casefold(), student.casefold()):
        why = f"this file names variant {sub.variant!r} but was submitted by {shown}, whose variant is {code!r}"
    warnings = [f"{why}: graded against your own variant", *sub.warnings] if why else list(sub.warnings)
    return replace(sub, student_id=student, variant="", id_from="file", warnings=warnings)


def _no_part_column(key: Any, path: Any, subs: list) -> str | None:
    """Why a class CSV is unreadable when none of its columns names a part of the key (a stray
    spreadsheet, a,b,c): one line for the file, not an 'unknown part id' warning per student. A
    column names a part as q1.probs, or as a bare part id where a variant has one problem."""
    known: set[str] = set()
    for problems in (key.problems, *key.variants.values()):
        for n, problem in enumerate(problems, 1):
            known.update(address(n, part.id) for part in problem.parts)
            if len(problems) == 1:
                known.update(part.id for part in problem.parts)
    columns = list(dict.fromkeys(c for s in subs for c in s.answers))
    if any(c in known for c in columns):
        return None

    first = next((ps for ps in (key.problems, *key.variants.values()) if ps and ps[0].parts), None)
    example = address(1, first[0].parts[0].id) if first else "q1.a"
    shown = ", ".join(excerpt(c, 20) for c in columns[:5]) + (f" and {len(columns) - 5:,} more" if len(columns) > 5 else "")
    return f"{path}: no column names a part of the key (its columns: {shown}; expected headers such as student_id,{example})"


def _grade_all(key: Any, subs: list, settings: Settings | None, results: list, unreadable: list[str],
               progress: Any, other: list[str], unreadable_of: dict[str, str]) -> None:
    """Grade ``subs`` into ``results``; the unreadable ones go to ``unreadable`` (and to ``other``
    too when made for another sheet), and by student id to ``unreadable_of``."""
    sets = question_sets(key) if key.variants else []
    for i, sub in enumerate(subs):
        before = other_sheet_before_variant(key, sub, sets)
        if before is not None:
            unreadable.append(f"{sub.source}: {before}")
            other.append(unreadable[-1])
            unreadable_of.setdefault(sub.student_id, unreadable[-1])
            continue
        try:
            problems, variant, warning = problems_for(key, sub.student_id, sub.variant)
        except SubmissionError as err:
            unreadable.append(f"{sub.source}: {err}")
            unreadable_of.setdefault(sub.student_id, unreadable[-1])
            continue
        reason, note = other_sheet(key, problems, sub, variant)
        if note is not None:
            sub.warnings.append(note)
        if reason is not None:
            unreadable.append(f"{sub.source}: {reason}")
            other.append(unreadable[-1])
            unreadable_of.setdefault(sub.student_id, unreadable[-1])
            continue
        try:
            res = grade_submission(problems, sub.answers, student_id=sub.student_id, name=sub.name, source=sub.source,
                                   settings=settings)
        except Exception as err:          # noqa: BLE001 - a defect of ours must not stop the class; it is named
            unreadable.append(str(_internal(sub.source, "grade", err)))
            unreadable_of.setdefault(sub.student_id, unreadable[-1])
            continue
        res.variant = variant
        res.warnings = sub.warnings + ([warning] if warning else []) + res.warnings
        if sub.id_from == "owner":
            res.warnings.insert(0, f"no student_id in the file: using its owner's, {sub.student_id!r}")
        elif sub.id_from != "file":
            res.warnings.insert(0, f"no student_id in the file: using {sub.student_id!r}")
        results.append(res)
        if progress is not None:
            progress(i + 1, len(subs))


def _internal(where: Any, what: str, err: Exception) -> Exception:
    """An unexpected failure on one submission, as a line that names it: the batch goes on."""
    return RuntimeError(f"{where}: could not be {'read' if what == 'read' else 'graded'} (an examprep defect, "
                        f"please report it: {type(err).__name__}: {str(err)[:200]})")
