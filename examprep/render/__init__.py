"""Renderers of Problems and documents: terminal (rich), Markdown, Typst PDF, Moodle XML, reports."""
from __future__ import annotations

from typing import Any


def plural(n: float, word: str) -> str:
    """"1 problem", "2 problems", "0.5 points": a count and its noun, agreeing in number."""
    return f"{n:g} {word}{'' if n == 1 else 's'}"


def choices_shown(part: Any) -> list[str]:
    """A choice part's options in alphabetical order: the order the generator lists them in
    (the correct one first, often) must not leak onto paper."""
    return sorted((str(c) for c in part.choices), key=str.casefold)


def part_note(part: Any, *, listed: bool = True) -> str:
    """The expected form and precision of a part's answer, as printed under its prompt
    (``listed``: name a choice's options, where no answer box shows them)."""
    if part.kind == "choice":
        return "choose one: " + "; ".join(choices_shown(part)) if listed else "circle one"
    if part.kind == "written":
        return "written answer, marked by hand"
    return f"{part.form()}; {part.tolerance.describe()}"


def accepted(part: Any) -> str:
    """What a part accepts, in words: its tolerance, or "marked by hand" for a written part."""
    return "marked by hand" if part.kind == "written" else part.tolerance.describe()


def model_answer_text(part: Any) -> str:
    """A written part's model answer with its rubric, on one line (answer tables print it)."""
    rubric = f" Rubric: {'; '.join(part.rubric)}." if part.rubric else ""
    return f"{part.model_answer}{rubric}"
