"""What a session records: each part's and problem's outcome, and the session's summary."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from examprep.problem import Part, Problem

@dataclass
class PartOutcome:
    part: Part
    answer: str
    status: str
    score: float
    misconception: str | None = None
    explanation: str = ""
    feedback: str = ""
    seconds: float = 0.0
    hints: int = 0


@dataclass
class ProblemOutcome:
    number: int
    problem: Problem
    topic: str
    parts: list[PartOutcome] = field(default_factory=list)
    seconds: float = 0.0
    complete: bool = False

    @property
    def score(self) -> float:
        return sum(p.score for p in self.parts)

    @property
    def points(self) -> float:
        return self.problem.points

    @property
    def hinted(self) -> bool:
        return any(p.hints for p in self.parts)

    @property
    def revealed(self) -> bool:
        return any(p.status == "revealed" for p in self.parts)


@dataclass
class Summary:
    mode: str
    outcomes: list[ProblemOutcome]
    seconds: float
    ended: str = "done"          # done | quit | interrupted | input-ended | time-up
    history_path: str | None = None
    saved: int = 0
    report: Any = None           # exam mode: the grading engine's result
    unreached: list[str] = field(default_factory=list)   # exam ended early: topics not reached, not recorded
    unanswered: int = 0          # parts of the problem a practice session ended in, recorded as blank

    @property
    def exit_code(self) -> int:
        return 130 if self.ended == "interrupted" else 0
