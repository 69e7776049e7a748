"""Answer files in: TOML (the template students fill), JSON, and a class CSV (one row per student,
one column per part, as a form or an LMS exports it).

Files are read, never modified. Text may be UTF-8 (with or without a BOM), UTF-16 (with a BOM,
or detected from its zero bytes) or, failing UTF-8, Windows-1252/Latin-1. Each unreadable file
(malformed, binary, empty, over the size cap, nested more than MAX_NESTING levels, a number over
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
import json
import re
import stat
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from examprep.errors import ExamprepError
from examprep.escape import printable  # noqa: F401 - the one rule for terminals, used from here by many modules
from examprep.fileio import not_regular, read_user_bytes, size_text

MAX_SUBMISSION_BYTES = 1_000_000          # one student's answers (a file, or a CSV row)
MAX_NESTING = 64                          # tables and lists inside one another (a matrix answer needs 4)
MAX_CLASS_FILE_BYTES = 256_000_000        # a class CSV holds many students
SUFFIXES = (".toml", ".json", ".csv", ".tsv")
ID_COLUMNS = ("student_id", "student id", "id", "student", "username", "email", "email address", "sis user id")
NAME_COLUMNS = ("name", "full name", "student name")
_ADDRESS = re.compile(r"^q\d+\.")
# what an answer template (keys.answer_template) says of its sheet, in comments: the sheet's title on
# its first line, and each question's generator and points beside its table
_TEMPLATE_TITLE = re.compile(r"\A\ufeff?# examprep answer file(?: — (.*))?$", re.M)
_TEMPLATE_QUESTION = re.compile(r"^\[q(\d+)\][ \t]*# (.*) \(([^(),]+), ([^(),]+) points?\)[ \t]*$", re.M)


class SubmissionError(ExamprepError):
    """A submission that cannot be read (the message names the file and why)."""

    exit_code = 1


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


def template_mark(text: str) -> TemplateMark | None:
    """What a filled-in answer template says of its sheet; None for a file not made from one."""
    head = _TEMPLATE_TITLE.match(text)
    if head is None:
        return None
    questions = {int(n): (" ".join(title.split()), gen.strip(), pts.strip())
                 for n, title, gen, pts in _TEMPLATE_QUESTION.findall(text)}
    return TemplateMark((head.group(1) or "").strip(), questions)



LINE_BREAKING = ("Cc", "Zl", "Zp")


def unprintable_char(text: str, allowed: str = "") -> str | None:
    """The first character of ``text`` that cannot be printed in a line of a sheet, an answer file,
    an export or a terminal, or None: a control character (Unicode category Cc: NUL … US, DEL and
    C1, so ESC, BEL, vertical tab, form feed) or a line or paragraph separator (Zl, Zp). ``allowed``:
    characters a field may hold all the same ("\n\t" for text of several lines). The one rule for
    text that examprep prints from what a user wrote (question files; keys' ids)."""
    import unicodedata

    return next((c for c in text if c not in allowed and unicodedata.category(c) in LINE_BREAKING), None)


def excerpt(text: Any, n: int = 40) -> str:
    """A short quotation of text that came from a file: at most ``n`` characters, printable, in
    quotes ('root:x:0:0:r…')."""
    text = str(text)
    return "'" + printable(text[:n]) + ("…" if len(text) > n else "") + "'"


def shown(value: Any) -> str:
    """A value read from a JSON file as an error message names it: as JSON ("one", -5, Infinity,
    null, [-1], {"a": 1}), at most 40 characters, printable; a longer list as "a list of N", a
    longer table as "a table"."""
    if isinstance(value, str):                 # escaped as every excerpt is ("x\x1b[2J"), in JSON's quotes
        return '"' + printable(value[:40]) + ("…" if len(value) > 40 else "") + '"'
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):            # not a JSON value (not reached for parsed JSON)
        text = repr(value)
    if isinstance(value, (list, dict)) and len(text) > 40:
        return f"a list of {len(value)}" if isinstance(value, list) else "a table"
    return printable(text if len(text) <= 40 else text[:40] + "…")


def decode(data: bytes, where: str) -> str:
    """Bytes to text: BOMs (UTF-8, UTF-16, UTF-32), UTF-8, UTF-16 without a BOM, then
    Windows-1252/Latin-1. Raises SubmissionError for an empty or binary file."""
    if not data.strip(b" \t\r\n\x00\xef\xbb\xbf\xff\xfe"):
        raise SubmissionError(f"{where}: empty file")
    boms = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
            (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
    text = None
    for bom, codec in boms:
        if data.startswith(bom):
            try:
                text = data.decode(codec)
            except UnicodeDecodeError:
                raise SubmissionError(f"{where}: not valid {codec.upper()} text despite its byte-order mark") from None
            break
    if text is None and b"\x00" in data[:4096]:
        zeros_even = data[0:4096:2].count(0)
        zeros_odd = data[1:4096:2].count(0)
        half = len(data[:4096]) // 2
        codec = "utf-16-be" if zeros_even > 0.3 * half else "utf-16-le" if zeros_odd > 0.3 * half else None
        if codec:
            try:
                text = data.decode(codec)
            except UnicodeDecodeError:
                text = None
        if text is None:
            raise SubmissionError(f"{where}: a binary file, not a text answer file")
    if text is None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            try:
                text = data.decode("cp1252")
            except UnicodeDecodeError:
                text = data.decode("latin-1")
    controls = sum(1 for c in text[:4096] if ord(c) < 32 and c not in "\t\n\r\f")
    if "\x00" in text or controls > max(2, len(text[:4096]) // 100):
        raise SubmissionError(f"{where}: a binary file, not a text answer file")
    return text


def read_bytes(path: Path, limit: int) -> bytes:
    """A regular file's bytes, up to ``limit`` (examprep.fileio.read_user_bytes: a pipe or a device
    is refused at once)."""
    return read_user_bytes(path, error=SubmissionError, limit=limit,
                           limit_what="a class file" if limit > MAX_SUBMISSION_BYTES else "one submission")


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


def _too_deep(data: Any) -> bool:
    """Are tables and lists nested more than MAX_NESTING levels (walked without recursion)?"""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_NESTING:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((v, depth + 1) for v in children if isinstance(v, (dict, list)))
    return False


def _decoding_failure(err: Exception) -> str:
    """Why a parser that is not ours gave up, in words: the nesting or the digit limit."""
    if isinstance(err, RecursionError):
        return f"nested too deeply (more than {MAX_NESTING} levels)"
    if "digits" in str(err):                    # Python's cap on int(str): a denial-of-service guard
        return f"a number with more than {sys.get_int_max_str_digits():,} digits"
    return printable(str(err).split("\n")[0][:200])


def _read_toml(text: str, path: Path) -> list[Submission]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise SubmissionError(f"{path}: invalid TOML: {err}") from None
    except (RecursionError, ValueError) as err:
        raise SubmissionError(f"{path}: invalid TOML: {_decoding_failure(err)}") from None
    if _too_deep(data):
        raise SubmissionError(f"{path}: invalid TOML: nested too deeply (more than {MAX_NESTING} levels)")
    sub = _from_mapping(data, path, "toml")
    sub.template = template_mark(text)
    return [sub]


def _read_json(text: str, path: Path) -> list[Submission]:
    try:
        data = json.loads(text, parse_constant=_json_constant)
    except json.JSONDecodeError as err:
        raise SubmissionError(f"{path}: invalid JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None
    except (RecursionError, ValueError) as err:
        raise SubmissionError(f"{path}: invalid JSON: {_decoding_failure(err)}") from None
    if isinstance(data, (dict, list)) and _too_deep(data):
        raise SubmissionError(f"{path}: invalid JSON: nested too deeply (more than {MAX_NESTING} levels)")
    if isinstance(data, list):
        if not all(isinstance(d, dict) for d in data):
            raise SubmissionError(f"{path}: a JSON list must hold one object per student")
        subs = [_from_mapping(d, path, "json") for d in data]
        for i, s in enumerate(subs, 1):
            s.source = f"{path}, item {i}"
            if s.id_from == "filename":
                s.student_id, s.id_from = f"{path.stem}-{i}", "row"
        return subs
    if not isinstance(data, dict):
        raise SubmissionError(f"{path}: expected a JSON object of answers, got {type(data).__name__}")
    return [_from_mapping(data, path, "json")]


def _json_constant(name: str) -> float:
    # NaN / Infinity in JSON: kept so the part reports "not a finite number" instead of the file failing
    return float("nan") if name == "NaN" else float("inf") if name == "Infinity" else float("-inf")


def _read_csv(text: str, path: Path) -> tuple[list[Submission], list[SubmissionError]]:
    first = text.split("\n", 1)[0]
    delimiter = "\t" if path.suffix.lower() == ".tsv" or first.count("\t") > max(first.count(","), first.count(";")) \
        else ";" if first.count(";") > first.count(",") else ","
    previous_limit = csv.field_size_limit(MAX_CLASS_FILE_BYTES)     # the per-row cap is ours, below
    try:
        return _read_csv_rows(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True), path)
    finally:
        csv.field_size_limit(previous_limit)


def _read_csv_rows(reader: Any, path: Path) -> tuple[list[Submission], list[SubmissionError]]:
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
        if not any(cell.strip() for cell in row):
            continue
        where = f"{path}, row {row_no} (line {reader.line_num})"
        if sum(len(c) for c in row) > MAX_SUBMISSION_BYTES:
            errors.append(SubmissionError(f"{where}: over the {size_text(MAX_SUBMISSION_BYTES)} limit for one submission"))
            continue
        if len(row) > len(header):
            extra = [c for c in row[len(header):] if c.strip()]
            if extra:
                errors.append(SubmissionError(f"{where}: {len(row)} cells but the header has {len(header)} columns"))
                continue
        sid = _id_text(_cell(row, id_col))
        answers = {header[i]: row[i] if i < len(row) else "" for i in answer_cols}
        sub = Submission(sid or f"{path.stem}-row{row_no}", answers, where, _id_text(_cell(row, name_col)),
                         _id_text(_cell(row, variant_col)), "file" if sid else "row")
        if ignored and not subs:
            sub.warnings.append(f"{path}: columns ignored (not part ids): {', '.join(excerpt(c) for c in ignored[:5])}"
                                + (f" and {len(ignored) - 5:,} more" if len(ignored) > 5 else ""))
        subs.append(sub)
    if not subs and not errors:
        errors.append(SubmissionError(f"{path}: a header but no student rows"))
    return subs, errors


def _cell(row: list[str], i: int | None) -> str:
    return row[i].strip() if i is not None and i < len(row) else ""


def read_file(path: str | Path) -> tuple[list[Submission], list[SubmissionError]]:
    """The submissions in one file (one for TOML/JSON, one per row for CSV) and the errors that
    made a file or a row unreadable. Never raises for bad content."""
    p = Path(path)
    try:
        limit = MAX_CLASS_FILE_BYTES if p.suffix.lower() in (".csv", ".tsv", ".json") else MAX_SUBMISSION_BYTES
        data = read_bytes(p, limit)
        text = decode(data, str(p))
        fmt = _format_of(p, text)
        if fmt == "csv":
            return _read_csv(text, p)
        if len(data) > MAX_SUBMISSION_BYTES and fmt == "json" and not text.lstrip().startswith("["):
            raise SubmissionError(f"{p}: {size_text(len(data))} is over the "
                                  f"{size_text(MAX_SUBMISSION_BYTES)} limit for one submission")
        subs = _read_toml(text, p) if fmt == "toml" else _read_json(text, p)
        if fmt == "json" and len(subs) > 1:
            big = [s for s in subs if len(json.dumps(s.answers, default=str)) > MAX_SUBMISSION_BYTES]
            if big:
                return ([s for s in subs if s not in big],
                        [SubmissionError(f"{s.source}: over the limit for one submission") for s in big])
        return subs, []
    except SubmissionError as err:
        return [], [err]


def collect(paths: list[str | Path]) -> tuple[list[Path], list[str]]:
    """Expand the SUBMISSION arguments: files as given, directories to their answer files
    (.toml, .json, .csv, .tsv; not recursive). Returns (files, notes): every directory entry that
    is not read has a note "PATH: skipped (why)" — hidden, a directory, a named pipe or other
    special file, a dangling link, a link that leads outside the directory given (a link to
    /etc/passwd must not become a class of students), or not an answer file."""
    import os

    files: list[Path] = []
    notes: list[str] = []
    seen: dict[str, Path] = {}

    def add(q: Path) -> None:         # one file named twice (class/ada.toml class/ada.toml, or a folder and
        real = os.path.realpath(q)    # a file in it) is graded once, not as two submissions of one student
        if real in seen:
            notes.append(f"{q}: skipped (the same file as {seen[real]}, given twice)")
        else:
            seen[real] = q
            files.append(q)

    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            root = p.resolve()
            for q in sorted(p.iterdir(), key=lambda q: q.name):
                why = _skip_reason(q, root)
                if why:
                    notes.append(f"{q}: skipped ({why})")
                else:
                    add(q)
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
