"""Per-student variants: the roster, the secret and the HMAC that gives each student a seed and
the variant code printed on the sheet.

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

The secret's file: `examprep secret FILE` and `sheet --roster` without --secret-file (SECRET_FILE
in the output folder, reused by a rerun there) write SECRET_MARK on the first line, then 64 hex
digits. A file without the mark (a secret from before the mark, or one made by hand) is read as
before, with a warning: stretching makes each guess cost 0.3 s, which does not help against a
short list of hashed words.

Sheets made before the stretching (HMAC under the secret itself, which also accepted short
passphrases) are regenerated with ``legacy=True`` (`--legacy-secret`), which warns.
"""
from __future__ import annotations

import base64
import csv
import hashlib
import hmac
import io
import os
import re
import secrets
import shlex
from dataclasses import dataclass
from pathlib import Path

from examprep.answers.files import excerpt, row_cell as cell, unprintable_char
from examprep.fileio import check_output_file, read_user_bytes, read_user_text, write_files
from examprep.render import plural
from examprep.sources.recipes import SheetError

MAX_STUDENTS = 5000
MIN_SECRET_BYTES = 16                 # --legacy-secret: the old rule (any 16 bytes)
MIN_SECRET_HEX = 32                   # 128 bits, as `examprep secret` (64) or secrets.token_hex(16) write
MIN_SECRET_DISTINCT = 8               # hex digits used: "0000…" or "abab…" is not random
SECRET_KDF = {"name": "scrypt", "n": 2 ** 16, "r": 8, "p": 1, "dklen": 32}
SECRET_SALT_TAG = b"examprep-variant-key-v2"
SECRET_MARK = "# examprep secret"     # the first line of every secret file examprep writes
SECRET_FILE = "secret.hex"            # a class's secret, made by `sheet --roster` beside key.json


@dataclass(frozen=True)
class Student:
    id: str
    name: str = ""
    email: str = ""         # the identifiers an LMS gradebook matches students on (grade --gradebook)
    username: str = ""
    sis_id: str = ""
    lms_id: str = ""        # the LMS's own participant/user id (Moodle, Canvas download file names)


_ID_COLUMNS = ("id", "studentid", "student", "sid", "studentnumber", "idnumber", "matriculationnumber",
               "matrikelnummer", "username", "login")
_NAME_COLUMNS = ("name", "fullname", "studentname")
_FIRST = ("firstname", "givenname", "first", "given")
_LAST = ("lastname", "surname", "familyname", "last", "family")
_EMAIL = ("email", "emailaddress", "mail")
_USERNAME = ("username", "login", "loginid", "sisloginid", "user")
_SIS_ID = ("sisid", "sisuserid", "orgdefinedid", "sisnumber")
_LMS_ID = ("lmsid", "canvasid", "canvasuserid", "moodleid", "participantid", "moodleparticipantid")


def _norm(header: str) -> str:
    return re.sub(r"[\s_\-.]", "", header.strip().lower())


def read_roster(path: str | os.PathLike) -> list[Student]:
    """Students from a CSV file with a header row: an id column (id, student_id, sid, ID number…)
    and optionally a name (name, or first and last name) and the identifiers an LMS matches on
    (email, username, sis_id; lms_id: the LMS's own user id, in its download file
    names). Comma, semicolon or tab separated.

    Raises SheetError for a missing or unreadable file, no id column, a row with more (non-empty)
    fields than the header row, an empty id, a duplicate id (with both line numbers) or no students.
    """
    p = Path(path)
    raw = read_user_text(p, f"--roster {p}", error=SheetError, decode_hint="save the roster as UTF-8 CSV")
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
    email_col, username_col, sis_col, lms_col = (next((norm.index(c) for c in names if c in norm), None)
                                                 for names in (_EMAIL, _USERNAME, _SIS_ID, _LMS_ID))
    students, seen = [], {}
    lms_seen: dict[str, int] = {}

    for line, row in rows[1:]:
        extra = [c for c in row[len(header):] if c.strip()]
        if extra:       # a name with an unquoted separator: its second half would be lost, silently
            sep = {",": "comma", ";": "semicolon", "\t": "tab"}[delimiter]
            raise SheetError(f"--roster {p}:{line}: {plural(len(row), 'field')}, but the header row has "
                             f"{len(header)} (an unquoted {sep} inside a name? put the cell in double quotes); "
                             f"extra: {extra[0][:30]!r}")
        sid = cell(row, id_col)
        if not sid:
            raise SheetError(f"--roster {p}:{line}: empty student id")
        if len(sid) > 64 or unprintable_char(sid) is not None:
            raise SheetError(f"--roster {p}:{line}: student id {sid[:20]!r}… is not an id (at most 64 printable characters)")
        if sid.casefold() in seen:         # S1 and s1 would share a file on macOS and Windows
            other, at = seen[sid.casefold()]
            same = "" if other == sid else f" ({other!r} differs only in case: their files would collide)"
            raise SheetError(f"--roster {p}:{line}: duplicate student id {sid!r}{same} (also on line {at})")
        seen[sid.casefold()] = (sid, line)
        name = cell(row, name_col) or " ".join(x for x in (cell(row, first_col), cell(row, last_col)) if x)
        for what, text in (("name", name), ("email", cell(row, email_col)), ("username", cell(row, username_col)),
                           ("sis_id", cell(row, sis_col)), ("lms_id", cell(row, lms_col))):
            bad = unprintable_char(text)       # printed on the copy, in its template and the LMS files
            if bad is not None:
                raise SheetError(f"--roster {p}:{line}: the {what} {excerpt(text)} holds a control character "
                                 f"({bad!r}); it would be printed on the copy and in its answer file")
        lms_id = cell(row, lms_col)
        if lms_id and lms_id in lms_seen:     # the LMS's user id says whose an upload is: one student's
            raise SheetError(f"--roster {p}:{line}: duplicate lms_id {excerpt(lms_id)} (also on line {lms_seen[lms_id]}): "
                             "an LMS user id is one student's")
        if lms_id:
            lms_seen[lms_id] = line
        students.append(Student(sid, name, email=cell(row, email_col), username=cell(row, username_col),
                                sis_id=cell(row, sis_col), lms_id=cell(row, lms_col)))
    if not students:
        raise SheetError(f"--roster {p}: no students below the header row")
    if len(students) > MAX_STUDENTS:
        raise SheetError(f"--roster {p}: {len(students)} students; at most {MAX_STUDENTS} per sheet")
    return students


LEGACY_WARNING = ("--legacy-secret: variants derived the old way, from the secret itself without stretching, "
                  "so one printed variant code lets anyone test a million guesses of the secret in seconds; "
                  "use it only to regenerate a sheet made before examprep stretched secrets, and make new sheets "
                  "with a secret from `examprep secret FILE`")


_MAKE_SECRET = "make one with `examprep secret FILE`"


def check_secret(secret: bytes, where: str = "the secret", *, legacy: bool = False) -> bytes:
    """``secret`` if it is one examprep accepts, else SheetError naming ``where``.

    Accepted: at least 32 hex digits (128 bits) using at least 8 different digits, neither
    repeating a block nor counting (_patterned), as `examprep secret` and ``secrets.token_hex(16)``
    or longer write. With ``legacy`` (sheets made
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
    elif _patterned(text.lower()):
        why = "its digits repeat a block or count in steps, as 0123456789abcdef does: not random"
    else:
        return secret
    raise SheetError(f"{where}: not a random secret ({why}); {_MAKE_SECRET} (a sheet made with this one before "
                     f"examprep stretched secrets regenerates with --legacy-secret)")


def _periodic(seq: list[int]) -> bool:
    """Whether ``seq`` repeats with a period of at most half its length."""
    return any(all(seq[i] == seq[i + p] for i in range(len(seq) - p)) for p in range(1, len(seq) // 2 + 1))


def _patterned(text: str) -> bool:
    """Hex digits that repeat a block ("abcd1234" × 4) or whose steps do (a counting run,
    0123456789abcdef0123…, or fedc…, 02468ace…): a random 32 digits do either about once in 16¹⁶."""
    digits = [int(c, 16) for c in text]
    return _periodic(digits) or _periodic([(b - a) % 16 for a, b in zip(digits, digits[1:])])


def read_secret(path: str | os.PathLike, *, legacy: bool = False) -> bytes:
    """The variant secret: the file's bytes without surrounding whitespace (and without the
    SECRET_MARK line, where examprep wrote the file), checked by check_secret.

    Raises SheetError for a missing, unreadable, empty or weak secret.
    """
    return read_secret_file(path, legacy=legacy)[0]


def read_secret_file(path: str | os.PathLike, *, legacy: bool = False) -> tuple[bytes, bool]:
    """(the secret, whether the file carries SECRET_MARK), as read_secret reads it."""
    p = Path(path)
    raw = read_user_bytes(p, f"--secret-file {p}", error=SheetError, missing_hint=_MAKE_SECRET)
    marked = raw.startswith(SECRET_MARK.encode("ascii"))
    if marked:
        raw = raw.partition(b"\n")[2]
    return check_secret(raw.strip(), f"--secret-file {p}", legacy=legacy), marked


def unmarked_warning(path: str | os.PathLike) -> str:
    """The one-line warning for a --secret-file examprep did not write (no SECRET_MARK)."""
    return (f"--secret-file {path}: not written by `examprep secret`; a secret typed by hand or made by hashing "
            "a word or phrase (md5 of a password) is guessed from one student's copy in seconds, stretching or not; "
            "unless it came from a random generator (openssl rand -hex 32), make new sheets with a secret from "
            "`examprep secret FILE`")


def new_secret() -> str:
    """A fresh 256-bit secret as 64 hex digits (what `examprep secret` writes)."""
    return secrets.token_hex(32)


def secret_file_bytes(secret: str) -> bytes:
    """A secret file's content as examprep writes it: SECRET_MARK's line, then the hex digits."""
    return (f"{SECRET_MARK}: 256 random bits; keep this file private, and keep it: the variants "
            f"of every sheet made with it are derived from it\n{secret}\n").encode("ascii")


def write_secret(path: str | os.PathLike, *, force: bool = False) -> Path:
    """Write a new secret to ``path`` with SECRET_MARK (mode 0600, atomically).
    Refuses to replace an existing file unless ``force``: the variants of every sheet made with it
    hang on that file."""
    target = check_output_file(path, "", force=force)
    return write_files({target: secret_file_bytes(new_secret())}, overwrite=force, private=True)[0]


def class_secret(out_dir: Path) -> tuple[bytes, bool, bool]:
    """The secret of `sheet --roster` without --secret-file, as (secret, marked, new): the
    SECRET_FILE an earlier run left in ``out_dir`` (read and checked as any --secret-file: one
    that cannot be read or is weak is refused, never replaced), else a new one, which
    save_class_secret writes once the sheet is built."""
    path = out_dir / SECRET_FILE
    if os.path.lexists(path):
        return (*read_secret_file(path), False)
    return new_secret().encode("ascii"), True, True


def save_class_secret(out_dir: Path, secret: bytes) -> Path:
    """Write a new class secret to ``out_dir``/SECRET_FILE (mode 0600, atomically, never over a
    file that appeared meanwhile; the folder made if need be, as the outputs' is)."""
    return write_files({out_dir / SECRET_FILE: secret_file_bytes(secret.decode("ascii"))}, overwrite=False,
                       private=True)[0]


def rebuild_command(*, recipe: str | None, topics: list[str] | None, count: int | None, difficulty: int | None,
                    seed: int, roster: str, secret_file: str, title: str | None, course: str | None,
                    decimal_comma: bool, formats: str | None, split: bool = False, solutions: bool = False,
                    questions_dir: str | None = None, checkpoint: str | None = None,
                    canvas_per_student: bool = False, scannable: bool = False) -> str:
    """The `examprep sheet` command line that rebuilds a class's sheet (the same variants) from its
    roster and secret file, wherever both are copied (--out left to the user)."""
    args = ["examprep", "sheet"]
    for option, value in (("--recipe", recipe), ("--topics", ",".join(topics) if topics else None),
                          ("--count", count), ("--difficulty", difficulty), ("--seed", seed), ("--roster", roster),
                          ("--secret-file", secret_file), ("--title", title), ("--course", course),
                          ("--format", formats), ("--questions-dir", questions_dir), ("--checkpoint", checkpoint)):
        if value is not None:
            args += [option, str(value)]
    if decimal_comma:
        args.append("--decimal-comma")
    if split:
        args.append("--split")
    if canvas_per_student:
        args.append("--canvas-per-student")
    if solutions:
        args.append("--solutions")
    if scannable:
        args.append("--scannable")
    return shlex.join(args)


def class_secret_note(path: str, new: bool, seed_from: str, rebuild: str) -> str:
    """What `sheet --roster` without --secret-file says about the class's secret file: written
    (``new``) or reused, and where the seed came from ("given", "key": the folder's key.json, "key,
    other secret": the same but that key's codes differ, or "new"), then the command that rebuilds
    the class elsewhere."""
    if new:
        head = (f"wrote {path}: a new 256-bit secret, readable only by you, from which every student's variant "
                "is derived; keep it private and keep it (a rerun into this folder reuses it, and the seed of "
                "its key.json: the same variants)")
    else:
        head = f"reused {path}, the secret an earlier run left in this folder" + {
            "key": ", and the seed of its key.json: each student keeps their variant",
            "key, other secret": (", and the seed of its key.json; that key's variants came from another secret "
                                  "(a --secret-file), so these differ from them"),
            "given": ", with the --seed given",
            "new": ", with a new seed (no class key.json of this recipe there): new variants"}[seed_from]
    return f"{head}. To rebuild this class elsewhere, copy the roster and {path}, then run: {rebuild}"


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


def check_pairing(roster: list[Student] | None, secret: bytes | None) -> None:
    """The roster/secret rule, checked once (by build_sheet, before any problem is built): a roster
    needs a secret (the variants are derived from it) and a secret is only used with a roster.
    Raises SheetError naming the missing option."""
    if roster is not None and secret is None:
        raise SheetError("--roster needs --secret-file: the variants are derived from a secret only you hold")
    if secret is not None and roster is None:
        raise SheetError("--secret-file is only used with --roster (one variant per student)")
