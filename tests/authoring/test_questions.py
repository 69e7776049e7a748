"""Question files: read, drawn and built through a solve topic — answers checked against formulas
written here, known mistakes and ECF rules taken from the topic's tables, written parts, and every
kind of bad file refused in one line naming its file, line and key."""
import json
import math
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from examprep import solve
from examprep.answers import check_part
from examprep.authoring import QuestionError, build_question, load_question, parse_question
from examprep.document import Matrix, Text
from examprep.problem import Problem

BANK = Path(str(resources.files("examprep") / "bank" / "questions"))
SOFTMAX = BANK / "softmax-by-hand.toml"


def softmax(z):
    e = [math.exp(v) for v in z]
    return [v / sum(e) for v in e]


@pytest.fixture(scope="module")
def spec():
    return load_question(SOFTMAX)


def test_the_issue_example_builds_answers_that_match_softmax_written_here(spec):
    for seed in range(20):
        p = build_question(spec, seed)
        z, t = p.params["logits"], p.params["target"]
        assert len(set(z)) == 3 and all(-2 <= v <= 3 for v in z) and t in (0, 1, 2)     # the draws and `where`
        probs = softmax(z)
        assert np.allclose(p.part("probs").expected, probs, rtol=1e-12)
        want = [q - (1.0 if i == t else 0.0) for i, q in enumerate(probs)]
        assert np.allclose(p.part("grad_logits").expected, want, rtol=1e-12, atol=1e-15)


def test_parts_take_their_known_mistakes_from_the_solve_topics_table(spec):
    p = build_question(spec, 3)
    table = solve.mistakes("cross-entropy", {"logits": p.params["logits"], "target": p.params["target"]})
    declared = {m.id for m in table.topic.mistakes["grad_logits"]}
    got = {m.id for m in p.part("grad_logits").misconceptions}
    assert {"y-minus-p"} <= got <= declared
    sign = next(m for m in p.part("grad_logits").misconceptions if m.id == "y-minus-p")
    assert np.allclose(sign.value, -np.asarray(p.part("grad_logits").expected))
    # and the grader names it, as it does for a built-in problem
    r = check_part(p.part("grad_logits"), json.dumps(sign.value))
    assert r.status == "misconception" and r.misconception.id == "y-minus-p"


def test_a_question_rebuilds_bit_for_bit_and_round_trips_through_json(spec):
    a, b = build_question(spec, 11), build_question(spec, 11)
    assert a.to_json() == b.to_json()
    assert Problem.from_dict(json.loads(a.to_json())).to_json() == a.to_json()
    assert build_question(spec, 12).to_json() != a.to_json()
    assert a.generator == "question:softmax-by-hand"


def test_written_parts_carry_model_answer_and_rubric_and_are_pending_when_graded(spec):
    p = build_question(spec, 3)
    w = p.part("w1")
    assert w.kind == "written" and w.expected is None and w.points == 2
    assert "p − y" in w.model_answer and w.rubric == ("names p − y (1)", "explains the cancellation (1)")
    assert w.to_dict()["model_answer"] == w.model_answer
    r = check_part(w, "The log cancels the exponential.")
    assert (r.status, r.score, r.max_score) == ("pending", 0.0, 2.0)
    assert r.feedback == "to be marked by hand"
    assert any(s.part == "w1" and "Rubric" in s.blocks[-1].text for s in p.solution)


def test_part_ids_default_to_the_answer_name_and_w1_w2_for_written_parts():
    text = SOFTMAX.read_text().replace('answer = "grad_logits"', 'answer = "grad_logits"\nid = "g"')
    text += '\n[[question.part]]\nkind = "written"\nprompt = "Again."\nmodel_answer = "x"\n'
    p = build_question(parse_question(text, "q.toml"), 0)
    assert [x.id for x in p.parts] == ["probs", "g", "w1", "w2"]


def test_placeholders_render_numbers_inline_and_matrices_through_the_document_model():
    p = build_question(load_question(BANK / "dense-by-hand.toml"), 1)
    text = p.statement[0]
    assert isinstance(text, Text) and "$W$" in text.text and "{" not in text.text
    assert f"${p.params['x'][0]}, " not in text.text and "$[" in text.text        # a short vector inline, as math
    mat = next(b for b in p.statement if isinstance(b, Matrix))
    assert mat.name == "W" and mat.values == p.params["weight"]


def test_ecf_rules_come_from_the_topic_and_point_at_the_part_that_asks_the_earlier_answer():
    text = """
[question]
id = "bce"
solve = "logistic-regression"
text = "Inputs {X}, labels {y}, weight {w}."
[question.params]
X = { integers = [-2, 2], size = 3 }
y = [0, 1, 1]
w = { choice = [0.5, 1.0] }
[[question.part]]
answer = "probs"
id = "p"
prompt = "The probabilities."
[[question.part]]
answer = "loss"
prompt = "The loss."
"""
    p = build_question(parse_question(text, "bce.toml"), 2)
    rule = p.part("loss").ecf_rule
    assert rule is not None and rule.op == "bce-from-probs" and rule.refs() == ["p"]
    # a student's wrong probabilities carry forward into a consistent loss
    wrong = [0.5, 0.5, 0.5]
    y = [0, 1, 1]
    consistent = -sum(math.log(q if t else 1 - q) for q, t in zip(wrong, y)) / 3
    r = check_part(p.part("loss"), repr(consistent), {"p": wrong})
    assert r.status == "ecf"


def test_a_question_of_written_parts_only_needs_no_solve_topic():
    text = '[question]\nid = "w"\ntitle = "Explain"\n[[question.part]]\nprompt = "Why?"\nmodel_answer = "Because."\npoints = 3\n'
    p = build_question(parse_question(text, "w.toml"), 0)
    assert [(x.id, x.kind, x.points) for x in p.parts] == [("w1", "written", 3.0)]


GOOD = SOFTMAX.read_text()


@pytest.mark.parametrize("change, line, message", [
    (("[question]", "[questoin]"), 6, "unknown key 'questoin'"),
    (('title = "Softmax of three logits"', 'titel = "x"'), 8, "[question]: unknown key 'titel'; did you mean title?"),
    (('solve = "cross-entropy"', 'solve = "cross-entropyy"'), 9, "unknown topic 'cross-entropyy'"),
    (('answer = "probs"', 'answer = "prob"'), 18, "cross-entropy has no answer 'prob'; did you mean 'probs'?"),
    (("{target}", "{targt}"), 10, "placeholder {targt} is not a parameter; did you mean {target}?"),
    (("{target}", "{target.__class__}"), 10, "text: '{target.__class__}' at column 67 is not a placeholder"),
    (("{target}", "{target:.3f}"), 10, "'{target:.3f}' at column 67 is not a placeholder"),
    (("{target}", "{target"), 10, "an unclosed '{' at column 67 is not a placeholder"),
    (("{target}", "target}"), 10, "'}' at column 73 is not a placeholder"),
    (('prompt = "The softmax probabilities."', 'prompt = "The {logits[0]} one."'), 19,
     "part 1 prompt: '{logits[0]}' at column 5 is not a placeholder"),
    (('where = "distinct(logits)"', 'where = "distinct(logit)"'), 11, "'logit' is not a parameter"),
    (('where = "distinct(logits)"', 'where = "eval(1)"'), 11, "eval(…) is not allowed"),
    (('tolerance = "sigfigs:3"', 'tolerance = "sigfig"'), 21, "tolerance 'sigfig'"),
    (("target = { choice = [0, 1, 2] }", "target = { choise = [0, 1, 2] }"), 15, "a draw has one of"),
    (("size = 3 }", "size = 3, step = 2 }"), 14, "unknown key 'step' for a integers draw"),
    (("target = { choice = [0, 1, 2] }", 'target = { choice = [0, 1, 2] }\nreducton = "sum"'), 16,
     "cross-entropy takes no parameter 'reducton' and the text does not use it; did you mean 'reduction'?"),
    (("target = { choice = [0, 1, 2] }", ""), 10, "placeholder {target} is not a parameter"),
    (("points = 3", "points = -3"), 26, "points: expected a number above 0"),
    (('model_answer = "Softmax', 'answer = "probs"\nmodel_answer = "Softmax'), 32, "a written part has no answer"),
    (('id = "softmax-by-hand"', 'id = "bad id!"'), 7, "[question] id: letters, digits"),
    (("[[question.part]]\nanswer = \"grad_logits\"", "[[question.part]]\nanswer = \"probs\""), 23,
     "'probs' is already the id of another part"),
    (('points = 2\ntolerance', 'points = "two"\ntolerance'), 20, "points: expected a number"),
    (("integers = [-2, 3]", "integers = [-9999999999999999999999, 9999999999999999999999]"), 14,
     "logits integers: bounds from -1,000,000,000 to 1,000,000,000"),
    (("integers = [-2, 3]", "decimals = [-1e308, 1e308], step = 1e-300"), 14, "logits decimals: bounds from"),
    (("integers = [-2, 3]", "decimals = [-1, 1], step = 1e-300"), 14,
     "logits step: 1e-300 cuts [-1, 1] into more than 1,000,000,000 steps"),
    (("integers = [-2, 3]", "decimals = [-1, 1], step = inf"), 14, "logits step: a number above 0, got inf"),
    (("integers = [-2, 3]", "decimals = [nan, 1]"), 14, "logits decimals: bounds from"),
    (("integers = [-2, 3]", "decimals = [-0.2, 0.2], step = 1, nonzero = true"), 14, "only 0 is left"),
    # control characters: refused, never printed raw (they made invalid XML exports)
    (('title = "Softmax of three logits"', 'title = "\\u0007bell\\u202e"'), 8,
     "[question] title: a line break or control character ('\\x07') cannot be printed in one line of the sheet, "
     "its answer files and exports; write it on one line"),
    (('prompt = "The softmax probabilities."', 'prompt = "The softmax\\u000b probabilities."'), 19,
     "part 1 prompt: a control character ('\\x0b') cannot be printed in the sheet, its answer files and exports; "
     "remove it"),
    (("{target}.", "{target}.\\u001b[2J"), 10, "[question] text: a control character ('\\x1b')"),
    (('rubric = ["names p − y (1)"', 'rubric = ["names p − y\\n(1)"'), 33,
     "part 3 rubric: a line break or control character ('\\n') cannot be printed in one line"),
    (('model_answer = "Softmax', 'model_answer = "\\u0000Softmax'), 32, "part 3 model_answer: a control character"),
    (("target = { choice = [0, 1, 2] }", 'target = { choice = [0, 1, 2] }\nword = { choice = ["a", "b\\u0085"] }'), 16,
     "[question.params] word: a line break or control character ('\\x85')"),
    (('title = "Softmax of three logits"', 'title = "Softmax\\u2028of three logits"'), 8,
     "[question] title: a line break or control character ('\\u2028')"),
])
def test_bad_files_are_one_line_naming_file_line_and_key(tmp_path, change, line, message):
    old, new = change
    assert old in GOOD
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(QuestionError) as info:
        load_question(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}:{line}: ") and message in msg, msg
    assert "\n" not in msg and "\x1b" not in msg and "\x07" not in msg


def test_a_condition_no_draw_satisfies_names_the_where_line(tmp_path):
    path = tmp_path / "q.toml"
    path.write_text(GOOD.replace('where = "distinct(logits)"', 'where = "sum(logits) > 100"'))
    with pytest.raises(QuestionError, match=rf"^{path}:11: \[question\] where: no draw satisfies .* in 1000 tries"):
        build_question(load_question(path), 0)


@pytest.mark.parametrize("where, message", [
    ("((((2**64)**64)**64)**64)**64 > 0", "is too large"),
    ("-" * 400 + "1 > 0", "nested too deeply"),
    ("sum(logits, 5) > 0", "sum() takes 1 argument, got 2"),
    ("logits if True else 0", "the condition gives a list, not true/false"),
])
def test_a_bad_condition_is_one_line_with_the_same_prefix_at_read_or_draw_time(tmp_path, where, message):
    path = tmp_path / "q.toml"
    path.write_text(GOOD.replace('where = "distinct(logits)"', f'where = "{where}"'))
    with pytest.raises(QuestionError) as info:
        build_question(load_question(path), 0)
    msg = str(info.value)
    assert msg.startswith(f"{path}:11: [question] where: ") and message in msg and "\n" not in msg, msg


@pytest.mark.parametrize("target, line, message", [
    ('target = { choice = [0, 1, 2] }\nreduction = "max"', 16, "reduction: expected one of 'mean', 'sum', 'none'"),
    ("target = { choice = [5, 6] }", 15, "target: class index must be in [0, 2]"),
    ("target = { choice = [0, 1, 2], size = [2, 2] }", 15, "target: for a single logits vector"),
])
def test_a_topic_refusing_every_draw_is_blamed_on_its_parameter_not_on_where(tmp_path, target, line, message):
    path = tmp_path / "q.toml"
    path.write_text(GOOD.replace("target = { choice = [0, 1, 2] }", target))
    with pytest.raises(QuestionError) as info:
        build_question(load_question(path), 0)
    msg = str(info.value)
    assert msg.startswith(f"{path}:{line}: [question.params]: cross-entropy refuses every draw: ") and message in msg, msg
    assert "where" not in msg


def test_doubled_braces_print_one_literal_brace_and_placeholders_still_substitute(tmp_path):
    path = tmp_path / "q.toml"
    path.write_text(GOOD.replace("for one example of class {target}.", "for class {target} (the set {{0, 1, 2}})."))
    text = build_question(load_question(path), 3).statement[0].text
    assert text.endswith("(the set {0, 1, 2}).") and "{target}" not in text and "class $" in text


def test_a_file_that_is_not_toml_names_its_line(tmp_path):
    path = tmp_path / "q.toml"
    path.write_text("[question]\nid = \n")
    with pytest.raises(QuestionError, match=rf"^{path}:2: not valid TOML"):
        load_question(path)
    path.write_text("[question]\nid = " + "[" * 900 + "]" * 900 + "\n")      # tomllib's recursion limit
    with pytest.raises(QuestionError, match=rf"^{path}: not valid TOML: nested too deeply$"):
        load_question(path)
    path.write_text("[question]\nid = " + "1" * 5000 + "\n")                # Python's int digit limit
    with pytest.raises(QuestionError, match=rf"^{path}: not valid TOML: an integer of more than 4,300 digits$"):
        load_question(path)


def test_the_shipped_softmax_example_carries_wrong_probabilities_forward_into_the_gradient():
    # solve's cross-entropy table declares the gradient's ECF rule (p − q)/N, so the authored
    # question grades a gradient consistent with a student's wrong probabilities as the
    # built-in generator does
    p = build_question(load_question(SOFTMAX), 3)
    rule = p.part("grad_logits").ecf_rule
    assert rule is not None and rule.op == "minus-target" and rule.refs() == ["probs"]
    target = p.params["target"]
    wrong = [0.2, 0.3, 0.5]
    consistent = [q - (1.0 if i == target else 0.0) for i, q in enumerate(wrong)]
    r = check_part(p.part("grad_logits"), json.dumps(consistent), {"probs": wrong})
    assert r.status == "ecf"
    assert check_part(p.part("grad_logits"), json.dumps(consistent), {"probs": wrong}, ecf=False).status == "wrong"


def test_line_breaks_and_tabs_stay_text_where_text_runs_over_lines(tmp_path):
    path = tmp_path / "ok.toml"
    path.write_text(GOOD.replace('prompt = "The softmax probabilities."',
                                 'prompt = """The softmax\n\tprobabilities."""', 1))
    assert load_question(path).parts[0].prompt == "The softmax\n\tprobabilities."
