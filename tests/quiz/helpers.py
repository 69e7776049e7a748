"""Typing a problem's answers the way a student would, and reading the history back."""
from __future__ import annotations

import json
from typing import Any

from examprep.problem import Part, Problem


def _literal(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_literal(x) for x in v) + "]"
    return str(v)


def typed(part: Part, value: Any = None) -> str:
    """``value`` (default: the expected answer, in its exact form where the part has one) as a
    student types it for ``part``."""
    if value is None and part.exact is not None:
        return _literal(part.exact)
    v = part.expected if value is None else value
    if part.kind == "choice":
        return str(v)
    if part.kind == "integer":
        return str(int(round(float(v))))
    if isinstance(v, list):
        return json.dumps(v)
    return repr(float(v))


def correct_answers(problem: Problem) -> list[str]:
    return [typed(p) for p in problem.parts]


def interrupt_after(monkeypatch, n: int) -> None:
    """Make the (n+1)-th prompt of a session raise KeyboardInterrupt, as Ctrl-C while it waits
    does (the pseudo-terminal test sends a real SIGINT)."""
    from examprep import quiz

    original = quiz.Terminal.ask
    calls = {"n": 0}

    def ask(self, prompt, *, timeout=None):
        calls["n"] += 1
        if calls["n"] > n:
            raise KeyboardInterrupt
        return original(self, prompt, timeout=timeout)

    monkeypatch.setattr(quiz.Terminal, "ask", ask)
