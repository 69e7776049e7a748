"""What the LMS exports (QTI 2.1, Canvas, Blackboard) share: a sheet's questions slot by slot,
a part's scalar answers with their tolerances, and deterministic zip files."""
from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from examprep.problem import Problem


@dataclass(frozen=True)
class Slot:
    """One question position of a sheet: its number and the problem of each copy (one for a
    common sheet; one per student, with the variant code, for a sheet with variants)."""

    number: int
    problems: list[tuple[str, Any]]          # (variant code or "", problem)
    sheet: str = ""          # a common sheet with a secret seed: its printed id, named instead of the seed


def slots(sheet: Any) -> list[Slot]:
    count = len(sheet.copies[0].problems)
    if not sheet.variants:
        hidden = sheet.printed_id if getattr(sheet, "seed_secret", False) else ""
        return [Slot(k + 1, [("", p)], hidden) for k, p in enumerate(sheet.copies[0].problems)]
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
    text = format(Decimal(repr(f)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


_GREEK = {n: chr(c) for n, c in (("alpha", 945), ("beta", 946), ("gamma", 947), ("delta", 948), ("epsilon", 949),
                                  ("varepsilon", 949), ("eta", 951), ("theta", 952), ("lambda", 955), ("mu", 956),
                                  ("pi", 960), ("rho", 961), ("sigma", 963), ("tau", 964), ("phi", 966), ("omega", 969),
                                  ("Delta", 916), ("Sigma", 931))}
_SYMBOLS = {"cdot": "·", "times": "×", "top": "ᵀ", "odot": "⊙", "partial": "∂", "ldots": "…", "dots": "…",
            "cdots": "…", "sqrt": "√", "infty": "∞", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "in": "∈",
            "to": "→", "approx": "≈", "neq": "≠", "sum": "Σ", "prod": "∏", "quad": " ", "ast": "*"}


def plain(text: str) -> str:
    """Text with $…$ LaTeX for a plain-text field: the dollars dropped, \\frac{a}{b} as (a)/(b),
    Greek letters and common symbols as Unicode, other commands (\\mathrm, \\log) as their names."""
    def one(m: re.Match) -> str:
        s = m.group(1)
        for _ in range(3):
            s = re.sub(r"\\sqrt\{([^{}]*)\}", r"√(\1)", s)
            s = re.sub(r"([_^])\{([^{}]*)\}", r"\1\2", s)
            s = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"(\1)/(\2)", s)
        s = re.sub(r"\\([A-Za-z]+)", lambda c: _GREEK.get(c.group(1)) or _SYMBOLS.get(c.group(1)) or
                   ("" if c.group(1) in ("mathrm", "operatorname", "text", "mathbf", "left", "right") else c.group(1)), s)
        return s.replace("{", "").replace("}", "").replace("\\", "")
    return re.sub(r"\$([^$]+)\$", one, text)


def question_name(slot: Slot, code: str, p: Any) -> str:
    origin = f"sheet {slot.sheet}" if slot.sheet else f"seed {p.seed}"       # a problem's seed S + k gives S
    tail = f"variant {code}" if code else f"{p.generator}, level {p.difficulty}, {origin}"
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


@dataclass(frozen=True)
class Mistake:
    """A known mistake of a part as an LMS can test for it: the entries where its value differs
    from the answer, each with the wrong value and the absolute error accepted around it (never
    reaching the correct range), or, for a choice part, the option it picks (``choice``)."""

    id: str
    explanation: str
    values: tuple[tuple[Entry, float, float], ...] = ()      # (entry, wrong value, bound)
    choice: str | None = None


def mistakes(part: Any) -> tuple[list[Mistake], list[str]]:
    """The part's known mistakes that a response condition can catch, and a note for each one
    that none can (a value within tolerance of the answer, or not of the part's shape)."""
    found: list[Mistake] = []
    skipped: list[str] = []
    for m in part.misconceptions:
        if part.kind == "choice":
            if isinstance(m.value, str) and m.value != str(part.expected):
                found.append(Mistake(m.id, m.explanation, choice=m.value))
            else:
                skipped.append(f"mistake {m.id} of part ({part.id}) is not another option")
            continue
        if not is_numeric(part):
            skipped.append(f"mistake {m.id} of part ({part.id}) is not a number")
            continue
        ents = entries(part)
        wrong = flat(m.value)
        if len(wrong) != len(ents) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in wrong):
            skipped.append(f"mistake {m.id} of part ({part.id}) is not a value of the part's shape")
            continue
        vals = []
        for e, v in zip(ents, wrong):
            gap = abs(float(v) - e.expected)
            if gap <= e.bound or gap == 0:
                continue                      # this entry of the mistake is right (or within tolerance)
            bound = 0.0 if e.bound == 0 else min(float(part.tolerance.bound(float(v))), (gap - e.bound) / 2)
            vals.append((e, float(v), bound))
        if vals:
            found.append(Mistake(m.id, m.explanation, tuple(vals)))
        else:
            skipped.append(f"mistake {m.id} of part ({part.id}) is within tolerance of the answer")
    return found, skipped
