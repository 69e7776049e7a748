"""What the reader says about answers people write (issue 36's attack report, items 6, 7 and 14): a
point before three digits in an integer part, numbers shown as written, messages that are true for
the part asked, a trailing comma read alike in every one-value part, and the column of the first
character that cannot be read."""
from __future__ import annotations

import pytest

from examprep.answers import AnswerParseError, check_part, parse_answer
from examprep.answers.parse import decimal_comma
from examprep.problem import Part, Tolerance

INTEGER = Part("n", "p", "integer", 99328, Tolerance("exact", 0, 0))
NUMBER = Part("x", "p", "number", 86.7, Tolerance("exact", 0, 0))


def refusal(part: Part, typed: str) -> str:
    with pytest.raises(AnswerParseError) as err:
        parse_answer(part, typed)
    assert check_part(part, typed, {}).status == "unparseable"
    return str(err.value)


@pytest.mark.parametrize("typed, message", [
    ("99.328", "'99.328' is not a whole number; if the point separates thousands, write 99328"),
    ("1.010", "'1.010' is not a whole number; if the point separates thousands, write 1010"),
    ("-1.010", "'-1.010' is not a whole number; if the point separates thousands, write -1010"),
    ("1.000", "'1.000' is ambiguous: a point marks decimals (1) or groups thousands (1000); write 1 or 1000"),
    ("1.000.000", "'1.000.000': a point marks decimals on this sheet and groups no thousands: write 1000000"),
])
def test_a_point_before_three_digits_in_an_integer_part_is_refused_with_both_readings(typed, message):
    assert refusal(INTEGER, typed) == message


@pytest.mark.parametrize("typed, shown", [
    ("22.5", "22.5"), ("99.3280", "99.3280"), ("99328.000000001", "99328.000000001"), ("99.32", "99.32")])
def test_a_decimal_in_an_integer_part_is_wrong_and_shown_as_written(typed, shown):
    r = check_part(INTEGER, typed, {})
    assert (r.status, r.feedback) == ("wrong", f"expected a whole number, not {shown}")


def test_on_a_decimal_comma_sheet_a_point_groups_an_integer_parts_thousands():
    with decimal_comma():
        assert parse_answer(INTEGER, "99.328") == 99328
        assert parse_answer(INTEGER, "1.234.567") == 1234567
        assert check_part(INTEGER, "99.328", {}).status == "correct"
        assert check_part(INTEGER, "22,5", {}).feedback == "expected a whole number, not 22,5"
        with pytest.raises(AnswerParseError, match="'2.000' at column 1 is ambiguous"):      # two, or two thousand
            parse_answer(INTEGER, "2.000")
        with pytest.raises(AnswerParseError, match="ambiguous on this decimal-comma sheet"):
            parse_answer(NUMBER, "99.328")                 # a number part: 99,328 or 99328?


@pytest.mark.parametrize("typed", ["94,422.", "99 ,328", "99, 328", "99.328,0", "99 3 28"])
def test_an_integer_part_says_how_a_whole_number_is_written(typed):
    assert refusal(INTEGER, typed) == (f"{typed!r} is not one whole number: write it as 17010, or group its digits in "
                                       "threes with commas or spaces (17,010 or 17 010)")


def test_a_number_part_keeps_its_product_hint():
    assert "write a product with *" in refusal(NUMBER, "2 ln 2")


@pytest.mark.parametrize("part, typed, value", [
    (INTEGER, "80,100,", 80100), (INTEGER, "0,", 0), (NUMBER, "86.7,", 86.7), (NUMBER, "0,", 0.0),
    (INTEGER, "99,328, ", 99328)])
def test_a_trailing_comma_after_one_value_is_read_in_every_one_value_part(part, typed, value):
    assert parse_answer(part, typed) == value


def test_a_trailing_comma_is_no_thousands_grouping_where_a_comma_is_ambiguous():
    with pytest.raises(AnswerParseError, match="'80,100' is ambiguous: a comma groups thousands"):
        parse_answer(NUMBER, "80,100,")
    with pytest.raises(AnswerParseError):
        parse_answer(NUMBER, "86.7,,")
    assert parse_answer(Part("v", "p", "vector", [1.0, 2.0], shape=(2,)), "[1, 2,]") == [1.0, 2.0]


@pytest.mark.parametrize("typed, message", [
    ("[l](http://e.com)", "'l' at column 2: expected a whole number, such as 17010"),
    ("17 @ 2", "'@' at column 4: expected a whole number, such as 17010"),
    ("(1+2", "expected ')'"),
    ("1+$", "'$' at column 3: expected a whole number, such as 17010"),
    ("1+2 `x", "'`' at column 5: expected a whole number, such as 17010"),
])
def test_the_first_character_that_cannot_be_read_is_named(typed, message):
    assert message in refusal(INTEGER, typed)


def test_a_character_never_accepted_is_named_where_the_parser_reaches_it():
    # before, the tokenizer refused the '.' of "e.com" before the parser saw the 'l' at column 2
    assert refusal(NUMBER, "1 + ¤") == "'¤' at column 5: expected a number, such as 0.25 or 1/3"
    assert refusal(NUMBER, "x ¤") == "'x' at column 1: expected a number, such as 0.25 or 1/3"
