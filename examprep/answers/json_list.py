"""A class's JSON list read as a stream: each item is parsed by json.JSONDecoder.raw_decode as soon
as it is whole, so the rules are json.loads's (NaN and Infinity as the caller's parse_constant
says, the last of duplicate keys, Python's digit limit) and memory holds about one item. ijson
(yajl) would stream too, but refuses NaN, which a student's answer may hold and which grading
names per part, and reports no line and column."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Iterator

from examprep.answers.limits import CHUNK, Limits, SubmissionError, raise_hint


class _JSONText:
    """A JSON text read in pieces: ``buf[pos:]`` is what is not consumed yet; the consumed text is
    dropped (its lines and the current column counted) so memory holds about one item."""

    def __init__(self, stream: Any, path: Path) -> None:
        self.stream, self.path = stream, path
        self.buf, self.pos, self.eof = "", 0, False
        self.lines, self.column = 0, 0          # newlines dropped, characters since the last one

    def more(self, at_least: int = CHUNK) -> bool:
        """Read more text (dropping what is consumed); False at the end of the file."""
        if self.pos > len(self.buf) // 2 or self.pos > CHUNK:
            dropped = self.buf[:self.pos]
            n = dropped.count("\n")
            self.lines += n
            self.column = len(dropped) - dropped.rfind("\n") - 1 if n else self.column + len(dropped)
            self.buf, self.pos = self.buf[self.pos:], 0
        chunk = self.stream.read(max(at_least, CHUNK))
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def skip_space(self) -> str:
        """The next character that is not white space ("" at the end), not consumed."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in " \t\n\r":
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def fail(self, at: int, msg: str) -> SubmissionError:
        newline = self.buf.rfind("\n", 0, at)
        line = self.lines + self.buf.count("\n", 0, at) + 1
        column = at - newline if newline >= 0 else self.column + at + 1
        return SubmissionError(f"{self.path}: invalid JSON at line {line}, column {column}: {msg}")


_JSON_STRUCTURE = re.compile(r'["\[\]{}]')
_JSON_STRING_END = re.compile(r'["\\]')


def objects(stream: Any, path: Path, limits: Limits, parse_constant: Callable[[str], Any]) -> Iterator[tuple[int, Any]]:
    """The items of the JSON list in ``stream`` (its first character that is not white space is
    "["), numbered from 1, each as (number, the parsed object) or (number, None) for one longer
    than ``limits.file_bytes`` characters, skipped unparsed. Raises SubmissionError where json.loads
    would refuse the text ("invalid JSON at line L, column C: …", with json's own words), for an
    item that is not an object, and past ``limits.class_rows`` items; RecursionError and
    ValueError (the digit limit) from json pass through."""
    decoder = json.JSONDecoder(parse_constant=parse_constant)
    text = _JSONText(stream, path)
    text.skip_space()
    text.pos += 1                                    # the "["
    if text.skip_space() == "]":
        text.pos += 1
    else:
        i = 0
        while True:
            i += 1
            if i > limits.class_rows:
                raise SubmissionError(f"{path}: more than {limits.class_rows:,} items, over the limit for a class "
                                      f"file; {raise_hint('class_rows')}")
            ch = text.skip_space()
            if ch in ("", "]"):
                raise text.fail(text.pos, "Expecting value")
            if ch != "{":
                raise SubmissionError(f"{path}: a JSON list must hold one object per student")
            yield i, _json_item(text, decoder, limits)
            ch = text.skip_space()
            if ch == ",":
                text.pos += 1
                continue
            if ch == "]":
                text.pos += 1
                break
            raise text.fail(text.pos, "Expecting ',' delimiter")
    if text.skip_space():
        raise text.fail(text.pos, "Extra data")


def _json_item(text: _JSONText, decoder: json.JSONDecoder, limits: Limits) -> dict | None:
    """The object that starts at ``text.pos``, parsed, with ``text.pos`` past it; None for one
    longer than ``limits.file_bytes`` (skipped without parsing). Raises SubmissionError where it
    is malformed."""
    while True:
        try:
            item, end = decoder.raw_decode(text.buf, text.pos)
        except json.JSONDecodeError as err:
            # cut off by the end of what is read (a string, a literal or a number not yet whole)?
            cut = err.pos >= len(text.buf) - 16 or err.msg.startswith("Unterminated string")
            if not cut or text.eof:
                raise text.fail(err.pos, err.msg) from None
            if len(text.buf) - text.pos > limits.file_bytes:
                _skip_item(text)
                return None
            text.more(len(text.buf) - text.pos)      # doubling: each item is parsed O(1) times on average
            continue
        if end - text.pos > limits.file_bytes:
            text.pos = end
            return None
        text.pos = end
        return item


def _skip_item(text: _JSONText) -> None:
    """Move ``text.pos`` past the object that starts there without parsing it (brackets counted
    outside strings)."""
    depth, in_string = 0, False
    while True:
        buf = text.buf
        while text.pos < len(buf):
            if in_string:
                m = _JSON_STRING_END.search(buf, text.pos)
                if m is None:
                    text.pos = len(buf)
                    break
                if m.group() == "\\":
                    if m.end() >= len(buf):            # the escaped character is in the next piece
                        text.pos = m.start()
                        break
                    text.pos = m.end() + 1
                    continue
                in_string, text.pos = False, m.end()
                continue
            m = _JSON_STRUCTURE.search(buf, text.pos)
            if m is None:
                text.pos = len(buf)
                break
            text.pos = m.end()
            c = m.group()
            if c == '"':
                in_string = True
            elif c in "[{":
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    return
        if not text.more():
            raise text.fail(text.pos, "Unterminated object")
