"""Real terminal sessions through a pseudo-terminal (pexpect): prompts, Ctrl-C, the exam clock."""
from __future__ import annotations

import os
import sys

import pexpect
import pytest

from examprep import generators
from examprep.history import History

from .helpers import correct_answers

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")


def spawn(home, *args):
    env = dict(os.environ, EXAMPREP_HOME=str(home), TERM="xterm", NO_COLOR="1", COLUMNS="80", LINES="24")
    env.pop("FORCE_COLOR", None)
    child = pexpect.spawn(sys.executable, ["-m", "examprep", *args], env=env, encoding="utf-8",
                          dimensions=(24, 80), timeout=60)
    return child


def test_a_terminal_session_answers_hints_and_ctrl_c_keeps_the_answers(home):
    problem = generators.build("receptive-field", 1, 1)
    answers = correct_answers(problem)
    child = spawn(home, "quiz", "--topic", "receptive-field", "--seed", "1", "--count", "1")
    child.expect("At a prompt: \\? hint")                          # the keys, shown on a terminal only
    child.expect(r"\(a\) integer › ")
    child.sendline(answers[0])
    child.expect("✓ correct")
    child.expect(r"\(b\) integer › ")
    child.sendline("not a number")
    child.expect("Cannot read that")
    child.expect(r"\(b\) integer › ")
    child.sendline("?")
    child.expect("Hint: |Formula: ")
    child.expect(r"\(b\) integer › ")
    child.sendintr()                                               # Ctrl-C while the prompt waits
    child.expect("Interrupted: every answered part is saved.")
    child.expect("Quiz summary")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert "Traceback" not in child.before
    with History() as h:
        rows = h.attempts()
    assert [(a.part, a.status) for a in rows] == [(problem.parts[0].id, "correct"),
                                                  *((p.id, "blank") for p in problem.parts[1:])]


def test_a_terminal_exam_is_submitted_when_time_runs_out(home):
    child = spawn(home, "quiz", "--exam", "--topic", "gru-step", "--seed", "2", "--minutes", "0.05")
    child.expect(r"\[0:0[0-3] left\] 1a ")                          # 3 seconds, shown at the prompt
    child.sendline("[0.5, 0.5]")
    child.expect(r"left\] 1b ")                                    # … then nothing more is typed
    child.expect("Time is up: your answers are submitted.")
    child.expect("Exam report")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    with History() as h:
        rows = h.attempts()
    assert len(rows) == len(generators.build("gru-step", 2, 2).parts)
    assert rows[0].answer == "[0.5, 0.5]" and {a.status for a in rows[1:]} == {"blank"}


def test_enter_on_an_empty_prompt_ends_the_line_like_any_answer(home):
    # readline was given an empty prompt (rich printed it): Enter on an empty line printed no newline,
    # so the next message, prompt or panel began on the prompt's line and the frame broke
    child = spawn(home, "quiz", "--topic", "activation", "--seed", "1", "--count", "1")
    child.expect(r"\(a\) number › ")
    child.sendline("")
    child.expect("Type an answer")
    assert "\n" in child.before, repr(child.before)
    child.expect(r"\(a\) number › ")
    child.sendline("skip")
    child.expect(r"\(b\) number › ")
    child.sendintr()
    child.expect(pexpect.EOF)
    exam = spawn(home, "quiz", "--exam", "--topic", "activation", "--seed", "1", "--count", "1")
    exam.expect(r"left\] 1a [^\n]*› ")
    exam.sendline("")                                              # Enter leaves the part blank
    exam.expect(r"left\] 1b [^\n]*› ")
    assert "\n" in exam.before, repr(exam.before)
    exam.sendintr()
    exam.expect(pexpect.EOF)
