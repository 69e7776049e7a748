"""Errors a user can cause. The CLI prints their message (one line) and exits non-zero.

Each message says what was wrong, where (parameter, file, line, question) and what was expected.
"""


class ExamprepError(Exception):
    """Base class of every error caused by user input. ``exit_code`` is what the CLI exits with."""

    exit_code = 2


class ParamError(ExamprepError, ValueError):
    """A parameter is missing, unknown, of the wrong type, or has an impossible value."""


class ShapeError(ParamError):
    """An array parameter has the wrong shape or does not fit another parameter's shape."""


class UnknownTopicError(ParamError):
    """A topic (solve topic or generator) that does not exist; the message suggests close names."""
