"""STACK's robustness strings (issue 28): every student answer, teacher answer and option of its
answer-test fixtures, the strings of its numbers fixtures and its test_strings.json
(fixtures/stack_strings.json, with its source), through every kind of part and rule. Each gets a
verdict, never an exception, and the suite finishing is the proof that none hangs: every parse is
bounded (length, tokens, depth, exponents) and sympy sees only answers whose cost is bounded first."""
import json
import math
from pathlib import Path

import pytest

from examprep.answers import check_part
from examprep.answers.check import STATUSES
from examprep.problem import EXACT, Misconception, Part, Tolerance

DATA = json.loads((Path(__file__).parent / "fixtures" / "stack_strings.json").read_text(encoding="utf-8"))
STRINGS = DATA["strings"]

PARTS = {
    "number": Part("n", "n", "number", 0.5, misconceptions=(Misconception("m", 1.0, "x"),)),
    "number-strict": Part("s", "s", "number", math.pi, tolerance=Tolerance("sigfigs-strict", 3)),
    "integer": Part("i", "i", "integer", 7, tolerance=EXACT),
    "vector": Part("v", "v", "vector", [0.1, 0.2], shape=(2,), misconceptions=(Misconception("m", [0.2, 0.1], "x"),)),
    "matrix": Part("m", "m", "matrix", [[1.0, None], [0.0, 2.0]], shape=(2, 2), tolerance=Tolerance("sigfigs-strict", 2)),
    "expression": Part("e", "e", "expression", "x^2 + a*y - b", tolerance=EXACT, exact="x^2 + a*y - b",
                       variables=("a", "b", "x", "y"), misconceptions=(Misconception("m", "x^2 - a*y", "x"),)),
    "expression-real": Part("r", "r", "expression", "abs(x)", tolerance=EXACT, exact="abs(x)", variables=("x",),
                            domains=(("x", "real"),)),
    "constant": Part("c", "c", "expression", "e^2/(1+e^2)", tolerance=EXACT, exact="e^2/(1+e^2)"),
    "choice": Part("h", "h", "choice", "A", tolerance=EXACT, choices=("A", "B")),
}


def test_the_strings_are_all_there():
    assert len(STRINGS) == len(set(STRINGS)) == 2442
    assert DATA["source"]["commit"] == "a14f3034a0e45aab27dcae96c526a6095dbf6ef7"


@pytest.mark.parametrize("kind", list(PARTS))
def test_every_stack_string_gets_a_verdict_in_every_part_kind(kind):
    part = PARTS[kind]
    statuses = set()
    for text in STRINGS:
        r = check_part(part, text, earlier={"x": text})
        assert r.status in STATUSES and 0 <= r.score <= r.max_score, (text, r)
        assert r.feedback and "\n" not in r.feedback, (text, r.feedback)
        json.dumps(r.to_dict(), allow_nan=False)
        statuses.add(r.status)
    # the strings exercise more than the refusal path
    assert "unparseable" in statuses and len(statuses) >= 2, statuses
