"""The `where` evaluator: the language a condition may use, and everything else refused before it
runs (no eval, no attribute, no call but the listed functions, no runaway power)."""
import pytest

from examprep.authoring import expr
from examprep.authoring.expr import ExprError, evaluate, names

VALUES = {"logits": [1, -2, 3], "w": [[1, 2], [3, 4]], "t": 2, "p": 0.5}


@pytest.mark.parametrize("text, want", [
    ("distinct(logits)", True),
    ("distinct([1, 1, 2])", False),
    ("distinct(w)", True),
    ("logits[0] < logits[2]", True),
    ("logits[-1] == 3", True),
    ("w[1][0] + w[0][1] == 5", True),
    ("w[1, 1] == 4", True),
    ("0 < t <= 2", True),
    ("0 < t < 2", False),
    ("max(logits) - min(logits) >= 5", True),
    ("sum(w) == 10 and len(logits) == 3", True),
    ("abs(logits[1]) == 2 or t == 0", True),
    ("not distinct(logits)", False),
    ("t ** 2 // 3 % 2 == 1", True),
    ("p * 4 / 2 == 1.0", True),
    ("t in logits", False),
    ("any(abs(logits)) and all(w)", True),
    ("1 if t > 1 else 0", 1),
    ("round(p + 0.26, 1) == 0.8", True),
])
def test_conditions_evaluate_like_python_would(text, want):
    assert evaluate(text, VALUES) == want


@pytest.mark.parametrize("text, message", [
    ("__import__('os')", "__import__(…) is not allowed"),
    ("logits.__class__", "no attributes"),
    ("open('x')", "open(…) is not allowed"),
    ("'a' == 'a'", "numbers and true/false only"),
    ("[x for x in logits]", "is not allowed in a condition"),
    ("lambda: 1", "is not allowed in a condition"),
    ("t = 1", "not an expression"),
    ("", "empty condition"),
    ("min(logits, key=abs)", "is not allowed"),
])
def test_anything_outside_the_language_is_refused_before_it_runs(text, message):
    with pytest.raises(ExprError, match=message.replace("(", r"\(").replace(")", r"\)").replace("…", ".")):
        expr.parse(text)


@pytest.mark.parametrize("text, message", [
    ("logits[3] > 0", "index 3 out of range"),
    ("t / 0 > 1", "division by zero"),
    ("9 ** 99 > 1", "power 99 too large"),
    ("missing > 1", "unknown name 'missing'"),
    ("logits > 1", "cannot compare"),
    ("logits + 1 > 1", "is not a number"),
    ("t[0] > 1", "cannot be indexed"),
    ("logits[0.5] > 1", "not a whole number"),
])
def test_conditions_that_fail_on_the_values_say_why(text, message):
    with pytest.raises(ExprError, match=message):
        evaluate(text, VALUES)


def test_names_lists_the_parameters_a_condition_reads_not_its_functions():
    assert names("distinct(logits) and max(w) > t") == {"logits", "w", "t"}


def test_the_evaluator_never_calls_eval(monkeypatch):
    import builtins

    def no_eval(*a, **k):
        raise AssertionError("eval called")

    monkeypatch.setattr(builtins, "eval", no_eval)
    monkeypatch.setattr(builtins, "exec", no_eval)
    assert evaluate("distinct(logits) and t == 2", VALUES) is True
