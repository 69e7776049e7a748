"""Tensor shapes as students write them, the way the sheets print them.

A part whose answer is one tensor shape (``Part.tensor_shape``: its solve topic declares the answer a
shape) reads ``10×26×26``, ``10 x 26 x 26``, ``10x26x26``, ``10*26*26``, ``(10, 26, 26)``,
``[10, 26, 26]``, ``10, 26, 26`` and ``10 26 26`` alike as [10, 26, 26]; a one-dimensional shape
as ``864``, ``(864,)`` or ``[864]``. A "shapes" part (a list of shapes, one per layer, of different
lengths) reads them separated by ';': ``3×28×28; 6×24×24; 864``. The sizes are whole numbers; a
shape of the wrong number of dimensions is refused, saying how many (only there: in a number part
``×`` stays multiplication, read by examprep.answers.parse)."""
from __future__ import annotations

import json
import re
from typing import Any

from examprep.answers.result import PartResult, result
from examprep.answers.raw import type_word
from examprep.answers.tokens import MAX_CHARS, MAX_ENTRIES, AnswerParseError
from examprep.problem import Part, shape_form

# between two sizes: ×, x, X or * (with or without spaces), a comma, or spaces alone
_SEPARATOR = re.compile(r"\s*[×xX*,]\s*|\s+")
_SIZE = re.compile(r"\d{1,12}")
_BRACKETS = {"(": ")", "[": "]"}


def _example(ndim: int | None) -> str:
    return shape_form(ndim).rpartition("e.g. ")[2]


def _unbracketed(text: str) -> str:
    """The text inside one pair of brackets around it ("(10, 26, 26)", "[864]", "[[10, 26, 26]]": a
    single row), without a trailing comma ("(864,)")."""
    t = text.strip()
    for _ in range(2):
        if len(t) >= 2 and t[0] in _BRACKETS and t[-1] == _BRACKETS[t[0]]:
            t = t[1:-1].strip()
    return t.removesuffix(",").strip()


def _sizes_text(text: str, ndim: int | None) -> list[int]:
    if len(text) > MAX_CHARS:
        raise AnswerParseError(f"answer too long (more than {MAX_CHARS} characters)")
    t = _unbracketed(text)
    if not t:
        raise AnswerParseError(f"an empty shape: write its sizes, e.g. {_example(ndim)}")
    pieces = _SEPARATOR.split(t)
    if len(pieces) > MAX_ENTRIES:
        raise AnswerParseError(f"too many sizes (more than {MAX_ENTRIES})")
    for piece in pieces:
        if not _SIZE.fullmatch(piece):
            what = "a size is missing" if not piece else f"{piece!r} is not a size"
            raise AnswerParseError(f"{what} in {text.strip()!r}: a shape is whole numbers separated by ×, "
                                   f"e.g. {_example(ndim)}")
    return [int(p) for p in pieces]


def _sizes(raw: Any, ndim: int | None) -> list[int]:
    """The sizes of one shape written as text, a number or a TOML/JSON list."""
    if isinstance(raw, str):
        return _sizes_text(raw, ndim)
    if isinstance(raw, (list, tuple)) and len(raw) == 1 and isinstance(raw[0], (list, tuple)):
        raw = raw[0]                                   # [[10, 26, 26]]: one row
    values = list(raw) if isinstance(raw, (list, tuple)) else [raw]
    out = []
    for v in values:
        whole = isinstance(v, int) or isinstance(v, float) and v.is_integer()
        if isinstance(v, bool) or not whole or v < 0:
            shown = type_word(v) if not isinstance(v, (int, float)) or isinstance(v, bool) else repr(v)
            raise AnswerParseError(f"{shown} is not a size: a shape is whole numbers, e.g. {_example(ndim)}")
        out.append(int(v))
    return out


def read_shape(raw: Any, ndim: int | None) -> list[float]:
    """One tensor shape of ``ndim`` dimensions (as the vector part holds it: floats).

    Raises AnswerParseError for a size that is not a whole number ≥ 0 or a wrong number of them.
    """
    sizes = _sizes(raw, ndim)
    if ndim is not None and len(sizes) != ndim:
        raise AnswerParseError(f"expected a shape of {ndim} dimension{'s' if ndim != 1 else ''}, e.g. "
                               f"{_example(ndim)}; got {len(sizes)}")
    return [float(s) for s in sizes]


def read_shapes(raw: Any, count: int) -> list[list[int]]:
    """A "shapes" part's answer: ``count`` shapes, written "3×28×28; 6×24×24; 864" (or as a list of
    lists, "[[3, 28, 28], [6, 24, 24], [864]]"). Each shape may have its own number of dimensions."""
    if isinstance(raw, str):
        text = raw.strip()
        if len(text) > MAX_CHARS:
            raise AnswerParseError(f"answer too long (more than {MAX_CHARS} characters)")
        if text.startswith("[[") and ";" not in text:
            try:
                raw = json.loads(text)
            except (ValueError, RecursionError):
                raise AnswerParseError(f"cannot read {text[:40]!r}: write the shapes separated by ';', e.g. "
                                       "3×28×28; 6×24×24; 864") from None
        else:
            raw = [p for p in re.split(r"\s*[;\n]\s*", text) if p.strip()]
    if not isinstance(raw, (list, tuple)) or not raw:
        raise AnswerParseError("expected shapes separated by ';', e.g. 3×28×28; 6×24×24; 864")
    shapes = [_sizes(piece, None) for piece in raw]
    if len(shapes) != count:
        raise AnswerParseError(f"expected {count} shape{'s' if count != 1 else ''} (one per layer, separated by ';'), "
                               f"got {len(shapes)}")
    return shapes


def check_shapes(part: Part, raw: Any, rule: str) -> PartResult:
    """Grade a "shapes" part's answer (not blank): each shape exactly (a fraction of the points per
    shape right), or a known mistake's list of shapes."""
    try:
        got = read_shapes(raw, len(part.expected))
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
