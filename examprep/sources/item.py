"""A source reference: the Item every command builds its problems from (examprep.sources.build),
as a recipe's line or a command-line topic names it."""
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


def reference(name: str, *, difficulty: int = 1, count: int = 1, calculator_free: bool = False,
              checkpoint: str | None = None) -> Item:
    """The Item a command-line topic names: a question file (FILE.toml, read now: QuestionError
    naming its line) or a generator (UnknownTopicError with the close names), with ``checkpoint``
    for a model problem. Levels and options are checked where the item is used."""
    if is_question_file(name):
        return question_item(name, count)
    from examprep import generators

    gen = generators.get(name)
    return Item(gen.name, difficulty, count, calculator_free, checkpoint=checkpoint if gen.requires else None)


def question_item(path: str, count: int = 1) -> Item:
    """The Item of a question file, read now (QuestionError naming its line)."""
    from examprep.authoring import load_question

    spec = load_question(path)
    return Item(spec.generator, 1, count, False, question=spec)
