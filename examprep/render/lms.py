"""What the LMS exports (QTI 2.1, Canvas, Blackboard) share: a sheet's questions slot by slot,
a part's scalar answers with their tolerances, and deterministic zip files."""
from __future__ import annotations

import io
import math
import re
import zipfile
from dataclasses import dataclass
from typing import Any

from examprep.problem import Problem


@dataclass(frozen=True)
class Slot:
    """One question position of a sheet: its number and the problem of each copy (one for a
    common sheet; one per student, with the variant code, for a sheet with variants)."""

    number: int
    problems: list[tuple[str, Any]]          # (variant code or "", problem)


def slots(sheet: Any) -> list[Slot]:
    count = len(sheet.copies[0].problems)
    if not sheet.variants:
        return [Slot(k + 1, [("", p)]) for k, p in enumerate(sheet.copies[0].problems)]
    return [Slot(k + 1, [(c.code, c.problems[k]) for c in sheet.copies]) for k in range(count)]


def flat(value: Any) -> list:
    if isinstance(value, list):
        return [x for v in value for x in flat(v)]
    return [value]


@dataclass(frozen=True)
class Entry:
    """One scalar answer of a numeric part: its position in the part (row, column, 1-based; () for
    a scalar), the expected value, and the absolute error examprep accepts around it."""

    index: tuple[int, ...]
    expected: float
    bound: float

    def label(self) -> str:
        return "" if not self.index else "[" + ", ".join(str(i) for i in self.index) + "]"


def is_numeric(part: Any) -> bool:
    return part.kind in ("number", "integer", "vector", "matrix") and not isinstance(part.expected, str)


def entries(part: Any) -> list[Entry]:
    """The scalar answers of a numeric part, row by row, with the absolute error at each value
    (0 for integers and exact answers)."""
    exact = part.kind == "integer" or part.tolerance.rule == "exact"

    def entry(index: tuple[int, ...], v: Any) -> Entry:
        v = float(v)
        return Entry(index, v, 0.0 if exact else float(part.tolerance.bound(v)))

    e = part.expected
    if not isinstance(e, list):
        return [entry((), e)]
    if e and isinstance(e[0], list):
        return [entry((i + 1, j + 1), v) for i, row in enumerate(e) for j, v in enumerate(row)]
    return [entry((i + 1,), v) for i, v in enumerate(e)]


def number_text(x: float) -> str:
    """A float as plain positional text (no exponent) that reads back to the same float."""
    f = float(x)
    if f == int(f) and abs(f) < 1e15:
        return str(int(f))
    from decimal import Decimal

    text = format(Decimal(repr(f)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def plain(text: str) -> str:
    """Text with $…$ LaTeX for a plain-text field: the LaTeX kept, the dollars dropped, a few
    commands spelled as Unicode."""
    def one(m: re.Match) -> str:
        s = m.group(1)
        for cmd, uni in ((r"\sigma", "σ"), (r"\sqrt", "√"), (r"\cdot", "·"), (r"\times", "×"), (r"\top", "ᵀ"),
                         (r"\mathrm", ""), (r"\operatorname", ""), (r"\log", "log"), (r"\exp", "exp"),
                         (r"\alpha", "α"), (r"\beta", "β"), (r"\eta", "η"), (r"\lambda", "λ"), (r"\odot", "⊙"),
                         (r"\tanh", "tanh"), (r"\partial", "∂"), (r"\ldots", "…"), (r"\dots", "…")):
            s = s.replace(cmd, uni)
        return s.replace("{", "").replace("}", "")
    return re.sub(r"\$([^$]+)\$", one, text)


def question_name(slot: Slot, code: str, p: Any) -> str:
    tail = f"variant {code}" if code else f"{p.generator}, level {p.difficulty}, seed {p.seed}"
    return f"q{slot.number} {p.title} ({tail})"


def part_letter(i: int) -> str:
    return Problem.label(i)


def zip_bytes(files: dict[str, bytes]) -> bytes:
    """A zip of ``files`` in the given order, with fixed timestamps: the same sheet gives the same bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
    return buf.getvalue()


def finite(x: float) -> bool:
    return math.isfinite(float(x))
