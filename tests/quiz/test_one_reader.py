"""One reader for grade and quiz: for every part kind (examprep.problem.KINDS, the one list of
them), a string reads the same in `examprep grade` (an answer file's text, through
grade_submission: parse_answer and check_part) as typed at the quiz's prompt (the real Terminal
reading piped input, in practice and in exam mode). Only the quiz's command words differ: typed
with a leading '=' they are an answer (`=s` answers "s"). Where grade marks a vector or matrix
wrong for its shape, the quiz asks again with grade's words (it does not count)."""
from __future__ import annotations

import functools
import io
import re
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from examprep import generators
from examprep.grading import grade_submission
from examprep.problem import KINDS, Part, Problem, Tolerance
from examprep.quiz import Session, Terminal
from examprep.quiz.outcomes import ProblemOutcome
from examprep.quiz.prompt import COMMANDS

# One part of each kind in examprep.problem.KINDS, the one list of them. A kind added there without
# a sample here is tested on the first part of that kind a built-in generator makes (sample());
# command words are among these choices and variables, so a student must be able to answer them.
SAMPLES = {
    "number": Part("a", "p", "number", 0.25),
    "integer": Part("n", "p", "integer", 17010, Tolerance("exact", 0, 0)),
    "vector": Part("v", "p", "vector", [0.1, 0.2, 0.7], shape=(3,)),
    "matrix": Part("m", "p", "matrix", [[1.0, 2.0], [3.0, 4.0]], shape=(2, 2)),
    "expression": Part("x", "p", "expression", "s/(1 + q)", Tolerance("exact", 0, 0), exact="s/(1 + q)",
                       variables=("s", "q")),
    "choice": Part("c", "p", "choice", "s", choices=("s", "skip", "t")),
    "written": Part("w", "p", "written", None, Tolerance("exact", 0, 0), model_answer="m", rubric=("r",)),
    "shapes": Part("l", "p", "shapes", [[3, 28, 28], [6, 24, 24], [864]], Tolerance("exact", 0, 0)),
    # not a kind of its own: a vector whose answer is a tensor shape (its solve topic says so)
    "tensor shape": Part("t", "p", "vector", [10, 26, 26], Tolerance("exact", 0, 0), shape=(3,), tensor_shape=True),
}
READERS = (*KINDS, "tensor shape")        # every way a part is read: each kind, and a vector read as a shape

# What students type (tokens of the answer syntax, thousands groups, letters, command words), and
# any text at all; a line break ends a line at the prompt, so no answer holds one.
_PIECES = ["0", "1", "7", "17", "10", "26", " x ", "; ", "010", "0.5", ".", ",", ", ", ";", " ", "\u00a0", "[", "]", "(",
           ")", "-", "+", "*", "/", "^", "e", "x", "s", "q", "a", "t", "skip", "?", "=", "×", "sqrt", "ln ", "1/3", "17,010",
           "2e-3", "%", "'", "inf", "nan", "S"]
ANSWERS = st.one_of(st.lists(st.sampled_from(_PIECES), max_size=8).map("".join),
                    st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=12))


@functools.lru_cache(maxsize=None)
def sample(kind: str) -> Part:
    """The part of ``kind`` the property is checked on: SAMPLES', else the first a built-in
    generator makes (seed 1, each level)."""
    if kind in SAMPLES:
        return SAMPLES[kind]
    for name, gen in sorted(generators.load_all().items()):
        for level in gen.levels:
            part = next((p for p in generators.build(name, 1, level).parts if p.kind == kind), None)
            if part is not None:
                return part
    raise AssertionError(f"no built-in generator makes a {kind!r} part: give test_one_reader.SAMPLES one")


def is_command(text: str) -> bool:
    """What the quiz takes as a command, not an answer (Enter included), or as a command word
    escaped with '=' (checked on its own below)."""
    line = text.strip()
    return not line or line.lower() in COMMANDS or line.startswith("=") and line[1:].strip().lower() in COMMANDS


def _problem(part: Part) -> Problem:
    return Problem("t", 1, 1, 1, "T", {}, [], [part], [])


def graded(part: Part, typed: str) -> tuple:
    """`examprep grade`'s reading: ("read", status, score, feedback) or ("refused", why)."""
    r = grade_submission([_problem(part)], {f"q1.{part.id}": typed}).problems[0].parts[0]
    if r.status == "unparseable":
        return ("refused", r.feedback)
    if part.kind == "written":                      # kept for the marker, as the quiz keeps it for self-marking
        return ("read", "written", r.value.strip())
    return ("read", r.status, r.score, r.feedback)


_REFUSED = re.compile(r"Cannot read that: (.*?)\. Try again")


def _terminal(lines: list[str]) -> tuple[Terminal, mock._patch]:
    term = Terminal(no_color=True, interactive=False, width=1000)
    term.console.file = io.StringIO()
    return term, mock.patch("sys.stdin", io.StringIO("".join(f"{line}\n" for line in lines)))


def quizzed(part: Part, typed: str) -> tuple:
    """The quiz's reading of one line at a practice prompt, in the same form as ``graded``."""
    term, stdin = _terminal([typed, "skip", "0"])      # "skip": after a refusal; "0": a written part's own mark
    outcome = ProblemOutcome(1, _problem(part), "t")
    with stdin:
        Session(term, None).answer_part(outcome, 0, part, {})
    po = outcome.parts[0]
    refused = _REFUSED.search(term.console.file.getvalue())
    if refused:
        assert po.status == "blank"
        return ("refused", refused.group(1))
    if part.kind == "written":
        return ("read", "written", po.answer)
    return ("read", po.status, po.score, po.feedback)


def exam_reads(part: Part, typed: str) -> tuple:
    """At an exam's prompt: the answer kept for grading, or the refusal shown."""
    term, stdin = _terminal([typed, "skip"])
    answers: dict = {}
    with stdin:
        Session(term, None, mode="exam").exam_part(1, 0, part, [_problem(part)], answers, {})
    refused = _REFUSED.search(term.console.file.getvalue())
    return ("refused", refused.group(1)) if refused else ("kept", answers.get((1, part.id)))


def same_reading(part: Part, typed: str, as_graded: str) -> None:
    """The quiz reads ``typed`` as grade reads ``as_graded``; in an exam the line is kept (and then
    graded by grade_submission itself) exactly when the practice prompt takes it."""
    want, got = graded(part, as_graded), quizzed(part, typed)
    if got[0] == "refused" and want[0] == "read" and want[1] == "wrong" and want[2] == 0:
        # a readable vector or matrix of the wrong shape: grade marks it wrong with this message, the
        # quiz asks again with the same message (it does not count)
        assert part.kind in ("vector", "matrix") and got[1] == want[3], (typed, want, got)
    else:
        assert got == want, (part.kind, typed, want, got)
    exam = exam_reads(part, typed)
    if got[0] == "refused":
        assert exam == got, (part.kind, typed, exam, got)
    else:
        assert exam == ("kept", as_graded.strip()), (part.kind, typed, exam)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_has_a_sample(kind):
    assert sample(kind).kind == kind
    assert sample("tensor shape").tensor_shape


@pytest.mark.parametrize("kind", READERS)
@settings(max_examples=25, derandomize=True, deadline=None)
@given(typed=ANSWERS)
@example(typed="17,010")
@example(typed="a")
@example(typed=" [0.1, 0.2, 0.7] ")
@example(typed="10×26×26")
@example(typed="(10, 26, 26)")
@example(typed="10 x 26 x 26")
@example(typed="10×26")
@example(typed="3×28×28; 6×24×24; 864")
@example(typed="3×28×28; 864")
def test_grade_and_quiz_read_every_string_alike(kind, typed):
    if is_command(typed):
        return
    same_reading(sample(kind), typed, typed)


@pytest.mark.parametrize("kind", READERS)
@pytest.mark.parametrize("word", sorted(set(COMMANDS) | {"S", "Skip", "?"}))
def test_a_command_word_typed_after_an_equals_sign_is_an_answer(kind, word):
    for typed in (f"={word}", f"= {word}"):
        same_reading(sample(kind), typed, word)


def test_a_command_word_answers_a_choice_and_an_expression():
    assert quizzed(SAMPLES["choice"], "=s")[:3] == ("read", "correct", 1.0)
    assert quizzed(SAMPLES["choice"], "=skip")[:2] == ("read", "wrong")
    assert quizzed(SAMPLES["expression"], "=s")[:2] == ("read", "wrong")
    assert quizzed(SAMPLES["expression"], "s/(1+q)")[:2] == ("read", "correct")


def test_an_equals_sign_before_anything_else_is_read_as_grade_reads_it():
    # "=0.5" is not an escape: both say to type only the value
    for typed in ("=0.5", "==s", "=", "=s=s"):
        same_reading(SAMPLES["number"], typed, typed)
    assert quizzed(SAMPLES["number"], "=0.5")[0] == "refused"


@pytest.mark.parametrize("kind, typed, message", [
    ("integer", "a", "'a' at column 1: expected a whole number, such as 17010"),
    ("integer", "17 0x", "'x' at column 5: expected a whole number, such as 17010"),
    ("number", "0.5@", "'@' at column 4: expected a number, such as 0.25 or 1/3"),
    ("number", "x", "'x' at column 1: expected a number, such as 0.25 or 1/3"),
    ("vector", "[0.1, b, 0.7]", "'b' at column 7: expected a vector of 3 numbers, such as [0.5, 1, -2]"),
    ("matrix", "[[1, 2], [3, #]]", "'#' at column 14: expected a 2×2 matrix, such as [[1, 2], [3, 4]]"),
    ("expression", "s/(1 + q)$", "'$' at column 10: expected an expression in s, q"),
])
def test_a_refusal_that_names_a_token_says_what_the_part_expects(kind, typed, message):
    # the quiz said "Cannot read that: unknown name 'a' at column 1" for a letter in an integer part
    assert graded(SAMPLES[kind], typed) == ("refused", message)
    assert quizzed(SAMPLES[kind], typed) == ("refused", message)


def test_refusals_that_say_what_to_write_already_are_kept():
    assert graded(SAMPLES["expression"], "a")[1] == "unknown name 'a' at column 1; this answer may use q, s"
    assert graded(SAMPLES["number"], "E")[1] == "unknown name 'E' at column 1; write e for Euler's number or exp(x)"
    assert graded(SAMPLES["integer"], "x = 5")[1].startswith("'=' at column 3: type only the value")
    assert graded(SAMPLES["choice"], "a")[1] == "'a' is not a choice: answer with one of s, skip, t"


def test_the_example_is_written_as_a_decimal_comma_sheet_reads_it():
    from examprep.answers import parse_answer
    from examprep.answers.parse import decimal_comma

    with decimal_comma(), pytest.raises(Exception) as err:
        parse_answer(SAMPLES["vector"], "[0,1; b; 0,7]")
    assert str(err.value) == "'b' at column 7: expected a vector of 3 numbers, such as [0,5; 1; -2]"


def _carried_forward_lines():
    """cross-attention (level 2, seed 1) answered with the queries and keys swapped (a known
    mistake, 3×4 queries for 2×4), then the scores computed from them: 3×3, not the key's 2×3."""
    import json

    from examprep.answers.result import ecf_value

    problem = generators.build("cross-attention", 1, 2)
    query, key, value, scores = problem.parts[:4]
    swapped = next(m for m in query.misconceptions if m.id == "swapped-roles")
    lines = [json.dumps(swapped.value), json.dumps(key.expected), json.dumps(value.expected)]
    ecf = ecf_value(scores, {"query": swapped.value, "key": key.expected})
    assert ecf.shape == (3, 3) and tuple(scores.shape) == (2, 3)
    return problem, lines + [json.dumps(ecf.tolist())]


def test_a_shape_that_grade_carries_forward_is_graded_not_asked_again():
    # the quiz refused it ("expected 2×3, got 3×3") where grade gives it full credit
    problem, lines = _carried_forward_lines()
    graded_ = grade_submission([problem], {f"q1.{p.id}": t for p, t in zip(problem.parts, lines)})
    assert [r.status for r in graded_.problems[0].parts[:4]] == ["misconception", "correct", "correct", "ecf"]
    term, stdin = _terminal(lines + ["skip"])        # skip: what a student refused there could do
    outcome, earlier = ProblemOutcome(1, problem, "t"), {}
    session = Session(term, None)
    with stdin:
        for i, part in enumerate(problem.parts[:4]):
            session.answer_part(outcome, i, part, earlier)
    assert "Cannot read that" not in term.console.file.getvalue()
    assert [p.status for p in outcome.parts] == ["misconception", "correct", "correct", "ecf"]


def test_an_exam_keeps_a_shape_that_grade_carries_forward():
    problem, lines = _carried_forward_lines()
    term, stdin = _terminal(lines + ["skip"])
    answers: dict = {}
    with stdin:
        session = Session(term, None, mode="exam")
        for i, part in enumerate(problem.parts[:4]):
            session.exam_part(1, i, part, [problem], answers, {})
    assert "Cannot read that" not in term.console.file.getvalue()
    assert answers.get((1, "scores")) == lines[3]
