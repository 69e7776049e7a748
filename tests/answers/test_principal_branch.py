"""Exact answers on the principal branch (issue 36, item 5): names are positive by default, but that
does not make x − 3 positive. sqrt((x-3)*(x-5)) and sqrt(x-3)*sqrt(x-5) agree wherever both are
real (x ≥ 5) and were graded equivalent; for x < 3 the first is real and the second's principal
value is its negative. Each pair here is checked against cmath's principal values first (an
independent reference), then against examprep's verdict."""
import cmath

import pytest

from examprep.answers import check_part, numeric
from examprep.answers.parse import parse_text
from examprep.answers.symbolic import equivalent
from examprep.problem import Part, Tolerance


def expression(key, domain="positive"):
    return Part("d", "d", "expression", key, tolerance=Tolerance("exact", 0, 0), exact=key, variables=("x",),
                domains=(("x", domain),))


sqrt, log = cmath.sqrt, cmath.log            # principal values, independent of examprep's evaluator


def cbrt(z):
    return cmath.exp(cmath.log(z) / 3)


# key, answer, each by cmath, a point (x > 0, the default) where one side is real and they differ,
# and one where both are real and agree
DIFFER = [
    ("sqrt(x-3)*sqrt(x-5)", "sqrt((x-3)*(x-5))", lambda x: sqrt(x - 3) * sqrt(x - 5), lambda x: sqrt((x - 3) * (x - 5)),
     1.0, 7.0),
    ("sqrt((x-3)*(x-5))", "sqrt(x-3)*sqrt(x-5)", lambda x: sqrt((x - 3) * (x - 5)), lambda x: sqrt(x - 3) * sqrt(x - 5),
     1.0, 7.0),
    ("log(x-3) + log(x-5)", "log((x-3)*(x-5))", lambda x: log(x - 3) + log(x - 5), lambda x: log((x - 3) * (x - 5)),
     1.0, 7.0),
    ("(x-3)^(1/3)*(x-5)^(1/3)", "((x-3)*(x-5))^(1/3)", lambda x: cbrt(x - 3) * cbrt(x - 5), lambda x: cbrt((x - 3) * (x - 5)),
     1.0, 7.0),
    # they differ only for x > 5, beyond the sample points in (0.1, 0.9) where both are real and
    # agree: found by sampling both sides of the radicand's root x = 5
    ("sqrt((3-x)*(5-x))", "sqrt(3-x)*sqrt(5-x)", lambda x: sqrt((3 - x) * (5 - x)), lambda x: sqrt(3 - x) * sqrt(5 - x),
     6.0, 1.0),
]


# quotients and differences (issue 36 attack, 3): equal wherever either side is real, but the
# key is real for x < 3 where the answer is not, so their real domains differ and they must be the
# same function of principal values; for 3 < x < 5 (neither real) they are −i against +i, and
# log's −iπ against +iπ. Found beside the pole x = 5 of the combined radicand.
QUOTIENTS = [
    ("sqrt((x-3)/(x-5))", "sqrt(x-3)/sqrt(x-5)", lambda x: sqrt((x - 3) / (x - 5)), lambda x: sqrt(x - 3) / sqrt(x - 5)),
    ("log((x-3)/(x-5))", "log(x-3)-log(x-5)", lambda x: log((x - 3) / (x - 5)), lambda x: log(x - 3) - log(x - 5)),
]


@pytest.mark.parametrize("key,answer,key_value,answer_value", QUOTIENTS, ids=[r[1] for r in QUOTIENTS])
def test_a_quotient_real_on_a_wider_domain_differs_where_neither_side_is_real(key, answer, key_value, answer_value):
    # (real x: complex(4.0) - 5 carries a −0 imaginary part, which puts cmath below the cut)
    assert abs(key_value(4.0) - answer_value(4.0)) > 1                                # 3 < x < 5
    for x in (1.0, 7.0):                                                              # equal where either is real
        assert key_value(x) == pytest.approx(answer_value(x))
    for k, a in ((key, answer), (answer, key)):
        r = check_part(expression(k), a)
        assert (r.status, r.feedback) == ("wrong", "not equivalent to the answer"), (k, a, r.feedback)


def test_a_pair_real_only_beyond_the_points_tried_is_compared_beside_the_roots():
    # real together only for x ≥ 50, beyond every sample point: "defined at no common point tried"
    # was false; beside the root x = 50 both are real and differ in sign (cmath: x = 55)
    key, answer = "sqrt(x-30)*sqrt(x-50)", "-sqrt((x-30)*(x-50))"
    assert (sqrt(55 - 30) * sqrt(55 - 50)).real > 0 > (-sqrt((55 - 30) * (55 - 50))).real
    r = check_part(expression(key), answer)
    assert (r.status, r.feedback) == ("wrong", "not equivalent to the answer"), r.feedback
    # and the unsigned pair: equal for x ≥ 50, −√ against +√ for x < 30 (cmath: x = 1)
    assert abs(sqrt(1 - 30) * sqrt(1 - 50) - sqrt((1 - 30) * (1 - 50))) > 1
    r = check_part(expression(key), "sqrt((x-30)*(x-50))")
    assert (r.status, r.feedback) == ("wrong", "not equivalent to the answer"), r.feedback
    assert check_part(expression(key), "sqrt(x-50)*sqrt(x-30)").status == "correct"


@pytest.mark.parametrize("key,answer,key_value,answer_value,differ,agree", DIFFER, ids=[r[1] for r in DIFFER])
def test_a_pair_equal_where_both_are_real_differs_where_one_is_not(key, answer, key_value, answer_value, differ, agree):
    assert abs(key_value(complex(differ)) - answer_value(complex(differ))) > 1, (key, answer)
    assert key_value(complex(agree)) == pytest.approx(answer_value(complex(agree)))
    r = check_part(expression(key), answer)
    assert (r.status, r.score) == ("wrong", 0), (key, answer, r.feedback)


# equivalent on the principal branch wherever one side is real, or real nowhere the other is
SAME = [
    ("x-3", "sqrt(x-3)^2"),                          # the principal square root squared is its radicand
    ("sqrt(1/x)", "1/sqrt(x)"),                      # x > 0: the radicand is never negative
    ("2+sqrt(12+4*x)", "2+2*sqrt(3+x)"),
    ("sqrt(x^2+x)", "sqrt(x)*sqrt(x+1)"),
    ("x*sqrt(x)", "x^(3/2)"),
    ("-log((1-x)/(x+1))", "log((x+1)/(1-x))"),       # the same real domain |x| < 1: x > 1 is not compared
    ("sqrt((x-5)/(x-3))", "sqrt(x-5)/sqrt(x-3)"),    # i√ against i√ for 3 < x < 5
    ("log(abs(x-3))+log(abs(x+3))", "log(abs(x^2-9))"),
    ("sqrt(x-3)*sqrt(x-5)", "sqrt(x-3)*sqrt(x-5)"),
]


@pytest.mark.parametrize("key,answer", SAME)
def test_pairs_equal_on_the_principal_branch_stay_correct(key, answer):
    r = check_part(expression(key), answer)
    assert r.status == "correct", (key, answer, r.feedback)


def test_an_argument_on_the_cut_up_to_rounding_tells_nothing():
    # just above or below the negative axis, the principal root flips sign: rounding must not decide
    assert cmath.sqrt(complex(-2.0, 1e-17)).imag > 0 > cmath.sqrt(complex(-2.0, -1e-17)).imag
    for z in (complex(-2.0, -1e-17), complex(-2.0, 1e-17), 1e-12, complex(1e-12, 1e-12)):
        with pytest.raises(numeric._NoValue):
            numeric._off_the_cut(z, numeric._Floats, [2.0])
    for z in (-2.0, complex(-2.0, 1e-3), complex(2.0, -1e-17), 0.5):          # clearly on one side
        numeric._off_the_cut(z, numeric._Floats, [2.0])


def test_the_names_keep_their_domain_and_a_declared_real_name_is_compared_on_both_sides():
    # the default stays: sqrt(x^2) is x for a positive x; declared real, both signs are sampled
    assert check_part(expression("x"), "sqrt(x^2)").status == "correct"
    assert check_part(expression("x", "real"), "sqrt(x^2)").status == "wrong"
    key = parse_text("sqrt(x-3)*sqrt(x-5)", variables=("x",), scalar=True)
    answer = parse_text("sqrt((x-3)*(x-5))", variables=("x",), scalar=True)
    assert equivalent(answer, key, ("x",), {"x": "real"}) == (False, "numerically")
