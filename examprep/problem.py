"""Problems: plain data that every feature shares (generation, rendering, grading, the quiz).

A Problem is rebuilt bit for bit from (generator, version, seed, difficulty); an answer key stores
the whole Problem, so grading never re-runs a random number generator. Everything here
round-trips through JSON (``to_dict`` / ``from_dict``).
"""
from __future__ import annotations

import decimal
import json
import math
from dataclasses import dataclass, field
from typing import Any

from examprep.document import Block, blocks_from_list, blocks_to_list
from examprep.escape import shown

KINDS = ("number", "integer", "vector", "matrix", "expression", "choice", "written", "shapes")
# A "written" part is answered in words and marked by hand: it has no expected value, but a model
# answer and a rubric (both printed in the solutions and the key). A "shapes" part asks a list of
# tensor shapes, one per layer, of different lengths ([[3, 28, 28], [6, 24, 24], [864]]), written
# 3×28×28; 6×24×24; 864.
# The sign a part's variable may take; equivalence is checked there (sample points and sympy's
# assumptions). "positive", the default, suits probabilities, sizes and rates.
DOMAINS = ("positive", "real", "negative")


class PartValueError(ValueError):
    """A part that cannot be made from its data: the message, and the part's id to name it."""

    def __init__(self, part_id: str, message: str):
        super().__init__(message)
        self.part_id = part_id


RULES = ("sigfigs", "sigfigs-strict", "rtol", "atol", "decimals", "exact")
# Float noise forgiven on top of a bound: a few units in the last place of the expected value's own
# scale (|expected|, or the bound where it is larger), never a fixed absolute amount.
NOISE_ULPS = 4
EPSILON = 2.0 ** -52
# "exact" for values computed in floats: equal to 12 significant digits (1/3 typed as 1/3 evaluates
# within a few ulps of the key's 1/3; 0.333333 is a rounded decimal and is refused)
EXACT_RTOL = 1e-12


def float_noise(scale: float) -> float:
    """The float noise forgiven on a comparison at ``scale`` (NOISE_ULPS units in the last place)."""
    return NOISE_ULPS * EPSILON * scale


_DECIMALS = decimal.Context(prec=60)


def round_sigfigs(x: float, n: int) -> tuple[decimal.Decimal, decimal.Decimal]:
    """``x`` rounded to ``n`` significant figures, half away from zero, and half a unit in its n-th
    figure. ``x`` is read as its shortest decimal (0.04985 is 0.04985, not the binary value just
    below it), so a key's tie rounds as it is written. 0 has the half unit ½·10^−n."""
    d = decimal.Decimal(repr(float(x)))
    if d == 0:
        return decimal.Decimal(0), decimal.Decimal(5).scaleb(-n - 1)
    exponent = d.adjusted() - n + 1
    r = d.quantize(decimal.Decimal(1).scaleb(exponent), rounding=decimal.ROUND_HALF_UP, context=_DECIMALS)
    if r.adjusted() != d.adjusted():              # 9.96 → 10.0: the rounding carried into a new figure
        r = r.quantize(decimal.Decimal(1).scaleb(exponent + 1), rounding=decimal.ROUND_HALF_UP, context=_DECIMALS)
    return r, decimal.Decimal(5).scaleb(r.adjusted() - n)


def _finite(v: int | float) -> bool:
    """math.isfinite, without its OverflowError for an int too large for a float (10**400: not finite
    for our purposes either)."""
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


MAX_FIGURES = 15          # sigfigs and decimals: a float holds 15-17 significant digits; more is noise
# The largest absolute tolerance (the "atol" rule's value, any rule's floor). Examprep itself writes at
# most 1e-3 (the default floor; generators use it or exact); question files' answers are hand-computable
# numbers. A tolerance of a million already accepts any answer to a question whose answer is at most a
# few thousand; beyond it a key is damaged or hostile (atol 1e308 made every answer correct).
MAX_ATOL = 1e6


@dataclass(frozen=True)
class Tolerance:
    """How close an answer must be. One rule, stated to students in plain words by ``describe``.

    rule "sigfigs": agree to ``value`` significant figures (|a − e| ≤ ½·10^(⌊log10|e|⌋ − value + 1)),
    with an absolute floor ``atol`` for expected values near zero;
    "sigfigs-strict": as STACK's NumSigFigs, the answer is written with exactly ``value``
    significant figures (examprep.answers.figures counts them) and |a − r| < ½ unit in the last of
    them, where r is e rounded to ``value`` figures half away from zero: so 9.5 for 10 at 2 figures,
    a tie, is refused, and of 0.0498 and 0.0499 only 0.0499 is accepted for 0.04985; no floor;
    "rtol": |a − e| ≤ value·|e| + atol; "atol": |a − e| ≤ value;
    "decimals": |a − e| ≤ ½·10^−value; "exact": equal (integers, choices, symbolic expressions; a
    float to EXACT_RTOL). A tie, exactly on the bound, is accepted (except by "sigfigs-strict").
    Nothing else is added but float noise: NOISE_ULPS units in the last place of max(|e|, bound).
    """

    rule: str = "sigfigs"
    value: float = 3
    atol: float = 1e-3

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"unknown tolerance rule {self.rule!r} (expected one of {', '.join(RULES)})")
        for name in ("value", "atol"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not _finite(v) or v < 0:
                raise ValueError(f"tolerance {self.rule}: {name} must be a finite number ≥ 0, got {shown(v)}")
        if self.rule == "sigfigs" and self.value != int(self.value):     # "to 2 significant figures" for 2.5
            raise ValueError(f"tolerance sigfigs: the figures must be a whole number, got {self.value!r}")
        # the ranges parse_tolerance accepts (question files, recipes, --tolerance): a key gets no wider ones
        if self.rule == "sigfigs" and not 1 <= self.value <= MAX_FIGURES:
            raise ValueError(f"tolerance sigfigs: value (the figures) must be from 1 to {MAX_FIGURES}, got {self.value!r}")
        if self.rule == "decimals" and (self.value != int(self.value) or self.value > MAX_FIGURES):
            raise ValueError(f"tolerance decimals: value (the decimal places) must be a whole number from 0 to "
                             f"{MAX_FIGURES}, got {self.value!r}")
        if self.rule == "rtol" and not 0 < self.value <= 1:
            raise ValueError(f"tolerance rtol: value (a fraction of the expected value) must be over 0 and at most 1, "
                             f"got {self.value!r}")
        for name in ("value", "atol") if self.rule == "atol" else ("atol",):
            if getattr(self, name) > MAX_ATOL:
                raise ValueError(f"tolerance {self.rule}: {name} {getattr(self, name)!r} is over the {MAX_ATOL:g} limit "
                                 "of an absolute tolerance")
        if self.rule == "sigfigs-strict":
            if self.value != int(self.value) or not 1 <= self.value <= 15:
                raise ValueError(f"tolerance sigfigs-strict: the figures must be a whole number from 1 to 15, "
                                 f"got {self.value!r}")
            object.__setattr__(self, "atol", 0.0)      # no floor: the figures written are the rule

    def bound(self, expected: float) -> float:
        """The allowed |answer − expected| (0 for a value that is not finite: only itself is right)."""
        e = abs(float(expected))
        if not math.isfinite(e):
            return 0.0
        if self.rule == "exact":
            return EXACT_RTOL * e
        if self.rule == "sigfigs":
            if e == 0:
                return self.atol
            return max(0.5 * 10 ** (math.floor(math.log10(e)) - int(self.value) + 1), self.atol)
        if self.rule == "sigfigs-strict":
            return float(round_sigfigs(e, int(self.value))[1])
        if self.rule == "rtol":
            return self.value * e + self.atol
        if self.rule == "atol":
            return float(self.value)
        return 0.5 * 10 ** (-int(self.value))            # decimals

    def accepts(self, got: float, expected: float) -> bool:
        got, expected = float(got), float(expected)
        if not (math.isfinite(got) and math.isfinite(expected)):
            return got == expected
        if self.rule == "sigfigs-strict":
            return self.within_rounded(decimal.Decimal(repr(got)), expected)
        b = self.bound(expected)
        return abs(got - expected) <= b + float_noise(max(abs(expected), b))

    def within_rounded(self, written: decimal.Decimal, expected: float) -> bool:
        """The value rule of "sigfigs-strict" on the exact number written: |written − r| < ½ unit."""
        r, half = round_sigfigs(expected, int(self.value))
        return abs(written - r) < half

    def describe(self) -> str:
        if self.rule == "sigfigs":
            return f"to {int(self.value)} significant figures"
        if self.rule == "sigfigs-strict":
            return f"to {int(self.value)} significant figures, written with exactly {int(self.value)}"
        if self.rule == "decimals":
            return f"to {int(self.value)} decimal places"
        if self.rule == "rtol":
            return f"within {self.value:g} relative error" + (f" plus ±{self.atol:g}" if self.atol > 0 else "")
        if self.rule == "atol":
            return f"within ±{self.value:g}"
        return "exactly"

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "value": self.value, "atol": self.atol}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Tolerance":
        return Tolerance(d["rule"], d["value"], d.get("atol", 1e-3))


SIGFIGS3 = Tolerance("sigfigs", 3)
EXACT = Tolerance("exact", 0, 0)


@dataclass(frozen=True)
class Misconception:
    """A named mistake: the value it produces for this part and a one-line explanation."""

    id: str
    value: Any
    explanation: str
    credit: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "value": self.value, "explanation": self.explanation, "credit": self.credit}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Misconception":
        return Misconception(d["id"], d["value"], d["explanation"], d.get("credit", 0.0))


# A tensor shape's form in a template, by its number of dimensions: the axes and an example (one that
# no built-in problem has as an answer: 337 is no C·H·W of a square map, no query or score matrix has 7
# rows and 12 columns, no layer outputs 3 channels)
_SHAPE_AXES = {1: ("F", "337"), 2: ("rows×columns", "7×12"), 3: ("C×H×W", "3×28×28"), 4: ("N×C×H×W", "2×3×28×28")}


def shape_form(ndim: int | None) -> str:
    """How to write a tensor shape of ``ndim`` dimensions: "shape C×H×W, e.g. 3×28×28"."""
    axes, example = _SHAPE_AXES.get(ndim or 0, (f"of {ndim} dimensions", "×".join(["2"] * (ndim or 2))))
    return f"shape {axes}, e.g. {example}"


def _matrix_pattern(rows: int, cols: int) -> str:
    """The shape of an answer in letters: 2×3 → [[a, b, c], [d, e, f]]; more than three rows or
    columns → the first two, then …"""
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    shown_cols, shown_rows = (cols if cols <= 3 else 2), (rows if rows <= 3 else 2)
    out = []
    for _ in range(shown_rows):
        cells = [next(letters) for _ in range(shown_cols)] + (["…"] if cols > 3 else [])
        out.append("[" + ", ".join(cells) + "]")
    if rows > 3:
        out.append("…")
    return "[" + ", ".join(out) + "]"


@dataclass(frozen=True)
class EcfRule:
    """How a part is computed from earlier parts, so a grader can recompute it from a student's
    own earlier answers (error carried forward). In a key's JSON it is the part's "recipe".

    ``op`` is an engine topic (``solve:<topic>``) or an elementary op of examprep.ecf;
    ``args`` are its parameters, where ``{"$ref": "part_id"}`` stands for that part's answer;
    ``output`` picks one answer value of a solve topic.
    """

    op: str
    args: dict[str, Any]
    output: str | None = None

    def refs(self) -> list[str]:
        found: list[str] = []

        def walk(v: Any) -> None:
            if isinstance(v, dict):
                if set(v) == {"$ref"}:
                    found.append(v["$ref"])
                else:
                    for x in v.values():
                        walk(x)
            elif isinstance(v, list):
                for x in v:
                    walk(x)

        walk(self.args)
        return list(dict.fromkeys(found))

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "args": self.args, "output": self.output}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "EcfRule":
        return EcfRule(d["op"], d["args"], d.get("output"))


@dataclass(frozen=True)
class Part:
    """One answerable part of a problem.

    kind: "number", "integer", "vector", "matrix" (with ``shape``), "expression" (exact or
    symbolic; ``exact`` holds the canonical text, ``variables`` the symbols it may use, ``domains``
    the sign of those declared other than positive: (("x", "real"),)) or "choice" (``choices``;
    ``expected`` is the correct choice's label).
    ``expected`` is the JSON value (floats for numbers, nested lists for arrays).
    JSON: "variables" is a list of names, or, where a domain is declared, a table of name → domain
    ({"x": "real"}, as TOML writes variables = {x = "real"}).
    """

    id: str
    prompt: str
    kind: str
    expected: Any
    tolerance: Tolerance = SIGFIGS3
    points: float = 1.0
    minutes: float = 2.0
    shape: tuple[int, ...] | None = None
    exact: str | None = None
    variables: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    misconceptions: tuple[Misconception, ...] = ()
    ecf_rule: EcfRule | None = None           # JSON: "recipe"
    hint: str = ""
    domains: tuple[tuple[str, str], ...] = ()
    model_answer: str = ""                    # a "written" part's model answer
    rubric: tuple[str, ...] = ()              # and how its points are given, one line per point or group
    # a vector part whose answer is one tensor shape (its solve topic declares it: Topic.shapes), so
    # 10×26×26 and 10, 26, 26 read as [10, 26, 26]. Never stored (a Problem's JSON, and so every key and
    # every reader of one, stays as it was): examprep.generators.mark_shapes sets it from the solve
    # tables on a fresh Problem and on every key read, old keys too
    tensor_shape: bool = field(default=False, compare=False)

    @property
    def written(self) -> bool:
        return self.kind == "written"

    def __post_init__(self) -> None:
        declared = dict(self.domains)
        for name, domain in declared.items():
            if name not in self.variables:
                raise PartValueError(self.id, f"variable {name!r} has a domain but is not one of the part's variables")
            if domain not in DOMAINS:
                raise PartValueError(self.id, f"variable {name!r}: expected a domain {', '.join(DOMAINS[:-1])} or "
                                              f"{DOMAINS[-1]}, got {domain!r}")
        # positive is the default: only the others are kept, in the variables' order (one form, one equality)
        object.__setattr__(self, "domains", tuple((v, declared[v]) for v in self.variables
                                                  if declared.get(v, "positive") != "positive"))

    @property
    def variable_domains(self) -> dict[str, str]:
        """Every variable's domain: "positive" unless declared "real" or "negative"."""
        return {v: "positive" for v in self.variables} | dict(self.domains)

    @property
    def depends_on(self) -> list[str]:
        return self.ecf_rule.refs() if self.ecf_rule else []

    def form(self) -> str:
        """The expected form of the answer, in words (for templates and prompts)."""
        if self.kind == "matrix":
            if not self.shape or len(self.shape) != 2:
                return "matrix [[a, b], [c, d]]"
            return f"{self.shape[0]}×{self.shape[1]} matrix {_matrix_pattern(*self.shape)}"
        if self.kind == "vector" and self.tensor_shape:
            return shape_form(self.shape[0] if self.shape else None)
        if self.kind == "vector":
            return f"vector of {self.shape[0] if self.shape else '?'} [a, b, …]"
        if self.kind == "shapes":
            return "shapes, one per layer, separated by ';', e.g. 3×28×28; 6×24×24; 864"
        if self.kind == "integer":
            return "integer"
        if self.kind == "expression":
            names = f" in {', '.join(self.variables)}" if self.variables else ""
            return f"exact expression{names}"
        if self.kind == "choice":
            return "one of " + ", ".join(sorted(self.choices))
        if self.kind == "written":
            return "written answer (marked by hand)"   # sorted: the generator's order may give the answer away
        return "number"

    def to_dict(self) -> dict[str, Any]:
        out = {"id": self.id, "prompt": self.prompt, "kind": self.kind, "expected": self.expected,
                "tolerance": self.tolerance.to_dict(), "points": self.points, "minutes": self.minutes,
                "shape": list(self.shape) if self.shape is not None else None, "exact": self.exact,
                "variables": self.variable_domains if self.domains else list(self.variables),
                "choices": list(self.choices),
                "misconceptions": [m.to_dict() for m in self.misconceptions],
                "recipe": self.ecf_rule.to_dict() if self.ecf_rule else None,
                "depends_on": self.depends_on, "hint": self.hint}
        if self.kind == "written":            # only written parts carry these: other keys stay byte-identical
            out |= {"model_answer": self.model_answer, "rubric": list(self.rubric)}
        return out

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Part":
        variables = d.get("variables", ())
        domains = tuple(variables.items()) if isinstance(variables, dict) else ()
        try:
            tolerance = Tolerance.from_dict(d["tolerance"])
        except ValueError as err:
            raise PartValueError(str(d.get("id", "?")), str(err)) from None
        return Part(id=d["id"], prompt=d["prompt"], kind=d["kind"], expected=d["expected"],
                    tolerance=tolerance, points=d["points"], minutes=d["minutes"],
                    shape=tuple(d["shape"]) if d.get("shape") is not None else None, exact=d.get("exact"),
                    variables=tuple(variables), choices=tuple(d.get("choices", ())),
                    misconceptions=tuple(Misconception.from_dict(m) for m in d.get("misconceptions", ())),
                    ecf_rule=EcfRule.from_dict(d["recipe"]) if d.get("recipe") else None, hint=d.get("hint", ""),
                    domains=domains, model_answer=d.get("model_answer", ""), rubric=tuple(d.get("rubric", ())))


@dataclass(frozen=True)
class SolutionStep:
    """One step of a worked solution: a title and its blocks (formulas and values)."""

    title: str
    blocks: list[Block]
    part: str | None = None      # the part this step answers, if any

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "blocks": blocks_to_list(self.blocks), "part": self.part}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "SolutionStep":
        return SolutionStep(d["title"], blocks_from_list(d["blocks"]), d.get("part"))


@dataclass(frozen=True)
class Problem:
    generator: str
    version: int
    seed: int
    difficulty: int
    title: str
    params: dict[str, Any]
    statement: list[Block]
    parts: list[Part]
    solution: list[SolutionStep]
    conventions: dict[str, str] = field(default_factory=dict)
    calculator_free: bool = False
    variant: str = ""
    pins: dict[str, Any] = field(default_factory=dict)    # parameters a recipe pinned (rebuilt with them)

    @property
    def points(self) -> float:
        return sum(p.points for p in self.parts)

    @property
    def minutes(self) -> float:
        return sum(p.minutes for p in self.parts)

    @staticmethod
    def label(i: int) -> str:
        """The label of part ``i`` (from 0), as every output prints it: a … z, then aa, ab, … az,
        ba, … (as spreadsheet columns are named; a choice's options are labelled the same way)."""
        if i < 0:
            raise ValueError(f"part index {i} is negative")
        label = ""
        i += 1
        while i:
            i, r = divmod(i - 1, 26)
            label = chr(97 + r) + label
        return label

    def part(self, part_id: str) -> Part:
        for p in self.parts:
            if p.id == part_id:
                return p
        raise KeyError(part_id)

    def to_dict(self) -> dict[str, Any]:
        return {"generator": self.generator, "version": self.version, "seed": self.seed,
                "difficulty": self.difficulty, "calculator_free": self.calculator_free, "variant": self.variant,
                "title": self.title, "params": self.params, "conventions": self.conventions,
                "statement": blocks_to_list(self.statement), "parts": [p.to_dict() for p in self.parts],
                "solution": [s.to_dict() for s in self.solution]} | ({"pins": self.pins} if self.pins else {})

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Problem":
        return Problem(generator=d["generator"], version=d["version"], seed=d["seed"], difficulty=d["difficulty"],
                       title=d["title"], params=d["params"], statement=blocks_from_list(d["statement"]),
                       parts=[Part.from_dict(p) for p in d["parts"]],
                       solution=[SolutionStep.from_dict(s) for s in d["solution"]],
                       conventions=d.get("conventions", {}), calculator_free=d.get("calculator_free", False),
                       variant=d.get("variant", ""), pins=d.get("pins", {}))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False)
