"""A source reference: the Item every command builds its problems from (examprep.sources.build),
as a recipe's line or a command-line topic (examprep.sources.reference) names it. Light on purpose:
the recipes hold Items, and reading a recipe (`sheet --list`) loads no generator."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from examprep.errors import ParamError


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


def same_id_elsewhere(spec: Any, earlier: Any) -> Any:
    """The question (a QuestionSpec) among ``earlier`` Items' that has ``spec``'s id but is another
    file, or None: its id names its problems' generator (question:<id>), its Anki note's GUID, its
    review card and its keys, so two files under one id would be taken for each other."""
    def place(s: Any) -> str:
        return str(Path(s.source).resolve()) if s.source else s.digest

    for item in earlier:
        other = getattr(item, "question", None)
        if other is not None and other.id == spec.id and place(other) != place(spec):
            return other
    return None


def duplicate_id_message(spec: Any, other: Any) -> str:
    return (f"{spec.at('id')}: id {spec.id!r} is also the id of {other.source}, used with it; give one of them "
            "another id (an id names its problems, keys, review cards and Anki notes)")


def check_distinct_ids(items: Any) -> None:
    """ParamError (one line naming both files) for two question files with one id among ``items``."""
    for k, item in enumerate(items):
        if getattr(item, "question", None) is not None:
            other = same_id_elsewhere(item.question, items[:k])
            if other is not None:
                raise ParamError(duplicate_id_message(item.question, other))


def is_question_file(name: str) -> bool:
    """A topic argument that names a question file rather than a generator."""
    return name.endswith(".toml")
