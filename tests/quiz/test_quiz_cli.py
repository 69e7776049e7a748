"""`examprep quiz`, `stats` and `review` driven through the CLI with scripted input."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from examprep import generators
from examprep.cli import app
from examprep.history import History
from examprep.quiz import QuizOptions, fmt_clock, load_concepts, plan_concepts

from .helpers import correct_answers, interrupt_after, typed

runner = CliRunner()
ENV = {"COLUMNS": "80"}


def run(args, lines=(), **kw):
    text = "".join(f"{line}\n" for line in lines)
    return runner.invoke(app, args, input=text, env={**ENV, **kw.pop("env", {})}, **kw)


def attempts():
    with History() as h:
        return h.attempts()


ATT = ["quiz", "--topic", "attention", "--seed", "8", "--count", "1"]


@pytest.fixture(scope="module")
def att8():
    return generators.build("attention", 8, 1)      # what ATT draws on an empty history (level 1)


def test_a_correct_session_scores_full_marks_and_is_recorded(att8):
    res = run(ATT, [*correct_answers(att8), ""])
    assert res.exit_code == 0, res.output
    assert res.output.count("✓ correct") == 3
    assert "Problem 1: 8/8 points" in res.output
    assert "Quiz summary" in res.output and "attention" in res.output
    rows = attempts()
    assert [(a.part, a.status, a.score) for a in rows] == [("scaled_scores", "correct", 2), ("weights", "correct", 3),
                                                            ("output", "correct", 3)]
    assert all(a.generator == "attention" and a.version == att8.version and a.seed == 8 and a.mode == "quiz" for a in rows)
    assert rows[0].answer == typed(att8.parts[0])
    with History() as h:
        assert h.card("topic:attention") is not None


def test_a_misconception_is_named_explained_and_recorded(att8):
    no_scale = next(m for m in att8.parts[0].misconceptions if m.id == "no-scale")
    res = run(ATT, [json.dumps(no_scale.value), "q"])
    assert "forgot to divide by √d_k" in res.output
    a, *rest = attempts()
    assert a.status == "misconception" and a.misconception == "no-scale" and "√d_k" in a.feedback
    assert [(r.part, r.status, r.score) for r in rest] == [("weights", "blank", 0), ("output", "blank", 0)]


def test_error_carried_forward_credits_a_consistent_later_part(att8):
    weights = np.array([[0.6, 0.4], [0.4, 0.6]])                 # wrong, but used consistently in (c)
    value = np.array(att8.params["value"])
    res = run(ATT, [typed(att8.parts[0]), json.dumps(weights.tolist()), json.dumps((weights @ value).tolist()), ""])
    assert "error carried forward" in res.output
    assert [a.status for a in attempts()] == ["correct", "wrong", "ecf"]


def test_an_unreadable_answer_is_explained_and_asked_again_without_cost(att8):
    res = run(ATT, ["[[0.5, 0], [-0.5", "1 2 3", *correct_answers(att8), ""])
    assert res.output.count("Cannot read that") == 2
    assert "expected 2×2, got 3 entries" in res.output
    assert [a.status for a in attempts()] == ["correct"] * 3


def test_control_characters_in_piped_input_are_echoed_escaped(att8):
    res = run(ATT, ["\x1b[31mRED\x07", *correct_answers(att8), ""])
    assert "\x1b" not in res.output and "\x07" not in res.output      # nothing reaches the terminal raw
    assert "\\x1b[31mRED\\x07" in res.output                        # shown, escaped
    assert [a.status for a in attempts()] == ["correct"] * 3


def test_hint_then_solution_reveals_and_records_the_rest(att8):
    res = run(ATT, [typed(att8.parts[0]), "?", "?", "s"])
    assert "Hint: Exponentiate" in res.output
    assert "Formula: α" in res.output
    assert "worked solution" in res.output
    rows = attempts()
    assert [a.status for a in rows] == ["correct", "revealed", "revealed"]
    assert rows[0].hints == 0 and rows[1].hints == 0
    from examprep.review import state
    with History() as h:
        import time
        assert state(h, "topic:attention", now=time.time()).state == "Learning"   # rated Again


def test_skip_and_quit_end_with_a_summary(att8):
    res = run(ATT, ["skip", "q"])
    assert res.exit_code == 0
    assert "– skipped" in res.output and "Session ended." in res.output and "Quiz summary" in res.output
    rows = attempts()
    assert [a.status for a in rows] == ["blank"] * 3       # skipped, then the two parts q left unanswered
    assert rows[0].feedback != rows[1].feedback == "no answer: the session ended before this part"


def test_ctrl_c_mid_session_keeps_the_answered_parts(att8, monkeypatch):
    interrupt_after(monkeypatch, 1)
    res = run(ATT, [typed(att8.parts[0]), typed(att8.parts[1])])
    assert res.exit_code == 130
    assert "Interrupted: every answered part is saved." in res.output
    assert "Quiz summary" in res.output and "Traceback" not in res.output
    assert [(a.part, a.status) for a in attempts()] == [("scaled_scores", "correct"), ("weights", "blank"),
                                                          ("output", "blank")]


def test_input_running_out_ends_the_session_cleanly(att8):
    res = run(ATT, [typed(att8.parts[0])])
    assert res.exit_code == 0 and "Input ended." in res.output
    assert [a.status for a in attempts()] == ["correct", "blank", "blank"]


def test_parts_left_unanswered_when_a_session_ends_count_as_not_correct_in_stats():
    """1/6 in the quiz summary is 1/6 in `stats` (not 100 % of the one part answered): the
    unfinished problem's other parts are recorded as blank, so the topic is weak, not mastered."""
    res = run(["quiz", "--topic", "gru-step", "--seed", "7", "--count", "1"], ["0.5"])
    assert res.exit_code == 0 and "Input ended." in res.output
    assert "1/6" in res.output
    assert "3 parts of the unfinished problem were not answered: they count as blank (0 points)" in \
        " ".join(res.output.split())
    assert "1 answer saved" in res.output
    stats = json.loads(run(["stats", "--json"]).stdout)
    (topic,) = stats["topics"]
    assert (topic["topic"], topic["parts"], topic["accuracy"], topic["scores"]) == ("gru-step", 4, 0.1667, [0.1667])
    text = run(["stats"]).output
    assert "17%" in text and "100%" not in text
    from examprep.quiz.plan import _problem_fractions
    assert _problem_fractions(attempts())["gru-step"] == [(1, pytest.approx(1 / 6))]


def test_a_problem_with_no_part_answered_is_not_recorded():
    res = run(["quiz", "--topic", "gru-step", "--seed", "7", "--count", "1"], [])
    assert res.exit_code == 0 and "No answers given; nothing recorded." in res.output
    assert attempts() == []


@pytest.mark.parametrize("args, message", [
    (["quiz", "--difficulty", "5"], "--difficulty: expected 1, 2 or 3"),
    (["quiz", "--difficulty", "two"], "--difficulty: expected an integer"),
    (["quiz", "--count", "0"], "--count: expected 1 to 200"),
    (["quiz", "--topic", "atention"], "did you mean attention"),
    (["quiz", "--minutes", "30"], "add --exam"),
    (["quiz", "--exam", "--minutes", "-1"], "--minutes: expected more than 0"),
    (["quiz", "--exam", "--minutes", "soon"], "--minutes: expected a number"),
    (["quiz", "--exam", "--concepts"], "cannot be combined"),
    (["quiz", "--concepts", "--topic", "atention"], "did you mean attention"),
    (["quiz", "--seed", "-3"], "--seed: expected a non-negative integer"),
    (["stats", "--days", "0"], "--days: expected a positive number"),
    (["review", "--json"], "--json goes with --due"),
    (["review", "--count", "x"], "--count: expected an integer"),
])
def test_bad_options_get_one_line_and_exit_2(args, message):
    res = run(args)
    assert res.exit_code == 2, res.output
    assert message in res.output
    assert res.output.strip().count("\n") == 0 and res.output.startswith("error: ")


def test_a_damaged_history_is_reported_not_a_traceback(home):
    home.mkdir(parents=True)
    (home / "history.sqlite3").write_bytes(b"garbage" * 500)
    res = run(["stats"])
    assert res.exit_code == 1 and res.output.startswith("error: ") and "move it aside" in res.output


def test_no_color_is_respected(att8):
    lines = [typed(att8.parts[0]), "q"]
    colour = re.compile(r"\x1b\[[0-9;]*3[0-9]m|\x1b\[[0-9;]*38;")
    assert colour.search(run(ATT, lines, env={"FORCE_COLOR": "1"}).output)
    assert not colour.search(run(ATT, lines, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).output)
    assert not colour.search(run([*ATT, "--no-color"], lines, env={"FORCE_COLOR": "1"}).output)


def test_everything_fits_an_80_column_terminal(att8):
    outputs = [run(ATT, [*correct_answers(att8)[:2], "1", "s"]).output,
               run(["quiz", "--concepts", "--count", "2", "--seed", "1"], ["a", "b"]).output,
               run(["stats"]).output, run(["review", "--due"]).output,
               run(["quiz", "--exam", "--topic", "gru-step", "--seed", "2"], ["", "", "", "", ""]).output]
    for out in outputs:
        # a prompt line carries the echoed answer, as long as the student typed it; the rest fits
        assert max(len(line) for line in out.splitlines() if " › " not in line) <= 80, out


def test_concept_quiz_explains_every_answer():
    bank = load_concepts()
    planned = plan_concepts(QuizOptions(topics=["attention"], count=3, seed=4, concepts=True), bank, None, now=0)
    right = typed(planned[0].parts[0])
    wrong = next(m for m in planned[1].parts[0].misconceptions)
    res = run(["quiz", "--concepts", "--topic", "attention", "--count", "3", "--seed", "4"],
              [right, typed(planned[1].parts[0], wrong.value), "skip"])
    assert res.exit_code == 0, res.output
    assert res.output.count("Why:") == 3 and res.output.count("Source:") == 3
    assert wrong.explanation[:40] in " ".join(res.output.split())
    rows = attempts()
    assert [a.status for a in rows] == ["correct", "misconception", "blank"]
    assert all(a.kind == "concept" and a.topic == "concepts/attention" for a in rows)
    assert rows[0].generator == planned[0].generator and rows[0].version == bank.version


def test_stats_reflect_the_sessions(att8):
    assert "No attempts yet" in run(["stats"]).output
    run(ATT, [*correct_answers(att8), ""])
    no_scale = next(m for m in att8.parts[0].misconceptions if m.id == "no-scale")
    run(ATT, [json.dumps(no_scale.value), "skip", "skip", ""])
    data = json.loads(run(["stats", "--json"]).output)
    (topic,) = data["topics"]
    assert topic["topic"] == "attention" and topic["problems"] == 2
    assert topic["accuracy"] == pytest.approx(8 / 16)
    assert topic["scores"] == pytest.approx([1.0, 0.0])
    assert data["misconceptions"][0]["id"] == "no-scale" and data["misconceptions"][0]["count"] == 1
    table = run(["stats", "--no-color"]).output
    assert "attention" in table and "50%" in table and "no-scale" in table


def test_review_due_reflects_a_quiz_and_review_draws_a_new_variant(att8):
    assert "Nothing scheduled yet" in run(["review", "--due"]).output
    run(ATT, ["skip", "skip", "skip", ""])                        # failed: due again within minutes
    due = run(["review", "--due"]).output
    assert "Nothing is due. Next: attention in" in due
    schedule = json.loads(run(["review", "--due", "--json"]).output)
    assert [c["item"] for c in schedule] == ["topic:attention"] and schedule[0]["state"] == "Learning"
    # a day later it is due, and `review` practises it with a variant not seen before
    from examprep import review as rv
    with History() as h:
        import time
        rv.review(h, "topic:attention", 1, now=time.time() - 86400)
    assert "Due now: 1" in run(["review", "--due"]).output
    res = run(["review"], ["skip", "skip", "skip", ""])
    assert res.exit_code == 0 and "Review summary" in res.output
    rows = attempts()
    assert {a.mode for a in rows} == {"quiz", "review"}
    assert len({a.seed for a in rows}) == 2                       # a new variant


def test_nothing_due_means_no_review_session(att8):
    run(ATT, [*correct_answers(att8), ""])
    res = run(["review"])
    assert res.exit_code == 0 and "Nothing is due" in res.output


def test_exam_runs_to_the_end_with_a_graded_report():
    p = generators.build("receptive-field", 1, 2)                 # the exam's default level is 2
    right = correct_answers(p)
    off = [str(int(a) + 7) for a in right]                        # wrong, and no known mistake
    # all right except (a); at the review before submitting, (a) is corrected and (b) spoilt
    res = run(["quiz", "--exam", "--topic", "receptive-field", "--seed", "1", "--no-color"],
              [off[0], *right[1:], "1a", right[0], "1b", off[1], ""])
    assert res.exit_code == 0, res.output
    out = res.output
    assert "No feedback until the end" in out and "left]" in out
    before_report = out.split("Exam report")[0]
    assert "✓" not in before_report and "✗" not in before_report   # no feedback during the exam
    assert "Your answers" in before_report
    rows = attempts()
    assert all(a.mode == "exam" for a in rows) and len(rows) == len(p.parts)
    assert [a.status for a in rows] == ["correct", "wrong"] + ["correct"] * (len(p.parts) - 2)
    assert rows[1].answer == off[1]
    total = sum(part.points for part in p.parts)
    assert f"{total - p.parts[1].points:g}/{total:g}" in out


def test_exam_quit_asks_before_submitting():
    res = run(["quiz", "--exam", "--topic", "gru-step", "--seed", "2"], ["q", "n", "q", "y"])
    assert res.exit_code == 0
    assert res.output.count("Submit now") == 2 and "0/6 (0%)" in res.output       # the exam's score, all blank
    # submitted before any part of the problem was answered or skipped: nothing said about gru-step
    assert "1 problem not reached (gru-step)" in res.output and attempts() == []


def test_quiz_help_imports_neither_torch_nor_sympy():
    import subprocess
    import sys
    code = ("import sys; sys.argv = ['examprep', 'quiz', '--help']\n"
            "from examprep.cli import app\n"
            "try:\n    app()\nexcept SystemExit:\n    pass\n"
            "print('IMPORTED', [m for m in ('torch', 'sympy', 'fsrs', 'sqlite3') if m in sys.modules])")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "IMPORTED []" in res.stdout, res.stdout + res.stderr


def test_two_quiz_processes_at_once_lose_no_attempt(home):
    import os
    import subprocess
    import sys
    env = dict(os.environ, EXAMPREP_HOME=str(home), COLUMNS="80")
    procs = [subprocess.Popen([sys.executable, "-m", "examprep", "quiz", "--concepts", "--count", "12", "--seed", seed],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
             for seed in ("1", "2")]
    for p in procs:                       # both started before either is fed, so their writes interleave
        _, err = p.communicate(b"skip\n" * 12, timeout=120)
        assert p.returncode == 0, err.decode()
    with History() as h:
        rows = h.attempts()
        sessions = {a.session_id for a in rows}
        assert len(rows) == 24 and len(sessions) == 2
        assert sum(n for *_, n in h.cards()) == 24        # every answer also reviewed its card


def test_exam_with_a_recipe_uses_its_mix_and_time():
    from examprep import sheets
    recipe = sheets.load_recipe("transformer")
    res = run(["quiz", "--exam", "--recipe", "transformer", "--seed", "3"], ["skip"] * 3 + ["q", "y"])
    assert res.exit_code == 0, res.output
    assert f"time: {fmt_clock(recipe.minutes * 60)}" in res.output
    first = sheets.build_problems(recipe, 3)[0]
    assert len(first.parts) > 3                    # so the exam ends inside problem 1
    assert {a.problem_no for a in attempts()} == {1} and len(attempts()) == len(first.parts)
    assert f"{recipe.problem_count - 1} problems not reached" in res.output
    bad = run(["quiz", "--exam", "--recipe", "midtrm"])
    assert bad.exit_code == 2 and "did you mean midterm" in bad.output
