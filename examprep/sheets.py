"""Practice sheets: recipes → problems → printable PDFs, Markdown, answer keys, answer templates
and Moodle XML; per-student variants keyed by a secret.

A recipe (TOML; bundled ones live in ``examprep/bank``) names the sheet and lists its problems:

    [sheet]
    title = "Midterm practice exam"
    course = "Deep Learning"
    minutes = 180          # time allowed, printed; the parts' estimates should add up to about this
    calculator = true      # printed in the instructions
    difficulty = 2         # default level of each problem (1–3)
    instructions = "…"     # optional extra paragraph

    [[problem]]
    topic = "receptive-field"
    difficulty = 2         # optional, overrides the sheet's
    count = 1              # optional
    calculator_free = false

Seeds. A sheet with seed S numbers its problems 1…N and builds problem k with seed S + k − 1.
With a roster and a secret, each student gets a variant. The secret (at least 128 random bits,
written as hex by `examprep secret`) is stretched once per sheet with scrypt (n = 2¹⁶, r = 8,
p = 1, salt "examprep-variant-key-v2" ‖ len ‖ sheet id: about 0.3 s and 64 MiB on a laptop core),
and each student's base seed is the first 48 bits of HMAC-SHA256(stretched key,
"examprep-sheet-variant" ‖ len ‖ sheet id ‖ len ‖ student id) (each field UTF-8 with a 4-byte
big-endian length, so no two (sheet, student) pairs share a message). The printed variant code
comes from other bits of the same digest: it reveals nothing about the seed, and testing a guess
of the secret against it costs one scrypt, so a million guesses take days, not seconds. The key
holds every variant and records how they were derived (``meta["variants"]``); a grader picks the
variant by student id.

Sheets made before the stretching (HMAC under the secret itself, which also accepted short
passphrases) are regenerated with ``legacy=True`` (`--legacy-secret`), which warns.
"""
from __future__ import annotations

import base64
import csv
import difflib
import hashlib
import hmac
import io
import os
import re
import tempfile
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable

from examprep.errors import ExamprepError, ParamError
from examprep.fileio import OutputError

FORMATS = ("pdf", "md", "moodle")
DEFAULT_FORMATS = ("pdf", "md")
MAX_PROBLEMS = 200
MAX_STUDENTS = 5000
MIN_SECRET_BYTES = 16                 # --legacy-secret: the old rule (any 16 bytes)
MIN_SECRET_HEX = 32                   # 128 bits, as `examprep secret` (64) or secrets.token_hex(16) write
MIN_SECRET_DISTINCT = 8               # hex digits used: "0000…" or "abab…" is not random
SECRET_KDF = {"name": "scrypt", "n": 2 ** 16, "r": 8, "p": 1, "dklen": 32}
SECRET_SALT_TAG = b"examprep-variant-key-v2"
PDF_CHUNK = 8          # copies per Typst compile: bounds memory; chunks are joined into one PDF


Progress = Callable[[str, int, int], None]      # (what, done, total): a long sheet reports as it goes


class SheetError(ExamprepError):
    """A bad recipe, roster, secret or output location; the message says where and how to fix it."""


# ----------------------------------------------------------------------------------------- recipes

@dataclass(frozen=True)
class Item:
    """One line of a recipe: ``count`` problems of ``topic`` at ``difficulty``."""

    topic: str
    difficulty: int
    count: int = 1
    calculator_free: bool = False
    tolerance: Any = None        # a Tolerance for its numeric parts (the recipe's tolerance = "…"), or None


@dataclass(frozen=True)
class SheetRecipe:
    name: str
    title: str
    items: tuple[Item, ...]
    course: str = ""
    minutes: int | None = None
    calculator: bool = True
    instructions: str = ""
    source: str = ""

    @property
    def problem_count(self) -> int:
        return sum(i.count for i in self.items)


_SHEET_KEYS = {"title": str, "course": str, "minutes": int, "calculator": bool, "difficulty": int,
               "instructions": str, "name": str, "tolerance": str}
_ITEM_KEYS = {"topic": str, "difficulty": int, "count": int, "calculator_free": bool, "tolerance": str}
_TOP_KEYS = {"sheet", "problem"}


def _line_of(text: str, key: str, table: str | None = None, index: int = 0) -> int | None:
    """The 1-based line where ``key`` is set: at the top level, or in the ``index``-th [table] or
    [[table]] (``key`` "" gives that table's header line). TOML parsers do not report where a key
    is, so we find it."""
    lines = text.splitlines()
    headers = [n for n, line in enumerate(lines) if re.match(r"\s*\[", line)]
    if table is None:
        lo, hi = 0, headers[0] if headers else len(lines)
    else:
        mine = [n for n in headers if re.match(rf"\s*\[\[?\s*\"?{re.escape(table)}\"?\s*\]\]?\s*(#.*)?$", lines[n])]
        if index >= len(mine):
            return None
        if key == "":
            return mine[index] + 1
        lo = mine[index] + 1
        hi = next((n for n in headers if n > mine[index]), len(lines))
    for n in range(lo, hi):
        if re.match(rf'\s*"?{re.escape(key)}"?\s*=', lines[n]):
            return n + 1
    return None


def _type_name(t: type) -> str:
    return {str: "a string", int: "an integer", bool: "true or false"}[t]


def parse_recipe(text: str, source: str, default_name: str = "sheet") -> SheetRecipe:
    """A recipe from TOML text; ``source`` (a file name) is used in messages.

    Raises SheetError naming the file, line and key of the first problem found: malformed TOML,
    an unknown key, a value of the wrong type or range, an unknown topic or level.
    """
    from examprep import generators

    def fail(msg: str, line: int | None) -> SheetError:
        return SheetError(f"{source}{f':{line}' if line else ''}: {msg}")

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(err))
        what = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(err))
        raise fail(f"not valid TOML: {what}", int(m.group(1)) if m else None) from None
    for key in data:
        if key not in _TOP_KEYS:
            close = difflib.get_close_matches(key, sorted(_TOP_KEYS), n=1)
            hint = f"; did you mean [{close[0]}]?" if close else "; a recipe has a [sheet] table and [[problem]] tables"
            raise fail(f"unknown key {key!r}{hint}", _line_of(text, key) or _line_of(text, "", key))
    sheet = data.get("sheet", {})
    if not isinstance(sheet, dict):
        raise fail("'sheet' must be a table: [sheet]", _line_of(text, "sheet"))
    for key, value in sheet.items():
        if key not in _SHEET_KEYS:
            close = difflib.get_close_matches(key, sorted(_SHEET_KEYS), n=1)
            hint = f"; did you mean {close[0]}?" if close else f"; known keys: {', '.join(sorted(_SHEET_KEYS))}"
            raise fail(f"[sheet]: unknown key {key!r}{hint}", _line_of(text, key, "sheet"))
        want = _SHEET_KEYS[key]
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise fail(f"[sheet] {key}: expected {_type_name(want)}, got {value!r}", _line_of(text, key, "sheet"))
    title = sheet.get("title", "").strip()
    if not title:
        raise fail("[sheet] title: give the sheet a title, e.g. title = \"Midterm practice\"",
                   _line_of(text, "title", "sheet") or _line_of(text, "", "sheet"))
    minutes = sheet.get("minutes")
    if minutes is not None and not 1 <= minutes <= 600:
        raise fail(f"[sheet] minutes: expected 1 to 600, got {minutes}", _line_of(text, "minutes", "sheet"))
    default_level = sheet.get("difficulty", 1)
    if default_level not in (1, 2, 3):
        raise fail(f"[sheet] difficulty: expected 1, 2 or 3, got {default_level}", _line_of(text, "difficulty", "sheet"))

    def tolerance(spec: str | None, line: int | None) -> Any:
        # "sigfigs-strict:3": the rule of every number, vector and matrix part that is not exact by
        # its nature (the parts --tolerance RULE reaches), read by the one parser of tolerance text
        from examprep.answers import parse_tolerance

        try:
            return None if spec is None else parse_tolerance(spec)
        except ParamError as err:
            raise fail(str(err), line) from None

    sheet_tolerance = tolerance(sheet.get("tolerance"), _line_of(text, "tolerance", "sheet"))
    name = sheet.get("name", default_name).strip() or default_name
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise fail(f"[sheet] name: letters, digits, '-', '_' and '.' only, got {name!r}", _line_of(text, "name", "sheet"))
    problems = data.get("problem")
    if problems is None or problems == []:
        raise fail("no problems: add at least one [[problem]] table with a topic (see `examprep topics`)", None)
    if not isinstance(problems, list) or not all(isinstance(p, dict) for p in problems):
        raise fail("'problem' must be an array of tables: [[problem]]", _line_of(text, "problem"))
    items = []
    for i, entry in enumerate(problems):
        where = f"problem {i + 1}"
        for key, value in entry.items():
            line = _line_of(text, key, "problem", i)
            if key not in _ITEM_KEYS:
                close = difflib.get_close_matches(key, sorted(_ITEM_KEYS), n=1)
                hint = f"; did you mean {close[0]}?" if close else f"; known keys: {', '.join(sorted(_ITEM_KEYS))}"
                raise fail(f"{where}: unknown key {key!r}{hint}", line)
            want = _ITEM_KEYS[key]
            if not isinstance(value, want) or (want is int and isinstance(value, bool)):
                raise fail(f"{where} {key}: expected {_type_name(want)}, got {value!r}", line)
        if "topic" not in entry:
            raise fail(f"{where}: missing topic (see `examprep topics`)", _line_of(text, "", "problem", i))
        line = _line_of(text, "topic", "problem", i)
        try:
            gen = generators.get_drawable(entry["topic"], "a sheet")
        except ParamError as err:
            raise fail(f"{where}: {err}", line) from None
        level = entry.get("difficulty", default_level)
        if level not in gen.levels:
            raise fail(f"{where} difficulty: {gen.name} has levels {', '.join(map(str, gen.levels))}, got {level}",
                       _line_of(text, "difficulty", "problem", i) or line)
        count = entry.get("count", 1)
        if not 1 <= count <= MAX_PROBLEMS:
            raise fail(f"{where} count: expected 1 to {MAX_PROBLEMS}, got {count}", _line_of(text, "count", "problem", i))
        cf = entry.get("calculator_free", False)
        if cf and not gen.calculator_free:
            raise fail(f"{where} calculator_free: {gen.name} has no calculator-free variant",
                       _line_of(text, "calculator_free", "problem", i))
        own = tolerance(entry.get("tolerance"), _line_of(text, "tolerance", "problem", i))
        items.append(Item(gen.name, level, count, cf, own or sheet_tolerance))
    total = sum(i.count for i in items)
    if total > MAX_PROBLEMS:
        raise fail(f"{total} problems: a sheet holds at most {MAX_PROBLEMS}", None)
    return SheetRecipe(name=name, title=title, items=tuple(items), course=sheet.get("course", "").strip(),
                       minutes=minutes, calculator=sheet.get("calculator", True),
                       instructions=sheet.get("instructions", "").strip(), source=source)


def _bank_files() -> dict[str, str]:
    """Bundled recipe names → TOML text (bank files with a [sheet] table)."""
    out = {}
    bank = resources.files("examprep") / "bank"
    for entry in sorted(bank.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            text = entry.read_text(encoding="utf-8")
            if re.search(r"^\s*\[sheet\]", text, re.M):
                out[entry.name[:-5]] = text
    return out


def bundled_recipes() -> dict[str, SheetRecipe]:
    """Every recipe shipped with examprep, by name."""
    return {name: parse_recipe(text, f"examprep/bank/{name}.toml", name) for name, text in _bank_files().items()}


def load_recipe(spec: str) -> SheetRecipe:
    """A bundled recipe by name (``midterm``) or the user's own TOML file.

    Raises SheetError for an unknown name (with the close ones) or an unreadable or bad file.
    """
    bank = _bank_files()
    if spec in bank:
        return parse_recipe(bank[spec], f"examprep/bank/{spec}.toml", spec)
    path = Path(spec)
    if spec.endswith(".toml") or path.exists() or os.sep in spec:
        try:
            text = path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            raise SheetError(f"--recipe {spec}: no such file") from None
        except IsADirectoryError:
            raise SheetError(f"--recipe {spec}: is a directory, not a recipe file") from None
        except (OSError, UnicodeDecodeError) as err:
            raise SheetError(f"--recipe {spec}: cannot read it ({err})") from None
        return parse_recipe(text, str(path), path.stem)
    close = difflib.get_close_matches(spec, sorted(bank), n=2, cutoff=0.5)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    raise SheetError(f"unknown recipe {spec!r}; {hint}bundled recipes: {', '.join(sorted(bank))}; "
                     "or give a .toml file")


def recipe_from_topics(topics: list[str], *, count: int = 1, difficulty: int = 1,
                       calculator_free: bool = False, title: str = "Practice sheet") -> SheetRecipe:
    """An ad-hoc recipe: ``count`` problems of each topic. Raises ParamError for bad values."""
    from examprep import generators

    if not topics:
        raise ParamError("--topics: give at least one topic (see `examprep topics`)")
    if not 1 <= count <= MAX_PROBLEMS:
        raise ParamError(f"--count: expected 1 to {MAX_PROBLEMS}, got {count}")
    if difficulty not in (1, 2, 3):
        raise ParamError(f"--difficulty: expected 1, 2 or 3, got {difficulty}")
    if count * len(topics) > MAX_PROBLEMS:
        raise ParamError(f"--count: {count * len(topics)} problems; a sheet holds at most {MAX_PROBLEMS}")
    items = []
    for t in topics:
        gen = generators.get_drawable(t, "a sheet")
        if difficulty not in gen.levels:
            raise ParamError(f"--difficulty: {gen.name} has levels {', '.join(map(str, gen.levels))}, got {difficulty}")
        if calculator_free and not gen.calculator_free:
            raise ParamError(f"--calculator-free: {gen.name} has no calculator-free variant")
        items.append(Item(gen.name, difficulty, count, calculator_free))
    return SheetRecipe(name="practice", title=title, items=tuple(items), source="--topics")


def with_difficulty(recipe: SheetRecipe, difficulty: int) -> SheetRecipe:
    """The recipe with every problem at ``difficulty``; ParamError if a topic lacks that level."""
    from dataclasses import replace

    from examprep import generators

    if difficulty not in (1, 2, 3):
        raise ParamError(f"--difficulty: expected 1, 2 or 3, got {difficulty}")
    for item in recipe.items:
        levels = generators.get(item.topic).levels
        if difficulty not in levels:
            raise ParamError(f"--difficulty: {item.topic} has levels {', '.join(map(str, levels))}, got {difficulty}")
    return replace(recipe, items=tuple(replace(i, difficulty=difficulty) for i in recipe.items))


# ---------------------------------------------------------------------------------- roster, secret

@dataclass(frozen=True)
class Student:
    id: str
    name: str = ""


_ID_COLUMNS = ("id", "studentid", "student", "sid", "studentnumber", "idnumber", "matriculationnumber",
               "matrikelnummer", "username", "login")
_NAME_COLUMNS = ("name", "fullname", "studentname")
_FIRST = ("firstname", "givenname", "first", "given")
_LAST = ("lastname", "surname", "familyname", "last", "family")


def _norm(header: str) -> str:
    return re.sub(r"[\s_\-.]", "", header.strip().lower())


def read_roster(path: str | os.PathLike) -> list[Student]:
    """Students from a CSV file with a header row: an id column (id, student_id, sid, ID number…)
    and optionally a name (name, or first and last name). Comma, semicolon or tab separated.

    Raises SheetError for a missing or unreadable file, no id column, an empty id, a duplicate id
    (with both line numbers) or no students.
    """
    p = Path(path)
    try:
        raw = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise SheetError(f"--roster {p}: no such file") from None
    except UnicodeDecodeError:
        raise SheetError(f"--roster {p}: not UTF-8 text; save the roster as UTF-8 CSV") from None
    except OSError as err:
        raise SheetError(f"--roster {p}: cannot read it ({err.strerror})") from None
    lines = raw.splitlines()
    first = next((ln for ln in lines if ln.strip()), "")
    if not first:
        raise SheetError(f"--roster {p}: empty file; expected a header row with an id column, then one row per student")
    bare = re.sub(r'"[^"]*"', "", first)       # separators inside quoted headers do not count
    delimiter = max(",;\t", key=bare.count) if any(c in bare for c in ",;\t") else ","
    reader = csv.reader(io.StringIO(raw), delimiter=delimiter)
    try:
        rows = [(reader.line_num, row) for row in reader]
    except csv.Error as err:
        raise SheetError(f"--roster {p}:{reader.line_num}: not valid CSV ({err})") from None
    rows = [(n, r) for n, r in rows if any(c.strip() for c in r)]
    header_line, header = rows[0]
    norm = [_norm(h) for h in header]
    id_col = next((norm.index(c) for c in _ID_COLUMNS if c in norm), None)
    if id_col is None:
        raise SheetError(f"--roster {p}:{header_line}: no id column; the header row has "
                         f"{', '.join(repr(h) for h in header) or 'nothing'}; name one column 'id' (or student_id)")
    name_col = next((norm.index(c) for c in _NAME_COLUMNS if c in norm), None)
    first_col = next((norm.index(c) for c in _FIRST if c in norm), None)
    last_col = next((norm.index(c) for c in _LAST if c in norm), None)
    students, seen = [], {}
    def cell(row: list[str], i: int | None) -> str:
        return row[i].strip() if i is not None and i < len(row) else ""

    for line, row in rows[1:]:
        sid = cell(row, id_col)
        if not sid:
            raise SheetError(f"--roster {p}:{line}: empty student id")
        if len(sid) > 64 or any(ord(c) < 32 for c in sid):
            raise SheetError(f"--roster {p}:{line}: student id {sid[:20]!r}… is not an id (at most 64 printable characters)")
        if sid in seen:
            raise SheetError(f"--roster {p}:{line}: duplicate student id {sid!r} (also on line {seen[sid]})")
        seen[sid] = line
        name = cell(row, name_col) or " ".join(x for x in (cell(row, first_col), cell(row, last_col)) if x)
        students.append(Student(sid, name))
    if not students:
        raise SheetError(f"--roster {p}: no students below the header row")
    if len(students) > MAX_STUDENTS:
        raise SheetError(f"--roster {p}: {len(students)} students; at most {MAX_STUDENTS} per sheet")
    return students


_MAKE_SECRET = "make one with `examprep secret FILE`"


def check_secret(secret: bytes, where: str = "the secret", *, legacy: bool = False) -> bytes:
    """``secret`` if it is one examprep accepts, else SheetError naming ``where``.

    Accepted: at least 32 hex digits (128 bits) using at least 8 different digits, as
    `examprep secret` and ``secrets.token_hex(16)`` or longer write. With ``legacy`` (sheets made
    before key stretching): any 16 bytes or more, as then.
    """
    if not secret:
        raise SheetError(f"{where}: the file is empty; {_MAKE_SECRET}")
    if legacy:
        if len(secret) < MIN_SECRET_BYTES:
            raise SheetError(f"{where}: {len(secret)} bytes is too short even for --legacy-secret "
                             f"(at least {MIN_SECRET_BYTES})")
        return secret
    text = secret.decode("ascii", "replace")
    if not re.fullmatch(r"[0-9a-fA-F]+", text):
        why = "it is not hexadecimal"
    elif len(text) < MIN_SECRET_HEX:
        why = f"{len(text)} hex digits; at least {MIN_SECRET_HEX} (128 bits) are needed"
    elif len(set(text.lower())) < MIN_SECRET_DISTINCT:
        why = f"only {len(set(text.lower()))} different hex digits: not random"
    else:
        return secret
    raise SheetError(f"{where}: not a random secret ({why}); {_MAKE_SECRET} (a sheet made with this one before "
                     f"examprep stretched secrets regenerates with --legacy-secret)")


def read_secret(path: str | os.PathLike, *, legacy: bool = False) -> bytes:
    """The variant secret: the file's bytes without surrounding whitespace, checked by check_secret.

    Raises SheetError for a missing, unreadable, empty or weak secret.
    """
    p = Path(path)
    try:
        secret = p.read_bytes().strip()
    except FileNotFoundError:
        raise SheetError(f"--secret-file {p}: no such file; {_MAKE_SECRET}") from None
    except IsADirectoryError:
        raise SheetError(f"--secret-file {p}: is a directory") from None
    except OSError as err:
        raise SheetError(f"--secret-file {p}: cannot read it ({err.strerror})") from None
    return check_secret(secret, f"--secret-file {p}", legacy=legacy)


def new_secret() -> str:
    """A fresh 256-bit secret as 64 hex digits (what `examprep secret` writes)."""
    import secrets

    return secrets.token_hex(32)


def write_secret(path: str | os.PathLike, *, force: bool = False) -> Path:
    """Write a new secret to ``path`` (mode 0600, atomically). Refuses to replace an existing file
    unless ``force``: the variants of every sheet made with it hang on that file."""
    from examprep.fileio import check_output_file

    target = check_output_file(path, "", force=force)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:       # mkstemp's 0600: private from the start
            fh.write(new_secret() + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise OutputError(f"{target}: cannot write ({err.strerror})") from None
    return target


def _field(value: str) -> bytes:
    raw = value.encode("utf-8")
    return len(raw).to_bytes(4, "big") + raw


def stretch_secret(secret: bytes, sheet_id: str) -> bytes:
    """The key a sheet's variants are derived from: scrypt of the secret (lower-case hex text)
    with the sheet id in the salt, so each guess at the secret costs one scrypt (SECRET_KDF)."""
    kdf = SECRET_KDF
    return hashlib.scrypt(secret.strip().lower(), salt=SECRET_SALT_TAG + _field(sheet_id), n=kdf["n"], r=kdf["r"],
                          p=kdf["p"], dklen=kdf["dklen"], maxmem=256 * kdf["n"] * kdf["r"])


def derivation(legacy: bool) -> dict:
    """How a sheet's variants were derived, as recorded in its key (``meta["variants"]``)."""
    message = "'examprep-sheet-variant' ‖ len ‖ sheet id ‖ len ‖ student id (4-byte big-endian lengths, UTF-8)"
    out = {"version": 1 if legacy else 2,
           "key": "the secret file's bytes (--legacy-secret: no stretching)" if legacy else
                  f"scrypt(lower-case secret, salt '{SECRET_SALT_TAG.decode()}' ‖ len ‖ sheet id)",
           "hmac": f"HMAC-SHA256(key, {message})", "seed": "digest bytes 0-5, big-endian",
           "code": "base32 of digest bytes 16-20"}
    if not legacy:
        out["kdf"] = dict(SECRET_KDF)
    return out


def variant_digest(key: bytes, sheet_id: str, student_id: str) -> bytes:
    """HMAC-SHA256(key, tag ‖ len ‖ sheet id ‖ len ‖ student id): an unambiguous encoding. ``key``
    is the stretched secret (stretch_secret), or the secret itself for a legacy sheet."""
    msg = b"examprep-sheet-variant" + _field(sheet_id) + _field(student_id)
    return hmac.new(key, msg, hashlib.sha256).digest()


def variant_seed(key: bytes, sheet_id: str, student_id: str) -> tuple[int, str]:
    """The student's base seed (48 bits, JSON-safe) and printed variant code ("ABCD-EFGH").

    The code comes from different bits of the digest than the seed, so it reveals nothing about it.
    """
    digest = variant_digest(key, sheet_id, student_id)
    seed = int.from_bytes(digest[:6], "big")
    code = base64.b32encode(digest[16:21]).decode()
    return seed, f"{code[:4]}-{code[4:]}"


# ------------------------------------------------------------------------------------------ sheets

@dataclass
class Copy:
    """One printed copy: its problems, and for a variant the student and variant code."""

    problems: list
    student: Student | None = None
    code: str = ""
    extras: dict[int, list] = field(default_factory=dict)   # problem index → figures for the solutions

    @property
    def points(self) -> float:
        return sum(p.points for p in self.problems)

    @property
    def minutes(self) -> float:
        return sum(p.minutes for p in self.problems)


@dataclass
class Sheet:
    recipe: SheetRecipe
    seed: int
    copies: list[Copy]
    variants: bool = False
    legacy: bool = False           # variants derived the old way (--legacy-secret)

    @property
    def sheet_id(self) -> str:
        return f"{self.recipe.name}-{self.seed}"

    def instructions(self) -> list[str]:
        return instructions(self)


def build_problems(recipe: SheetRecipe, base_seed: int) -> list:
    """The recipe's problems in order; problem k (from 0) uses seed ``base_seed + k``."""
    from examprep import generators

    out = []
    for item in recipe.items:
        for _ in range(item.count):
            problem = generators.build(item.topic, base_seed + len(out), item.difficulty, item.calculator_free)
            out.append(_with_tolerance(problem, item.tolerance) if item.tolerance is not None else problem)
    return out


def _with_tolerance(problem: Any, tolerance: Any) -> Any:
    """The problem with ``tolerance`` on its number, vector and matrix parts that are not exact."""
    from dataclasses import replace

    parts = [replace(p, tolerance=tolerance) if p.kind in ("number", "vector", "matrix") and p.tolerance.rule != "exact"
             else p for p in problem.parts]
    return replace(problem, parts=parts)


def build_sheet(recipe: SheetRecipe, seed: int, *, roster: list[Student] | None = None,
                secret: bytes | None = None, legacy: bool = False, progress: Progress | None = None) -> Sheet:
    """The sheet's copies: one common copy, or one variant per student when a roster is given
    (which needs the secret, stretched here once for the whole roster; ``legacy``: the pre-stretching
    derivation, to regenerate an old sheet). Raises ParamError for a negative seed, SheetError for
    a roster without a secret, a secret without a roster, or a secret check_secret refuses."""
    if seed < 0:
        raise ParamError(f"--seed: expected a non-negative integer, got {seed}")
    if roster is not None and secret is None:
        raise SheetError("--roster needs --secret-file: the variants are derived from a secret only you hold")
    if secret is not None and roster is None:
        raise SheetError("--secret-file is only used with --roster (one variant per student)")
    sheet = Sheet(recipe, seed, [], variants=roster is not None, legacy=legacy and roster is not None)
    if roster is None:
        sheet.copies.append(Copy(build_problems(recipe, seed)))
    else:
        check_secret(secret, legacy=legacy)
        key = secret if legacy else stretch_secret(secret, sheet.sheet_id)
        codes: dict[str, str] = {}
        for n, student in enumerate(roster, 1):
            base, code = variant_seed(key, sheet.sheet_id, student.id)
            if code in codes:     # 40 bits: about one chance in 10⁸ for 200 students
                raise SheetError(f"students {codes[code]!r} and {student.id!r} drew the same variant code; "
                                 "use another --seed")
            codes[code] = student.id
            sheet.copies.append(Copy(build_problems(recipe, base), student, code))
            if progress:
                progress("variants", n, len(roster))
    for copy in sheet.copies:
        copy.extras = solution_extras(copy.problems)
    return sheet


# ------------------------------------------------------------------------------------------ figures

def _is_distribution_matrix(value: Any) -> bool:
    try:
        rows = [[float(v) for v in row] for row in value]
    except (TypeError, ValueError):
        return False
    if len(rows) < 2 or len({len(r) for r in rows}) != 1 or len(rows[0]) < 2:
        return False
    return all(all(0 <= v <= 1 for v in r) and abs(sum(r) - 1) < 1e-6 for r in rows)


def solution_extras(problems: list) -> dict[int, list]:
    """Figures the solutions draw beside the numbers, by problem index: a shaded heatmap for a
    matrix answer whose rows are probability distributions (attention weights, batched softmax),
    then the figures the problem's own generator draws (the receptive-field diagram of a conv/pool
    stack)."""
    from examprep import generators
    from examprep.document import Heatmap, Matrix

    out: dict[int, list] = {}
    for k, p in enumerate(problems):
        extras: list = []
        for part in p.parts:
            if part.kind == "matrix" and _is_distribution_matrix(part.expected):
                labels = next((b for b in p.statement if isinstance(b, Matrix) and b.row_labels), None)
                rows = labels.row_labels if labels else []
                keys = [b for b in p.statement if isinstance(b, Matrix) and b.name in ("K", "X") and b.row_labels]
                cols = keys[0].row_labels if keys else []
                n, m = len(part.expected), len(part.expected[0])
                extras.append(Heatmap(f"{part.id}: darker = larger", part.expected,
                                      rows if len(rows) == n else [], cols if len(cols) == m else []))
        extras += generators.figures(p)
        if extras:
            out[k] = extras
    return out


# ------------------------------------------------------------------------------------------ outputs

def instructions(sheet: Sheet) -> list[str]:
    """The instruction lines printed on every copy (plain text with $…$ math)."""
    r = sheet.recipe
    copy = sheet.copies[0]
    tolerances = sorted({part.tolerance.describe() for p in copy.problems for part in p.parts
                         if part.kind in ("number", "vector", "matrix") and part.tolerance.rule != "exact"})
    from examprep.render import plural

    lines = []
    has = f"The sheet has {plural(len(copy.problems), 'problem')} worth {plural(copy.points, 'point')}"
    if r.minutes:
        lines.append(f"Time allowed: {plural(r.minutes, 'minute')}. {has}; the points of each part are printed "
                     "beside it.")
    else:
        lines.append(f"{has} (about {plural(round(copy.minutes), 'minute')}); the points of each part are printed "
                     "beside it.")
    rule = " or ".join(tolerances) if tolerances else "to 3 significant figures"
    strict = any(part.tolerance.rule == "sigfigs-strict" for p in copy.problems for part in p.parts)
    forms = ("Where the figures written are part of the rule, write a decimal with exactly that many (0.250, not "
             "0.25 or 1/4)." if strict else "An exact form (a fraction, $\\ln 2$, $e^2/(1 + e^2)$) is always accepted.")
    lines.append(f"Give numerical answers {rule} unless a part says otherwise: an answer that agrees with the exact "
                 f"value to that precision earns full marks. Integer answers (sizes, counts) must be exact. {forms}")
    lines.append("Write each answer in its box and show your work in the space above it: a part computed correctly "
                 "from a wrong earlier answer still earns its credit (error carried forward).")
    lines.append("Each problem states its conventions (gate order, padding rule, softmax axis); follow them.")
    lines.append("A calculator is allowed." if r.calculator else "No calculator: every answer can be found by hand.")
    if r.instructions:
        lines.append(r.instructions)
    return lines


def printed_texts(sheet: Sheet) -> dict[str, str]:
    """The text a user gave that the PDFs print, by what it is: title, course, instructions, and
    each student's name and id (the fonts must be able to show them)."""
    r = sheet.recipe
    texts = {"the title": r.title, "the course": r.course, "the recipe's instructions": r.instructions}
    for copy in sheet.copies:
        if copy.student:
            s = copy.student
            texts[f"student {s.id}" + (f" ({s.name})" if s.name else "")] = f"{s.name} {s.id}"
    return {label: text for label, text in texts.items() if text}


def font_plan(sheet: Sheet):
    """The extra fonts the sheet's PDFs need and a warning for each name no font can show
    (examprep.render.fonts.plan)."""
    from examprep.render import fonts

    return fonts.plan(printed_texts(sheet))


def render_outputs(sheet: Sheet, formats: tuple[str, ...] = DEFAULT_FORMATS,
                   progress: Progress | None = None, font_files: list | None = None) -> dict[str, bytes]:
    """Every output file of the sheet, rendered in memory: relative path → bytes.

    Always the key (``key.json``) and answer template(s); "pdf" adds problems.pdf and
    solutions.pdf, "md" problems.md and solutions.md, "moodle" moodle.xml.
    ``progress("PDF parts", done, total)`` is called as each PDF part is typeset (and joined).
    ``font_files``: extra fonts for the PDFs (default: font_plan's, for names the bundled fonts lack).
    Raises TypstCompileError (nothing is written) when Typst rejects a document.
    """
    from examprep.render import fonts

    if font_files is None:
        font_files = font_plan(sheet).files if "pdf" in formats else []
    with fonts.font_folder(font_files) as folder:
        return _render_outputs(sheet, formats, progress, folder)


def _render_outputs(sheet: Sheet, formats: tuple[str, ...], progress: Progress | None,
                    font_folder: str | None) -> dict[str, bytes]:
    from examprep import keys
    from examprep.render import pdf
    from examprep.render.typst.sheet import sheet_source

    out: dict[str, bytes] = {}
    # The PDFs compile in worker processes while Python renders the rest. A long run of variants
    # compiles in chunks of PDF_CHUNK copies (Typst holds a document's whole layout in memory),
    # which are then joined into one PDF.
    with pdf.PdfWorkers() as pool:
        chunks: dict[str, list] = {}
        if "pdf" in formats:
            groups = [sheet.copies[i:i + PDF_CHUNK] for i in range(0, len(sheet.copies), PDF_CHUNK)]
            for name, solutions in (("problems.pdf", False), ("solutions.pdf", True)):
                chunks[name] = [pool.submit(pdf.compile_pdf,
                                            sheet_source(sheet, solutions=solutions, copies=g), font_folder)
                                for g in groups]
        out["key.json"] = (keys.key_to_json(make_key(sheet)) + "\n").encode("utf-8")
        if sheet.variants:
            for copy in sheet.copies:
                out[f"answers/{_safe_name(copy.student.id)}.toml"] = keys.answer_template(
                    copy.problems, title=sheet.recipe.title, student_id=copy.student.id,
                    name=copy.student.name).encode("utf-8")
        else:
            out["answers.toml"] = keys.answer_template(sheet.copies[0].problems,
                                                       title=sheet.recipe.title).encode("utf-8")
        if "md" in formats:
            out["problems.md"] = sheet_markdown(sheet, solutions=False).encode("utf-8")
            out["solutions.md"] = sheet_markdown(sheet, solutions=True).encode("utf-8")
        if "moodle" in formats:
            from examprep.render import moodle

            out["moodle.xml"] = moodle.sheet_xml(sheet).encode("utf-8")
        total = sum(len(f) for f in chunks.values()) + sum(1 for f in chunks.values() if len(f) > 1)
        done = 0
        merges = {}
        for name, futures in chunks.items():
            parts = []
            for f in futures:
                parts.append(f.result())
                done += 1
                if progress:
                    progress("PDF parts", done, total)
            if len(parts) == 1:
                out[name] = parts[0]
            else:
                title = sheet.recipe.title + (" — solutions" if name == "solutions.pdf" else "")
                merges[name] = pool.submit(pdf.merge_pdfs, parts, title=title, author=sheet.recipe.course)
        for name, future in merges.items():
            out[name] = future.result()
            done += 1
            if progress:
                progress("PDF parts", done, total)
    return {name: out[name] for name in sorted(out, key=_output_order)}


_ORDER = ("problems.pdf", "solutions.pdf", "problems.md", "solutions.md", "key.json", "answers.toml", "moodle.xml")


def _output_order(name: str) -> tuple[int, str]:
    return (_ORDER.index(name) if name in _ORDER else len(_ORDER), name)


def _safe_name(student_id: str) -> str:
    """A file name for a student id: unsafe characters replaced, a hash added when any were."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", student_id).lstrip(".") or "_"
    if safe != student_id:
        safe += "-" + hashlib.sha256(student_id.encode()).hexdigest()[:6]
    return safe


def make_key(sheet: Sheet):
    from examprep import keys

    r = sheet.recipe
    meta = {"sheet_id": sheet.sheet_id, "recipe": r.name, "recipe_source": r.source, "seed": sheet.seed,
            "course": r.course, "minutes": r.minutes, "points": sheet.copies[0].points,
            "estimated_minutes": round(sheet.copies[0].minutes, 1)}
    if sheet.variants:
        meta["variants"] = derivation(sheet.legacy)
        meta["names"] = {c.student.id: c.student.name for c in sheet.copies}
        return keys.Key(title=r.title, problems=[], meta=meta,
                        variants={c.student.id: c.problems for c in sheet.copies},
                        variant_codes={c.student.id: c.code for c in sheet.copies})
    return keys.Key(title=r.title, problems=sheet.copies[0].problems, meta=meta)


def planned_paths(sheet_variants: bool, formats: tuple[str, ...], roster: list[Student] | None = None) -> list[str]:
    """The relative paths a sheet will write (checked for overwrites before anything is built)."""
    paths = ["key.json"]
    if sheet_variants and roster is not None:
        paths += [f"answers/{_safe_name(s.id)}.toml" for s in roster]
    else:
        paths.append("answers.toml")
    if "pdf" in formats:
        paths += ["problems.pdf", "solutions.pdf"]
    if "md" in formats:
        paths += ["problems.md", "solutions.md"]
    if "moodle" in formats:
        paths.append("moodle.xml")
    return sorted(paths, key=_output_order)


def check_output_dir(out_dir: Path, paths: list[str], force: bool) -> None:
    """Refuse to overwrite (without ``force``) and fail early on a directory we cannot write."""
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"--out {out_dir}: exists and is not a directory")
    existing = [p for p in paths if (out_dir / p).exists()]
    if existing and not force:
        more = f" and {len(existing) - 1} more" if len(existing) > 1 else ""
        raise OutputError(f"{out_dir / existing[0]}{more} already exist{'s' if len(existing) == 1 else ''}; "
                          "use --force to overwrite, or --out another directory")
    probe = out_dir
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise OutputError(f"--out {out_dir}: cannot create it, {probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise OutputError(f"--out {out_dir}: cannot write there (permission denied)")


def write_outputs(out_dir: Path, outputs: dict[str, bytes], force: bool) -> list[Path]:
    """Write every output, all or nothing as far as the file system allows: each file goes to a
    temporary file beside its target first; only when all are written are they renamed into place
    (with Ctrl-C held off for those few renames). A failure or Ctrl-C before that removes the
    temporaries and the directories this call created; a failure raises OutputError."""
    check_output_dir(out_dir, list(outputs), force)
    temps: list[tuple[str, Path]] = []
    created: list[Path] = []
    umask = os.umask(0)
    os.umask(umask)
    try:
        for rel, data in outputs.items():
            target = out_dir / rel
            missing = [d for d in (target.parent, *target.parent.parents) if not d.exists()]
            target.parent.mkdir(parents=True, exist_ok=True)
            created += reversed(missing)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            temps.append((tmp, target))
            os.chmod(tmp, 0o666 & ~umask)      # mkstemp makes 0600; outputs get what open() would give
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        if not force:
            clash = [t for _, t in temps if t.exists()]
            if clash:
                raise OutputError(f"{clash[0]} appeared while the sheet was being written; use --force to overwrite")
        with _interrupts_held():
            for tmp, target in temps:
                os.replace(tmp, target)
    except BaseException as err:        # OSError, OutputError, KeyboardInterrupt: leave nothing behind
        for tmp, _ in temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        for d in reversed(created):
            try:
                d.rmdir()
            except OSError:
                pass
        if isinstance(err, OSError):
            where = getattr(err, "filename", None) or out_dir
            raise OutputError(f"{where}: cannot write ({err.strerror or err})") from None
        raise
    return [t for _, t in temps]


class _interrupts_held:
    """Ctrl-C ignored for the duration (main thread only): the renames that publish a sheet's
    outputs take milliseconds and must not stop half-way."""

    def __enter__(self) -> None:
        import signal
        import threading

        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, signal.SIG_IGN)

    def __exit__(self, *exc: Any) -> None:
        import signal

        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


@dataclass
class Result:
    sheet: Sheet
    out_dir: Path
    written: list[Path]
    warnings: list[str] = field(default_factory=list)


LEGACY_WARNING = ("--legacy-secret: variants derived the old way, from the secret itself without stretching, "
                  "so one printed variant code lets anyone test a million guesses of the secret in seconds; "
                  "use it only to regenerate a sheet made before examprep stretched secrets, and make new sheets "
                  "with a secret from `examprep secret FILE`")


def _old_derivation(out_dir: Path, legacy: bool) -> str | None:
    """A warning when --force replaces a key whose variants were derived the other way."""
    import json

    try:
        meta = json.loads((out_dir / "key.json").read_text(encoding="utf-8")).get("meta", {})
    except (OSError, ValueError, AttributeError):
        return None
    recorded = meta.get("variants") if isinstance(meta, dict) else None
    if recorded is None:
        return None
    old = not isinstance(recorded, dict) or recorded.get("version", 1) == 1
    if old and not legacy:
        return (f"{out_dir / 'key.json'} held variants derived the old way; these differ from them "
                "(add --legacy-secret to regenerate that sheet instead)")
    if legacy and not old:
        return f"{out_dir / 'key.json'} held variants from a stretched secret; --legacy-secret derives other ones"
    return None


def make_sheet(*, recipe: str | None = None, topics: list[str] | None = None, count: int | None = None,
               difficulty: int | None = None, seed: int = 0, roster: str | None = None,
               secret_file: str | None = None, formats: str | None = None, out: str | None = None,
               force: bool = False, title: str | None = None, course: str | None = None,
               legacy_secret: bool = False, progress: Progress | None = None) -> Result:
    """The `examprep sheet` command: validate everything, build, render in memory, then write.

    Raises ExamprepError subclasses (usage: ParamError; recipe, roster, secret: SheetError;
    output: OutputError; Typst: TypstCompileError) before anything is written.
    """
    from dataclasses import replace

    fmts = parse_formats(formats)
    if recipe and topics:
        raise ParamError("give either --recipe or --topics, not both")
    if topics:
        names = [t.strip() for spec in topics for t in spec.split(",") if t.strip()]
        r = recipe_from_topics(names, count=1 if count is None else count, difficulty=1 if difficulty is None else difficulty)
    else:
        if count is not None:
            raise ParamError("--count applies to --topics; a recipe sets the count of each problem")
        r = load_recipe(recipe or "midterm")
        if difficulty is not None:
            r = with_difficulty(r, difficulty)
    if title is not None:
        if not title.strip():
            raise ParamError("--title: give a non-empty title")
        r = replace(r, title=title.strip())
    if course is not None:
        r = replace(r, course=course.strip())
    students = read_roster(roster) if roster else None
    if legacy_secret and not secret_file:
        raise SheetError("--legacy-secret goes with --roster and --secret-file (it regenerates old variants)")
    secret = read_secret(secret_file, legacy=legacy_secret) if secret_file else None
    if students is not None and secret is None:
        raise SheetError("--roster needs --secret-file: the variants are derived from a secret only you hold")
    if secret is not None and students is None:
        raise SheetError("--secret-file is only used with --roster (one variant per student)")
    out_dir = Path(out) if out else Path(r.name)
    check_output_dir(out_dir, planned_paths(students is not None, fmts, students), force)
    warnings = [LEGACY_WARNING] if legacy_secret else []
    if students is not None and force:
        replaced = _old_derivation(out_dir, legacy_secret)
        warnings += [replaced] if replaced else []
    sheet = build_sheet(r, seed, roster=students, secret=secret, legacy=legacy_secret, progress=progress)
    fonts = font_plan(sheet) if "pdf" in fmts else None
    warnings += fonts.warnings if fonts else []
    outputs = render_outputs(sheet, fmts, progress, fonts.files if fonts else [])
    written = write_outputs(out_dir, outputs, force)
    return Result(sheet, out_dir, written, warnings)


def parse_formats(spec: str | None) -> tuple[str, ...]:
    """"pdf,md,moodle" → ("pdf", "md", "moodle"); ParamError naming an unknown format."""
    if spec is None:
        return DEFAULT_FORMATS
    names = [f.strip().lower() for f in spec.split(",") if f.strip()]
    if not names:
        raise ParamError(f"--format: give one or more of {', '.join(FORMATS)}")
    for n in names:
        if n not in FORMATS:
            alias = {"markdown": "md", "xml": "moodle", "typst": "pdf"}.get(n)
            hint = f"; did you mean {alias}?" if alias else ""
            raise ParamError(f"--format: unknown format {n!r}{hint}; choose from {', '.join(FORMATS)}")
    return tuple(f for f in FORMATS if f in names)


# ------------------------------------------------------------------------------------------ markdown

def _letter(i: int) -> str:
    return chr(97 + i) if i < 26 else f"a{i - 25}"


def _denoise(v: Any) -> Any:
    """Values as printed: float noise of an exact 0 (|x| < 1e-12) shown as 0."""
    if isinstance(v, list):
        return [_denoise(x) for x in v]
    if isinstance(v, float) and abs(v) < 1e-12:
        return 0.0
    return v


def _md_value(v: Any) -> str:
    """A value as Markdown: LaTeX math, or plain text for words (a choice)."""
    from examprep.render import markdown as md
    from examprep.exact import is_exact_form

    if isinstance(v, str) and not is_exact_form(v):
        return v
    return f"${md.latex_value(_denoise(v))}$"


def _md_answer(part: Any) -> str:
    from examprep.render import markdown as md

    if isinstance(part.exact, str) and part.exact:
        approx = f" \\approx {md.latex_value(_denoise(part.expected))}" if isinstance(part.expected, (int, float)) else ""
        return f"${md.number(part.exact)}{approx}$"
    if isinstance(part.exact, list):
        return f"${md.latex_value(part.exact)}$"
    return _md_value(part.expected)


def _md_block(b: Any) -> str:
    from dataclasses import replace

    from examprep.document import Matrix
    from examprep.render import markdown as md
    from examprep.exact import is_exact_form

    if isinstance(b, Matrix) and isinstance(b.values, str) and not is_exact_form(b.values):
        return f"{b.name} = {b.values}"          # words, not math
    return md.block(replace(b, values=_denoise(b.values)) if isinstance(b, Matrix) else b)


def _md_figure(fig: Any) -> list[str]:
    from examprep.document import Heatmap
    from examprep.render import markdown as md

    if isinstance(fig, Heatmap):
        return [md.block(fig), ""]
    lines = ["**Receptive field of the middle output** (units it depends on, top layer first):", ""]
    for level in reversed(range(len(fig.sizes))):
        units = fig.needed[level]
        pad = sum(1 for u in units if u < 0 or u >= fig.sizes[level])
        span = f"units {units[0]}…{units[-1]}" if len(units) > 1 else f"unit {units[0]}"
        lines.append(f"- {fig.labels[level]}: {span} ({len(units)} used"
                     + (f", {pad} of them padding" if pad else "") + ")")
    lines += ["", f"Span at the input: {fig.receptive_field} positions.", ""]
    return lines


def sheet_markdown(sheet: Sheet, *, solutions: bool) -> str:
    """The sheet as Markdown with LaTeX math: the same content as the PDF (header, instructions,
    score table, problems; with ``solutions`` the worked steps, answers and typical mistakes)."""
    from examprep.render import plural
    from examprep.render import part_note

    r = sheet.recipe
    guide = instructions(sheet)
    out: list[str] = []
    for c, copy in enumerate(sheet.copies):
        if c:
            out += ["", "---", ""]
        out += [f"# {r.title}{' — solutions' if solutions else ''}", ""]
        bits = [b for b in (r.course, plural(r.minutes, "minute") if r.minutes else "", plural(copy.points, "point"),
                            plural(len(copy.problems), "problem")) if b]
        bits.append(f"variant {copy.code}" if copy.code else f"sheet {sheet.sheet_id}")
        out += [" · ".join(bits), ""]
        if copy.student:
            out += [f"**Name:** {copy.student.name or '—'} · **Student ID:** {copy.student.id}", ""]
        elif not solutions:
            out += ["**Name:** ______________________ · **Student ID:** ______________", ""]
        if solutions:
            out += [guide[1], ""]
        else:
            out += ["## Instructions", ""] + [f"- {line}" for line in guide] + [""]
            n = len(copy.problems)
            out += ["| Problem | " + " | ".join(str(k + 1) for k in range(n)) + " | Total |",
                    "|---|" + "---|" * (n + 1),
                    "| Points | " + " | ".join(f"{p.points:g}" for p in copy.problems) + f" | {copy.points:g} |",
                    "| Score |" + " |" * (n + 1), ""]
        for k, p in enumerate(copy.problems):
            out += [f"## Problem {k + 1} — {p.title}", "", f"*{plural(p.points, 'point')} · about {round(p.minutes)} min*",
                    ""]
            for b in p.statement:
                out += [_md_block(b), ""]
            if p.conventions:
                out += ["*Conventions:* " + "; ".join(f"{key}: {v}" for key, v in p.conventions.items()) + ".", ""]
            for i, part in enumerate(p.parts):
                note = (part_note(part) if part.kind == "choice"
                        else f"{part.form()} · {part.tolerance.describe()}")
                out += [f"**({_letter(i)})** {part.prompt} *[{part.points:g} pt · {note} · answer `q{k + 1}.{part.id}`]*",
                        ""]
            if not solutions:
                continue
            letters = {part.id: _letter(i) for i, part in enumerate(p.parts)}
            out += ["### Worked solution", ""]
            for n, st in enumerate(p.solution, 1):
                target = f" → ({letters[st.part]})" if st.part in letters else ""
                out += [f"**Step {n}. {st.title}**{target}", ""]
                for b in st.blocks:
                    out += [_md_block(b), ""]
            out += ["### Answers", "", "| Part | Answer | Accepted | Points |", "|---|---|---|---|"]
            for i, part in enumerate(p.parts):
                out.append(f"| ({_letter(i)}) {part.id} | {_md_answer(part)} | {part.tolerance.describe()} | "
                           f"{part.points:g} |")
            out.append("")
            for fig in copy.extras.get(k, []):
                out += _md_figure(fig)
            mistakes = [f"- ({_letter(i)}) {_md_value(m.value)} — {m.explanation}"
                        for i, part in enumerate(p.parts) for m in part.misconceptions]
            if mistakes:
                out += ["### Typical mistakes", ""] + mistakes + [""]
        if not solutions:
            out += ["*— end of the sheet —*", ""]
    return "\n".join(out).rstrip() + "\n"


# ------------------------------------------------------------------------------------------ samples

SAMPLE_SEED = 2024
SAMPLE_RECIPES = ("midterm", "cnn", "rnn", "transformer")


def sample_outputs(with_pdf: bool = True) -> dict[str, bytes]:
    """The repository's sample sheets: bundled recipes at seed SAMPLE_SEED, as paths relative to
    the repository root (problems/NAME.md|pdf, solutions/NAME.md|pdf, solutions/NAME-key.json)."""
    out: dict[str, bytes] = {}
    recipes = bundled_recipes()
    for name in SAMPLE_RECIPES:
        if name not in recipes:
            continue
        sheet = build_sheet(recipes[name], SAMPLE_SEED)
        files = render_outputs(sheet, ("pdf", "md") if with_pdf else ("md",))
        out[f"problems/{name}.md"] = files["problems.md"]
        out[f"solutions/{name}.md"] = files["solutions.md"]
        out[f"solutions/{name}-key.json"] = files["key.json"]
        if with_pdf:
            out[f"problems/{name}.pdf"] = files["problems.pdf"]
            out[f"solutions/{name}.pdf"] = files["solutions.pdf"]
    return out
