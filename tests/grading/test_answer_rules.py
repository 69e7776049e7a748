"""Answer rules a STACK user would trust (issue 28): a bound is exactly the rule the student reads,
exact answers are decided exactly, keys may hold ∞, one exponent rule, products such as 2π read as
written, strict significant figures, and variables whose sign the part declares."""
import math

import pytest

from examprep.answers import check_part
from examprep.problem import Part, Tolerance


def number(expected, tol, **kw):
    return Part("x", "x", "number", expected, tolerance=tol, **kw)


def vector(expected, tol, **kw):
    return Part("v", "v", "vector", expected, tolerance=tol, shape=(len(expected),), **kw)


def accepted(part, raw) -> bool:
    return check_part(part, raw).status == "correct"


# ----------------------------------------------------------------------------- item 1: no hidden tolerance

@pytest.mark.parametrize("tol,expected,answer,ok", [
    # within 0.05 relative error of 1e-33: 1.06e-33, 0 and -1e-33 are outside it
    (Tolerance("rtol", 0.05, 0.0), 1e-33, "1.06e-33", False),
    (Tolerance("rtol", 0.05, 0.0), 1e-33, "0", False),
    (Tolerance("rtol", 0.05, 0.0), 1e-33, "-1e-33", False),
    (Tolerance("rtol", 0.05, 0.0), 1e-33, "1.05e-33", True),
    (Tolerance("rtol", 0.05, 0.0), 1e-33, "0.95e-33", True),
    # 8 significant figures of 5.3910632e-44: half a unit is 5e-52
    (Tolerance("sigfigs", 8, 0.0), 5.3910632e-44, "5.391063e-44", False),
    (Tolerance("sigfigs", 8, 0.0), 5.3910632e-44, "5.39106324e-44", True),
    (Tolerance("atol", 1e-15, 0.0), 2e-12, "1e-12", False),
    (Tolerance("atol", 1e-15, 0.0), 2e-12, "2.000001e-12", True),
])
def test_a_bound_is_exactly_the_rule_the_student_reads(tol, expected, answer, ok):
    assert tol.accepts(float(answer), expected) is ok
    assert accepted(number(expected, tol), answer) is ok
    # the array path applies the same rule, entry by entry
    assert accepted(vector([expected, 1.0], tol), f"[{answer}, 1]") is ok


@pytest.mark.parametrize("tol,expected,answer", [
    # 1.05 - 1 is 0.05000000000000004 in floats: float noise, a few ulps of the expected value
    (Tolerance("rtol", 0.05, 0.0), 1.0, "1.05"), (Tolerance("rtol", 0.05, 0.0), 1.0, "0.95"),
    (Tolerance("rtol", 0.05, 0.0), 1e33, "1.05e33"), (Tolerance("atol", 0.05, 0.0), 1.0, "1.05"),
    (Tolerance("atol", 0.1, 0.0), 1000.0, "1000.1"),
    # a tie half a unit away counts as within the bound (the lenient rule's tie rule)
    (Tolerance("decimals", 2, 0.0), 0.125, "0.13"), (Tolerance("decimals", 2, 0.0), 0.125, "0.12"),
    (Tolerance("sigfigs", 2, 0.0), 10.0, "9.5"), (Tolerance("sigfigs", 3, 0.0), 0.04985, "0.0498"),
])
def test_float_noise_is_forgiven_relative_to_the_expected_scale(tol, expected, answer):
    assert tol.accepts(float(answer), expected)
    assert accepted(number(expected, tol), answer)
    assert accepted(vector([expected], tol), f"[{answer}]")


@pytest.mark.parametrize("tol,expected,answer", [
    (Tolerance("rtol", 0.05, 0.0), 1.0, "1.0500001"), (Tolerance("atol", 0.05, 0.0), 1.0, "1.0500001"),
    (Tolerance("decimals", 2, 0.0), 0.125, "0.1350001"), (Tolerance("sigfigs", 2, 0.0), 10.0, "9.4999999"),
])
def test_just_outside_the_bound_is_refused(tol, expected, answer):
    assert not tol.accepts(float(answer), expected)
    assert not accepted(number(expected, tol), answer)
    assert not accepted(vector([expected], tol), f"[{answer}]")


def test_an_exact_rule_has_no_absolute_slack_either():
    tol = Tolerance("exact", 0, 0)
    assert not accepted(number(1e-15, tol), "0")
    assert not accepted(vector([1e-15], tol), "[0]")
    assert accepted(number(1 / 3, tol), "1/3")
    assert accepted(vector([1 / 3, 1e-15], tol), "[1/3, 10^-15]")


def test_the_description_names_every_part_of_the_bound():
    assert Tolerance("rtol", 0.05, 0.0).describe() == "within 0.05 relative error"
    assert Tolerance("rtol", 0.05, 1e-3).describe() == "within 0.05 relative error plus ±0.001"
    # the floor a relative rule carries is applied as described: 0.0009 from 0 is within ±0.001
    assert Tolerance("rtol", 0.05, 1e-3).accepts(0.0009, 0.0)
    assert not Tolerance("rtol", 0.05, 0.0).accepts(0.0009, 0.0)
