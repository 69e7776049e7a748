"""The session engine itself: planning, adaptive levels, the exam clock."""
from __future__ import annotations

import math
import os
import random
import sys
import time

import pytest

from examprep import generators
from examprep.errors import ParamError
from examprep.history import Attempt, History
from examprep.quiz import (QuizOptions, Session, Terminal, TimeUp, adaptive_level, bar, fmt_clock, fresh_seed,
                           pick_topics, plan_exam, plan_problems, sparkline, weakness)

from .helpers import correct_answers


@pytest.fixture
def history(tmp_path):
    with History(tmp_path / "h.sqlite3") as h:
        yield h


def record_problem(h, topic, fraction, seed, difficulty=1, session=1, no=1):
    h.record(Attempt(kind="problem", topic=topic, item=f"topic:{topic}", generator=topic, version=1, part="x",
                     answer="1", status="correct" if fraction == 1 else "wrong", score=fraction, max_score=1.0,
                     seconds=10, seed=seed, difficulty=difficulty, session_id=session, problem_no=no))


def test_weakness_is_smoothed_towards_one_half():
    assert weakness([]) == 0.5
    assert weakness([1.0] * 10) == pytest.approx(1 / 12)
    assert weakness([0.0] * 10) == pytest.approx(11 / 12)


def test_weak_topics_are_drawn_more_often_and_never_twice_in_a_row():
    picks = pick_topics(["weak", "strong"], 2000, random.Random(0), {"weak": 0.9, "strong": 0.1}, set())
    assert all(a != b for a, b in zip(picks, picks[1:]))
    three = pick_topics(["weak", "strong", "mid"], 3000, random.Random(1), {"weak": 0.9, "strong": 0.0, "mid": 0.5},
                        set())
    assert three.count("weak") > three.count("mid") > three.count("strong")


def test_due_topics_get_double_weight():
    picks = pick_topics(["a", "b", "c"], 3000, random.Random(2), {}, {"a"})
    assert picks.count("a") > 1.3 * picks.count("b")


@pytest.mark.parametrize("history_, want", [
    ([], 1),
    ([(1, 1.0), (1, 0.9), (1, 0.8)], 2),          # three good problems at level 1: up
    ([(1, 1.0), (1, 0.9)], 1),                    # not yet three
    ([(2, 1.0), (2, 1.0), (2, 1.0)], 3),
    ([(3, 1.0), (3, 1.0), (3, 1.0)], 3),          # already at the top
    ([(2, 0.2), (2, 0.3)], 1),                    # struggling: down
    ([(1, 0.0)], 1),                              # already at the bottom
    ([(2, 0.6), (2, 0.7), (2, 0.5)], 2),          # in between: stay
])
def test_adaptive_level(history_, want):
    assert adaptive_level(history_, (1, 2, 3)) == want


def test_a_topic_draws_variants_not_attempted_before(history):
    for s in range(50):
        record_problem(history, "gru-step", 0.5, seed=s)
    assert fresh_seed(set(range(999_990)), random.Random(3)) >= 999_990
    problems = plan_problems(QuizOptions(topics=["gru-step"], count=5), history, now=time.time())
    seeds = [p.seed for p in problems]
    assert len(set(seeds)) == 5 and not set(seeds) & set(range(50))


def test_a_seed_makes_the_problems_reproducible(history):
    a = plan_problems(QuizOptions(topics=["attention", "gru-step"], count=4, seed=11), history, now=0)
    b = plan_problems(QuizOptions(topics=["attention", "gru-step"], count=4, seed=11), history, now=0)
    assert [p.to_json() for p in a] == [p.to_json() for p in b]
    assert [p.seed for p in a] == [11, 12, 13, 14]


def test_levels_adapt_per_topic_from_the_history(history):
    for no in range(3):
        record_problem(history, "attention", 1.0, seed=100 + no, no=no)
    problems = plan_problems(QuizOptions(topics=["attention", "gru-step"], count=4, seed=1), history, now=0)
    levels = {p.generator: p.difficulty for p in problems}
    assert levels == {"attention": 2, "gru-step": 1}
    fixed = plan_problems(QuizOptions(topics=["attention"], count=2, seed=1, difficulty=3), history, now=0)
    assert {p.difficulty for p in fixed} == {3}


def test_calculator_free_keeps_to_topics_that_have_it(history):
    problems = plan_problems(QuizOptions(count=6, seed=1, calculator_free=True), history, now=0)
    gens = generators.load_all()
    assert all(p.calculator_free and gens[p.generator].calculator_free for p in problems)
    lacking = [n for n, g in gens.items() if not g.calculator_free]
    if lacking:
        with pytest.raises(ParamError, match="no calculator-free variant"):
            plan_problems(QuizOptions(topics=[lacking[0]], calculator_free=True), history, now=0)


def test_an_exam_on_topics_has_one_problem_per_topic_and_a_time_estimate(history):
    topics = ["attention", "gru-step", "receptive-field"]
    problems, title, minutes = plan_exam(QuizOptions(mode="exam", topics=topics, seed=5), history)
    assert [p.generator for p in problems] == topics and {p.difficulty for p in problems} == {2}
    assert minutes == math.ceil(sum(p.minutes for p in problems))
    _, _, given = plan_exam(QuizOptions(mode="exam", topics=topics, seed=5, minutes=42), history)
    assert given == 42
    more, _, _ = plan_exam(QuizOptions(mode="exam", topics=topics[:2], count=5, seed=5), history)
    assert [p.generator for p in more] == ["attention", "gru-step"] * 2 + ["attention"]


def test_the_default_exam_is_the_midterm_recipe(history):
    from examprep import sheets

    recipe = sheets.load_recipe("midterm")
    problems, title, minutes = plan_exam(QuizOptions(mode="exam", seed=5), history)
    assert title == recipe.title and minutes == recipe.minutes
    assert [p.generator for p in problems] == [i.topic for i in recipe.items for _ in range(i.count)]
    assert [p.difficulty for p in problems] == [i.difficulty for i in recipe.items for _ in range(i.count)]
    with pytest.raises(ParamError, match="either --recipe or --topic"):
        plan_exam(QuizOptions(mode="exam", recipe="midterm", topics=["attention"]), history)


def test_an_exam_from_a_recipe_holds_the_printed_sheets_problems(history, tmp_path):
    """The exam is drawn by the sheets' own builder: with a seed, the problems of the printed sheet,
    the recipe's tolerance included; without one, variants not attempted before."""
    from examprep import sheets

    path = tmp_path / "strict.toml"
    path.write_text('[sheet]\ntitle = "Strict"\ntolerance = "sigfigs-strict:3"\n\n'
                    '[[problem]]\ntopic = "softmax-cross-entropy"\ncount = 2\n\n[[problem]]\ntopic = "attention"\n')
    problems, title, _ = plan_exam(QuizOptions(mode="exam", recipe=str(path), seed=5), history)
    printed = sheets.build_sheet(sheets.load_recipe(str(path)), 5).copies[0].problems
    assert title == "Strict" and [p.to_dict() for p in problems] == [p.to_dict() for p in printed]
    assert {part.tolerance.rule for p in problems for part in p.parts if part.kind == "number"} == {"sigfigs-strict"}
    unseeded, _, _ = plan_exam(QuizOptions(mode="exam", recipe=str(path)), history)
    assert [p.generator for p in unseeded] == [p.generator for p in printed]
    assert unseeded[0].seed != unseeded[1].seed                 # two of one topic: two variants


class ScriptedTerminal(Terminal):
    """Answers from a list; each answer takes ``step`` seconds on a fake clock."""

    def __init__(self, lines, clock, step):
        super().__init__(no_color=True, interactive=False, width=80)
        self.lines, self.clock, self.step = list(lines), clock, step

    def ask(self, prompt, *, timeout=None):
        self.clock.t += self.step
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_the_exam_submits_when_time_runs_out(history):
    problem = generators.build("receptive-field", 1, 2)
    clock = FakeClock()
    term = ScriptedTerminal(correct_answers(problem), clock, step=25.0)     # 25 s per answer, 1 minute
    session = Session(term, history, mode="exam", clock=clock, wall=lambda: 1e9 + clock.t, minutes=1.0)
    summary = session.run_exam([problem])
    assert summary.ended == "time-up"
    statuses = [p.status for p in summary.outcomes[0].parts]
    assert statuses[:2] == ["correct", "correct"]          # answered at 25 s and 50 s
    assert set(statuses[2:]) == {"blank"}                   # the one typed at 75 s came too late
    assert len(history.attempts()) == len(problem.parts)    # every part graded and stored


def test_an_exam_prompt_is_interrupted_when_time_runs_out(monkeypatch):
    """The deadline interrupts a prompt that is still waiting (SIGALRM), not only the next one."""
    if not hasattr(__import__("signal"), "setitimer"):
        pytest.skip("no interval timers on this platform")
    import threading

    read_end, write_end = os.pipe()
    # a safety net: should the timer fail, a line arrives later and the test fails instead of hanging
    rescue = threading.Timer(20.0, lambda: os.write(write_end, b"late\n"))
    rescue.start()
    try:
        with os.fdopen(read_end, "r") as stdin:
            monkeypatch.setattr(sys, "stdin", stdin)
            term = Terminal(no_color=True, interactive=False)
            with pytest.raises(TimeUp):
                term.ask("1a › ", timeout=0.2)
    finally:
        rescue.cancel()
        os.close(write_end)


def test_formatting_helpers():
    assert fmt_clock(0) == "0:00" and fmt_clock(61) == "1:01" and fmt_clock(3 * 3600) == "3:00:00"
    assert bar(0.0, 4) == "····" and bar(1.0, 4) == "████" and bar(0.5, 4) == "██··"
    assert len(bar(0.37, 10)) == 10
    assert sparkline([0.0, 0.5, 1.0]) == "▁▅█"


def test_every_generator_can_be_answered_in_full_in_a_session():
    """Each registered generator, at each level (and calculator-free where it has one): typing the
    key's answers at the prompts gives full marks, every part accepted at its first try."""
    for name, g in sorted(generators.load_all().items()):
        for level in g.levels:
            for cf in ((False, True) if g.calculator_free else (False,)):
                problem = generators.build(name, 17, level, cf)
                term = ScriptedTerminal([*correct_answers(problem), ""], FakeClock(), step=1.0)
                summary = Session(term, None).run_practice([problem])
                statuses = [p.status for o in summary.outcomes for p in o.parts]
                assert statuses == ["correct"] * len(problem.parts), (name, level, cf, statuses)
                assert term.lines == []                       # no answer was refused and re-asked


def _exam(history, problems, lines, *, step=1.0, minutes=None):
    import io

    clock = FakeClock()
    term = ScriptedTerminal(lines, clock, step=step)
    term.console.file = io.StringIO()
    session = Session(term, history, mode="exam", clock=clock, wall=lambda: 1e9 + clock.t, minutes=minutes)
    return session.run_exam(problems), term


def test_an_exam_ended_early_records_only_the_problems_that_were_shown(history):
    from examprep.review import all_cards

    problems = [generators.build(t, 1, 2) for t in ("receptive-field", "gru-step", "attention", "lora")]
    first = correct_answers(problems[0])
    summary, _ = _exam(history, problems, first + ["q", "y"])        # answers problem 1, then submits
    assert summary.ended == "quit"
    rows = history.attempts()
    assert {a.topic for a in rows} == {"receptive-field"} and len(rows) == len(problems[0].parts)
    assert [o.topic for o in summary.outcomes] == ["receptive-field"]
    assert summary.unreached == ["gru-step", "attention", "lora"]
    assert {c.item for c in all_cards(history, now=1e9 + 1e6)} == {"topic:receptive-field"}   # nothing else is due
    assert summary.report.max_score == sum(p.points for p in problems)  # the exam's score is still out of all


def test_a_problem_shown_but_left_blank_still_counts(history):
    problems = [generators.build(t, 1, 2) for t in ("receptive-field", "gru-step")]
    lines = correct_answers(problems[0]) + ["skip"] + ["q", "y"]     # problem 2 shown, its first part skipped
    summary, _ = _exam(history, problems, lines)
    assert [o.topic for o in summary.outcomes] == ["receptive-field", "gru-step"] and summary.unreached == []
    assert {a.topic for a in history.attempts()} == {"receptive-field", "gru-step"}


def test_time_up_is_announced_once(history):
    from examprep.quiz import print_summary

    problems = [generators.build("receptive-field", 1, 2), generators.build("gru-step", 1, 2)]
    summary, term = _exam(history, problems, correct_answers(problems[0]), step=25.0, minutes=1.0)
    print_summary(term, summary)
    out = term.console.file.getvalue()
    assert summary.ended == "time-up" and out.count("Time is up") == 1, out
    assert "not reached" in out and "gru-step" in out


def test_an_interrupted_exam_says_so_once(history, monkeypatch):
    from examprep.quiz import print_summary

    problems = [generators.build("receptive-field", 1, 2)]

    class Interrupting(ScriptedTerminal):
        def ask(self, prompt, *, timeout=None):
            raise KeyboardInterrupt

    import io

    clock = FakeClock()
    term = Interrupting([], clock, 1.0)
    term.console.file = io.StringIO()
    summary = Session(term, history, mode="exam", clock=clock, wall=lambda: 1e9).run_exam(problems)
    print_summary(term, summary)
    out = term.console.file.getvalue()
    assert summary.ended == "interrupted" and out.count("Interrupted") == 1, out


class _PromptRecorder(ScriptedTerminal):
    def __init__(self, lines):
        super().__init__(lines, FakeClock(), step=1.0)
        self.prompts: list[str] = []

    def ask(self, prompt, *, timeout=None):
        self.prompts.append(prompt)
        return super().ask(prompt, timeout=timeout)


def test_the_last_problem_offers_to_finish_not_a_next_problem():
    # issue 36: "Enter: next problem" was offered after the quiz's last problem
    problems = [generators.build(t, 1, 1) for t in ("receptive-field", "max-pool")]
    term = _PromptRecorder([*correct_answers(problems[0]), "", *correct_answers(problems[1]), ""])
    Session(term, None).run_practice(problems)
    after = [p for p in term.prompts if p.startswith("Enter:")]
    assert after == ["Enter: next problem · s: worked solution · q: quit › ",
                     "Enter: finish · s: worked solution · q: quit › "]
