"""Tensor shapes as students write them, the way the sheets print them.

A part whose answer is one tensor shape (``Part.tensor_shape``: its solve topic declares the answer a
shape) reads ``10×26×26``, ``10 x 26 x 26``, ``10x26x26``, ``10*26*26``, ``10·26·26`` (also with
⋅ ✕ ⨯ ∗), ``(10, 26, 26)``, ``[10, 26, 26]``, ``10, 26, 26`` and ``10 26 26`` alike as
[10, 26, 26]; a one-dimensional shape as ``864``, ``(864,)`` or ``[864]``. A "shapes" part (a list
of shapes, one per layer, of different lengths) reads them separated by ';': ``3×28×28; 6×24×24;
864``. The sizes are positive whole numbers; a shape of the wrong number of dimensions is refused,
saying how many (only there: in a number part ``×`` stays multiplication, read by
examprep.answers.parse). A shape that reads as one size with its thousands grouped (``1,014``,
``1 014``) is refused as ambiguous where one size is expected, or where a group starts with 0."""
from __future__ import annotations

import json
import re
from typing import Any

from examprep.answers.result import PartResult, result
from examprep.answers.raw import type_word
from examprep.answers.tokens import MAX_CHARS, MAX_ENTRIES, AnswerParseError
from examprep.problem import Part, shape_form

# between two sizes: ×, x, X, *, a dot or cross for "times" (·, ⋅, ✕, ⨯, ∗; with or without
# spaces), a comma, or spaces alone
_TIMES = "×xX*·⋅✕⨯∗"
_SEPARATOR = re.compile(rf"\s*[{_TIMES},]\s*|\s+")
_SIZE = re.compile(r"\d{1,12}")
_NUMBER = re.compile(r"[-+−]?\d*\.?\d+")
# a shape that reads as one number with its thousands grouped ("1,014", "1 014"): a 1–3 digit lead,
# then groups of exactly three digits after the same comma or single space
_GROUPED = re.compile(r"[1-9]\d{0,2}(?P<sep>[, ])\d{3}(?:(?P=sep)\d{3})*")
_BRACKETS = {"(": ")", "[": "]"}
_LIST_EXAMPLE = "3×28×28; 6×24×24; 864"


def _example(ndim: int | None) -> str:
    return shape_form(ndim).rpartition("e.g. ")[2]


def _form(ndim: int | None, in_list: bool) -> str:
    """How a shape is written: in a list of shapes, with the list's example."""
    if in_list:
        return f"a shape is whole numbers separated by ×, and shapes are separated by ';', e.g. {_LIST_EXAMPLE}"
    return f"a shape is whole numbers separated by ×, e.g. {_example(ndim)}"


def _unbracketed(text: str) -> str:
    """The text inside one pair of brackets around it ("(10, 26, 26)", "[864]", "[[10, 26, 26]]": a
    single row), without a trailing comma ("(864,)")."""
    t = text.strip()
    for _ in range(2):
        if len(t) >= 2 and t[0] in _BRACKETS and t[-1] == _BRACKETS[t[0]]:
            t = t[1:-1].strip()
    return t.removesuffix(",").strip()


def _refuse_grouped(t: str, ndim: int | None) -> None:
    """A shape that may be one size with its thousands grouped ("1,014": 1014, or the shape 1×14?) is
    refused where one size is expected or a later group starts with 0 (no size is written "014")."""
    g = _GROUPED.fullmatch(t)
    if not g:
        return
    groups = t.split(g.group("sep"))
    if ndim == 1 or any(p.startswith("0") for p in groups[1:]):
        size, shape = "".join(groups), "×".join(str(int(p)) for p in groups)
        raise AnswerParseError(f"{t!r} is ambiguous: the size {size} with its thousands grouped, or the shape {shape}? "
                               f"write {size} (no separator inside a size) or {shape}")


def _bad_piece(piece: str, text: str, ndim: int | None, in_list: bool) -> AnswerParseError:
    """Why one piece of a shape is no size, naming the piece (or its first character that is no
    digit) rather than the whole answer."""
    shown = text.strip()
    form = _form(ndim, in_list)
    if not piece:
        return AnswerParseError(f"a size is missing in {shown!r}: {form}")
    if _NUMBER.fullmatch(piece):
        if float(piece.replace("−", "-")) <= 0:
            return AnswerParseError(f"{piece!r} is not a size in {shown!r}: sizes are positive whole numbers, e.g. "
                                    f"{_LIST_EXAMPLE if in_list else _example(ndim)}")
        return AnswerParseError(f"{piece!r} is not a size in {shown!r}: {form}")
    if piece.isalpha():
        return AnswerParseError(f"{piece!r} is not a size in {shown!r}: {form}")
    k = next(i for i, c in enumerate(piece) if not c.isdigit())
    char, column = piece[k], shown.find(piece) + k + 1
    if char in "()[]":
        if in_list:
            return AnswerParseError(f"{char!r} at column {column} in {shown!r}: write each shape in one pair of brackets "
                                    f"or none, the shapes separated by ';', e.g. [3, 28, 28]; [6, 24, 24]; [864] or "
                                    f"{_LIST_EXAMPLE}")
        return AnswerParseError(f"{char!r} at column {column} in {shown!r}: write a shape in one pair of brackets, e.g. "
                                f"[{', '.join(_example(ndim).split('×'))}], or as sizes separated by ×, e.g. "
                                f"{_example(ndim)}")
    return AnswerParseError(f"{char!r} at column {column} in {shown!r} is neither a digit nor a separator: {form}")


def _sizes_text(text: str, ndim: int | None, in_list: bool = False) -> list[int]:
    if len(text) > MAX_CHARS:
        raise AnswerParseError(f"answer too long (more than {MAX_CHARS} characters)")
    t = _unbracketed(text)
    if not t:
        raise AnswerParseError(f"an empty shape: write its sizes, e.g. {_example(ndim)}")
    _refuse_grouped(t, ndim)
    pieces = _SEPARATOR.split(t)
    if len(pieces) > MAX_ENTRIES:
        raise AnswerParseError(f"too many sizes (more than {MAX_ENTRIES})")
    for piece in pieces:
        if not _SIZE.fullmatch(piece) or int(piece) == 0:
            raise _bad_piece(piece, text, ndim, in_list)
    return [int(p) for p in pieces]


def _sizes(raw: Any, ndim: int | None, in_list: bool = False) -> list[int]:
    """The sizes of one shape written as text, a number or a TOML/JSON list."""
    if isinstance(raw, str):
        return _sizes_text(raw, ndim, in_list)
    if isinstance(raw, (list, tuple)) and len(raw) == 1 and isinstance(raw[0], (list, tuple)):
        raw = raw[0]                                   # [[10, 26, 26]]: one row
    values = list(raw) if isinstance(raw, (list, tuple)) else [raw]
    out = []
    for v in values:
        whole = isinstance(v, int) or isinstance(v, float) and v.is_integer()
        if isinstance(v, bool) or not whole or v <= 0:
            shown = type_word(v) if not isinstance(v, (int, float)) or isinstance(v, bool) else repr(v)
            rule = "sizes are positive whole numbers" if whole and not isinstance(v, bool) else "a shape is whole numbers"
            raise AnswerParseError(f"{shown} is not a size: {rule}, e.g. {_LIST_EXAMPLE if in_list else _example(ndim)}")
        out.append(int(v))
    return out


def read_shape(raw: Any, ndim: int | None) -> list[float]:
    """One tensor shape of ``ndim`` dimensions (as the vector part holds it: floats).

    Raises AnswerParseError for a size that is not a whole number > 0 or a wrong number of them.
    """
    sizes = _sizes(raw, ndim)
    if ndim is not None and len(sizes) != ndim:
        raise AnswerParseError(f"expected a shape of {ndim} dimension{'s' if ndim != 1 else ''}, e.g. "
                               f"{_example(ndim)}; got {len(sizes)}")
    return [float(s) for s in sizes]


def read_shapes(raw: Any, count: int, ndims: list[int] | None = None) -> list[list[int]]:
    """A "shapes" part's answer: ``count`` shapes, written "3×28×28; 6×24×24; 864" (or as a list of
    lists, "[[3, 28, 28], [6, 24, 24], [864]]"). Each shape may have its own number of dimensions;
    ``ndims`` (the key's, where known) only tells a grouped size ("1,014" where one size is
    expected) from a shape, refusing it as ambiguous."""
    if isinstance(raw, str):
        text = raw.strip()
        if len(text) > MAX_CHARS:
            raise AnswerParseError(f"answer too long (more than {MAX_CHARS} characters)")
        if text.startswith("[[") and ";" not in text:
            try:
                raw = json.loads(text)
            except (ValueError, RecursionError):
                raise AnswerParseError(f"cannot read {text[:40]!r}: write the shapes separated by ';', e.g. "
                                       f"{_LIST_EXAMPLE}") from None
        else:
            raw = [p for p in re.split(r"\s*[;\n]\s*", text) if p.strip()]
    if not isinstance(raw, (list, tuple)) or not raw:
        raise AnswerParseError(f"expected shapes separated by ';', e.g. {_LIST_EXAMPLE}")
    shapes = [_sizes(piece, ndims[i] if ndims and i < len(ndims) else None, in_list=True) for i, piece in enumerate(raw)]
    if len(shapes) != count:
        raise AnswerParseError(f"expected {count} shape{'s' if count != 1 else ''} (one per layer, separated by ';'), "
                               f"got {len(shapes)}")
    return shapes


def expected_ndims(part: Part) -> list[int]:
    """The number of dimensions of each of a "shapes" part's expected shapes."""
    return [len(s) if isinstance(s, (list, tuple)) else 1 for s in part.expected]


def check_shapes(part: Part, raw: Any, rule: str) -> PartResult:
    """Grade a "shapes" part's answer (not blank): each shape exactly (a fraction of the points per
    shape right), or a known mistake's list of shapes."""
    try:
        got = read_shapes(raw, len(part.expected), expected_ndims(part))
    except AnswerParseError as err:
        return result(part, "unparseable", 0, None, str(err), rule, raw)
    want = [[int(s) for s in shape] for shape in part.expected]
    ok = [g == w for g, w in zip(got, want)]
    if all(ok):
        return result(part, "correct", part.points, got, "correct", rule, raw)
    for m in part.misconceptions:
        if isinstance(m.value, list) and got == [[int(s) for s in shape] if isinstance(shape, list) else [shape]
                                                for shape in m.value]:
            return result(part, "misconception", m.credit * part.points, got, m.explanation, rule, raw, m)
    bad = [str(i + 1) for i, good in enumerate(ok) if not good]
    feedback = (f"{sum(ok)} of {len(ok)} shapes right; check shape{'s' if len(bad) > 1 else ''} {', '.join(bad)}"
                if any(ok) else "no shape is right")
    return result(part, "wrong", part.points * sum(ok) / len(ok), got, feedback, rule, raw)
