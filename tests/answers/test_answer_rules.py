"""Answer rules a STACK user would trust (issue 28): a bound is exactly the rule the student reads,
exact answers are decided exactly, keys may hold ∞, one exponent rule, products such as 2π read as
written, strict significant figures, and variables whose sign the part declares."""
import math

import pytest
from hypothesis import assume, given, settings, strategies as st

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


# ----------------------------------------------------------------------------- item 3: keys with ∞

def expression(expected, variables=(), **kw):
    return Part("d", "d", "expression", expected, tolerance=Tolerance("exact", 0, 0), exact=expected,
                variables=variables, **kw)


@pytest.mark.parametrize("key,answer,ok", [
    ("inf", "inf", True), ("inf", "∞", True), ("inf", "2*inf", True), ("inf", "-inf", False), ("inf", "1e300", False),
    ("-inf", "-inf", True), ("-inf", "−∞", True), ("-inf", "inf", False), ("2*inf", "inf", True),
    ("2*inf", "-2*inf", False), ("inf", "0", False),
])
def test_a_key_with_infinity_is_graded_in_the_extended_reals(key, answer, ok):
    r = check_part(expression(key), answer)
    assert r.status == ("correct" if ok else "wrong"), (key, answer, r.status, r.feedback)


def test_a_key_with_infinity_grades_a_whole_class(tmp_path):
    import json

    from typer.testing import CliRunner

    from examprep.cli import app
    from examprep.keys import Key, write_key
    from examprep.problem import Problem

    parts = [expression("inf"), Part("e", "e", "expression", "-inf", tolerance=Tolerance("exact", 0, 0), exact="-inf"),
             Part("f", "f", "expression", "2*inf", tolerance=Tolerance("exact", 0, 0), exact="2*inf")]
    problem = Problem("authored", 1, 0, 1, "Limits", {}, [], parts, [])
    write_key(tmp_path / "key.json", Key("limits", [problem]))
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / "ada.json").write_text(json.dumps({"q1": {"d": "∞", "e": "-inf", "f": "inf"}}))
    (subs / "bo.json").write_text(json.dumps({"q1": {"d": "-inf", "e": "inf", "f": "1/0"}}))
    res = CliRunner().invoke(app, ["grade", str(tmp_path / "key.json"), str(subs), "--json", str(tmp_path / "g.json")])
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
    grades = {s["student_id"]: s for s in json.loads((tmp_path / "g.json").read_text())["submissions"]}
    statuses = {sid: [p["status"] for q in s["problems"] for p in q["parts"]] for sid, s in grades.items()}
    assert statuses == {"ada": ["correct"] * 3, "bo": ["wrong", "wrong", "unparseable"]}


# ----------------------------------------------------------------------------- item 2: proven differences stay different

POLY_KEY = "512*(2*x+5)^7*(5*x-1)^5*(70*x+67)"
POLY = ("14336000000*x^13+250265600000*x^12+1862860800000*x^11+7623925760000*x^10+18290677760000*x^9"
        "+24744757985280*x^8+14567212351488*x^7-3267871272960*x^6-6408053107200*x^5+670406720000*x^4"
        "+1179708800000*x^3-429244800000*x^2+56696000000*x-2680000000")


@pytest.mark.parametrize("key,answer,variables,ok", [
    ("99999998/99999999", "99999999/10^8", (), False),
    ("99999998/99999999", "99999998/99999999", (), True),
    (POLY_KEY, POLY, ("x",), True),
    (POLY_KEY, POLY[:-1] + "1", ("x",), False),              # the constant term off by one
    ("(5*sqrt(2)-7)^7", "(19601-13860*sqrt(2))^(7/4)", (), True),   # float cancellation is not a difference
    ("(5*sqrt(2)-7)^7", "(19601-13859*sqrt(2))^(7/4)", (), False),
    ("2*x*10^-9", "10^-9*x", ("x",), False),                # tiny values are compared relatively
])
def test_exact_answers_are_decided_exactly(key, answer, variables, ok):
    r = check_part(expression(key, variables), answer)
    assert r.status == ("correct" if ok else "wrong"), (answer, r.feedback)


def test_a_numeric_agreement_never_overrules_a_proven_difference_in_any_thread(monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from examprep.answers import numeric, symbolic

    # as float evaluation would have it (the two agree to 1e-16): sympy's proof must still win, even
    # off the main thread, where no timer runs and only the cheap expansion is tried
    monkeypatch.setattr(numeric, "verdict", lambda *args, **kw: True)
    symbolic._sympy_verdict.cache_clear()
    symbolic._equivalent.cache_clear()
    with ThreadPoolExecutor(1) as pool:
        for key, answer, variables in [("99999998/99999999", "99999999/10^8", ()), (POLY_KEY, POLY[:-1] + "1", ("x",))]:
            r = pool.submit(check_part, expression(key, variables), answer).result()
            assert r.status == "wrong" and "proven symbolically" in r.feedback, r.feedback
            assert pool.submit(check_part, expression(key, variables), key).result().status == "correct"


@pytest.mark.parametrize("key,answer,variables", [
    ("1/3", "0.333333333333333", ()), ("x^2/3", "0.333333333333333*x^2", ("x",)), ("e^2/(1+e^2)", "0.8807970779778823", ()),
])
def test_decimals_for_an_exact_key_are_accepted_as_an_approximation_and_say_so(key, answer, variables):
    r = check_part(expression(key, variables), answer)
    assert r.status == "correct", r.feedback
    assert "accepted as a decimal approximation" in r.feedback and "1e-8" in r.feedback


@pytest.mark.parametrize("key,answer,variables", [("1/3", "0.3333", ()), ("1/3", "0.3333333", ()),
                                                  ("x^2/3", "0.333*x^2", ("x",)), ("2e-9*x", "1E-9*x", ("x",))])
def test_decimals_outside_the_stated_relative_tolerance_are_wrong(key, answer, variables):
    assert check_part(expression(key, variables), answer).status == "wrong"


def test_decimals_that_are_exactly_the_key_are_proven_equal(monkeypatch):
    from examprep.answers import symbolic

    monkeypatch.setattr(symbolic, "SYMPY_SECONDS", 10.0)     # the proof is tested, not the machine's speed
    symbolic._sympy_verdict.cache_clear()
    symbolic._equivalent.cache_clear()
    r = check_part(expression("1/2"), "0.5")
    assert r.status == "correct" and "symbolically" in r.feedback and "approximation" not in r.feedback
    r = check_part(expression("(2*s^2+6*s-25)/(10*s)", ("s",)), "0.1*(2.0*s^2+6.0*s-25.0)/s")
    assert r.status == "correct" and "symbolically" in r.feedback


# ----------------------------------------------------------------------------- item 4: one exponent rule

@pytest.mark.parametrize("answer", ["(a-x)^6000", "(x-a)^6000", "(4*a-x)^6000", "(x-x)^6000", "x^1001", "(1+x)^-2000",
                                    "2^(3000/2)*x"])
def test_an_exponent_over_1000_is_unreadable_wherever_it_appears(answer):
    r = check_part(expression("(x-a)^2", ("a", "x")), answer)
    assert r.status == "unparseable" and "exponent too large" in r.feedback, r.feedback


@pytest.mark.parametrize("answer,status", [("(2-1)^6000", "correct"), ("(-1)^6000", "correct"), ("0^6000 + 1", "correct"),
                                           ("(1+1)^6000", "unparseable"), ("2^900/2^899", "wrong")])
def test_a_base_of_0_or_1_may_take_any_exponent(answer, status):
    assert check_part(number(1.0, Tolerance("sigfigs", 3)), answer).status == status


def test_a_key_whose_expression_breaks_the_rule_is_refused_when_read(tmp_path):
    import json

    from typer.testing import CliRunner

    from examprep.cli import app
    from examprep.keys import Key, KeyFileError, read_key, write_key
    from examprep.problem import Problem

    ok = Part("c", "c", "expression", "x^2", tolerance=Tolerance("exact", 0, 0), exact="x^2", variables=("x",))
    problems = [Problem("authored", 1, 0, 1, "Powers", {}, [], [ok], []),
                Problem("authored", 1, 0, 1, "Powers", {}, [], [ok, expression("(x-a)^6000", ("a", "x"))], [])]
    write_key(tmp_path / "key.json", Key("powers", problems))
    with pytest.raises(KeyFileError, match=r"q2\.d: the key's expression '\(x-a\)\^6000' cannot be read: exponent too large"):
        read_key(tmp_path / "key.json")
    (tmp_path / "ada.json").write_text(json.dumps({"q1": {"c": "x^2"}}))
    res = CliRunner().invoke(app, ["grade", str(tmp_path / "key.json"), str(tmp_path / "ada.json")])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "q2.d: the key's expression '(x-a)^6000' cannot be read" in res.output


# ----------------------------------------------------------------------------- item 5: 2π is a product

@pytest.mark.parametrize("answer,value", [("2π", 2 * math.pi), ("π/2", math.pi / 2), ("2√2", 2 * math.sqrt(2)),
                                          ("(1+1)π", 2 * math.pi), ("3√(4)", 6.0), ("2e-3", 0.002), ("2E3", 2000.0),
                                          ("2πe", 2 * math.pi * math.e)])
def test_a_number_before_pi_or_a_root_is_a_product_in_a_number_part(answer, value):
    from examprep.answers import parse_answer
    from examprep.answers.tokens import AnswerParseError

    part = number(1.0, Tolerance("sigfigs", 3))
    if value is None:
        with pytest.raises(AnswerParseError):
            parse_answer(part, answer)
        return
    assert parse_answer(part, answer) == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize("answer,entries", [("[π, 2π]", [math.pi, 2 * math.pi]), ("[2π, 3√2]", [2 * math.pi, 3 * math.sqrt(2)]),
                                            ("2π 3π", [2 * math.pi, 3 * math.pi]), ("(π, 2π)", [math.pi, 2 * math.pi])])
def test_a_vector_entry_is_never_split_inside_a_product(answer, entries):
    part = vector(entries, Tolerance("sigfigs", 3))
    r = check_part(part, answer)
    assert r.status == "correct" and r.value == pytest.approx(entries, rel=1e-15), (answer, r.value, r.feedback)


def test_a_matrix_entry_is_never_split_inside_a_product():
    part = Part("m", "m", "matrix", [[math.pi, 2 * math.pi], [3 * math.sqrt(2), 1.0]], tolerance=Tolerance("sigfigs", 3),
                shape=(2, 2))
    for answer in ("[[π, 2π], [3√2, 1]]", "[π 2π; 3√2 1]"):
        assert check_part(part, answer).status == "correct", answer


@pytest.mark.parametrize("key,answer,variables", [("2*pi", "2π", ()), ("2*pi*r", "2πr", ("r",)), ("2*sqrt(2)", "2√2", ()),
                                                  ("3*sqrt(x+1)", "3√(x+1)", ("x",)), ("pi*r^2", "πr^2", ("r",)),
                                                  ("2*sigmoid(x)", "2σ(x)", ("x",)), ("x*pi", "xπ", ("x",))])
def test_a_number_bracket_or_variable_before_pi_or_a_root_is_a_product_in_an_expression(key, answer, variables):
    r = check_part(expression(key, variables), answer)
    assert r.status == "correct", (answer, r.feedback)


# ----------------------------------------------------------------------------- item 7: the sign of a variable

def declared(expected, domains):
    return Part("d", "d", "expression", expected, tolerance=Tolerance("exact", 0, 0), exact=expected,
                variables=tuple(domains), domains=tuple(domains.items()))


def test_variables_are_positive_by_default_and_the_feedback_says_so_where_it_decided():
    r = check_part(expression("x", ("x",)), "sqrt(x^2)")
    assert r.status == "correct" and "taking x as positive" in r.feedback, r.feedback
    r = check_part(expression("abs(x)", ("x",)), "x")
    assert r.status == "correct" and "taking x as positive" in r.feedback, r.feedback
    # where the sign decides nothing, nothing is said
    r = check_part(expression("p_i - y_i", ("p_i", "y_i")), "-(y_i - p_i)")
    assert r.status == "correct" and "positive" not in r.feedback, r.feedback


@pytest.mark.parametrize("key,domain,answer,ok", [
    ("abs(x)", "real", "sqrt(x^2)", True), ("abs(x)", "real", "x", False), ("abs(x)", "real", "-x", False),
    ("x", "real", "sqrt(x^2)", False), ("x", "real", "abs(x)", False),
    ("sqrt(x^2)", "negative", "-x", True), ("sqrt(x^2)", "negative", "x", False), ("x^2", "real", "abs(x)^2", True),
    ("abs(x)", "positive", "x", True),
])
def test_a_part_may_declare_a_variable_real_or_negative(key, domain, answer, ok):
    r = check_part(declared(key, {"x": domain}), answer)
    assert r.status == ("correct" if ok else "wrong"), (key, domain, answer, r.feedback)
    if ok and domain != "positive":
        assert "as positive" not in r.feedback


def test_declared_domains_round_trip_and_old_keys_read_as_before():
    part = declared("abs(x)", {"x": "real", "y": "positive"})
    d = part.to_dict()
    assert d["variables"] == {"x": "real", "y": "positive"}
    assert Part.from_dict(d) == part
    old = expression("p_i - y_i", ("p_i", "y_i"))
    assert old.to_dict()["variables"] == ["p_i", "y_i"]          # unchanged for a part without declarations
    assert Part.from_dict(old.to_dict()) == old
    toml_like = dict(old.to_dict(), variables={"p_i": "real", "y_i": "real"})   # variables = {p_i = "real", …}
    assert Part.from_dict(toml_like).variable_domains == {"p_i": "real", "y_i": "real"}
    from examprep.answers import rule_text

    assert rule_text(part) == "exactly: any equivalent expression in x, y (x real)"
    assert rule_text(old) == "exactly: any equivalent expression in p_i, y_i"


def test_an_unknown_domain_is_refused_when_the_key_is_read(tmp_path):
    import json

    from examprep.keys import Key, KeyFileError, read_key, write_key
    from examprep.problem import Problem

    write_key(tmp_path / "key.json", Key("k", [Problem("authored", 1, 0, 1, "T", {}, [], [expression("x", ("x",))], [])]))
    raw = json.loads((tmp_path / "key.json").read_text())
    raw["problems"][0]["parts"][0]["variables"] = {"x": "complex"}
    (tmp_path / "key.json").write_text(json.dumps(raw))
    with pytest.raises(KeyFileError, match=r"q1\.d: variable 'x': expected a domain positive, real or negative, got 'complex'"):
        read_key(tmp_path / "key.json")


# ----------------------------------------------------------------------------- item 6: strict significant figures

STRICT3 = Tolerance("sigfigs-strict", 3, 0.0)


@pytest.mark.parametrize("expected,n,answer,value_ok,figures_ok", [
    (math.pi, 3, "3.14", True, True), (math.pi, 3, "3.141", True, False), (math.pi, 3, "3.15", False, True),
    (math.pi, 3, "3.1", False, False), (7.0, 3, "7.00", True, True), (7.0, 3, "7.000", True, False),
    (7.0, 3, "7", True, False), (10.0, 2, "9.8", True, True), (10.0, 2, "9.5", False, True),
    (10.0, 2, "10", True, True), (10.0, 2, "10.0", True, False), (10.0, 1, "9.5", True, False),
    (0.04985, 3, "0.0499", True, True), (0.04985, 3, "0.0498", False, True), (0.04975, 3, "0.0498", True, True),
    (0.04975, 3, "0.0497", False, True), (0.138, 3, "1.38*10^-1", True, True), (0.138, 3, "138×10⁻³", True, True),
    (0.138, 3, "1.38e-1", True, True), (-0.0499, 1, "-(0.05)", True, True), (999.0, 2, "1000", True, True),
    (999.0, 2, "1E3", True, False), (178.35, 3, "180", False, True), (1 / 3, 3, "1/3", True, False),
    (0.0, 2, "0.00", True, True), (0.0, 2, "0.0", True, False), (5.3910632e-44, 8, "5.3910632e-44", True, True),
])
def test_strict_significant_figures_check_the_value_and_the_figures_written(expected, n, answer, value_ok, figures_ok):
    r = check_part(number(expected, Tolerance("sigfigs-strict", n, 0.0)), answer)
    assert r.status == ("correct" if value_ok and figures_ok else "wrong"), (answer, r.feedback)
    if not figures_ok:
        assert "figures" in r.feedback, r.feedback
    if not value_ok:
        assert "value" in r.feedback, r.feedback
    if value_ok and not figures_ok:
        assert "value is right" in r.feedback, r.feedback


def test_the_default_stays_lenient():
    assert accepted(number(math.pi, Tolerance("sigfigs", 3)), "3.141")
    assert accepted(number(7.0, Tolerance("sigfigs", 3)), "7")
    assert accepted(number(10.0, Tolerance("sigfigs", 2, 0.0)), "9.5")


def test_strict_figures_need_the_text_as_written():
    r = check_part(number(3.14, STRICT3), 3.14)            # a TOML or JSON number has lost its trailing zeros
    assert r.status == "unparseable" and 'in quotes' in r.feedback, r.feedback
    assert check_part(number(178.35, STRICT3), 178).status == "correct"     # an integer is written as it is
    assert check_part(number(3.14, STRICT3), "").status == "blank"


def test_strict_figures_entry_by_entry():
    part = vector([0.25, 0.5, 0.125], STRICT3)
    assert accepted(part, "[0.250, 0.500, 0.125]")
    r = check_part(part, "[0.25, 0.500, 0.126]")
    assert r.status == "wrong" and r.score == pytest.approx(1 / 3)
    assert "entry 1: figures" in r.feedback and "entry 3: value" in r.feedback, r.feedback
    assert check_part(part, ["0.250", "0.500", "0.125"]).status == "correct"


def test_strict_figures_still_name_a_misconception_by_its_value():
    from examprep.problem import Misconception

    part = number(2.0, STRICT3, misconceptions=(Misconception("doubled", 4.0, "Counted twice."),))
    assert check_part(part, "4.00").misconception.id == "doubled"
    assert check_part(part, "4").misconception.id == "doubled"


def test_a_strict_tolerance_from_text_a_key_and_the_description():
    from examprep.answers import parse_tolerance, rule_text

    tol = parse_tolerance("sigfigs-strict:3")
    assert tol == STRICT3 and Tolerance.from_dict(tol.to_dict()) == tol
    assert tol.describe() == "to 3 significant figures, written with exactly 3"
    assert rule_text(vector([0.25], tol)) == "each entry to 3 significant figures, written with exactly 3"
    assert rule_text(number(0.25, Tolerance("sigfigs", 3))).endswith("(or ±0.001, whichever is looser)")


def test_the_self_test_types_a_strict_answer_with_its_figures():
    from examprep.grading import self_test
    from examprep.keys import Key
    from examprep.problem import Misconception, Problem

    parts = [number(0.04985, STRICT3, misconceptions=(Misconception("m", 0.0997, "Doubled."),)),
             vector([0.25, 10.0, -0.0012345], STRICT3), number(9.96, STRICT3)]
    checks, issues = self_test(Key("k", [Problem("authored", 1, 0, 1, "T", {}, [], parts, [])]))
    assert issues == [] and checks >= 4


def test_grade_with_a_strict_tolerance_from_the_command_line(tmp_path):
    import json

    from typer.testing import CliRunner

    from examprep.cli import app
    from examprep.keys import read_key

    runner = CliRunner()
    res = runner.invoke(app, ["generate", "gru-step", "--seed", "7", "--key", str(tmp_path / "key.json")])
    assert res.exit_code == 0, res.output
    part = read_key(tmp_path / "key.json").problems[0].parts[0]
    three = f"{part.expected:#.3g}"                       # exactly 3 figures, the right value
    (tmp_path / "ada.json").write_text(json.dumps({"q1": {part.id: three + "0"}}))      # 4 figures
    (tmp_path / "bo.json").write_text(json.dumps({"q1": {part.id: three}}))
    out = tmp_path / "g.json"
    res = runner.invoke(app, ["grade", str(tmp_path / "key.json"), str(tmp_path / "ada.json"), str(tmp_path / "bo.json"),
                              "--tolerance", f"{part.id}=sigfigs-strict:3", "--json", str(out)])
    assert res.exit_code == 0, res.output
    first = {s["student_id"]: s["problems"][0]["parts"][0] for s in json.loads(out.read_text())["submissions"]}
    assert first["bo"]["status"] == "correct"
    assert first["ada"]["status"] == "wrong" and "written with 4 significant figures; give exactly 3" in first["ada"]["feedback"]
    assert first["ada"]["rule"] == "to 3 significant figures, written with exactly 3"
    res = runner.invoke(app, ["grade", str(tmp_path / "key.json"), str(tmp_path / "ada.json"), "--json", str(out),
                              "--force"])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["submissions"][0]["problems"][0]["parts"][0]["status"] == "correct"   # lenient default
    res = runner.invoke(app, ["grade", str(tmp_path / "key.json"), str(tmp_path / "ada.json"), "--tolerance",
                              "sigfigs-strict:3,atol=0.001"])
    assert res.exit_code == 2 and "no absolute floor" in res.output


QUESTION_FILE = '''version = 1

[lectures]
"notes.txt" = "Lecture notes"

[[question]]
id = "ratio"
topic = "rnn"
kind = "number"
question = "The GRU's parameter count as a fraction of the LSTM's?"
answer = 0.75
tolerance = {tolerance}
explanation = "3 blocks against 4."
source = {{ file = "notes.txt", section = "GRU", quote = "three blocks" }}
'''


@pytest.mark.parametrize("written", ['{ rule = "sigfigs-strict", value = 3 }', '"sigfigs-strict:3"'])
def test_a_question_file_may_ask_for_strict_figures(tmp_path, written):
    from examprep.quiz import concept_problem, load_concepts

    (tmp_path / "q.toml").write_text(QUESTION_FILE.format(tolerance=written))
    part = concept_problem(load_concepts(tmp_path / "q.toml").questions["ratio"], seed=1).parts[0]
    assert part.tolerance == Tolerance("sigfigs-strict", 3, 0.0)
    assert check_part(part, "0.750").status == "correct"
    assert check_part(part, "0.75").status == "wrong"


def test_a_question_file_with_a_bad_tolerance_names_the_question(tmp_path):
    from examprep.quiz import ConceptBankError, load_concepts

    (tmp_path / "q.toml").write_text(QUESTION_FILE.format(tolerance='"sigfigs-strict:x"'))
    with pytest.raises(ConceptBankError, match=r"question ratio: 'tolerance'.*sigfigs-strict needs a number"):
        load_concepts(tmp_path / "q.toml")


RECIPE = '''[sheet]
title = "Quiz"
tolerance = "sigfigs-strict:3"

[[problem]]
topic = "gru-step"

[[problem]]
topic = "softmax-cross-entropy"
tolerance = "sigfigs:2"
'''


def test_a_sheet_recipe_may_set_the_tolerance_of_its_numeric_parts(tmp_path):
    from examprep import generators, sheets

    (tmp_path / "quiz.toml").write_text(RECIPE)
    recipe = sheets.load_recipe(str(tmp_path / "quiz.toml"))
    gru, softmax = sheets.build_problems(recipe, 7)
    plain = [generators.build("gru-step", 7, 1), generators.build("softmax-cross-entropy", 8, 1)]
    for problem, same, want in ((gru, plain[0], Tolerance("sigfigs-strict", 3)), (softmax, plain[1], Tolerance("sigfigs", 2))):
        assert problem.params == same.params and [p.expected for p in problem.parts] == [p.expected for p in same.parts]
        for part, before in zip(problem.parts, same.parts):
            numeric = part.kind in ("number", "vector", "matrix") and before.tolerance.rule != "exact"
            assert part.tolerance == (want if numeric else before.tolerance), (problem.generator, part.id)
    assert any(p.kind == "expression" for p in softmax.parts)        # untouched: exact by its nature
    printed = " ".join(sheets.instructions(sheets.build_sheet(recipe, 7)))
    assert "to 3 significant figures, written with exactly 3" in printed and "write a decimal with exactly" in printed
    assert "is always accepted" not in printed                        # 1/4 has no figures: it is not


@pytest.mark.parametrize("line,value,message", [
    (3, '"sigfigs-strict:x"', "tolerance 'sigfigs-strict:x': sigfigs-strict needs a number"),
    (3, "3", "tolerance: expected a string"),
])
def test_a_bad_tolerance_in_a_recipe_names_the_file_and_line(tmp_path, line, value, message):
    from examprep import sheets
    from examprep.sheets import SheetError

    (tmp_path / "quiz.toml").write_text(RECIPE.replace('"sigfigs-strict:3"', value))
    with pytest.raises(SheetError) as info:
        sheets.load_recipe(str(tmp_path / "quiz.toml"))
    assert str(info.value).startswith(f"{tmp_path / 'quiz.toml'}:{line}: ") and message in str(info.value), str(info.value)


@pytest.mark.parametrize("text,figures", [("0", (1, 1)), ("0.0", (1, 1)), ("0.00", (2, 2)), ("00.00", (2, 2)), ("0.0001", (1, 1)),
                                          ("0.0010", (2, 2)), ("100.0", (4, 4)), ("100.", (3, 3)), ("00120", (2, 3)),
                                          ("2000", (1, 4)), ("2001", (4, 4)), ("-12.00", (4, 4)), ("(-12.00)", (4, 4)),
                                          ("-(12.000)", (5, 5)), ("4.320e-3", (4, 4)), ("0.020e3", (2, 2)), ("1.00E3", (3, 3)),
                                          ("10.0e1", (3, 3)), ("-138*10^-3", (3, 3)), ("1.38×10⁻¹", (3, 3)), ("10^-3", (1, 1)),
                                          ("1/3", None), ("pi", None), ("2*3.0", None)])
def test_figures_are_counted_as_written(text, figures):
    # the conventions of STACK's numbers fixtures (tests/fixtures/numbersfixtures.class.php)
    from examprep.answers.figures import written
    from examprep.answers.parse import parse_text

    found = written(parse_text(text))
    assert (found[0] if found else None) == figures


def test_how_a_correct_answer_was_accepted_is_shown_in_every_report(tmp_path):
    import json

    from typer.testing import CliRunner

    from examprep.cli import app
    from examprep.keys import Key, write_key
    from examprep.problem import Problem

    parts = [expression("1/3"),
             Part("r", "r", "expression", "x", tolerance=Tolerance("exact", 0, 0), exact="x", variables=("x",))]
    write_key(tmp_path / "key.json", Key("k", [Problem("authored", 1, 0, 1, "Exact", {}, [], parts, [])]))
    (tmp_path / "ada.json").write_text(json.dumps({"q1": {"d": "0.333333333333333", "r": "sqrt(x^2)"}}))
    res = CliRunner().invoke(app, ["grade", str(tmp_path / "key.json"), str(tmp_path / "ada.json"), "--report",
                                   str(tmp_path / "rep"), "--gradescope", str(tmp_path / "gs")], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    flat = " ".join(res.stdout.split()).replace("│ ", "")
    assert "accepted as a decimal approximation" in flat and "taking x as positive" in flat, res.stdout
    report = next((tmp_path / "rep").iterdir()).read_text()
    assert "accepted as a decimal approximation" in report and "taking x as positive" in report
    outputs = " ".join(t["output"] for t in json.loads((tmp_path / "gs" / "results.json").read_text())["tests"])
    assert "accepted as a decimal approximation" in outputs and "taking x as positive" in outputs


def test_an_exact_fraction_close_to_the_key_is_not_told_to_be_exact():
    r = check_part(expression("1/3"), "99999999/300000000")
    assert r.status == "wrong" and r.feedback.startswith("close to the answer, but a different number"), r.feedback
    r = check_part(expression("1/3"), "0.3334")
    assert r.status == "wrong" and "exact value is expected" in r.feedback, r.feedback


def test_the_time_limit_survives_an_alarm_that_python_drops(monkeypatch):
    # an exception raised inside __del__ (or a garbage-collector callback) is dropped by Python:
    # the first alarm lands there, and the limit must still stop the body after it
    import sys
    import time

    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: None)    # drop it quietly, as Python does

    from examprep.answers.symbolic import _Timeout, time_limit

    class Slow:
        def __del__(self):
            end = time.perf_counter() + 0.05
            while time.perf_counter() < end:
                pass

    finished = False
    with pytest.raises(_Timeout):
        with time_limit(0.01) as armed:
            assert armed
            Slow()                       # its __del__ runs here and outlasts the limit
            for _ in range(50_000_000):  # bounded, so that a lost limit fails the test instead of hanging it
                pass
            finished = True
    assert not finished


@settings(max_examples=200, deadline=None)
@given(st.floats(1e-6, 1e6), st.integers(1, 8))
def test_an_answer_printed_with_its_figures_passes_the_strict_rule(x, n):
    # Python's own float formatting is the reference: n significant figures, correctly rounded
    digits = repr(x).split("e")[0].replace(".", "").lstrip("0")
    assume(not (len(digits) > n and digits[n] == "5" and set(digits[n + 1:]) <= {"0"}))   # a tie: half-up decides
    part = number(x, Tolerance("sigfigs-strict", n))
    assert check_part(part, f"{x:.{n - 1}e}").status == "correct"
    r = check_part(part, f"{x:.{n}e}")                     # one figure too many
    assert r.status == "wrong" and "figures" in r.feedback


def test_a_key_with_a_nan_answer_is_refused_and_one_with_infinity_is_read(tmp_path):
    import json

    from examprep.keys import Key, KeyFileError, read_key, write_key
    from examprep.problem import Problem

    parts = [number(1.0, Tolerance("sigfigs", 3)), vector([1.0, 2.0], Tolerance("sigfigs", 3))]
    write_key(tmp_path / "key.json", Key("k", [Problem("authored", 1, 0, 1, "T", {}, [], parts, [])]))
    raw = json.loads((tmp_path / "key.json").read_text())
    raw["problems"][0]["parts"][1]["expected"] = [1.0, float("inf")]
    (tmp_path / "key.json").write_text(json.dumps(raw))              # Python writes Infinity, as JSON readers take it
    key = read_key(tmp_path / "key.json")
    assert check_part(key.problems[0].parts[1], "[1, inf]").status == "correct"
    raw["problems"][0]["parts"][0]["expected"] = float("nan")
    (tmp_path / "key.json").write_text(json.dumps(raw))
    with pytest.raises(KeyFileError, match=r"q1\.x: the key's expected value is NaN"):
        read_key(tmp_path / "key.json")
