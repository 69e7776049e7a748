"""One imported question, as the readers of each format leave it, and the question file it becomes.

A reader fills an ``Imported``: its title, text (plain text: HTML already reduced by
``escape.html_text``), drawn parameters, parts (the keys of a ``[[question.part]]`` table, with
its mistakes) and ``notes``: what the source held that the question file cannot (one short
clause each). A question that cannot be carried at all has ``skipped`` set instead.
``question_file`` writes the TOML that docs/authoring.md describes; ``banks.importer`` checks it
with the authoring parser before anything is written.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from examprep.answers.read import norm_choice


@dataclass
class Imported:
    """One question of a bank: ``name`` as the source names it (for messages), then the file's content."""

    name: str
    title: str = ""
    text: str = ""
    params: dict[str, dict] = field(default_factory=dict)
    parts: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None


def number(text: Any) -> float:
    """A number as a bank writes it ('3.14', '1e-3', ' 2 '); ValueError for anything else (inf and nan too)."""
    value = float(str(text).strip())
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {text!r}")
    return value


def literal(value: float) -> str:
    """A number as an expression literal: whole numbers plainly, others with repr's shortest digits."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(float(value))


def absolute_tolerance(tol: float) -> str:
    """Moodle's or QTI's absolute error as examprep's tolerance text ("exact" for 0)."""
    return "exact" if tol == 0 else f"atol:{literal(abs(tol))}"


def relative_tolerance(tol: float) -> str:
    return "exact" if tol == 0 else f"rtol:{literal(abs(tol))}"


def choice_texts(options: list[str]) -> list[str]:
    """Options as a choice part can hold them: one that reads as a label ("a", "b) …") gets "option "
    in front (a student answers with the label the option has in the variant, docs/authoring.md)."""
    out = []
    for c in options:
        reads_as_label = re.fullmatch(r"[a-z]", norm_choice(c)) or (
            ")" in c and re.fullmatch(r"[a-z]", norm_choice(c.split(")")[0])))
        out.append(f"option {c.strip()}" if reads_as_label else c.strip())
    return out


def text_braces(text: str, keep: set[str] = frozenset()) -> str:
    """Braces of imported text doubled (a brace is a placeholder in a question file), except the
    placeholders ``{name}`` of the drawn parameters in ``keep``."""
    pattern = re.compile(r"\{(" + "|".join(map(re.escape, sorted(keep))) + r")\}") if keep else None
    out, pos = [], 0
    for m in (pattern.finditer(text) if pattern else ()):
        out.append(text[pos:m.start()].replace("{", "{{").replace("}", "}}"))
        out.append(m.group(0))
        pos = m.end()
    out.append(text[pos:].replace("{", "{{").replace("}", "}}"))
    return "".join(out)


def slug(name: str) -> str:
    """A question id (letters, digits, -_.) from a bank's question name."""
    s = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")[:60].strip("-.")
    return s or "question"


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return literal(value) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)      # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {type(value).__name__}")


def question_file(q: Imported, qid: str, source: str) -> str:
    """The question file's text: a header naming the source and what was not carried, then the tables."""
    lines = [f"# Imported by `examprep import` from {one_line(source)}: {one_line(q.name)}"]
    lines += [f"# carried without: {one_line(n)}" for n in q.notes]
    lines += ["", "[question]", f"id = {_toml(qid)}", f"title = {_toml(one_line(q.title) or qid)}",
              f"text = {_toml(q.text or one_line(q.title) or qid)}"]
    if q.params:
        lines += ["", "[question.params]"] + [f"{k} = {_toml(v)}" for k, v in q.params.items()]
    for part in q.parts:
        lines += ["", "[[question.part]]"]
        lines += [f"{k} = {_toml(v)}" for k, v in part.items() if k != "mistakes"]
        for m in part.get("mistakes", ()):
            lines += ["", "[[question.part.mistake]]"] + [f"{k} = {_toml(v)}" for k, v in m.items()]
    return "\n".join(lines) + "\n"


def points_of(value: Any, q: Imported) -> float:
    """A part's points from a bank's grade: whole or half points, at least half a point (noted when changed)."""
    try:
        raw = number(value)
    except (TypeError, ValueError):
        return 1
    pts = max(0.5, round(raw * 2) / 2)
    if pts != raw:
        q.notes.append(f"a grade of {literal(raw)} points, rounded to {literal(pts)} (whole or half points)")
    return int(pts) if float(pts).is_integer() else pts


def numeric_part(pid: str, prompt: str, value: str, tolerance: str, points: float,
                 mistakes: list[dict] = ()) -> dict:
    """A computed part: ``value`` an expression (a number's literal, or a formula over the parameters)."""
    part = {"id": pid, "prompt": prompt or "Your answer.", "value": value, "tolerance": tolerance, "points": points}
    if mistakes:
        part["mistakes"] = list(mistakes)
    return part


def choice_part(pid: str, prompt: str, options: list[str], correct: int, points: float,
                feedback: dict[int, tuple[str, float]] = None) -> dict:
    """A choice part; ``feedback``: option index → (why, credit) for the wrong options a bank explains."""
    shown = choice_texts(options)
    part = {"id": pid, "prompt": prompt or "Choose one.", "choices": shown, "correct": shown[correct],
            "points": points}
    mistakes = []
    for i, (why, credit) in sorted((feedback or {}).items()):
        if i != correct and why:
            m = {"id": f"option-{i + 1}", "choice": shown[i], "why": why}
            if credit > 0:
                m["credit"] = round(credit, 4)
            mistakes.append(m)
    if mistakes:
        part["mistakes"] = mistakes
    return part


def written_part(prompt: str, model_answer: str, rubric: list[str], points: float) -> dict:
    return {"kind": "written", "prompt": prompt or "Your answer.", "points": points,
            "model_answer": model_answer or "(none given)", "rubric": rubric or ["as the model answer"]}
