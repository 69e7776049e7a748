"""A sheet's copies: the recipe's problems at their seeds (one copy, or one variant per student),
the figures the solutions draw, and the instructions printed on every copy.

Seeds. A sheet with seed S numbers its problems 1…N and builds problem k with seed S + k − 1; a
variant does the same from the student's base seed (examprep.sheets.variants).

A seed is secret when it is at least PRINTED_SEED_LIMIT (2³²), as every fresh one is (fresh_seed:
63 random bits): whoever knows it rebuilds the key, so what a copy prints (footer, Markdown, the
exports' titles and identifiers) names the sheet by its printed id, "RECIPE-ABCD-EFGH", a hash of
the seed that reveals nothing of it. A smaller seed (one a user typed, `--seed 2024`) can be
searched anyway and is printed as the sheet id, "RECIPE-2024", as it always was.
"""
from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field
from typing import Any, Callable

from examprep import generators
from examprep.document import Heatmap, Matrix
from examprep.errors import check_seed
from examprep.render import fonts, plural
from examprep.sources import build_problems
from examprep.sources.recipes import SheetError, SheetRecipe
from examprep.sheets.variants import Student, check_pairing, check_secret, stretch_secret, variant_seed

Progress = Callable[[str, int, int], None]      # (what, done, total): a long sheet reports as it goes

PRINTED_SEED_LIMIT = 2 ** 32      # a seed below it is printed on the copies; one at or above it never is
FRESH_SEED_BITS = 63              # a seed drawn for a sheet made without --seed


def fresh_seed() -> int:
    """A sheet's seed when none is given: 63 random bits (never below PRINTED_SEED_LIMIT, a chance
    of one in 2³¹, so that it is never printed)."""
    while (seed := secrets.randbits(FRESH_SEED_BITS)) < PRINTED_SEED_LIMIT:
        pass
    return seed


def seed_is_secret(seed: int) -> bool:
    """Whether a sheet's copies hide its seed (see the module's docstring)."""
    return seed >= PRINTED_SEED_LIMIT


def printed_id(recipe_name: str, seed: int) -> str:
    """What the copies print to name the sheet: "RECIPE-SEED" for a seed below PRINTED_SEED_LIMIT,
    else "RECIPE-ABCD-EFGH", 40 bits of SHA-256("examprep-sheet-id" ‖ len ‖ recipe name ‖ len ‖
    seed in decimal) in base32: the same seed always gives the same id, and the id tells nothing
    of the seed but what testing each of 2⁶³ guesses would."""
    if not seed_is_secret(seed):
        return f"{recipe_name}-{seed}"
    fields = b"".join(len(f).to_bytes(4, "big") + f for f in (recipe_name.encode("utf-8"), str(seed).encode("ascii")))
    code = base64.b32encode(hashlib.sha256(b"examprep-sheet-id" + fields).digest()[:5]).decode()
    return f"{recipe_name}-{code[:4]}-{code[4:]}"


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
    canvas_per_student: bool = False   # an export choice: Canvas gets one quiz per student (--canvas-per-student)

    @property
    def sheet_id(self) -> str:
        """The id the variants are derived from (in the secret's salt and each student's HMAC) and
        the key records; for a secret seed it holds the seed, so it is never printed on a copy."""
        return f"{self.recipe.name}-{self.seed}"

    @property
    def seed_secret(self) -> bool:
        return seed_is_secret(self.seed)

    @property
    def printed_id(self) -> str:
        """The id the copies print (printed_id): the sheet_id for a seed a user typed, else a hash."""
        return printed_id(self.recipe.name, self.seed)

    def instructions(self) -> list[str]:
        return instructions(self)


def build_sheet(recipe: SheetRecipe, seed: int, *, roster: list[Student] | None = None,
                secret: bytes | None = None, legacy: bool = False, progress: Progress | None = None) -> Sheet:
    """The sheet's copies: one common copy, or one variant per student when a roster is given
    (which needs the secret, stretched here once for the whole roster; ``legacy``: the pre-stretching
    derivation, to regenerate an old sheet). Raises ParamError for a seed check_seed refuses, SheetError for
    a roster without a secret, a secret without a roster, or a secret check_secret refuses."""
    check_seed(seed)
    check_pairing(roster, secret)
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


def instructions(sheet: Sheet) -> list[str]:
    """The instruction lines printed on every copy (plain text with $…$ math)."""
    r = sheet.recipe
    copy = sheet.copies[0]
    tolerances = sorted({part.tolerance.describe() for p in copy.problems for part in p.parts
                         if part.kind in ("number", "vector", "matrix") and part.tolerance.rule != "exact"})
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
    once = (" An answer rounded to too few figures loses its marks once, not again in the parts built on it unless "
            "they are rounded more coarsely."
            if any(part.tolerance.rule == "sigfigs" for p in copy.problems for part in p.parts) else "")
    lines.append("Write each answer in its box and show your work in the space above it: a part computed correctly "
                 f"from a wrong earlier answer still earns its credit (error carried forward).{once}")
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
    return fonts.plan(printed_texts(sheet))

