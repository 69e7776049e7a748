"""Thousands grouped as people write them (issue 36, item 2): `total_params = "17,010"` scored 0
("write a whole number without separators"). Where one value is asked, a number whose thousands
are grouped in threes is read as that number, unless a comma there could be a decimal comma."""
from __future__ import annotations

import pytest

from examprep import generators
from examprep.answers import AnswerParseError, check_part, parse_answer
from examprep.answers.parse import decimal_comma
from examprep.grading import grade_submission
from examprep.problem import Part, Tolerance

INTEGER = Part("n", "p", "integer", 17010, Tolerance("exact", 0, 0))
NUMBER = Part("x", "p", "number", 17010.0)
VECTOR = Part("v", "p", "vector", [1000.0, 2.0], shape=(2,))


@pytest.mark.parametrize("typed, value", [
    ("17,010", 17010), ("17 010", 17010), ("25,636,712", 25636712), ("-17,010", -17010), ("−17,010", -17010),
    ("1,000", 1000), ("17\u00a0010", 17010), ("17\u202f010", 17010), ("17’010", 17010), ("17,010.0", 17010),
    (" 25 636 712 ", 25636712),
])
def test_an_integer_part_reads_grouped_thousands_on_a_decimal_point_sheet(typed, value):
    got = parse_answer(INTEGER, typed)
    assert got == value and isinstance(got, int)


def test_a_parameter_count_written_with_a_comma_gets_its_points():
    problem = generators.build("param-count", 1, 2)
    answers = {f"q1.{p.id}": f"{p.expected:,}" for p in problem.parts}          # "99,328"
    assert "99,328" in answers.values()
    result = grade_submission([problem], answers)
    assert [r.status for r in result.problems[0].parts] == ["correct"] * len(problem.parts)
    shapes = generators.build("network-shapes", 1, 1)
    total = next(p for p in shapes.parts if p.id == "total_params")
    assert total.expected >= 1000
    for typed in (f"{total.expected:,}", f"{total.expected:,}".replace(",", " ")):
        r = check_part(total, typed)
        assert (r.status, r.score) == ("correct", total.points), (typed, r.feedback)


@pytest.mark.parametrize("typed, message", [
    ("1,00", "'1,00': a comma groups thousands in threes (as in 17,010); write the whole number without it"),
    ("17,01", "'17,01': a comma groups thousands in threes"),
    ("1,0000", "'1,0000': a comma groups thousands in threes"),
    ("17,010,5", "'17,010,5': a comma groups digits in threes (as in 17,010 or 25,636,712); write the whole number "
                 "without commas, or with one before each group of three"),
    ("9,93,28", "'9,93,28': a comma groups digits in threes"),                 # attack 36, 7: Indian grouping
    ("[1,000, 2]", "'1,000' at column 2: one whole number is asked"),
    ("17 01", "'17 01' is not one whole number: write it as 17010, or group its digits in threes with commas or "
              "spaces (17,010 or 17 010)"),
    ("17,010 000", "one whole number is asked"),
    ("017,010", "'017,010': a comma groups thousands in threes"),
])
def test_an_integer_part_refuses_what_is_not_grouped_in_threes(typed, message):
    with pytest.raises(AnswerParseError) as err:
        parse_answer(INTEGER, typed)
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("typed, message", [
    ("17,010", "'17,010' is ambiguous on this decimal-comma sheet: read with its decimal comma it is no whole number, "
               "and a comma groups no thousands there; write 17010 or 17 010"),
    ("-1,000", "write -1000 or -1 000"),
    ("25,636,712", "'25,636,712': on this decimal-comma sheet a comma marks decimals and cannot group thousands: "
                   "write 25636712 or 25 636 712"),
])
def test_a_decimal_comma_key_says_why_it_refuses_a_comma_in_an_integer(typed, message):
    with decimal_comma(), pytest.raises(AnswerParseError) as err:
        parse_answer(INTEGER, typed)
    assert message in str(err.value)
    r = check_part(INTEGER, typed)          # outside the key's setting the comma groups thousands
    assert r.status in ("correct", "wrong") and r.value != 17.01


def test_a_decimal_comma_key_reads_spaced_thousands_and_its_own_decimals():
    with decimal_comma():
        assert parse_answer(INTEGER, "17 010") == 17010
        assert parse_answer(NUMBER, "17 010,5") == 17010.5
        assert parse_answer(NUMBER, "17,010") == pytest.approx(17.01)         # the sheet's decimal comma
        assert parse_answer(NUMBER, "0,5") == 0.5
        with pytest.raises(AnswerParseError, match="cannot group thousands: write 25636712"):
            parse_answer(NUMBER, "25,636,712")


@pytest.mark.parametrize("typed, value", [("25,636,712", 25636712.0), ("17,010.5", 17010.5), ("17 010", 17010.0),
                                          ("17 010.25", 17010.25), ("-1,234,567.5", -1234567.5)])
def test_a_number_part_reads_the_groupings_no_decimal_comma_could_write(typed, value):
    assert parse_answer(NUMBER, typed) == value


@pytest.mark.parametrize("typed, message", [
    ("17,010", "'17,010' is ambiguous: a comma groups thousands (17010) or marks decimals (17.010); "
               "write 17010 or 17.010"),
    ("-1,000", "write -1000 or -1.000"),
    ("0,5", "'0,5': use a decimal point, not a comma: 0.5"),
    ("17,01", "'17,01': use a decimal point, not a comma: 17.01"),
])
def test_a_number_part_refuses_a_comma_that_may_be_a_decimal_comma(typed, message):
    with pytest.raises(AnswerParseError) as err:
        parse_answer(NUMBER, typed)
    assert message in str(err.value)


@pytest.mark.parametrize("typed, message", [
    ("[1,000, 2]", "'1,000' at column 2 is ambiguous in a list, where a comma separates entries: write 1000 for one "
                   "number (no thousands separator in a list), or 1.000 with a decimal point"),
    ("1,000 2", "'1,000' at column 1 is ambiguous in a list"),
    ("[2, 1,000,000]", "'1,000,000' at column 5 is ambiguous in a list, where a comma separates entries: write "
                       "1000000 for one number (no thousands separator in a list)"),
])
def test_a_vector_refuses_a_thousands_comma_as_ambiguous(typed, message):
    # "[1,000, 2]" was read as [1, 0, 2] and graded "expected 2 entries, got 3 — a decimal comma?"
    with pytest.raises(AnswerParseError) as err:
        parse_answer(VECTOR, typed)
    assert str(err.value) == message or message in str(err.value)


def test_a_vector_written_with_commas_alone_keeps_its_entries():
    assert parse_answer(Part("v", "p", "vector", [1.0, 0.0, 2.0], shape=(3,)), "[1,000,2]") == [1.0, 0.0, 2.0]
    assert parse_answer(VECTOR, "[1000, 2]") == [1000.0, 2.0]
    with decimal_comma():
        assert parse_answer(VECTOR, "[1,5; 2]") == [1.5, 2.0]
