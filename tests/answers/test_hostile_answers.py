"""check_part never raises for a bad answer: every value a TOML, JSON or CSV file can hold, for every
kind of part, gets a verdict whose JSON can be written as UTF-8 (issue 14, item 1)."""
import datetime as dt
import json
import math

import pytest
from hypothesis import given, strategies as st

from examprep.answers import check_part
from examprep.problem import EXACT, Misconception, Part, EcfRule, Tolerance

PARTS = {
    "number": Part("x", "x", "number", 0.5, points=2, misconceptions=(Misconception("m", 1.0, "x"),),
                   ecf_rule=EcfRule("scale", {"x": {"$ref": "v"}, "factor": 1.0})),
    "integer": Part("n", "n", "integer", 7, tolerance=EXACT, misconceptions=(Misconception("m", 8, "x"),)),
    "vector": Part("v", "v", "vector", [0.1, 0.2], shape=(2,), misconceptions=(Misconception("m", [0.2, 0.1], "x"),)),
    "matrix": Part("m", "m", "matrix", [[1.0, None], [0.0, 2.0]], shape=(2, 2),
                   ecf_rule=EcfRule("scale", {"x": {"$ref": "v"}, "factor": 2.0})),
    "expression": Part("d", "d", "expression", "p_i - y_i", tolerance=EXACT, exact="p_i - y_i", variables=("p_i", "y_i"),
                       misconceptions=(Misconception("m", "y_i - p_i", "x"),)),
    "constant": Part("c", "c", "expression", math.e / (2 * math.e + 1), tolerance=Tolerance("sigfigs", 3),
                     exact="e/(2e + 1)"),
    "choice": Part("k", "k", "choice", "A", tolerance=EXACT, choices=("A", "B", "2"),
                   misconceptions=(Misconception("m", "B", "x"),)),
}


def verdict_is_sound(r, part):
    assert r.status in ("correct", "ecf", "misconception", "wrong", "blank", "unparseable")
    assert 0 <= r.score <= r.max_score == part.points
    assert r.feedback and "\n" not in r.feedback
    # what grades.json, grades.csv and the reports are made of must encode as UTF-8
    json.dumps(r.to_dict(), ensure_ascii=False, allow_nan=False).encode("utf-8")
    r.feedback.encode("utf-8")


HOSTILE = [
    float("nan"), float("inf"), float("-inf"), 10**400, -(10**400), 10**5000, 1e308 * 10, -0.0, 2**63,
    [[1, 2], [3]], [[1, 2], 3], [1, [2, 3]], [[[[1]]]], [], [[]], [None], [True, 1], [{"a": 1}],
    "\udfff", "0.5\udfff", "\ud800\udc00", "\x1b[2J", "\u202e1.0", "\x00",
    dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, 12), dt.time(12, 0), {"a": [1]}, {}, True, False,
    "1" * 5000, "9" * 400, "[" * 900 + "]" * 900, "nan", "-inf", "1e-10000000",
]


def label(raw):
    if isinstance(raw, int) and abs(raw) > 10**100:
        return "a huge int"
    try:
        text = ascii(raw)
    except RecursionError:
        return "a deep list"
    return text if len(text) <= 24 else text[:24] + "..."


def nested(depth):
    v = []
    for _ in range(depth):
        v = [v]
    return v


@pytest.mark.parametrize("kind", list(PARTS))
@pytest.mark.parametrize("raw", HOSTILE + [nested(900), nested(100_000)], ids=label)
def test_hostile_values_get_a_verdict_never_an_exception(kind, raw):
    part = PARTS[kind]
    r = check_part(part, raw, earlier={"v": [1.0, 2.0]})
    verdict_is_sound(r, part)


@pytest.mark.parametrize("raw,reason", [(float("nan"), "NaN"), (float("-inf"), "infinit"), (10**400, "not a choice"),
                                        (1e300, "not a choice")])
def test_a_choice_answered_with_a_special_number_is_unreadable(raw, reason):
    r = check_part(PARTS["choice"], raw)
    assert r.status == "unparseable" and reason in r.feedback, r.feedback


@pytest.mark.parametrize("kind", ["number", "integer", "vector", "matrix"])
def test_ragged_arrays_are_unreadable_with_the_reason(kind):
    r = check_part(PARTS[kind], [[1, 2], [3]])
    assert r.status == "unparseable" and "rows of different lengths" in r.feedback, r.feedback


def test_deeply_nested_lists_are_refused_by_their_depth():
    r = check_part(PARTS["matrix"], nested(900))
    assert r.status == "unparseable" and "nested too deeply" in r.feedback, r.feedback


def test_a_huge_integer_is_too_large_for_every_kind():
    for kind in ("number", "integer", "expression", "constant"):
        r = check_part(PARTS[kind], 10**5000)
        assert r.status == "unparseable" and "too large" in r.feedback, (kind, r.feedback)


# ----------------------------------------------------------------------------- property

SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
TEXT = st.text(st.one_of(st.characters(), SURROGATES), max_size=30)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), TEXT,
    st.sampled_from([math.nan, math.inf, -math.inf, 1e300, dt.date(2024, 5, 1)]),
    st.builds(lambda digits, sign: sign * 10**digits, st.sampled_from([301, 400, 5000]), st.sampled_from([1, -1])),
    st.sampled_from(["0.5", "[0.1, 0.2]", "[[1, 0], [0, 2]]", "p_i - y_i", "A", "b) because", "2", "e/(2e+1)",
                     "[[1, 2], [3]]", "1e-10000000", "-inf"]),
)
JSONABLE = st.recursive(SCALARS, lambda children: st.one_of(st.lists(children, max_size=4),
                                                              st.dictionaries(TEXT, children, max_size=3)),
                        max_leaves=16)


@pytest.mark.parametrize("kind", list(PARTS))
@given(raw=JSONABLE, earlier=JSONABLE)
def test_check_part_gives_any_json_value_a_verdict(kind, raw, earlier):
    part = PARTS[kind]
    r = check_part(part, raw, earlier={"v": earlier})
    verdict_is_sound(r, part)
