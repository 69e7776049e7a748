"""A wrong answer to an exact part in a teacher's words (issue 36 item 8): a whole-number part said
"not within the tolerance — rule: exactly (a whole number)", as if there were a tolerance."""
from examprep.answers import check_part
from examprep.problem import EXACT, Part, Tolerance


def integer(expected=22, tol=EXACT):
    return Part("n", "The number of parameters.", "integer", expected, tolerance=tol, points=1)


def test_a_wrong_whole_number_is_not_the_right_whole_number():
    r = check_part(integer(), "21")
    assert (r.status, r.feedback, r.rule) == ("wrong", "not the right whole number", "exactly (a whole number)")


def test_a_fraction_for_a_whole_number_says_what_was_expected():
    r = check_part(integer(), "22.5")
    assert (r.status, r.feedback) == ("wrong", "expected a whole number, not 22.5")


def test_an_exact_number_that_differs_is_not_the_exact_value():
    r = check_part(Part("p", "p", "number", 1 / 3, tolerance=EXACT, points=1), "0.3")
    assert (r.status, r.feedback) == ("wrong", "not the exact value")


def test_a_tolerance_is_still_named_where_there_is_one():
    assert check_part(integer(tol=Tolerance("atol", 1)), "25").feedback == "not within the tolerance"
    assert check_part(integer(tol=Tolerance("atol", 1)), "23").status == "correct"
