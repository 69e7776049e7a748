"""What one answer file may hold, and how its bytes become text: the limits of `grade` (each
raisable by an option), the one error for a file that cannot be read, the decoding every answer
file gets (BOMs, UTF-16, UTF-8, then Windows-1252/Latin-1), read in pieces for a class file, and
the checks of parsed answers and of a TOML file's keys before it is parsed."""
from __future__ import annotations

import codecs
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from examprep.errors import ExamprepError, ParamError
from examprep.fileio import open_user_file, read_user_bytes

MAX_SUBMISSION_BYTES = 1_000_000          # one student's answers (a file, a CSV row, an item of a JSON list)
MAX_KEYS = 10_000                         # keys in one student's answers (a sheet has a few hundred at most)
MAX_NESTING = 64                          # tables and lists inside one another (a matrix answer needs 4)
MAX_CLASS_FILE_BYTES = 16_000_000         # a class CSV or JSON list: 5,000 students take about 1 MB
MAX_CLASS_ROWS = 100_000                  # rows of a class CSV, items of a JSON list
# The deepest nesting the parsers read: tomllib and json recurse once or more per level and stop at
# Python's recursion limit (1,000 frames: about 330 levels of TOML inline tables from an empty stack, 994
# of JSON lists), less the frames of the command itself. --max-nesting cannot go past it.
MAX_NESTING_CEILING = 200
CHUNK = 1 << 16


class SubmissionError(ExamprepError):
    """A submission that cannot be read (the message names the file and why)."""

    exit_code = 1


@dataclass(frozen=True)
class Limits:
    """What one file may hold, each raisable by a `grade` option (OPTIONS): a class file (CSV or
    JSON list) ``class_bytes`` and ``class_rows``; one student's answers (a file, a row, an item)
    ``file_bytes``, ``keys`` (every key of every table, or a CSV's answer columns) and
    ``nesting`` (tables and lists inside one another). A file over a limit is refused in one line
    naming the limit and its option; memory and time stay bounded by the limits, never by a file's
    size."""

    class_bytes: int = MAX_CLASS_FILE_BYTES
    class_rows: int = MAX_CLASS_ROWS
    file_bytes: int = MAX_SUBMISSION_BYTES
    keys: int = MAX_KEYS
    nesting: int = MAX_NESTING

    def __post_init__(self) -> None:
        for name, option in OPTIONS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ParamError(f"{option}: expected a positive number, got {value!r}")
        if self.nesting > MAX_NESTING_CEILING:
            raise ParamError(f"{OPTIONS['nesting']}: at most {MAX_NESTING_CEILING} (the deepest the TOML and JSON "
                             f"parsers read), got {self.nesting!r}")

    @classmethod
    def from_options(cls, class_mb: float = MAX_CLASS_FILE_BYTES / 1e6, class_rows: int = MAX_CLASS_ROWS,
                     file_mb: float = MAX_SUBMISSION_BYTES / 1e6, keys: int = MAX_KEYS,
                     nesting: int = MAX_NESTING) -> Limits:
        """The limits as `grade` takes them: sizes in MB (10⁶ bytes), counts as numbers."""
        sizes = {}
        for name, mb in (("class_bytes", class_mb), ("file_bytes", file_mb)):
            if not mb > 0 or mb == float("inf"):
                raise ParamError(f"{OPTIONS[name]}: expected a positive number of MB, got {mb!r}")
            sizes[name] = max(1, round(mb * 1e6))
        return cls(class_rows=class_rows, keys=keys, nesting=nesting, **sizes)


OPTIONS = {"class_bytes": "--max-class-size", "class_rows": "--max-class-rows", "file_bytes": "--max-file-size",
           "keys": "--max-keys", "nesting": "--max-nesting"}
DEFAULT_LIMITS = Limits()


def raise_hint(name: str) -> str:
    return f"raise it with {OPTIONS[name]}"


_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
         (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
_BLANK_BYTES = b" \t\r\n\x00"            # white space, and UTF-16/32's zero bytes (a NUL *character* is binary)


def decode(data: bytes, where: str) -> str:
    """Bytes to text: BOMs (UTF-8, UTF-16, UTF-32), UTF-8, UTF-16 without a BOM, then
    Windows-1252/Latin-1. Raises SubmissionError for an empty or binary file."""
    codec, _ = codec_of(lambda: [data], where)
    return data.decode(codec)


def codec_of(chunks: Callable[[], Iterable[bytes]], where: str) -> tuple[str, str]:
    """The codec that decode() reads a file's bytes with, and the file's first character that is
    not white space (for a JSON file: "[" is a class list). ``chunks()`` gives the bytes in pieces
    (the first one at least 4,096 bytes long unless it is all), once for each codec tried, so a
    class file is read in bounded memory. Raises SubmissionError for an empty or binary file, or
    text that its byte-order mark's codec cannot read."""
    head = next(iter(chunks()), b"")[:4096]
    for bom, codec in _BOMS:
        if head.startswith(bom):
            first = decodes(chunks, codec, where)
            if first is None:
                raise SubmissionError(f"{where}: not valid {codec.upper()} text despite its byte-order mark")
            return codec, first
    if b"\x00" in head:
        zeros_even = head[0::2].count(0)
        zeros_odd = head[1::2].count(0)
        half = len(head) // 2
        codec = "utf-16-be" if zeros_even > 0.3 * half else "utf-16-le" if zeros_odd > 0.3 * half else ""
        first = decodes(chunks, codec, where) if codec else None
        if first is None:
            decodes(chunks, "latin-1", where)          # an empty file is called empty, not binary
            raise SubmissionError(f"{where}: a binary file, not a text answer file")
        return codec, first
    for codec in ("utf-8", "cp1252", "latin-1"):
        first = decodes(chunks, codec, where)
        if first is not None:
            return codec, first
    raise AssertionError("latin-1 decodes every byte")


def decodes(chunks: Callable[[], Iterable[bytes]], codec: str, where: str) -> str | None:
    """One pass over the bytes: the first character that is not white space when ``codec`` reads
    them all, else None. Raises SubmissionError for an empty file (white space, NULs and byte-order
    marks only) or a binary one (a NUL, or more than 1% control characters in the first 4,096)."""
    decoder = codecs.getincrementaldecoder(codec)()
    blank, ok, head, first, nul = True, True, "", "", False
    for n, chunk in enumerate(chunks()):
        bare = chunk
        if n == 0:                                     # a byte-order mark is blank at the start only
            bare = chunk.removeprefix(next((bom for bom, _ in _BOMS if chunk.startswith(bom)), b""))
        if blank and bare.strip(_BLANK_BYTES):
            blank = False
        if not ok:
            continue                                   # read on only to know whether the file is empty
        try:
            text = decoder.decode(chunk)
        except UnicodeDecodeError:
            ok = False
            continue
        if len(head) < 4096:
            head += text[:4096 - len(head)]
        if not first:
            first = text.lstrip()[:1]
        nul = nul or "\x00" in text
    if ok:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            ok = False
    if blank and not (ok and nul):                 # NUL characters (not UTF-16's zero bytes) are binary
        raise SubmissionError(f"{where}: empty file")
    if not ok:
        return None
    controls = sum(1 for c in head if ord(c) < 32 and c not in "\t\n\r\f")
    # TOML, JSON and CSV answers always hold some ASCII (= { , "): text with none (ÿÿÿ… from 0xFF bytes) is binary
    if nul or controls > max(2, len(head) // 100) or not any(" " < c < "\x7f" for c in head):
        raise SubmissionError(f"{where}: a binary file, not a text answer file")
    return first


def read_bytes(path: Path, limit: int, what: str = "one submission", option: str = "file_bytes") -> bytes:
    """A regular file's bytes, up to ``limit`` (examprep.fileio.read_user_bytes: a pipe or a device
    is refused at once; a file over the limit is refused, before and while it is read)."""
    return read_user_bytes(path, error=SubmissionError, limit=limit, limit_what=f"{what}; {raise_hint(option)}")


def chunks_of(path: Path, limits: Limits) -> Callable[[], Iterator[bytes]]:
    """The bytes of a class file in pieces, read afresh at each call, at most ``limits.class_bytes``."""
    def read() -> Iterator[bytes]:
        with open_user_file(path, error=SubmissionError, limit=limits.class_bytes,
                            limit_what=f"a class file; {raise_hint('class_bytes')}") as fh:
            while chunk := fh.read(CHUNK):
                yield chunk
    return read


def text_stream(path: Path, codec: str, limits: Limits) -> io.TextIOWrapper:
    """A class file as a text stream (lines as they are: a CSV reader wants them so)."""
    raw = open_user_file(path, error=SubmissionError, limit=limits.class_bytes,
                         limit_what=f"a class file; {raise_hint('class_bytes')}")
    return io.TextIOWrapper(raw, encoding=codec, newline="")


def shape(data: Any, limits: Limits) -> str:
    """Why parsed answers are over a limit ("" when they are not): tables and lists nested more
    than ``limits.nesting`` levels, or more than ``limits.keys`` keys in all its tables (walked
    without recursion; the walk stops at the first limit passed)."""
    stack = [(data, 1)]
    keys = 0
    while stack:
        value, depth = stack.pop()
        if depth > limits.nesting:
            return too_deep(limits)
        if isinstance(value, dict):
            keys += len(value)
            if keys > limits.keys:
                return too_many_keys(limits)
            children = value.values()
        else:
            children = value
        stack.extend((v, depth + 1) for v in children if isinstance(v, (dict, list)))
    return ""


def too_deep(limits: Limits) -> str:
    n = limits.nesting
    hint = raise_hint("nesting") if n < MAX_NESTING_CEILING else "the most the parsers read"
    return f"nested too deeply (more than {n} level{'' if n == 1 else 's'}); {hint}"


def too_many_keys(limits: Limits, how: str = "") -> str:
    keys = f"{limits.keys:,} key{'' if limits.keys == 1 else 's'}"
    return f"more than {keys}{how}, over the limit for one submission; {raise_hint('keys')}"



_TOML_SEGMENT = r'(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\')'
_TOML_KEY = re.compile(rf"(?:^[ \t]*(\[\[?)?|[{{,])[ \t]*({_TOML_SEGMENT}(?:[ \t]*\.[ \t]*{_TOML_SEGMENT})*)[ \t]*[\]=]",
                       re.M)
_TOML_SEGMENTS = re.compile(_TOML_SEGMENT)


def toml_precheck(text: str, path: Path, limits: Limits) -> None:
    """Refuse, before tomllib sees it, a TOML file whose keys would make tomllib slow. tomllib
    checks every prefix of a dotted key against its flags, walking each prefix from the root, so
    one key of d segments under a table of depth h costs about (h + d)² steps: a 900 kB file of
    long dotted keys took 563 s and 7.9 GB. Each key (a line's key, a table header, an inline
    table's key) is counted once per table it names, with its table's depth: a key deeper than
    ``limits.nesting`` or more than ``limits.keys`` in all is refused, which bounds tomllib's work
    to about keys × nesting steps. Text inside strings that looks like a key can only count more,
    never less."""
    table = 0
    total = 0
    for m in _TOML_KEY.finditer(text):
        key = m.group(2)
        n = len(_TOML_SEGMENTS.findall(key)) if "." in key else 1
        if m.group(1):                    # [table] or [[array.of.tables]]
            table, depth = n, n
        else:
            depth = table + n
        if depth > limits.nesting:
            line = text.count("\n", 0, m.start(2)) + 1
            raise SubmissionError(f"{path}: invalid TOML: line {line}: {too_deep(limits)}")
        total += depth
        if total > limits.keys:
            raise SubmissionError(f"{path}: {too_many_keys(limits, ' (a dotted key counts once per table it names)')}")
