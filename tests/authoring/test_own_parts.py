"""An author's own parts in a question file: computed parts (an expression over the parameters and
the topic's answers, with a tolerance), the author's own mistakes (named in grading like a built-in
one), choice parts shuffled per variant, a fixed matrix under a display name, question tests run by
`examprep check` — and every bad field refused in one line naming the file, the line and the field."""
import math
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep.answers import check_part
from examprep.authoring import QuestionError, build_question, load_question, parse_question
from examprep.cli import app
from examprep.document import Matrix

runner = CliRunner()
EXAMPLE = Path(str(resources.files("examprep") / "bank" / "questions" / "softmax-own-parts.toml"))
GOOD = EXAMPLE.read_text()


def run(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})


def softmax(z):
    e = [math.exp(v) for v in z]
    return [v / sum(e) for v in e]


def line_of(text, needle, nth=1):
    """The 1-based line of the ``nth`` line of ``text`` that holds ``needle``."""
    hits = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    return hits[nth - 1]


@pytest.fixture(scope="module")
def spec():
    return load_question(EXAMPLE)


def test_a_computed_part_is_its_expression_over_the_topics_answers_graded_with_its_tolerance(spec):
    for seed in range(5):
        p = build_question(spec, seed)
        part = p.part("max_prob")
        want = max(softmax(p.params["logits"]))              # the softmax written here, not the engine's
        assert part.kind == "number" and math.isclose(part.expected, want, rel_tol=1e-12)
        assert check_part(part, f"{want:.3g}").status == "correct"
        assert check_part(part, f"{want * 1.05:.3g}").status == "wrong"
        assert check_part(part, f"{want:.1g}").score < part.points          # sigfigs:3: one figure is too few


def test_a_computed_part_may_use_exp_log_and_sqrt_and_an_integer_value_is_exact():
    text = """[question]
id = "own"
solve = "cross-entropy"
[question.params]
logits = { integers = [-2, 3], size = 3 }
target = { choice = [0, 1, 2] }
[[question.part]]
id = "nll"
value = "-log(probs[target]) + sqrt(4) * exp(0)"
prompt = "The loss plus two."
[[question.part]]
id = "count"
value = "len(logits) * 2"
prompt = "Twice the number of classes."
"""
    p = build_question(parse_question(text, "e.toml"), 4)
    z, t = p.params["logits"], p.params["target"]
    assert math.isclose(p.part("nll").expected, -math.log(softmax(z)[t]) + 2, rel_tol=1e-12)
    count = p.part("count")
    assert (count.kind, count.expected, count.tolerance.rule) == ("integer", 6, "exact")
    assert check_part(count, "6").status == "correct" and check_part(count, "6.01").status == "wrong"


def test_an_authors_mistake_is_a_misconception_the_grader_names_with_its_feedback(spec):
    p = build_question(spec, 3)
    part = p.part("max_prob")
    assert [m.id for m in part.misconceptions] == ["max-logit"]
    r = check_part(part, str(max(p.params["logits"])))
    assert r.status == "misconception" and r.misconception.id == "max-logit"
    assert r.feedback.startswith("That is the largest logit")


def test_grade_names_the_authors_mistakes_in_its_feedback(tmp_path):
    key, answers = tmp_path / "key.json", tmp_path / "ann.toml"
    assert run("generate", EXAMPLE, "--seed", "3", "--key", key).exit_code == 0
    p = build_question(load_question(EXAMPLE), 3)
    wrong = next(c for c in p.part("negative").choices if c == p.part("negative").misconceptions[0].value)
    answers.write_text(f'student_id = "ann"\n[q1]\nmax_prob = "{max(p.params["logits"])}"\nnegative = "{wrong}"\n')
    res = runner.invoke(app, ["grade", str(key), str(answers), "--json", "-"], env={"NO_COLOR": "1"})
    assert res.exit_code == 0, res.output
    assert '"max-logit"' in res.stdout and '"largest-down"' in res.stdout
    assert "only the target's entry, p − 1, is negative" in res.stdout


def test_a_mistake_by_other_parameters_is_the_topic_computed_with_them():
    text = """[question]
id = "ce-batch"
solve = "cross-entropy"
[question.params]
logits = [[1, 2, 0], [0, 0, 3]]
target = [0, 2]
[[question.part]]
answer = "loss"
prompt = "The mean loss."
[[question.part.mistake]]
id = "first-target"
params = { target = [0, 0] }
why = "Each example has its own target: the second one's is class 2."
[[question.part]]
id = "doubled"
value = "2 * loss"
prompt = "Twice the loss."
[[question.part.mistake]]
id = "summed-twice"
params = { reduction = "sum" }
value = "2 * loss"
why = "The sum again."
"""
    p = build_question(parse_question(text, "b.toml"), 0)
    rows = [-math.log(softmax([1, 2, 0])[0]), -math.log(softmax([0, 0, 3])[2])]
    loss = p.part("loss")
    assert math.isclose(loss.expected, sum(rows) / 2, rel_tol=1e-12)
    first = next(m for m in loss.misconceptions if m.id == "first-target")
    other = (-math.log(softmax([1, 2, 0])[0]) - math.log(softmax([0, 0, 3])[0])) / 2
    assert math.isclose(first.value, other, rel_tol=1e-12)
    assert check_part(loss, f"{other:.4g}").misconception.id == "first-target"
    doubled = p.part("doubled")
    assert math.isclose(doubled.expected, sum(rows), rel_tol=1e-12)
    assert math.isclose(doubled.misconceptions[0].value, 2 * sum(rows), rel_tol=1e-12)


def test_a_choice_part_is_shuffled_per_seed_rebuilt_the_same_and_graded_by_its_correct_option(spec):
    orders = set()
    for seed in range(12):
        part = build_question(spec, seed).part("negative")
        assert part.kind == "choice" and part.choices == ("a", "b", "c", "d")
        options = dict(o.split(") ", 1) for o in part.prompt.split("? ", 1)[1].split("; "))
        assert sorted(options.values()) == sorted(spec.parts[2].choices)
        orders.add(tuple(options.values()))
        correct = next(k for k, v in options.items() if v == "the target class's only")
        assert part.expected == correct and check_part(part, correct).status == "correct"
        largest = next(k for k, v in options.items() if v == "the largest logit's only")
        r = check_part(part, largest)
        assert r.status == "misconception" and r.misconception.id == "largest-down"
        assert check_part(part, next(k for k, v in options.items() if v == "none")).status == "wrong"
        assert build_question(spec, seed).part("negative") == part
    assert len(orders) > 3          # 24 orders of 4 options: 12 seeds draw several


def test_a_fixed_matrix_is_printed_under_its_display_name():
    text = """[question]
id = "fixed"
solve = "dense"
text = "The weights are {weight} and the input is {x}."
[question.params]
weight = { value = [[1, 2, 0], [0, 1, -1]], name = "W" }
x = [1, 0, 2]
[[question.part]]
answer = "output"
prompt = "y = W x."
"""
    p = build_question(parse_question(text, "f.toml"), 5)
    assert p.params["weight"] == [[1, 2, 0], [0, 1, -1]]
    matrices = [b for b in p.statement if isinstance(b, Matrix)]
    assert [(m.name, m.values) for m in matrices] == [("W", [[1, 2, 0], [0, 1, -1]])]
    assert p.part("output").expected == [1, -2]


def test_check_runs_the_question_tests_exit_0_listing_how_many_held():
    res = run("check", EXAMPLE, "--draws", "3")
    assert res.exit_code == 0, res.output
    assert " ".join(res.stdout.split()).endswith("4 of 4 tests held: usable")


def test_check_exits_1_naming_each_question_test_that_does_not_hold(tmp_path):
    path = tmp_path / "q.toml"
    path.write_text(GOOD.replace('answer = "0.876"', 'answer = "0.88"')
                    .replace('mistake = "largest-down"', 'verdict = "correct"'))
    res = run("check", path, "--draws", "3")
    assert res.exit_code == 1, res.output
    out = " ".join(res.stdout.split())            # each finding wrapped to the terminal: unwrapped
    assert (f"error: {path}:{line_of(GOOD, '[[question.test]]', 1)}: test 1 (seed 3, part max_prob, answer '0.88'): "
            "expected correct, got wrong") in out
    assert (f"error: {path}:{line_of(GOOD, '[[question.test]]', 4)}: test 4 (seed 3, part negative, answer \"the largest "
            "logit's only\"): expected correct, got wrong, the mistake 'largest-down'") in out
    assert "test 2" not in out and "test 3" not in out
    assert out.endswith("2 of 4 tests held: not usable: 2 of 4 question tests do not hold")


def test_a_computed_value_that_fails_on_a_draw_cannot_be_graded(tmp_path):
    path = tmp_path / "q.toml"
    path.write_text(GOOD.replace('value = "max(probs)"', 'value = "1 / (logits[0] - logits[0])"'))
    res = run("check", path, "--draws", "3")
    assert res.exit_code == 1 and "division by zero" in res.stdout, res.output
    gen = run("generate", path, "--seed", "1")
    head = line_of(GOOD, PART.splitlines()[1]) - 1
    assert gen.exit_code == 2 and gen.stderr.startswith(f"error: {path}:{head}: part max_prob: cannot be graded"), gen.output


PART = '[[question.part]]\nid = "max_prob"'
MISTAKE = 'id = "max-logit"\nvalue = "max(logits)"'
CHOICE = 'choices = ["the target class\'s only", "the largest logit\'s only", "every logit\'s", "none"]'


@pytest.mark.parametrize("old, new, needle, message", [
    # computed parts
    ('value = "max(probs)"', 'value = "max(prob)"', 'value = "max(prob)"',
     "part 2 value: unknown name 'prob'; did you mean 'probs'?"),
    ('value = "max(probs)"', 'value = "probs.max()"', 'value = "probs.max()"', "part 2 value: probs.max(…) is not allowed"),
    ('value = "max(probs)"', 'value = "__import__(1)"', 'value = "__import__(1)"', "part 2 value: __import__(…) is not"),
    ('id = "max_prob"\nvalue', 'value', 'value = "max(probs)"', "part 2 id: a computed part needs an id"),
    ('value = "max(probs)"', 'value = "max(probs)"\nanswer = "probs"', 'value = "max(probs)"',
     "part 2 value: a part is either an answer of the topic"),
    ('id = "max_prob"', 'id = "logits"', 'id = "logits"', "part 2 id: 'logits' is also the name of a parameter"),
    # mistakes
    (MISTAKE, 'id = "max-logit"\nvalue = "max(logit)"', 'value = "max(logit)"',
     "part 2 mistake 1 value: unknown name 'logit'"),
    (MISTAKE, 'id = "max-logit"', '[[question.part.mistake]]',
     "part 2 mistake 1: give value = \"expression\" (the mistaken value) or params"),
    ('why = "That is the largest logit', 'wy = "That is the largest logit', 'wy = ', "part 2 mistake 1: unknown key 'wy'"),
    ('why = "That is the largest logit: the probability is its softmax, e^z / Σ e^z."', '', '[[question.part.mistake]]',
     "part 2 mistake 1 why: the feedback a student reads"),
    (MISTAKE, MISTAKE + "\ncredit = 1.5", "credit = 1.5", "part 2 mistake 1 credit: the fraction of the points"),
    (MISTAKE, 'id = "max-logit"\nparams = { reducton = "sum" }', "params = {",
     "part 2 mistake 1 params: cross-entropy takes no parameter 'reducton'"),
    ("points = 2\n\n" + PART, 'points = 2\n[[question.part.mistake]]\nid = "y-minus-p"\nvalue = "probs"\nwhy = "No."\n'
     + PART, 'id = "y-minus-p"', "part 1 mistake 1 id: 'y-minus-p' is already a mistake of this part"),
    # choice parts
    (CHOICE, 'choices = ["none", "all", " None"]', "choices = [", "part 3 choices: ' None' is listed twice (as 'none')"),
    (CHOICE, 'choices = ["only"]', "choices = [", "part 3 choices: two to 26 non-empty texts"),
    ('correct = "the target class\'s only"', 'correct = "the target\'s"', "correct = ",
     "part 3 correct: \"the target's\" is not one of the choices"),
    ('choice = "the largest logit\'s only"', 'choice = "the smallest"', 'choice = "the smallest"',
     "part 3 mistake 1 choice: 'the smallest' is not one of the choices"),
    ('choice = "the largest logit\'s only"', 'choice = "the target class\'s only"', "choice = \"the target",
     "part 3 mistake 1 choice: \"the target class's only\" is the correct choice"),
    (CHOICE, CHOICE + '\ntolerance = "atol:1"', 'tolerance = "atol:1"', "part 3 tolerance: a choice part has no tolerance"),
    # question tests
    ('part = "max_prob"', 'part = "max_probs"', 'part = "max_probs"',
     "test 1 part: the question has no part 'max_probs'; its parts: grad_logits, max_prob, negative"),
    ('verdict = "correct"', 'verdict = "right"', 'verdict = "right"',
     "test 1 verdict: one of correct, wrong, partial, got 'right'"),
    ('mistake = "max-logit"', 'mistake = "max-logits"', 'mistake = "max-logits"',
     "test 2 mistake: part max_prob declares no mistake 'max-logits'; its mistakes: max-logit"),
    ('mistake = "y-minus-p"', 'mistake = "y-minus-q"', 'mistake = "y-minus-q"',
     "its mistakes: y-minus-p, p-only, missing-1-over-n"),
    ('answer = "the largest logit\'s only"', 'answer = "the smallest"', 'answer = "the smallest"',
     "test 4 answer: 'the smallest' is not one of the choices of part negative"),
    ('verdict = "correct"', 'verdict = "correct"\nmistake = "max-logit"', '[[question.test]]',
     "test 1: give one of verdict"),
    ('seed = 3\npart = "max_prob"\nanswer = "0.876"', 'part = "max_prob"\nanswer = "0.876"', '[[question.test]]',
     "test 1: missing seed"),
    ('seed = 3\npart = "max_prob"\nanswer = "0.876"', 'seed = -1\npart = "max_prob"\nanswer = "0.876"', "seed = -1",
     "test 1 seed: a non-negative integer"),
    ('verdict = "correct"', 'verdict = "correct"\nscore = 2', "score = 2", "test 1: unknown key 'score'"),
    ('seed = 3\npart = "max_prob"\nanswer = "0.876"', 'seed = 3.5\npart = "max_prob"\nanswer = "0.876"', "seed = 3.5",
     "test 1 seed: expected a whole number, got 3.5"),
    # an option that reads as a label: grade would take "a" for the label a, whichever option that is
    (CHOICE, 'choices = ["b", "(a)", "every logit\'s", "none"]', "choices = [", "part 3 choices: 'b' reads as a label"),
    (CHOICE, 'choices = ["the target class\'s only", "the largest logit\'s only", "c.", "none"]', "choices = [",
     "part 3 choices: 'c.' reads as a label"),
    (CHOICE, 'choices = ["the target class\'s only", "b) the largest logit", "every logit\'s", "none"]', "choices = [",
     "part 3 choices: 'b) the largest logit' reads as a label"),
    # a parameter the expression language would read as itself
    ("target = { choice = [0, 1, 2] }", "target = { choice = [0, 1, 2] }\ntrue = { integers = [1, 2] }", "true = ",
     "[question.params] true: 'true' is a name of the expression language"),
    ("target = { choice = [0, 1, 2] }", "target = { choice = [0, 1, 2] }\nmax = { integers = [1, 2] }", "max = ",
     "[question.params] max: 'max' is a name of the expression language"),
])
def test_bad_own_parts_and_tests_are_one_line_naming_file_line_and_field(tmp_path, old, new, needle, message):
    assert old in GOOD
    text = GOOD.replace(old, new, 1)
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(QuestionError) as info:
        load_question(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}:{line_of(text, needle)}: ") and message in msg, msg
    assert "\n" not in msg


def test_a_bad_field_is_exit_2_at_check_and_generate(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace('verdict = "correct"', 'verdict = "right"'))
    for args in (("check", path), ("generate", path, "--seed", "1")):
        res = run(*args)
        assert res.exit_code == 2 and res.stderr.startswith(f"error: {path}:{line_of(GOOD, 'verdict = ')}: test 1 "
                                                             "verdict: one of correct, wrong, partial"), res.output
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output


@pytest.mark.parametrize("weight, message", [
    ('{ value = [[1, 2, 0], [0, 1, -1]], nam = "W" }', "weight: unknown key 'nam' for a fixed value (keys: name, value)"),
    ('{ value = [[1, 2, 0], [0, 1, -1]], name = 3 }', "weight name: a short symbol such as \"W\", got 3"),
    ('{ value = [[1, 2, 0], [0, 1e10, -1]], name = "W" }', "weight: values from -1,000,000,000 to 1,000,000,000"),
])
def test_a_bad_fixed_value_table_names_its_line(weight, message):
    text = f'[question]\nid = "f"\nsolve = "dense"\n[question.params]\nweight = {weight}\nx = [1, 0, 2]\n' \
           '[[question.part]]\nanswer = "output"\nprompt = "y."\n'
    with pytest.raises(QuestionError) as info:
        parse_question(text, "f.toml")
    assert str(info.value).startswith("f.toml:5: [question.params] ") and message in str(info.value), str(info.value)


def test_a_question_without_a_topic_computes_its_parts_from_its_parameters_alone():
    text = """[question]
id = "lr"
text = "A step of size {lr} on the gradient {g}."
[question.params]
lr = { choice = [0.1, 0.5] }
g = { integers = [1, 9] }
[[question.part]]
id = "step"
value = "-lr * g"
prompt = "The change of the weight."
[[question.part.mistake]]
id = "sign"
value = "lr * g"
why = "Gradient descent steps against the gradient."
"""
    p = build_question(parse_question(text, "lr.toml"), 2)
    step = p.part("step")
    assert math.isclose(step.expected, -p.params["lr"] * p.params["g"], rel_tol=1e-12)
    r = check_part(step, str(p.params["lr"] * p.params["g"]))
    assert r.status == "misconception" and r.misconception.id == "sign"


def test_a_mistake_that_gives_no_number_or_that_the_engine_refuses_is_left_out_with_a_note():
    from examprep.authoring import draft

    text = GOOD.replace('value = "max(logits)"', 'value = "max(logits) > 0"').replace(
        "points = 2\n\n" + PART,
        'points = 2\n[[question.part.mistake]]\nid = "smoothed"\nparams = { label_smoothing = 2 }\nwhy = "No."\n' + PART)
    problem, notes = draft(parse_question(text, "n.toml"), 3)
    assert problem.part("max_prob").misconceptions == () and problem.part("grad_logits").misconceptions
    assert "smoothed" not in [m.id for m in problem.part("grad_logits").misconceptions]
    said = " ".join(note for _, note in notes)
    assert "the mistake 'max-logit' gives True" in said and "the mistake 'smoothed' cannot be computed" in said


def test_a_list_of_shapes_takes_only_its_topics_mistakes():
    text = """[question]
id = "net"
solve = "network-shapes"
[question.params]
input_shape = [1, 8, 8]
layers = [{type = "flatten"}, {type = "linear", out_features = 10}]
[[question.part]]
answer = "output_shapes"
prompt = "Every layer's output shape."
[[question.part.mistake]]
id = "mine"
value = "input_shape"
why = "No."
"""
    with pytest.raises(QuestionError, match=r"^s.toml:10: part 1 mistake: output_shapes is a list of shapes"):
        parse_question(text, "s.toml")


@pytest.mark.parametrize("value", ["[]", "[[]]"])
def test_an_empty_list_value_cannot_be_graded_so_no_key_or_export_holds_it(tmp_path, value):
    path = tmp_path / "q.toml"
    path.write_text(GOOD.replace('value = "max(probs)"', f'value = "{value}"'))
    head = line_of(GOOD, PART.splitlines()[1]) - 1
    res = run("check", path, "--draws", "3")
    assert res.exit_code == 1 and f"error: {path}:{head}: part max_prob: in 3 of 3 draws" in res.stdout, res.output
    assert f"value '{value}' is an empty list" in res.stdout
    assert "never usable" not in res.stdout          # its mistake was never tried: the part's error is the one
    # generate and the Moodle writer (whose weights divide by a part's entries) never get such a part
    for args in (("generate", path, "--seed", "1", "--key", tmp_path / "k.json"),
                 ("sheet", "--topics", path, "--format", "moodle", "--out", tmp_path / "out")):
        res = run(*args)
        assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
        assert f"{path}:{head}: part max_prob: cannot be graded: value '{value}' is an empty list" in res.stderr
    assert not (tmp_path / "k.json").exists() and not (tmp_path / "out").exists()


def test_check_refuses_a_mistake_that_no_draw_can_use_naming_its_line(tmp_path):
    same = 'id = "max-logit"\nvalue = "max(probs)"'                     # the answer itself, in every draw
    smoothing = 'points = 2\n[[question.part.mistake]]\nid = "smooth"\nparams = { label_smoothing = 5.0 }\nwhy = "No."\n'
    text = GOOD.replace(MISTAKE, same).replace("points = 2\n\n" + PART, smoothing + PART)
    path = tmp_path / "q.toml"
    path.write_text(text)
    res = run("check", path, "--draws", "4")
    assert res.exit_code == 1, res.output
    out = " ".join(res.stdout.split())
    smooth, same_at = line_of(text, 'id = "smooth"') - 1, line_of(text, 'id = "max-logit"') - 1
    assert (f"error: {path}:{smooth}: part grad_logits: the mistake 'smooth' is never "
            "usable in 4 draws: it cannot be computed (label_smoothing: expected a number in [0, 1], got 5)") in out, out
    assert (f"error: {path}:{same_at}: part max_prob: the mistake 'max-logit' is never "
            "usable in 4 draws: it gives the answer itself (or an earlier mistake's value) in every draw") in out, out
    assert "in 4 of 4 draws" not in out                # the per-draw warnings are folded into the error
    path.write_text(text.replace('[[question.test]]\nseed = 3\npart = "max_prob"\nanswer = "3"\nmistake = "max-logit"\n', ""))
    res = run("check", path, "--draws", "4")
    assert res.exit_code == 1 and " ".join(res.stdout.split()).endswith(
        "0 degenerate (0%), 3 of 3 tests held: not usable: 2 mistakes are never usable"), res.output
