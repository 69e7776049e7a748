"""A source reference: the Item every command builds its problems from (examprep.sources.build),
as a recipe's line or a command-line topic (examprep.sources.reference) names it. Light on purpose:
the recipes hold Items, and reading a recipe (`sheet --list`) loads no generator."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Item:
    """One line of a recipe, and every command's source reference (examprep.sources.build): ``count``
    problems of ``topic`` at ``difficulty``."""

    topic: str
    difficulty: int
    count: int = 1
    calculator_free: bool = False
    tolerance: Any = None        # a Tolerance for its numeric parts (the recipe's tolerance = "…"), or None
    pins: dict[str, Any] | None = None     # the generator's pinned parameters (params = {...})
    points: float | None = None            # the problem's points, its parts scaled to them
    minutes: float | None = None
    seed: int | None = None                # the problem's own seed (the same on every copy)
    question: Any = None                   # a QuestionSpec (question = "FILE.toml"); topic is "question:<id>"
    concept: str | None = None             # a concept question's id; topic is "concept:<id>"
    checkpoint: str | None = None          # a model problem's trained model (sheet --checkpoint DIR)

    @property
    def generated(self) -> bool:
        """A generator's problem (with levels), not a question file or a concept question."""
        return self.question is None and self.concept is None


def is_question_file(name: str) -> bool:
    """A topic argument that names a question file rather than a generator."""
    return name.endswith(".toml")
