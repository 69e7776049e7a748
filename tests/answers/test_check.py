"""Checking one answer: tolerance boundaries, shapes, per-entry credit, exact and symbolic
equivalence (against sympy built independently), misconceptions, blank vs wrong."""
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from examprep.answers import PartResult, check_part, parse_answer, parse_tolerance, rule_text
from examprep.answers.check import Expr
from examprep.errors import ParamError
from examprep.problem import EXACT, Misconception, Part, Tolerance


def number(expected, tol=Tolerance("sigfigs", 3), **kw):
    return Part("x", "x", "number", expected, tolerance=tol, points=2, **kw)


# ----------------------------------------------------------------------------- tolerance boundaries

@pytest.mark.parametrize("expected,answer,ok", [
    (2.4567, "2.46", True), (2.4567, "2.457", True), (2.4567, "2.452", True), (2.4567, "2.451", False),
    (2.4567, "2.5", False), (1.0, "1.005", True), (1.0, "0.995", True), (1.0, "1.0051", False),
    (123.4, "123", True), (123.4, "124", False), (-5.5, "−5.5", True), (-5.5, "5.5", False),
    (2e3, "2×10^3", True), (2e3, "2005.1", False),
    # below 1 the absolute floor (±0.001) is looser than 3 significant figures, and says so
    (0.24567, "0.2457", True), (0.24567, "0.2451", True), (0.24567, "0.2446", False), (2e-3, "0.0029", True),
    (1e-4, "0", True), (1e-4, "0.0009", True), (1e-4, "0.0012", False), (0.0, "0.0009", True), (0.0, "0.002", False),
])
def test_significant_figures_with_an_absolute_floor(expected, answer, ok):
    assert (check_part(number(expected), answer).status == "correct") is ok


def test_significant_figures_without_a_floor_are_strict_for_small_values():
    tol = Tolerance("sigfigs", 3, 0.0)
    assert check_part(number(0.24567, tol), "0.2452").status == "correct"
    assert check_part(number(0.24567, tol), "0.2451").status == "wrong"
    assert check_part(number(2e-3, tol), "0.00205").status == "wrong"


@pytest.mark.parametrize("spec,expected,answer,ok", [
    ("rtol:0.01", 200.0, "201.9", True), ("rtol:0.01", 200.0, "202.1", False),
    ("atol:0.05", 1.0, "1.05", True), ("atol:0.05", 1.0, "1.051", False),
    ("decimals:2", 0.12345, "0.12", True), ("decimals:2", 0.12345, "0.13", False),
    ("sigfigs:2", 0.12345, "0.12", True), ("sigfigs:2", 0.12345, "0.13", False),
    ("exact", 1 / 3, "1/3", True), ("exact", 1 / 3, "0.333333", False),
])
def test_overridden_tolerances(spec, expected, answer, ok):
    tol = parse_tolerance(spec)
    assert (check_part(number(expected), answer, tolerance=tol).status == "correct") is ok
    assert (check_part(number(expected, tol), answer).status == "correct") is ok


@given(st.floats(1e-3, 1e6), st.integers(1, 6))
def test_a_correctly_rounded_answer_is_always_accepted(x, sig):
    tol = Tolerance("sigfigs", sig, 0.0)
    rounded = float(f"{x:.{sig}g}")
    assert check_part(number(x, tol), repr(rounded)).status == "correct"


@given(st.floats(1e-2, 1e4), st.integers(1, 5))
def test_an_answer_off_by_more_than_half_a_unit_is_refused(x, sig):
    tol = Tolerance("sigfigs", sig, 0.0)
    unit = 10 ** (math.floor(math.log10(x)) - sig + 1)
    assert check_part(number(x, tol), repr(x + 0.51 * unit)).status != "correct"


def test_rules_are_stated_in_plain_words():
    assert rule_text(number(5.5)) == "to 3 significant figures"
    assert rule_text(number(0.0004)) == "to 3 significant figures (or ±0.001, whichever is looser)"
    assert rule_text(Part("v", "v", "vector", [1.0, 2.0], shape=(2,))) == "each entry to 3 significant figures"
    assert rule_text(Part("n", "n", "integer", 3, tolerance=EXACT)) == "exactly (a whole number)"
    assert rule_text(number(0.5), parse_tolerance("decimals:2")) == "to 2 decimal places"
    assert check_part(number(5.5), "5.5").rule == "to 3 significant figures"


@pytest.mark.parametrize("bad", ["sigfigs", "sigfigs:x", "sigfigs:2.5", "cubits:3", "rtol:-1", "sigfigs:3,foo=1"])
def test_bad_tolerance_specs_are_usage_errors(bad):
    with pytest.raises(ParamError):
        parse_tolerance(bad)


# ----------------------------------------------------------------------------- statuses

def test_blank_is_reported_apart_from_wrong():
    part = number(0.5)
    for raw in (None, "", "   ", []):
        r = check_part(part, raw)
        assert r.status == "blank" and r.score == 0 and r.feedback == "no answer"
    assert check_part(part, "0.7").status == "wrong"


def test_unreadable_answers_say_why_on_one_line():
    r = check_part(number(0.5), "0,5")
    assert r.status == "unparseable" and "decimal point" in r.feedback and "\n" not in r.feedback
    for raw in ("nan", float("nan"), float("inf"), "1/0", True, {"a": 1}):
        r = check_part(number(0.5), raw)
        assert r.status == "unparseable" and r.score == 0, raw


def test_integers_are_exact():
    part = Part("n", "n", "integer", 22, tolerance=EXACT)
    assert check_part(part, "22").status == "correct"
    assert check_part(part, 22).status == "correct"
    assert check_part(part, "22.0").status == "correct"
    assert check_part(part, "21").status == "wrong"
    r = check_part(part, "22.5")
    assert r.status == "wrong" and "whole number" in r.feedback
    assert check_part(Part("n", "n", "integer", 10**9 + 7, tolerance=EXACT), "1000000006").status == "wrong"
    assert check_part(part, "1,024").value == 1024           # grouped thousands (issue 36: "17,010")
    assert "groups thousands in threes" in check_part(part, "1,02").feedback


def test_misconceptions_name_the_mistake_and_give_their_credit():
    part = number(0.5, misconceptions=(Misconception("no-scale", 1.0, "You forgot to divide by √d_k."),
                                       Misconception("half-right", 0.25, "Close: you halved twice.", credit=0.5)))
    r = check_part(part, "1")
    assert (r.status, r.misconception.id, r.score) == ("misconception", "no-scale", 0)
    assert "√d_k" in r.feedback
    r = check_part(part, "0.25")
    assert (r.status, r.score) == ("misconception", 1.0)


def test_wrong_number_feedback_names_sign_percent_and_rounding():
    assert "sign" in check_part(number(0.25), "-0.25").feedback
    assert "percentage" in check_part(number(0.25), "25").feedback
    assert "significant figure" in check_part(number(0.24567), "0.25").feedback


# ----------------------------------------------------------------------------- arrays

def matrix(expected, **kw):
    return Part("m", "m", "matrix", expected, shape=np.shape(expected), points=3, **kw)


def test_shape_is_checked_first():
    part = matrix([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    r = check_part(part, "[[1, 4], [2, 5], [3, 6]]")
    assert r.status == "wrong" and r.score == 0 and "expected 2×3, got 3×2 — transposed?" in r.feedback
    r = check_part(part, "[1, 2, 3, 4, 5, 6]")
    assert "write the rows" in r.feedback
    r = check_part(Part("v", "v", "vector", [1.0, 2.0, 3.0], shape=(3,)), "[1, 2]")
    assert "expected 3 entries, got 2 entries" in r.feedback
    r = check_part(part, "[[1, 2], [3]]")
    assert r.status == "unparseable" and "same number of entries" in r.feedback


def test_square_transposed_and_per_entry_credit():
    part = matrix([[1.0, 2.0], [3.0, 4.0]])
    r = check_part(part, "[1 3; 2 4]")
    assert r.status == "wrong" and "transposed" in r.feedback
    r = check_part(part, "[[1, 2], [3, 5]]")
    assert r.status == "wrong" and r.score == pytest.approx(3 * 3 / 4) and "(2, 2)" in r.feedback
    assert check_part(part, "[1 2; 3 4]").status == "correct"
    assert check_part(part, [[1, 2], [3, 4]]).status == "correct"
    assert check_part(part, ["1 2", "3 4"]).status == "correct"


def test_vector_forms_and_single_rows():
    part = Part("p", "p", "vector", [0.1, 0.2, 0.7], shape=(3,))
    for raw in ("[0.1, 0.2, 0.7]", "(0.1, 0.2, 0.7)", "0.1 0.2 0.7", [0.1, 0.2, 0.7], ["1/10", "1/5", "7/10"],
                "[[0.1, 0.2, 0.7]]", "[0.1; 0.2; 0.7]"):
        assert check_part(part, raw).status == "correct", raw
    single = Part("p", "p", "vector", [0.5], shape=(1,))
    assert check_part(single, "0.5").status == "correct"


def test_masked_minus_infinity_entries():
    part = matrix([[1.0, None], [0.5, 2.0]])
    assert check_part(part, "[[1, -inf], [0.5, 2]]").status == "correct"
    assert check_part(part, "[[1, −∞], [0.5, 2]]").status == "correct"
    assert check_part(matrix([[1.0, 0.0]]), "[[1, -inf]]").status == "unparseable"


# ----------------------------------------------------------------------------- expressions

def expression(expected="p_i - y_i", variables=("p_i", "y_i"), **kw):
    return Part("d", "d", "expression", expected, tolerance=EXACT, exact=expected, variables=variables, **kw)


@pytest.mark.parametrize("answer", ["p_i - y_i", "-(y_i - p_i)", "-y_i + p_i", "p_i*1 - y_i", "(p_i^2 - y_i*p_i)/p_i",
                                    "p_i − y_i", "p_i - y_i*(p_i + 1 - p_i)", "ln(e^(p_i)) - y_i"])
def test_equivalent_expressions_are_correct(answer):
    r = check_part(expression(), answer)
    assert r.status == "correct", r.feedback
    assert isinstance(parse_answer(expression(), answer), Expr)


def test_expression_misconceptions_and_wrong_forms():
    part = expression(misconceptions=(Misconception("y-minus-p", "y_i - p_i", "Sign flipped."),
                                      Misconception("p-only", "p_i", "The target term remains.")))
    assert check_part(part, "-p_i + y_i").misconception.id == "y-minus-p"
    assert check_part(part, "p_i").misconception.id == "p-only"
    r = check_part(part, "p_i + y_i")
    assert r.status == "wrong"
    assert "formula" in check_part(part, "0.3").feedback
    r = check_part(part, "p_iy_i")
    assert r.status == "unparseable" and "p_i*y_i" in r.feedback


def test_exact_constants_need_an_exact_form():
    part = expression("e^2/(1+e^2)", variables=())
    assert check_part(part, "exp(2)/(exp(2) + 1)").status == "correct"
    assert check_part(part, "1/(1 + e^-2)").status == "correct"
    r = check_part(part, "0.881")
    assert r.status == "wrong" and "exact" in r.feedback


@given(st.integers(-5, 5), st.integers(-5, 5), st.integers(1, 4))
def test_symbolic_verdicts_agree_with_sympy(a, b, k):
    # student: a*(p_i + b)^k expanded by sympy (independently of our parser); key: the factored form
    p = sp.Symbol("p_i")
    key = f"{a}*(p_i + ({b}))^{k}"
    typed = str(sp.expand(a * (p + b) ** k)).replace("**", "^")
    part = expression(key, variables=("p_i",))
    assert check_part(part, typed).status == "correct"
    wrong = str(sp.expand(a * (p + b) ** k + 1)).replace("**", "^")
    assert check_part(part, wrong).status == "wrong"


def test_symbolic_check_falls_back_to_numeric_when_sympy_times_out(monkeypatch):
    from examprep.answers import symbolic

    symbolic._sympy_verdict.cache_clear()
    symbolic._equivalent.cache_clear()
    monkeypatch.setattr(symbolic, "_sympy_verdict", lambda *a: None)       # sympy undecided
    r = check_part(expression(), "ln(e^(p_i)) - y_i")
    assert r.status == "correct" and "numerically" in r.feedback


def test_time_limit_interrupts_a_long_computation():
    from examprep.answers.symbolic import _Timeout, time_limit

    with pytest.raises(_Timeout):
        with time_limit(0.05) as armed:
            assert armed
            while True:
                pass


# ----------------------------------------------------------------------------- choices

def test_choices():
    part = Part("c", "c", "choice", "B", tolerance=EXACT, choices=("A", "B", "C"),
                misconceptions=(Misconception("confused", "A", "A is the other convention."),))
    for raw in ("B", "b", " (b) ", "B.", "b) because…"):
        assert check_part(part, raw).status == "correct", raw
    assert check_part(part, "a").misconception.id == "confused"
    assert check_part(part, "C").status == "wrong"
    r = check_part(part, "D")
    assert r.status == "unparseable" and "A, B, C" in r.feedback


def test_part_result_serialises():
    r = check_part(number(0.5), "1/2")
    assert isinstance(r, PartResult)
    d = r.to_dict()
    assert d["status"] == "correct" and d["value"] == 0.5 and d["score"] == 2 and d["rule"]


# ----------------------------------------------------------------------------- robustness

RAW = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**400, 10**400), st.floats(), st.text(max_size=60),
              st.sampled_from(["[1, 2", "1 2; 3", "[[1], [2, 3]]", "e^^2", "√", "0,5", "p_i - y_i", "B", "-inf"])),
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(st.text(max_size=3), children, max_size=2)),
    max_leaves=12)

KINDS = [
    number(0.5, misconceptions=(Misconception("m", 1.0, "x"),)),
    Part("n", "n", "integer", 7, tolerance=EXACT, misconceptions=(Misconception("m", 8, "x"),)),
    Part("v", "v", "vector", [0.1, 0.2], shape=(2,), misconceptions=(Misconception("m", [0.2, 0.1], "x"),)),
    Part("m", "m", "matrix", [[1.0, None], [0.0, 2.0]], shape=(2, 2)),
    expression(misconceptions=(Misconception("m", "y_i - p_i", "x"),)),
    Part("c", "c", "choice", "A", tolerance=EXACT, choices=("A", "B")),
]


@given(RAW, st.sampled_from(range(len(KINDS))))
def test_any_raw_answer_gets_a_verdict_never_an_exception(raw, k):
    r = check_part(KINDS[k], raw, earlier={"x": raw})
    assert r.status in ("correct", "ecf", "misconception", "wrong", "blank", "unparseable")
    assert 0 <= r.score <= r.max_score and r.feedback and "\n" not in r.feedback
    json_ok = r.to_dict()
    import json

    json.dumps(json_ok, allow_nan=False)


# ----------------------------------------------------------------------------- symbolic cost, any thread (issue 14, item 7)

COSTLY = ["p_i - y_i + 1E-10000000", "p_i - y_i + 1E-400", "p_i - y_i + 0." + "0" * 3000 + "1",
          "(p_i + y_i + 1)^1000 - (p_i + y_i + 1)^1000 + p_i - y_i",
          "((p_i + y_i)^30)^30 - ((p_i + y_i)^30)^30 + p_i - y_i",
          "(p_i + 1)*(p_i + 2)*(p_i + 3)*(y_i + 1)*(y_i + 2)*(y_i + 3)*(p_i + y_i)^400 - "
          "(p_i + 1)*(p_i + 2)*(p_i + 3)*(y_i + 1)*(y_i + 2)*(y_i + 3)*(p_i + y_i)^400 + p_i - y_i"]


@pytest.mark.parametrize("answer", COSTLY)
def test_sympy_never_sees_a_costly_answer_in_a_worker_thread(monkeypatch, answer):
    # SIGALRM, the time limit, works only on the main thread: the cost must be bounded before sympy
    from concurrent.futures import ThreadPoolExecutor

    from examprep.answers import symbolic

    seen = []

    def spy(node, symbols):
        seen.append(node)
        return sp.Integer(0)            # cheap: nothing heavy runs even when the bound is missing

    symbolic._sympy_verdict.cache_clear()
    symbolic._equivalent.cache_clear()
    monkeypatch.setattr(symbolic, "to_sympy", spy)
    with ThreadPoolExecutor(1) as pool:
        r = pool.submit(check_part, expression(), answer).result()
    assert seen == [], "sympy was handed a costly answer"
    assert r.status == "correct" and "numerically" in r.feedback, r.feedback


@pytest.mark.parametrize("answer", ["p_i - y_i", "(p_i^2 - y_i*p_i)/p_i", "ln(e^(p_i)) - y_i",
                                    "(p_i + y_i)^60 - (p_i + y_i)^60 + p_i - y_i",
                                    "+".join(["(p_i - y_i)/40"] * 40), "p_i - y_i + 1E-3 - 0.001"])
def test_ordinary_answers_are_within_the_bound_and_proven_symbolically(monkeypatch, answer):
    from examprep.answers import symbolic

    # the proof is what is tested, not the machine's speed: sympy's 30 ms limit (the guard against
    # a slow proof) is lifted, so a loaded machine cannot turn the proof into "checked numerically"
    monkeypatch.setattr(symbolic, "SYMPY_SECONDS", 10.0)
    symbolic._sympy_verdict.cache_clear()
    symbolic._equivalent.cache_clear()
    r = check_part(expression(), answer)
    assert r.status == "correct" and "symbolically" in r.feedback, r.feedback
