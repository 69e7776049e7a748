"""Authored questions: an instructor's own question files (TOML), read, drawn and checked.

``expr.py`` is the safe evaluator of a question's ``where`` condition; ``question.py`` reads a
question file and builds its Problem through a solve topic (answers, known mistakes, ECF rules and
worked steps from the topic's tables, as the built-in generators use them); ``check.py`` draws a
question many times and reports what would make it a poor exam question.
"""
from examprep.authoring.build import build_question, draft
from examprep.authoring.question import QuestionError, QuestionSpec, load_question, parse_question

__all__ = ["QuestionError", "QuestionSpec", "build_question", "draft", "load_question", "parse_question"]
