"""Renderers of Problems and documents: terminal (rich), Markdown, Typst PDF, Moodle XML, reports."""
from __future__ import annotations


def plural(n: float, word: str) -> str:
    """"1 problem", "2 problems", "0.5 points": a count and its noun, agreeing in number."""
    return f"{n:g} {word}{'' if n == 1 else 's'}"
