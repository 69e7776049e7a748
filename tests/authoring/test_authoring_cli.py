"""The issue's example end to end from the CLI: `check` (exit 0/1/2), `generate FILE.toml
--solution --key --template`, `grade --self-test` on its key, `solve --list TOPIC`, and a bad file
in a batch of good ones."""
import json
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep.cli import app
from examprep.keys import read_key

runner = CliRunner()
BANK = Path(str(resources.files("examprep") / "bank" / "questions"))
SOFTMAX = BANK / "softmax-by-hand.toml"


def run(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "80", "NO_COLOR": "1"})


def flat(text):
    """The output with its wrapping undone (check wraps each line to the terminal's width)."""
    return " ".join(text.split())


@pytest.mark.parametrize("name", ["softmax-by-hand.toml", "dense-by-hand.toml"])
def test_the_shipped_example_questions_pass_check(name):
    res = run("check", BANK / name)
    assert res.exit_code == 0, res.output
    assert flat(res.stdout).endswith("0 degenerate (0%): usable")
    assert "50 draws" in flat(res.stdout)


def test_check_exits_1_when_the_tolerance_cannot_separate_a_mistake_and_names_the_part_line(tmp_path):
    path = tmp_path / "loose.toml"
    path.write_text(SOFTMAX.read_text().replace('answer = "grad_logits"', 'answer = "grad_logits"\ntolerance = "atol:1"'))
    res = run("check", path)
    assert res.exit_code == 1, res.output
    assert f"warning: {path}:23: part grad_logits: in " in flat(res.stdout)
    assert "cannot tell the answer from the mistake 'p-only'" in flat(res.stdout)
    assert "not usable: more than 10% of the draws are degenerate" in flat(res.stdout)


def test_check_exits_1_when_an_answer_cannot_be_graded(tmp_path):
    # two channels in, one out: conv2d's output has three axes, which no part kind holds
    path = tmp_path / "c3.toml"
    path.write_text('[question]\nid = "c3"\nsolve = "conv2d"\n[question.params]\n'
                    'input = [[[1, 2], [3, 4]], [[0, 1], [1, 0]]]\nkernel = [[[[1]], [[2]]]]\n'
                    '[[question.part]]\nanswer = "output"\nprompt = "The output."\n')
    res = run("check", path, "--draws", "3")
    assert res.exit_code == 1, res.output
    assert f"error: {path}:7: part output: in 3 of 3 draws" in flat(res.stdout)
    assert "cannot be graded" in res.stdout and "not usable: a part cannot be graded" in flat(res.stdout)
    assert "different draws" not in res.stdout          # a question of fixed values is meant to repeat


def test_check_a_bad_file_exits_2_with_one_line_and_the_other_files_are_still_checked(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(SOFTMAX.read_text().replace('answer = "probs"', 'answer = "prob"'))
    res = run("check", bad, SOFTMAX)
    assert res.exit_code == 2
    assert res.stderr.strip().startswith(f"error: {bad}:18: part 1 answer: cross-entropy has no answer 'prob'")
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output
    assert f"{SOFTMAX}: 3 parts, 50 draws" in flat(res.stdout)


def test_generate_a_question_file_with_its_solution_key_and_template_and_self_test_the_key(tmp_path):
    key, template = tmp_path / "key.json", tmp_path / "answers.toml"
    res = run("generate", SOFTMAX, "--seed", "3", "--solution", "--key", key, "--template", template)
    assert res.exit_code == 0, res.output
    assert "Softmax of three logits" in res.stdout and "Model answer (w1)" in res.stdout
    assert "Rubric: names p − y (1); explains the cancellation (1)." in " ".join(res.stdout.split())
    k = read_key(key)
    kinds = [(p.id, p.kind) for p in k.problems[0].parts]
    assert kinds == [("probs", "vector"), ("grad_logits", "vector"), ("w1", "written")]
    assert "w1 = \"\"" in template.read_text() and "written answer (marked by hand)" in template.read_text()
    test = run("grade", key, "--self-test")
    assert test.exit_code == 0 and "self-test passed" in test.stdout, test.output


def test_generate_mixes_question_files_and_generators(tmp_path):
    res = run("generate", "dense-backward", SOFTMAX, "--seed", "1", "--json")
    assert res.exit_code == 0, res.output
    problems = json.loads(res.stdout)
    assert [p["generator"] for p in problems] == ["dense-backward", "question:softmax-by-hand"]


def test_generate_a_missing_question_file_is_one_line_exit_2(tmp_path):
    res = run("generate", tmp_path / "nope.toml")
    assert res.exit_code == 2 and "nope.toml" in res.stderr and "Traceback" not in res.output


def test_solve_list_topic_shows_its_answers_with_their_known_mistakes():
    res = run("solve", "--list", "cross-entropy")
    assert res.exit_code == 0, res.output
    out = res.stdout
    for name in ("loss", "probs", "grad_logits", "y-minus-p", "p-only", "exp-only"):
        assert name in out
    as_json = json.loads(run("solve", "--list", "logistic-regression", "--json").stdout)
    loss = next(a for a in as_json["answers"] if a["name"] == "loss")
    assert loss["ecf"] == ["bce-from-probs"] and loss["mistakes"][0]["id"] == "other-reduction"
    bad = run("solve", "--list", "cross-entropyy")
    assert bad.exit_code == 2 and "did you mean cross-entropy" in bad.stderr


def test_topics_answers_is_the_same_list_for_an_author():
    assert run("topics", "--answers", "cross-entropy").stdout == run("solve", "--list", "cross-entropy").stdout
    bad = run("topics", "--answers", "nope")
    assert bad.exit_code == 2 and "unknown topic 'nope'" in bad.stderr


def test_generate_markdown_of_a_question_file_and_levels_it_does_not_have():
    res = run("generate", SOFTMAX, "--seed", "2", "--markdown", "--solution")
    assert res.exit_code == 0, res.output
    assert "## Softmax of three logits" in res.stdout and "[2 pt; written answer (marked by hand)]" in res.stdout
    bad = run("generate", SOFTMAX, "--difficulty", "2")
    assert bad.exit_code == 2 and "--difficulty: a question file has no levels" in bad.stderr


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_overflowing_draws_print_no_numpy_warning(tmp_path):
    # exp(z) of the 'exp-only' mistake overflows for logits near 10^9: numpy warns unless silenced
    path = tmp_path / "big.toml"
    path.write_text(SOFTMAX.read_text().replace("integers = [-2, 3]", "integers = [-999999999, 999999999]"))
    for args in (("check", path, "--draws", "3"), ("generate", path, "--seed", "1", "--solution")):
        res = run(*args)
        assert res.exit_code == 0, res.output
        assert "RuntimeWarning" not in res.output and "encountered" not in res.output, res.output


def test_an_answer_made_infinite_by_an_overflow_is_degenerate_not_usable(tmp_path, monkeypatch):
    import numpy as np

    from examprep import solve

    real = solve.compute

    def overflowing(topic, given):          # a topic whose answer overflows for these numbers
        topic, full, trace = real(topic, given)
        trace["probs"] = np.exp(np.array([1000.0, 0.0, 0.0]))
        return topic, full, trace

    monkeypatch.setattr(solve, "compute", overflowing)
    res = run("check", SOFTMAX, "--draws", "4")
    assert res.exit_code == 1, res.output
    text = " ".join(res.stdout.split())
    assert f"{SOFTMAX}:17: part probs: in 4 of 4 draws" in text
    assert "degenerate: probs is not finite for these parameters (overflow in the computation)" in text
    assert "4 degenerate (100%): not usable" in res.stdout and "Warning" not in res.stderr


def test_check_groups_redraws_into_one_warning_that_is_not_degenerate_and_wraps_to_80_columns(tmp_path):
    path = tmp_path / "q.toml"
    path.write_text(SOFTMAX.read_text().replace("target = { choice = [0, 1, 2] }", "target = { choice = [0, 1, 5] }"))
    res = run("check", path)
    assert res.exit_code == 0, res.output
    text = flat(res.stdout)
    assert text.count("warning:") == 1 and f"warning: {path}:15: in 16 of 50 draws" in text
    assert "the engine refused 76 draws before one it could use (redrawn, not degenerate): target: class index" in text
    assert "0 degenerate (0%): usable (see the warnings)" in text
    lines = res.stdout.splitlines()
    # only the file's path, which has no space to break at, may pass 80 columns (alone on its line, or
    # after "warning: " when it fits there; a deep temporary directory makes it long)
    assert all(len(line) <= 80 or str(path) in line and " " not in line.strip().removeprefix("warning: ")
               for line in lines), lines
    assert all(line.startswith(("warning:", "  ", str(path))) for line in lines)


def test_topics_answers_maps_a_generator_to_the_solve_topic_its_parts_come_from():
    res = run("topics", "--answers", "softmax-cross-entropy")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("cross-entropy  Softmax + cross-entropy loss")
    assert res.stderr.strip() == ("note: softmax-cross-entropy is a generator; its parts' answers are those of the "
                                  "solve topic cross-entropy")
    assert run("topics", "--answers", "RNN-STEP").stdout.startswith("rnn-cell ")


def test_topics_answers_of_a_model_generator_says_it_takes_solve_topics():
    res = run("topics", "--answers", "attention-from-model")
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "--answers takes a solve topic (`examprep solve --list` names them)" in res.stderr


def test_an_unknown_topic_in_another_case_gets_the_did_you_mean():
    res = run("solve", "CROSS-ENTROPY", "--list")
    assert res.exit_code == 2 and "did you mean cross-entropy?" in res.stderr


def test_solve_list_topic_has_no_trailing_spaces_and_wraps_explanations_under_their_first_line():
    lines = run("solve", "--list", "cross-entropy").stdout.splitlines()
    assert lines and all(line == line.rstrip() and len(line) <= 80 for line in lines), lines
    first = next(i for i, line in enumerate(lines) if line.startswith("      double-softmax  "))
    assert lines[first + 1].startswith("        loss: the loss takes log of p directly")


def test_check_refuses_a_control_character_in_one_line_exit_2_and_the_other_files_are_still_checked(tmp_path):
    bad = tmp_path / "bell.toml"
    bad.write_text(SOFTMAX.read_text().replace('title = "Softmax of three logits"', 'title = "\\u0007bell\\u202e"'))
    res = run("check", bad, SOFTMAX)
    assert res.exit_code == 2
    assert res.stderr.splitlines()[0] == (f"error: {bad}:8: [question] title: a line break or control character "
                                          "('\\x07') cannot be printed in one line of the sheet, its answer files "
                                          "and exports; write it on one line")
    assert "softmax-by-hand.toml" in res.output and "\x07" not in res.output


def test_generate_refuses_a_question_file_with_a_control_character_before_writing_anything(tmp_path):
    bad = tmp_path / "vt.toml"
    bad.write_text(SOFTMAX.read_text().replace('prompt = "The softmax probabilities."',
                                               'prompt = "The softmax\\u000b probabilities."'))
    res = run("generate", bad, "--seed", "1", "--key", tmp_path / "k.json", "--template", tmp_path / "a.toml")
    assert res.exit_code == 2 and f"{bad}:19: part 1 prompt: a control character ('\\x0b')" in res.stderr
    assert not (tmp_path / "k.json").exists() and not (tmp_path / "a.toml").exists()
