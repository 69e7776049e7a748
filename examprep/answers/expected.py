"""What a part expects, in words with an example, for the refusals that can only name a token: the
parser sees "a" or "@" and knows nothing of the part, so a letter in an integer part said
"unknown name 'a' at column 1". parse_answer (grade and the quiz alike) says instead
"'a' at column 1: expected a whole number, such as 17010"."""
from __future__ import annotations

import re

from examprep.answers.tokens import AnswerParseError
from examprep.decimal_comma import decimal_comma_on
from examprep.problem import Part

# the parser's refusals that name a token and nothing else: a name with no hint or with the
# number-not-formula one, a character never accepted, an operator with no hint of its own
_TOKEN_ONLY = re.compile(r"(?:unknown name|unexpected character|unexpected) ('.*'|\".*\") at column (\d+)"
                         r"(?:; this answer is a number, not a formula)?")
_EXAMPLE_NUMBERS = ("0.5", "1", "-2", "3", "0.25", "4")


def _numbers(n: int) -> list[str]:
    """n example entries (at most four, with … between)."""
    picks = list(_EXAMPLE_NUMBERS[:n]) if n <= 4 else [*_EXAMPLE_NUMBERS[:2], "…", _EXAMPLE_NUMBERS[2]]
    return [x.replace(".", ",") for x in picks] if decimal_comma_on() else picks


def _counted(start: int, n: int) -> list[str]:
    """A matrix row's example entries start+1 … start+n (at most four, with … between)."""
    values = [str(start + k) for k in range(1, n + 1)]
    return values if n <= 4 else [*values[:2], "…", values[-1]]


def _bracketed(entries: list[str]) -> str:
    return "[" + ("; " if decimal_comma_on() else ", ").join(entries) + "]"


def expected_text(part: Part) -> str:
    """What ``part`` expects, with an example written as its sheet reads it."""
    shape = tuple(part.shape or ())
    if part.kind == "integer":
        return "a whole number, such as 17010"
    if part.kind == "number":
        return "a number, such as " + ("0,25" if decimal_comma_on() else "0.25") + " or 1/3"
    if part.kind == "vector":
        n = shape[0] if shape else 3
        return f"a vector of {n} number{'s' if n != 1 else ''}, such as {_bracketed(_numbers(n))}"
    if part.kind == "matrix":
        rows, cols = shape if len(shape) == 2 else (2, 2)
        shown = [_bracketed(_counted(i * cols, cols)) for i in range(min(rows, 2))]
        example = _bracketed(shown + (["…"] if rows > 3 else []) + ([_bracketed(_counted((rows - 1) * cols, cols))]
                                                                     if rows > 2 else []))
        return f"a {rows}×{cols} matrix, such as {example}"
    if part.kind == "expression":
        if part.variables:
            return f"an expression in {', '.join(part.variables)}"
        return "a number or an exact expression, such as ln 2 or e^2/(1+e^2)"
    return part.form()


def what_to_write(part: Part, err: AnswerParseError) -> AnswerParseError:
    """``err`` with what the part expects in place of a bare token refusal (other refusals, which
    say what to write already, are returned as they are)."""
    m = _TOKEN_ONLY.fullmatch(str(err))
    if not m:
        return err
    return AnswerParseError(f"{m.group(1)} at column {m.group(2)}: expected {expected_text(part)}")
