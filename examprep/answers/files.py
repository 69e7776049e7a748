"""Answer files in: TOML (the template students fill), JSON, and a class CSV (one row per student,
one column per part, as a form or an LMS exports it).

Files are read, never modified. Text may be UTF-8 (with or without a BOM), UTF-16 (with a BOM,
or detected from its zero bytes) or, failing UTF-8, Windows-1252/Latin-1. A class file (CSV, JSON
list) is read as a stream: memory holds its submissions, never its whole text. Each unreadable file
(malformed, binary, empty, over one of its Limits — size, rows, keys, nesting —, a number over
Python's digit limit, a key instead of a submission) becomes a SubmissionError with the file, and
the line and column where the format says so; it never stops the other files, and it quotes
the file's content only as a short, escaped ``excerpt``. In a directory, every entry that is not
read is named with the reason (``collect``): links leading outside it are never followed.

Student ids come from the file (``student_id``, or an ``id``/``student``/``email`` column in a
CSV) or, when absent, from the file name (and the row number in a CSV).
"""
from __future__ import annotations

import csv
import io
import itertools
import json
import os
import re
import stat
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from examprep.answers.json_list import objects
from examprep.answers.limits import (DEFAULT_LIMITS, MAX_CLASS_FILE_BYTES, MAX_CLASS_ROWS, MAX_KEYS, MAX_NESTING,
                                     MAX_NESTING_CEILING, MAX_SUBMISSION_BYTES, OPTIONS, Limits, SubmissionError,
                                     chunks_of, codec_of, decode, raise_hint, read_bytes, shape, text_stream, too_deep,
                                     too_many_keys, toml_precheck)
# the one rule for showing a file's text on a terminal and in messages, offered here too (many modules read it from here)
from examprep.escape import excerpt, printable, shown, unprintable_char  # noqa: F401
from examprep.fileio import not_regular, size_text
from examprep.tomllines import explain

# the names this module has always offered, now kept in examprep.answers.limits
__all__ = ["DEFAULT_LIMITS", "MAX_CLASS_FILE_BYTES", "MAX_CLASS_ROWS", "MAX_KEYS", "MAX_NESTING", "MAX_SUBMISSION_BYTES",
           "OPTIONS", "Limits", "Submission", "SubmissionError", "TemplateMark", "collect", "decode", "excerpt",
           "printable", "read_bytes", "read_file", "shown", "template_mark", "unprintable_char"]

SUFFIXES = (".toml", ".json", ".csv", ".tsv")
SCAN_REVIEW = "# scan: review"     # examprep scan's comment beside a value it left for a person
ID_COLUMNS = ("student_id", "student id", "id", "student", "username", "email", "email address", "sis user id")
NAME_COLUMNS = ("name", "full name", "student name")
_ADDRESS = re.compile(r"^q\d+\.")
# what an answer template (keys.answer_template) says of its sheet, in comments: the sheet's title on
# its first line, the id its copies print at the end of the comments above student_id (a sheet's), and
# each question's generator and points beside its table
_TEMPLATE_TITLE = re.compile(r"\A\ufeff?# examprep answer file(?: — (.*))?$", re.M)
_TEMPLATE_HEAD = re.compile(r"\A\ufeff?(?:#[^\n]*\n)+")
_TEMPLATE_SHEET = re.compile(r"^# sheet ([^\s#]+)[ \t]*$", re.M)
_TEMPLATE_QUESTION = re.compile(r"^\[q(\d+)\][ \t]*# (.*) \(([^(),]+), ([^(),]+) points?\)[ \t]*$", re.M)


@dataclass
class Submission:
    """One student's raw answers. ``source``: the file (and row) they came from; ``id_from``:
    "file" (an id field), "filename" or "row" (no id given)."""

    student_id: str
    answers: dict[str, Any]
    source: str
    name: str = ""
    variant: str = ""
    id_from: str = "file"
    warnings: list[str] = field(default_factory=list)
    template: TemplateMark | None = None


@dataclass(frozen=True)
class TemplateMark:
    """The sheet an answer template was written for, as its comments say: the sheet's title and,
    per question number, its title, generator and points (grading refuses a file made for another
    sheet or variant)."""

    title: str
    questions: dict[int, tuple[str, str, str]]
    sheet: str = ""         # the id its sheet's copies print ("" in older templates and generate's)


def template_mark(text: str) -> TemplateMark | None:
    """What a filled-in answer template says of its sheet; None for a file not made from one."""
    head = _TEMPLATE_TITLE.match(text)
    if head is None:
        return None
    questions = {int(n): (" ".join(title.split()), gen.strip(), pts.strip())
                 for n, title, gen, pts in _TEMPLATE_QUESTION.findall(text)}
    comments = _TEMPLATE_HEAD.match(text)
    sheet = _TEMPLATE_SHEET.search(comments.group(0)) if comments else None
    return TemplateMark((head.group(1) or "").strip(), questions, sheet.group(1) if sheet else "")



def _format_of(path: Path, text: str) -> str:
    suffix = path.suffix.lower()
    if suffix in (".toml", ".json", ".csv"):
        return suffix[1:]
    if suffix == ".tsv":
        return "csv"
    head = text.lstrip()[:1]
    if head in ("{", "["):
        return "json"
    return "toml"


def _id_text(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, (int, float, str)):
        return " ".join(str(value).split())[:200]
    return ""


def _from_mapping(data: dict[str, Any], path: Path, fmt: str) -> Submission:
    if data.get("format") == "examprep-key":
        raise SubmissionError(f"{path}: this is an answer key, not a submission")
    if data.get("format") == "examprep-grades":
        raise SubmissionError(f"{path}: this is a class's grades (grade --json), not a submission")
    if {"students", "alpha", "parts", "questions"} <= data.keys():
        raise SubmissionError(f"{path}: this is an item analysis (item-analysis.json), not a submission")
    meta = data
    answers = data.get("answers") if isinstance(data.get("answers"), dict) else data
    sid = _id_text(meta.get("student_id", meta.get("id", meta.get("student", ""))))
    name = _id_text(meta.get("name", ""))
    variant = _id_text(meta.get("variant", ""))
    answers = {k: v for k, v in answers.items() if k not in ("student_id", "id", "student", "name", "variant",
                                                             "answers", "email", "sheet", "submitted")}
    if sid:
        return Submission(sid, answers, str(path), name, variant, "file")
    return Submission(path.stem, answers, str(path), name, variant, "filename")


def _decoding_failure(err: Exception, limits: Limits) -> str:
    """Why a parser that is not ours gave up, in words: the nesting or the digit limit."""
    if isinstance(err, RecursionError):         # Python's recursion limit: deeper than MAX_NESTING_CEILING levels
        if limits.nesting < MAX_NESTING_CEILING:
            return too_deep(limits)
        return f"nested too deeply (more than {MAX_NESTING_CEILING} levels, the most the parser reads)"
    if "digits" in str(err):                    # Python's cap on int(str): a denial-of-service guard
        return f"a number with more than {sys.get_int_max_str_digits():,} digits"
    return printable(str(err).split("\n")[0][:200])


# A TOML key as it opens a line, a table header or an item of an inline table: bare or quoted
# segments joined by dots. Counted before tomllib parses a file (see _toml_precheck).
def _read_toml(text: str, path: Path, limits: Limits = DEFAULT_LIMITS) -> list[Submission]:
    toml_precheck(text, path, limits)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise SubmissionError(f"{path}: {explain(text, err)}") from None
    except (RecursionError, ValueError) as err:
        raise SubmissionError(f"{path}: invalid TOML: {_decoding_failure(err, limits)}") from None
    why = shape(data, limits)
    if why:
        raise SubmissionError(f"{path}: {'invalid TOML: ' if 'nested' in why else ''}{why}")
    sub = _from_mapping(data, path, "toml")
    sub.template = template_mark(text)
    return [sub]


def _read_json(text: str, path: Path, limits: Limits = DEFAULT_LIMITS) -> list[Submission]:
    """One student's JSON object (a class's JSON list is streamed by _read_json_list)."""
    try:
        data = json.loads(text, parse_constant=_json_constant)
    except json.JSONDecodeError as err:
        raise SubmissionError(f"{path}: invalid JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None
    except (RecursionError, ValueError) as err:
        raise SubmissionError(f"{path}: invalid JSON: {_decoding_failure(err, limits)}") from None
    if isinstance(data, (dict, list)):
        why = shape(data, limits)
        if why:
            raise SubmissionError(f"{path}: {'invalid JSON: ' if 'nested' in why else ''}{why}")
    if isinstance(data, list):              # a list given whole (not read from a file)
        return _list_items(data, path)
    if not isinstance(data, dict):
        raise SubmissionError(f"{path}: expected a JSON object of answers, got {type(data).__name__}")
    return [_from_mapping(data, path, "json")]


def _list_items(data: list, path: Path) -> list[Submission]:
    if not all(isinstance(d, dict) for d in data):
        raise SubmissionError(f"{path}: a JSON list must hold one object per student")
    return [_list_item(d, path, i) for i, d in enumerate(data, 1)]


def _list_item(data: dict, path: Path, i: int) -> Submission:
    s = _from_mapping(data, path, "json")
    s.source = f"{path}, item {i}"
    if s.id_from == "filename":
        s.student_id, s.id_from = f"{path.stem}-{i}", "row"
    return s


def _read_json_list(stream: Any, path: Path, limits: Limits) -> tuple[list[Submission], list[SubmissionError]]:
    """A class's JSON list, one object per student, read as a stream (json_list.objects: json.loads's
    rules, memory for about one item): only the submissions are kept. An item over a limit of one
    submission is named and skipped; a file json.loads would refuse, an item nested too deeply or
    more than ``limits.class_rows`` items refuse the whole file."""
    subs: list[Submission] = []
    errors: list[SubmissionError] = []
    try:
        for i, item in objects(stream, path, limits, _json_constant):
            why = (f"over the {size_text(limits.file_bytes)} limit for one submission; {raise_hint('file_bytes')}"
                   if item is None else shape(item, limits))
            if "nested" in why:
                raise SubmissionError(f"{path}: invalid JSON: {why}")
            if why:
                errors.append(SubmissionError(f"{path}, item {i}: {why}"))
            else:
                subs.append(_list_item(item, path, i))
    except (RecursionError, ValueError) as err:
        raise SubmissionError(f"{path}: invalid JSON: {_decoding_failure(err, limits)}") from None
    return subs, errors


def _json_constant(name: str) -> float:
    # NaN / Infinity in JSON: kept so the part reports "not a finite number" instead of the file failing
    return float("nan") if name == "NaN" else float("inf") if name == "Infinity" else float("-inf")


def _read_csv(stream: Any, path: Path, limits: Limits = DEFAULT_LIMITS) -> tuple[list[Submission], list[SubmissionError]]:
    """A class CSV (or TSV) from a text stream (or a string), row by row: only the submissions are kept."""
    if isinstance(stream, str):
        stream = io.StringIO(stream, newline="")
    first = stream.readline()
    cut = first.split("\n", 1)[0]
    delimiter = "\t" if path.suffix.lower() == ".tsv" or cut.count("\t") > max(cut.count(","), cut.count(";")) \
        else ";" if cut.count(";") > cut.count(",") else ","
    previous_limit = csv.field_size_limit(limits.class_bytes)       # the per-row cap is ours, below
    try:
        reader = csv.reader(itertools.chain([first], stream), delimiter=delimiter, strict=True)
        return _read_csv_rows(reader, path, limits)
    finally:
        csv.field_size_limit(previous_limit)


def _read_csv_rows(reader: Any, path: Path, limits: Limits) -> tuple[list[Submission], list[SubmissionError]]:
    try:
        header = next(reader)
    except StopIteration:
        raise SubmissionError(f"{path}: empty CSV") from None
    except csv.Error as err:
        raise SubmissionError(f"{path}: invalid CSV at line {reader.line_num}: {err}") from None
    header = [h.strip().lstrip("\ufeff") for h in header]
    lower = [h.lower() for h in header]
    if {"item", "difficulty", "discrimination"} <= set(lower):
        raise SubmissionError(f"{path}: this is an item analysis (item-analysis.csv), not a submission")
    if {"total", "max", "percent", "misconceptions", "warnings"} <= set(lower):
        raise SubmissionError(f"{path}: this is a class's grades (grade --csv), not a submission")
    id_col = next((lower.index(c) for c in ID_COLUMNS if c in lower), None)
    name_col = next((lower.index(c) for c in NAME_COLUMNS if c in lower), None)
    variant_col = lower.index("variant") if "variant" in lower else None
    meta_cols = {i for i in (id_col, name_col, variant_col) if i is not None}
    answer_cols = [i for i, h in enumerate(header) if i not in meta_cols and h]
    if any(_ADDRESS.match(header[i]) for i in answer_cols):
        ignored = [header[i] for i in answer_cols if not _ADDRESS.match(header[i])]
    else:   # a one-question form may name columns by bare part ids ("probs")
        ignored = [header[i] for i in answer_cols if not re.fullmatch(r"[A-Za-z_]\w*", header[i])]
    answer_cols = [i for i in answer_cols if header[i] not in ignored]
    if len(answer_cols) > limits.keys:
        raise SubmissionError(f"{path}: {len(answer_cols):,} answer columns: {too_many_keys(limits)}")
    if not answer_cols:
        # not a class file (a stray CSV, or a link to /etc/passwd): quote only the start of it
        raise SubmissionError(f"{path}: no column names a part (expected headers such as student_id,q1.probs; "
                              f"the first is {excerpt(header[0] if header else '')})")
    subs: list[Submission] = []
    errors: list[SubmissionError] = []
    row_no = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as err:
            errors.append(SubmissionError(f"{path}: invalid CSV at line {reader.line_num}: {err}"))
            break
        row_no += 1
        if row_no - 1 > limits.class_rows:
            return [], [SubmissionError(f"{path}: more than {limits.class_rows:,} rows, over the limit for a class "
                                        f"file; {raise_hint('class_rows')}")]
        if not any(cell.strip() for cell in row):
            continue
        where = f"{path}, row {row_no} (line {reader.line_num})"
        if sum(len(c) for c in row) > limits.file_bytes:
            errors.append(SubmissionError(f"{where}: over the {size_text(limits.file_bytes)} limit for one submission; "
                                          f"{raise_hint('file_bytes')}"))
            continue
        if len(row) > len(header):
            extra = [c for c in row[len(header):] if c.strip()]
            if extra:
                errors.append(SubmissionError(f"{where}: {len(row)} cells but the header has {len(header)} columns"))
                continue
        sid = _id_text(row_cell(row, id_col))
        answers = {header[i]: row[i] if i < len(row) else "" for i in answer_cols}
        sub = Submission(sid or f"{path.stem}-row{row_no}", answers, where, _id_text(row_cell(row, name_col)),
                         _id_text(row_cell(row, variant_col)), "file" if sid else "row")
        if ignored and not subs:
            sub.warnings.append(f"{path}: columns ignored (not part ids): {', '.join(excerpt(c) for c in ignored[:5])}"
                                + (f" and {len(ignored) - 5:,} more" if len(ignored) > 5 else ""))
        subs.append(sub)
    if not subs and not errors:
        errors.append(SubmissionError(f"{path}: a header but no student rows"))
    return subs, errors


def row_cell(row: list[str], i: int | None) -> str:
    """Cell i of a CSV row, stripped; "" for a column the header lacks (None) or a short row."""
    return row[i].strip() if i is not None and i < len(row) else ""


def read_file(path: str | Path, limits: Limits = DEFAULT_LIMITS) -> tuple[list[Submission], list[SubmissionError]]:
    """The submissions in one file (one for TOML/JSON, one per row for CSV, one per item for a
    JSON list) and the errors that made a file or a row unreadable. Never raises for bad content.
    A class file (.csv, .tsv, .json) is streamed: memory holds its submissions, not its text."""
    p = Path(path)
    try:
        if p.suffix.lower() in (".csv", ".tsv", ".json"):
            return _read_class_file(p, limits)
        data = read_bytes(p, limits.file_bytes)
        text = decode(data, str(p))
        fmt = _format_of(p, text)
        if fmt == "csv":
            return _read_csv(text, p, limits)
        subs = _read_toml(text, p, limits) if fmt == "toml" else _read_json(text, p, limits)
        left = text.count(SCAN_REVIEW)
        for sub in subs if left else ():
            sub.warnings.append(f"{p}: {left} value{'s' if left > 1 else ''} left for review by `examprep scan` "
                                f"(lines marked '{SCAN_REVIEW}'): graded as blank until typed in")
        return subs, []
    except SubmissionError as err:
        return [], [err]


def _read_class_file(p: Path, limits: Limits) -> tuple[list[Submission], list[SubmissionError]]:
    """A .csv, .tsv or .json file, which may hold a class: decoded as decode() would (a first pass
    finds the codec), then read as a stream; a JSON object is one student's file, under its limits."""
    chunks = chunks_of(p, limits)
    codec, first = codec_of(chunks, str(p))
    if p.suffix.lower() == ".json" and first != "[":
        size = sum(len(c) for c in chunks())
        if size > limits.file_bytes:
            raise SubmissionError(f"{p}: {size_text(size)} is over the {size_text(limits.file_bytes)} limit for one "
                                  f"submission; {raise_hint('file_bytes')}")
        return _read_json(b"".join(chunks()).decode(codec), p, limits), []
    try:
        with text_stream(p, codec, limits) as stream:
            if p.suffix.lower() == ".json":
                return _read_json_list(stream, p, limits)
            return _read_csv(stream, p, limits)
    except UnicodeDecodeError:                     # the file changed since the first pass read it
        raise SubmissionError(f"{p}: not valid {codec.upper()} text (the file changed while it was read)") from None


def collect(paths: list[str | Path], linked: dict[Path, str] | None = None) -> tuple[list[Path], list[str]]:
    """Expand the SUBMISSION arguments: files as given, directories to their answer files
    (.toml, .json, .csv, .tsv; not recursive). Returns (files, notes): every directory entry that
    is not read has a note "PATH: skipped (why)" — hidden, a directory, a named pipe or other
    special file, a dangling link, a link that leads outside the directory given (a link to
    /etc/passwd must not become a class of students), or not an answer file. One file reached by
    two names (given twice, a symbolic or a hard link beside it) is read once.

    linked: where given, filled with a warning per file of a directory that is a hard link with
    names outside the directory (its link count, beyond its names in the folder): it is read (``cp -al``
    and deduplicating tools make honest ones), but it may be another file than the folder's own."""
    files: list[Path] = []
    notes: list[str] = []
    seen: dict[Any, Path] = {}

    def add(q: Path) -> None:         # one file named twice (class/ada.toml class/ada.toml, or a folder and
        try:                          # a file in it) is graded once, not as two submissions of one student
            st = q.stat()
            real: Any = (st.st_dev, st.st_ino)
        except OSError:
            real = os.path.realpath(q)
        if real in seen:
            notes.append(f"{q}: skipped (the same file as {seen[real]}, given twice)")
        else:
            seen[real] = q
            files.append(q)

    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            root = p.resolve()
            entries = sorted(p.iterdir(), key=lambda q: q.name)
            names_here: dict[tuple[int, int], int] = {}     # hard links: the names each file has in the folder
            for q in entries:
                try:
                    st = q.lstat()
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    names_here[(st.st_dev, st.st_ino)] = names_here.get((st.st_dev, st.st_ino), 0) + 1
            for q in entries:
                why = _skip_reason(q, root)
                if why:
                    notes.append(f"{q}: skipped ({why})")
                    continue
                add(q)
                if linked is not None and not q.is_symlink():
                    st = q.stat()
                    outside = st.st_nlink - names_here.get((st.st_dev, st.st_ino), 1)
                    if outside > 0:
                        linked[q] = (f"a hard link with {st.st_nlink} links, {outside} of them outside the folder "
                                     f"{p}: graded; check it is this student's own file (cp -al and deduplicating "
                                     "tools make honest ones)")
        else:
            add(p)
    return files, notes


def _skip_reason(entry: Path, root: Path) -> str:
    """Why a directory entry is not read as an answer file, or "" when it is."""
    if entry.name.startswith("."):
        return "a hidden file" if not entry.is_dir() else "a hidden directory"
    if entry.is_symlink():
        try:
            target = entry.resolve(strict=True)
        except (FileNotFoundError, RuntimeError, OSError):
            return "a dangling symbolic link: its target does not exist"
        if not target.is_relative_to(root):
            return f"a link to {excerpt(str(target), 60)}, outside the folder: not read"
    try:
        mode = entry.stat().st_mode
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    if stat.S_ISDIR(mode):
        return "a directory: folders are not searched"
    if not stat.S_ISREG(mode):
        return not_regular(mode)
    if entry.suffix.lower() not in SUFFIXES:
        return "not a .toml, .json or .csv answer file"
    return ""
