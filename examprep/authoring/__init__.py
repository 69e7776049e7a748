"""Authored questions: an instructor's own question files (TOML), read, drawn and checked.

``expr.py`` is the safe evaluator of a question's ``where`` condition and of its computed parts'
and mistakes' ``value``; ``question.py`` reads a question file (``own.py`` its parts' own mistakes,
choices and tests); ``build.py`` builds its Problem
through a solve topic (answers, known mistakes, ECF rules and worked steps from the topic's tables,
as the built-in generators use them) with the author's own computed parts, mistakes and shuffled
choice parts; ``check.py`` draws a question many times, reports what would make it a poor exam
question and runs its question tests.
"""
from examprep.authoring.build import build_question, draft
from examprep.authoring.question import QuestionError, QuestionSpec, load_question, parse_question

__all__ = ["QuestionError", "QuestionSpec", "build_question", "draft", "load_question", "parse_question"]
