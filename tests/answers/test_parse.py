"""The answer parser: every natural form students type, hostile input refused by the size rules,
and properties checked against sympy's exact arithmetic (an independent evaluator)."""
import math
import string
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, strategies as st

from examprep.answers import AnswerParseError
from examprep.answers.evaluate import evaluate, evaluate_all, unparse
from examprep.answers.parse import parse_text
from examprep.answers.tokens import MAX_CHARS

E = math.e
NATURAL = [
    ("0.245", 0.245), ("-0.5", -0.5), ("−0.5", -0.5), ("–0.5", -0.5), (".5", 0.5), ("5.", 5.0), ("2e-3", 0.002),
    ("2E-3", 0.002), ("2×10^-3", 0.002), ("2 × 10^-3", 0.002), ("2·10⁻³", 0.002), ("2*10**-3", 0.002),
    ("1/3", 1 / 3), ("-1/3", -1 / 3), ("50%", 0.5), ("12.5 %", 0.125), ("e^2/(1+e^2)", E**2 / (1 + E**2)),
    ("exp(2)", E**2), ("sqrt(2)/2", math.sqrt(2) / 2), ("√2/2", math.sqrt(2) / 2), ("√(2)/2", math.sqrt(2) / 2),
    ("ln 2", math.log(2)), ("ln(2)", math.log(2)), ("log(2)", math.log(2)), ("log 2", math.log(2)),
    ("log10(100)", 2.0), ("log2(8)", 3.0), ("e", E), ("2e^2", 2 * E**2), ("2sqrt(2)", 2 * math.sqrt(2)),
    ("e^(-1/2)", math.exp(-0.5)), ("e^-2", math.exp(-2)), ("-2^2", -4.0), ("(-2)^2", 4.0), ("2^3^2", 2.0**9),
    ("ln 2^3", math.log(8)), ("½", 0.5), ("1/(1+e^-1)", 1 / (1 + math.exp(-1))), ("sigmoid(0)", 0.5),
    ("σ(0)", 0.5), ("tanh(0.5)", math.tanh(0.5)), ("pi/4", math.pi / 4), ("π/4", math.pi / 4),
    ("(2 ln 2)", 2 * math.log(2)), ("3(1+e)", 3 * (1 + E)), ("2*ln 2", 2 * math.log(2)), ("  42  ", 42.0),
    ("e^2/(e^2 + 1 + e)", E**2 / (E**2 + 1 + E)), ("(1 + 2e)/(e^2 + 1 + e)", (1 + 2 * E) / (E**2 + 1 + E)),
    ("1.5e+2", 150.0), ("０.５", 0.5),
]


@pytest.mark.parametrize("text,value", NATURAL, ids=[t for t, _ in NATURAL])
def test_natural_scalar_forms(text, value):
    node = parse_text(text, scalar=True)
    assert not isinstance(node, list)
    assert evaluate(node) == pytest.approx(value, rel=1e-12)


LISTS = [
    ("[0.1, 0.2, 0.7]", [0.1, 0.2, 0.7]), ("(0.1, 0.2, 0.7)", [0.1, 0.2, 0.7]), ("0.1 0.2 0.7", [0.1, 0.2, 0.7]),
    ("0.1, 0.2, 0.7", [0.1, 0.2, 0.7]), ("[0.1,0.2,0.7]", [0.1, 0.2, 0.7]), ("[1 -2 3]", [1, -2, 3]),
    ("[1 - 2, 3]", [-1, 3]), ("[−1, −2]", [-1, -2]), ("[1/3, 2/3]", [1 / 3, 2 / 3]), ("[ln 2, ln 3]", [math.log(2), math.log(3)]),
    ("[ln 2 ln 3]", [math.log(2), math.log(3)]), ("[1, 2, 3,]", [1, 2, 3]),
    ("[[1, 2], [3, 4]]", [[1, 2], [3, 4]]), ("[1 2; 3 4]", [[1, 2], [3, 4]]), ("1 2; 3 4", [[1, 2], [3, 4]]),
    ("[1, 2; 3, 4]", [[1, 2], [3, 4]]), ("[[1,2],[3,4]]", [[1, 2], [3, 4]]),
    ("[[e^2/(e^2+1), 1/(e^2+1)]]", [[E**2 / (E**2 + 1), 1 / (E**2 + 1)]]),
    ("[1 2; 3 4;]", [[1, 2], [3, 4]]),
]


@pytest.mark.parametrize("text,value", LISTS, ids=[t for t, _ in LISTS])
def test_vectors_and_matrices(text, value):
    got = evaluate_all(parse_text(text))
    assert got == pytest.approx(value, rel=1e-12) if not isinstance(value[0], list) else \
        [pytest.approx(r, rel=1e-12) for r in value] == got


def test_space_separates_entries_but_not_around_an_operator():
    assert evaluate_all(parse_text("1 -2")) == [1.0, -2.0]
    assert evaluate_all(parse_text("1 - 2")) == -1.0
    assert evaluate_all(parse_text("1-2")) == -1.0


@pytest.mark.parametrize("text,hint", [
    ("0,5", "use a decimal point, not a comma: 0.5"),
    ("-0,25", "0.25"),
    ("2 ln 2", "write a product with *"),
])
def test_scalar_refusals_carry_a_hint(text, hint):
    from examprep.answers import parse_answer
    from examprep.problem import Part

    with pytest.raises(AnswerParseError) as err:
        parse_answer(Part("x", "x", "number", 0.5), text)
    assert hint in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("text", ["[0,5, 0,3]", "0,5 0,3", "[0,1 0,2 0,7]"])
def test_decimal_commas_in_lists_are_never_silently_read(text):
    from examprep.answers import check_part
    from examprep.problem import Part

    part = Part("p", "p", "vector", [0.5, 0.3], shape=(2,))
    r = check_part(part, text)
    assert r.status in ("unparseable", "wrong") and r.score == 0
    assert "decimal point" in r.feedback


HOSTILE = [
    "__import__('os').system('echo hacked')", "eval('1')", "exec('x=1')", "().__class__.__bases__[0]",
    "lambda: 1", "open('/etc/passwd')", "1; import os", "x = 1", "a.b", "1 if 1 else 2", "[x for x in y]",
    "{'a': 1}", "f'{1}'", "'1'", "\"1\"", "1 @ 2", "~1", "1 // 2", "1 < 2", "2!", "|x|", "\\frac{1}{2}", "$1$",
    "9^9^9^9", "10^1000", "2^2^2^2^2", "e^1000", "exp(1000)", "10^400 / 10^399", "(", ")", "[[1, 2]", "[]", "()",
    "1 +", "*2", "", "   ", "nan", "NaN", "1/0", "0^-1", "ln(-1)", "sqrt(-1)", "(-8)^(1/3)", "1e999",
    "(" * 60 + "1" + ")" * 60, "-" * 60 + "1", "[" * 60 + "1" + "]" * 60, "1+" * 400 + "1", "1" * (MAX_CHARS + 1),
    "x" * 5000, "\x00\x01", "１２３ａ", "٣", "1\u200b2", "e2", "pi2", "log(2, 3)", "sqrt", "ln",
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_input_is_refused_with_our_error(text):
    try:
        value = evaluate_all(parse_text(text, scalar=True))
    except AnswerParseError as err:
        msg = str(err)
        assert msg and "\n" not in msg and len(msg) < 300
        return
    # the few that parse are plain arithmetic with a finite or infinite float value
    assert isinstance(value, (float, list))


@pytest.mark.parametrize("text", ["9^9^9^9", "2^2^2^2^2", "10^(10^10)", "e^e^e^e^e"])
def test_exponent_towers_are_refused_by_the_size_rule(text):
    with pytest.raises(AnswerParseError, match="exponent too large|number too large"):
        evaluate(parse_text(text))


def test_ten_kilobytes_and_deep_nesting_are_refused_before_parsing():
    with pytest.raises(AnswerParseError, match="too long"):
        parse_text("1+" * 5000 + "1")
    with pytest.raises(AnswerParseError, match="nested too deeply"):
        parse_text("(" * 100 + "1" + ")" * 100)
    with pytest.raises(AnswerParseError, match="too long"):
        parse_text("1+" * 1000 + "1")


def test_student_text_is_never_executed_nor_given_to_sympify(tmp_path, monkeypatch):
    import builtins

    from examprep.answers import check_part
    from examprep.problem import EXACT, Part

    def forbidden(*a, **k):
        raise AssertionError("code execution attempted")

    import sys

    import sympy.parsing.sympy_parser

    part = Part("d", "d", "expression", "p_i - y_i", tolerance=EXACT, exact="p_i - y_i", variables=("p_i", "y_i"))
    check_part(part, "p_i - 2*y_i + y_i")       # sympy's own lazy imports happen before the traps
    core = sys.modules["sympy.core.sympify"]
    real = core.sympify

    def sympify_no_text(a, *args, **kwargs):    # sympy converts numbers internally; text is what evals
        if isinstance(a, str):
            forbidden()
        return real(a, *args, **kwargs)

    monkeypatch.setattr(core, "sympify", sympify_no_text)
    monkeypatch.setattr(sp, "sympify", sympify_no_text)
    monkeypatch.setattr(sympy.parsing.sympy_parser, "parse_expr", forbidden)
    monkeypatch.setattr(builtins, "eval", forbidden)
    marker = tmp_path / "pwned"
    for text in [f"__import__('os').system('touch {marker}')", "p_i - y_i", "-(y_i - p_i)", "p_i + 0*y_i - y_i"]:
        check_part(part, text)
    assert check_part(part, "-(y_i - p_i)").status == "correct"
    assert not marker.exists()


# ----------------------------------------------------------------------------- properties

@given(st.text(max_size=200))
def test_arbitrary_text_only_ever_raises_our_parse_error(text):
    try:
        evaluate_all(parse_text(text))
    except AnswerParseError:
        pass


@given(st.text(alphabet=string.digits + "+-*/^().,; []eE%lnsqrtxp√−×·", max_size=80))
def test_arithmetic_looking_text_only_ever_raises_our_parse_error(text):
    try:
        evaluate_all(parse_text(text, scalar=True))
    except AnswerParseError:
        pass


@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_any_float_as_python_prints_it_reads_back_exactly(x):
    assert evaluate(parse_text(repr(x))) == x


@given(st.lists(st.lists(st.integers(-999, 999).map(lambda k: k / 8), min_size=3, max_size=3), min_size=1, max_size=4))
def test_matrix_syntaxes_agree(rows):
    bracket = "[" + ", ".join("[" + ", ".join(repr(v) for v in r) + "]" for r in rows) + "]"
    matlab = "[" + "; ".join(" ".join(repr(v) for v in r) for r in rows) + "]"
    want = rows if len(rows) > 1 else rows
    got_b = evaluate_all(parse_text(bracket))
    got_m = evaluate_all(parse_text(matlab))
    if len(rows) == 1:
        got_m = [got_m]
    assert got_b == want and got_m == want


# random arithmetic trees, rendered as a student would type them, evaluated by our parser and by
# mpmath at 40 digits straight from the tree (never from the text): an independent evaluator
_fractions = st.fractions(min_value=Fraction(1, 10), max_value=Fraction(9, 2), max_denominator=10)
_leaf = st.one_of(st.integers(1, 9).map(lambda k: ("int", k)), st.just(("e",)), _fractions.map(lambda f: ("frac", f)))


def _tree(children):
    return st.one_of(
        st.tuples(st.sampled_from(["+", "-", "*", "/"]), children, children),
        st.tuples(st.just("neg"), children),
        st.tuples(st.just("^"), children, st.integers(0, 3).map(lambda k: ("int", k))),
        st.tuples(st.sampled_from(["ln", "sqrt", "exp"]), children),
    )


TREES = st.recursive(_leaf, _tree, max_leaves=8)


def _text(t, style):
    kind = t[0]
    if kind == "int":
        return str(t[1])
    if kind == "e":
        return "e"
    if kind == "frac":
        return f"({t[1].numerator}/{t[1].denominator})"
    if kind == "neg":
        return f"(−{_text(t[1], style)})" if style else f"(-{_text(t[1], style)})"
    if kind in ("ln", "sqrt", "exp"):
        if kind == "sqrt" and style:
            return f"√({_text(t[1], style)})"
        return f"{kind}({_text(t[1], style)})"
    op = {"*": "×" if style else "*", "^": "^", "+": "+", "-": "-", "/": "/"}[kind]
    return f"({_text(t[1], style)} {op} {_text(t[2], style)})"


def _ref(t):
    """The tree's value in mpmath (40 digits), or None where a sub-term is undefined in the reals
    or beyond the parser's size rule (|x| > 1e300)."""
    import mpmath

    mpmath.mp.dps = 40
    kind = t[0]
    if kind == "int":
        return mpmath.mpf(t[1])
    if kind == "e":
        return mpmath.e
    if kind == "frac":
        return mpmath.mpf(t[1].numerator) / t[1].denominator
    args = [_ref(c) for c in t[1:]]
    if any(a is None for a in args):
        return None
    if kind == "neg":
        v = -args[0]
    elif kind == "ln":
        v = mpmath.log(args[0]) if args[0] > 0 else None
    elif kind == "sqrt":
        v = mpmath.sqrt(args[0]) if args[0] >= 0 else None
    elif kind == "exp":
        v = mpmath.exp(args[0]) if args[0] < 700 else None
    elif kind == "/":
        v = args[0] / args[1] if args[1] != 0 else None
    elif kind == "^":
        v = args[0] ** args[1] if not (args[0] == 0 and args[1] < 0) else None
    else:
        v = {"+": args[0] + args[1], "-": args[0] - args[1], "*": args[0] * args[1]}[kind]
    if v is None or abs(v) > mpmath.mpf("1e300"):
        return None
    return v


@given(TREES, st.booleans())
def test_evaluation_agrees_with_a_high_precision_reference(tree, unicode_style):
    want = _ref(tree)
    try:
        got = evaluate(parse_text(_text(tree, unicode_style)))
    except AnswerParseError:
        assert want is None, "refused an expression that is defined and in range"
        return
    if want is None:
        # float rounding may keep a near-zero divisor nonzero, or a log argument just positive
        return
    assert got == pytest.approx(float(want), rel=1e-9, abs=1e-12)


def test_unparse_round_trips():
    for text in ["e^2/(1 + e^2)", "-(y_i - p_i)", "2*10^(-3)", "ln(2) + 1/3", "[1, 2, 3]"]:
        node = parse_text(text, variables=("p_i", "y_i"))
        assert unparse(parse_text(unparse(node), variables=("p_i", "y_i"))) == unparse(node)


def test_an_equation_is_refused_with_its_right_hand_side_as_the_hint():
    with pytest.raises(AnswerParseError, match=r"not an equation \(e.g. p_i - y_i\)"):
        parse_text("dL/dz = p_i - y_i", variables=("p_i", "y_i"))
