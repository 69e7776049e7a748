"""Grade one submission against its problems, and summarise a class's results.

A submission's answers are addressed "q<N>.<part id>" (N counts the student's problems from 1, in
sheet order), flat or nested ({"q1": {"probs": ...}}). Each part is checked by
examprep.answers.check_part; parts are graded in order so a later part can be checked against
the value recomputed from the student's own earlier answers (error carried forward).
"""
from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from examprep.answers import PartResult, check_part
from examprep.answers.files import excerpt
from examprep.answers.rounding import RoundingChain
from examprep.problem import Problem, Tolerance


def address(number: int, part_id: str) -> str:
    """The answer address of a part: "q2.probs"."""
    return f"q{number}.{part_id}"


@dataclass
class Settings:
    """How to grade: error carried forward (on/off and its share of the points) and tolerance
    overrides — ``tolerances`` maps an address ("q2.loss"), a problem ("q2"), a part id ("loss")
    or "*" (every numeric part) to a Tolerance, most specific first."""

    ecf: bool = True
    ecf_credit: float = 1.0
    tolerances: dict[str, Tolerance] = field(default_factory=dict)
    ecf_off: frozenset[int] = frozenset()     # id() of parts graded without carried-forward credit (see ecf_drift)

    def tolerance_for(self, number: int, part_id: str, kind: str = "number") -> Tolerance | None:
        """The override for a part, most specific first; "*" reaches only numeric parts
        (number, vector, matrix), never integers, expressions or choices."""
        t = self.tolerances
        if not t:
            return None
        found = t.get(address(number, part_id)) or t.get(f"q{number}") or t.get(part_id)
        if found is None and kind in ("number", "vector", "matrix"):
            found = t.get("*")
        return found


@dataclass
class ProblemResult:
    number: int
    problem: Problem
    parts: list[PartResult]

    @property
    def score(self) -> float:
        return sum(r.score for r in self.parts)

    @property
    def max_score(self) -> float:
        return sum(r.max_score for r in self.parts)

    @property
    def label(self) -> str:
        return f"q{self.number}"


@dataclass
class SubmissionResult:
    """One student's graded submission.

    ``source`` says where the answers came from (file, and row for a class CSV); ``warnings``
    lists unknown part ids and similar notes that did not stop the grading.
    """

    student_id: str
    problems: list[ProblemResult]
    name: str = ""
    source: str = ""
    warnings: list[str] = field(default_factory=list)
    variant: str = ""

    @property
    def score(self) -> float:
        return sum(p.score for p in self.problems)

    @property
    def max_score(self) -> float:
        return sum(p.max_score for p in self.problems)

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.max_score if self.max_score else 0.0

    def parts(self) -> Iterable[tuple[str, ProblemResult, PartResult]]:
        for pr in self.problems:
            for r in pr.parts:
                yield address(pr.number, r.part_id), pr, r

    def counts(self) -> Counter:
        return Counter(r.status for _, _, r in self.parts())

    def to_dict(self) -> dict[str, Any]:
        return {"student_id": self.student_id, "name": self.name, "source": self.source, "variant": self.variant,
                "score": round(self.score, 6), "max_score": self.max_score, "percent": round(self.percent, 2),
                "warnings": self.warnings,
                "problems": [{"question": pr.label, "generator": pr.problem.generator, "title": pr.problem.title,
                              "variant": pr.problem.variant, "score": round(pr.score, 6), "max_score": pr.max_score,
                              "parts": [r.to_dict() for r in pr.parts]} for pr in self.problems]}


def flatten_answers(answers: dict[str, Any]) -> dict[str, Any]:
    """{"q1": {"probs": x}} and {"q1.probs": x} both to {"q1.probs": x} (nested tables of any depth
    are joined with dots; non-answer fields such as student_id are kept as they are)."""
    flat: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        else:
            flat[prefix] = value

    for k, v in answers.items():
        walk(str(k), v)
    return flat


META_FIELDS = ("student_id", "id", "name", "email", "student", "variant", "timestamp", "submitted", "sheet")


def grade_submission(problems: list[Problem], answers: dict[str, Any], *, student_id: str = "", name: str = "",
                     source: str = "", settings: Settings | None = None) -> SubmissionResult:
    """Grade one student's answers to ``problems`` (the student's own variant).

    answers: {"q1.probs": raw, ...} or nested {"q1": {"probs": raw}}; raw is typed text or a
    TOML/JSON number or list. With a single problem, bare part ids ("probs") are accepted too.
    Unknown addresses are reported in ``warnings``, never fatal; missing ones grade as blank.
    """
    settings = settings or Settings()
    flat = flatten_answers(answers)
    if len(problems) == 1:
        ids = {p.id for p in problems[0].parts}
        flat = {(address(1, k) if k in ids and address(1, k) not in flat else k): v for k, v in flat.items()}
    known: list[str] = []
    results = []
    for n, problem in enumerate(problems, 1):
        earlier: dict[str, Any] = {}
        rounding = RoundingChain(problem.parts)      # rounding too coarsely is docked once per chain
        parts = []
        for part in problem.parts:
            addr = address(n, part.id)
            known.append(addr)
            r = check_part(part, flat.get(addr), earlier, ecf=settings.ecf and id(part) not in settings.ecf_off,
                           ecf_credit=settings.ecf_credit, tolerance=settings.tolerance_for(n, part.id, part.kind),
                           rounding_counted=rounding.counted_for(part))
            rounding.after(part, r)
            # later parts recompute from the student's own value; a blank or unreadable answer
            # stands in with the key's, so one gap does not break the chain after it
            earlier[part.id] = r.value if r.status not in ("blank", "unparseable") else part.expected
            parts.append(r)
        results.append(ProblemResult(n, problem, parts))
    known_set = set(known)
    unknown = [k for k in flat if k not in known_set and k.lower() not in META_FIELDS and not k.startswith("meta.")]
    return SubmissionResult(student_id=student_id, name=name, source=source, problems=results,
                            warnings=unknown_warnings(unknown, known))


MAX_SUGGESTIONS = 10        # unknown part ids named (and fuzzy-matched) per submission; the rest are counted


def unknown_warnings(unknown: list[str], known: list[str]) -> list[str]:
    """One warning per unknown part id, with the closest known address, for the first
    MAX_SUGGESTIONS; then one line counting the rest. Fuzzy matching costs a comparison with every
    known address, so a file of 66,741 made-up ids would take half a minute and fill a CSV cell
    with megabytes: the cap keeps both small."""
    warnings = []
    for k in unknown[:MAX_SUGGESTIONS]:
        close = difflib.get_close_matches(k[:100], known, n=1, cutoff=0.6)
        warnings.append(f"unknown part id {excerpt(k)} ignored" + (f" (did you mean {close[0]}?)" if close else ""))
    if len(unknown) > MAX_SUGGESTIONS:
        warnings.append(f"… and {len(unknown) - MAX_SUGGESTIONS:,} more unknown part ids ignored")
    return warnings



# ----------------------------------------------------------------------------- class summary

@dataclass
class QuestionSummary:
    label: str
    title: str
    mean: float
    max_score: float
    statuses: Counter


def summarise(results: list[SubmissionResult]) -> tuple[list[QuestionSummary], list[tuple[str, str, int, str]]]:
    """Mean score per question (over the students who have it) and the most frequent
    misconceptions as (address, misconception id, count, explanation), most frequent first."""
    by_q: dict[str, list[ProblemResult]] = {}
    for res in results:
        for pr in res.problems:
            by_q.setdefault(pr.label, []).append(pr)
    questions = []
    for label in sorted(by_q, key=lambda q: int(q[1:])):
        prs = by_q[label]
        statuses: Counter = Counter(r.status for pr in prs for r in pr.parts)
        titles = Counter(pr.problem.title for pr in prs)
        questions.append(QuestionSummary(label, titles.most_common(1)[0][0], sum(p.score for p in prs) / len(prs),
                                         max(p.max_score for p in prs), statuses))
    mis: Counter = Counter()
    explain: dict[tuple[str, str], str] = {}
    for res in results:
        for addr, _, r in res.parts():
            if r.misconception is not None:
                mis[(addr, r.misconception.id)] += 1
                explain[(addr, r.misconception.id)] = r.misconception.explanation
    top = [(a, m, c, explain[(a, m)]) for (a, m), c in mis.most_common()]
    return questions, top
