"""The interactive session: practice quiz, timed exam, spaced review.

A session is a list of Problems (generated ones, or concept questions turned into one-part
Problems) answered part by part at a prompt. Every answer goes through the grading engine
(examprep.answers: the same parser, tolerances, error carried forward and misconception
matching as `examprep grade`), and every answered part is stored in the history at once, so an
interrupted session loses nothing. After each problem the topic's review card is updated (FSRS,
examprep.review).

At a prompt: ``?`` a hint (twice: the formula), ``s`` the worked solution (the problem's
unanswered parts count as revealed), ``skip`` leave the part blank, ``q`` end the session (a
problem left with some parts answered: the others count as blank, as at the end of input or Ctrl-C);
a command word typed after ``=`` is an answer (``=s`` answers "s"). Anything else is read by the
grader's own reader (check_part, parse_answer), so it reads as it would in an answer file.
An answer that cannot be read is explained and asked again; it never costs the attempt.

Modes
  quiz    feedback after every part; the worked solution on request after every problem
  exam    a recipe's (or the topics') problems, no feedback until the end, time shown at every
          prompt; when time runs out the answers are submitted; then a graded report
  review  the items the review schedule says are due, each topic with a new variant
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable, Iterable

import numpy as np

from examprep.answers import AnswerParseError, check_part, shape_feedback
from examprep.answers.rounding import Counted, RoundingChain
from examprep.grading import address, grade_submission
from examprep.history import Attempt, CardFile, History
from examprep.problem import Part, Problem
from examprep.sources.concepts import ConceptBank, is_concept, item_of, stats_topic_of
from examprep.quiz.hints import hint_text
from examprep.quiz.outcomes import PartOutcome, ProblemOutcome, Summary
from examprep.quiz.prompt import COMMANDS, Quit, Terminal, TimeUp, command_or_answer
from examprep.quiz.views import (answer_sheet, concept_explanation, exam_header, fmt_clock, model_answer_view,
                                 part_feedback, problem_panel, problem_result)
from examprep.render import terminal
from examprep.review import rating, review


def check(part: Part, raw: str, earlier: dict[str, Any], rounding_counted: Counted | None = None) -> Any:
    """The grading engine's verdict on one typed answer (error carried forward from the earlier
    parts' answers; rounding_counted as check_part's). Raises AnswerParseError when the text
    cannot be read."""
    return check_part(part, raw, earlier, ecf=True, rounding_counted=rounding_counted)


def asked_again(part: Part, result: Any, raw: str) -> str | None:
    """Why the quiz asks for an answer again instead of grading it (None: it is graded), from the
    grader's own verdict: grade's reason where grade cannot read it, or the shape where grade marks
    it wrong for its shape. A shape that earns credit in grade — a known mistake's, or one carried
    forward from the student's own earlier answers (a transposed score matrix after transposed
    queries) — is graded, as grade grades it."""
    status = getattr(result, "status", None)
    if status == "unparseable":
        return result.feedback
    return wrong_shape(part, result.value, raw) if status == "wrong" else None



def wrong_shape(part: Part, value: Any, raw: str = "") -> str | None:
    """Why a parsed vector or matrix answer has the wrong shape (None when it fits); such an
    answer is asked again rather than graded, like one that cannot be read. A shape that a known
    mistake produces (a transposed score matrix, say) is graded, so the mistake is diagnosed."""
    if part.kind not in ("vector", "matrix") or value is None:
        return None
    want = tuple(part.shape) if part.shape else np.shape(part.expected)
    got = tuple(np.shape(value))
    if got == tuple(want) or any(got == np.shape(m.value) for m in part.misconceptions):
        return None
    return shape_feedback(want, got, raw)



class Session:
    """Runs one session over a list of Problems. ``clock`` (monotonic seconds) and ``wall``
    (Unix seconds) are injectable for tests. ``files``: generator -> the question file an
    authored problem was drawn from, remembered with its review card."""

    def __init__(self, term: Terminal, history: History | None, *, mode: str = "quiz",
                 bank: ConceptBank | None = None, options: dict[str, Any] | None = None,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time,
                 minutes: float | None = None, files: dict[str, CardFile] | None = None):
        self.term = term
        self.files = files or {}
        self.history = history
        self.mode = mode
        self.bank = bank
        self.clock = clock
        self.wall = wall
        self.started = clock()
        self.deadline = self.started + minutes * 60 if minutes else None
        self.session_id = history.start_session(mode, options or {}, now=wall()) if history else None
        self.saved = 0
        self.unanswered = 0       # parts of an unfinished problem recorded as blank when the session ended

    # ------------------------------------------------------------------------------- plumbing

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - self.clock()

    def ask(self, prompt: str) -> str:
        left = self.remaining()
        if left is not None:
            if left <= 0:
                raise TimeUp()
            prompt = f"[{fmt_clock(left)} left] {prompt}"
        line = self.term.ask(prompt, timeout=left)
        if self.deadline is not None and self.clock() > self.deadline:
            raise TimeUp()      # where no alarm could interrupt the prompt, the late answer is void
        return line

    def record(self, outcome: ProblemOutcome, part: PartOutcome, *, answered: bool = True) -> None:
        if self.history is None:
            return
        p = outcome.problem
        concept = is_concept(p)
        self.history.record(Attempt(
            kind="concept" if concept else "problem", topic=outcome.topic, item=item_of(p), generator=p.generator,
            version=p.version, part=part.part.id, answer=part.answer, status=part.status, score=part.score,
            max_score=part.part.points, seconds=round(part.seconds, 3), seed=p.seed, difficulty=p.difficulty,
            calculator_free=p.calculator_free, problem_no=outcome.number, misconception=part.misconception,
            feedback=part.explanation or part.feedback or None, hints=part.hints, mode=self.mode,
            time=self.wall(), session_id=self.session_id))
        if answered:
            self.saved += 1
        else:
            self.unanswered += 1

    def schedule(self, outcome: ProblemOutcome) -> None:
        """Update the item's review card from how the problem went."""
        if self.history is None or not outcome.complete:
            return

        fraction = outcome.score / outcome.points if outcome.points else 0.0
        r = rating(min(max(fraction, 0.0), 1.0), outcome.seconds, outcome.problem.minutes * 60,
                   hinted=outcome.hinted, revealed=outcome.revealed)
        review(self.history, item_of(outcome.problem), r, now=self.wall(), seconds=outcome.seconds,
               session_id=self.session_id, file=self.files.get(outcome.problem.generator))

    def finish(self, outcomes: list[ProblemOutcome], ended: str, report: Any = None,
               unreached: list[str] | None = None) -> Summary:
        if self.history is not None and self.session_id is not None:
            self.history.end_session(self.session_id, now=self.wall())
        return Summary(self.mode, outcomes, self.clock() - self.started, ended,
                       str(self.history.path) if self.history else None, self.saved, report, unreached or [],
                       unanswered=self.unanswered)

    def close_unfinished(self, outcome: ProblemOutcome) -> None:
        """The problem a session ended in (q, end of input, Ctrl-C) after some of its parts were
        answered: the parts not answered count as blank, 0 points, recorded and scheduled as an
        exam records a problem it reached. So the history holds the score the summary showed (1/6,
        not the 1/1 of the one part answered): stats, weak-topic drawing and levels read it."""
        if outcome.complete or not outcome.parts:
            return
        answered = {p.part.id for p in outcome.parts}
        for part in outcome.problem.parts:
            if part.id not in answered:
                po = PartOutcome(part, "", "blank", 0.0, feedback="no answer: the session ended before this part")
                outcome.parts.append(po)
                self.record(outcome, po, answered=False)
        outcome.complete = True
        self.schedule(outcome)

    # ---------------------------------------------------------------------------- practice

    def run_practice(self, problems: Iterable[Problem]) -> Summary:
        """Quiz and review: feedback after every part; Ctrl-C keeps every answered part."""
        problems = list(problems)          # the last one's prompt says "finish", not "next problem"
        outcomes: list[ProblemOutcome] = []
        ended = "done"
        if self.term.interactive:
            self.term.show(_keys_line(), style="dim")
        try:
            for n, problem in enumerate(problems, 1):
                outcome = ProblemOutcome(n, problem, stats_topic_of(problem, self.bank))
                outcomes.append(outcome)
                self.practise(outcome, last=n == len(problems))
                self.schedule(outcome)
        except Quit:
            ended = "quit"
        except EOFError:
            ended = "input-ended"
        except KeyboardInterrupt:
            ended = "interrupted"
            self.term.show()
        if outcomes:
            self.close_unfinished(outcomes[-1])
        outcomes = [o for o in outcomes if o.parts]
        return self.finish(outcomes, ended)

    def practise(self, outcome: ProblemOutcome, *, last: bool = False) -> None:
        problem = outcome.problem
        self.term.show(problem_panel(problem, outcome.number))
        earlier: dict[str, Any] = {}
        rounding = RoundingChain(problem.parts)          # as `examprep grade`: docked once per chain
        started = self.clock()
        try:
            for i, part in enumerate(problem.parts):
                result = self.answer_part(outcome, i, part, earlier, rounding)
                if result == "revealed":
                    terminal.print_worked_solution(problem, self.term.console)
                    now = self.clock()
                    for later in problem.parts[i:]:
                        po = PartOutcome(later, "", "revealed", 0.0, seconds=0.0)
                        outcome.parts.append(po)
                        self.record(outcome, po)
                    outcome.seconds = now - started
                    outcome.complete = True
                    self.term.show(problem_result(outcome))
                    return
        finally:
            outcome.seconds = self.clock() - started
        outcome.complete = True
        self.term.show(problem_result(outcome))
        if is_concept(problem):
            self.term.show(concept_explanation(problem))
            return
        while True:
            cmd = self.ask(f"Enter: {'finish' if last else 'next problem'} · s: worked solution · q: quit › ").lower()
            if cmd in ("", "n", "next"):
                return
            if cmd in ("s", "solution"):
                terminal.print_worked_solution(problem, self.term.console)
                return
            if cmd in ("q", "quit", "exit"):
                raise Quit()
            self.term.show(f"Type Enter, s or q (got {cmd!r}).", style="yellow", markup=False)

    def answer_part(self, outcome: ProblemOutcome, index: int, part: Part, earlier: dict[str, Any],
                    rounding: RoundingChain | None = None) -> str:
        """Prompt for one part until it is answered, skipped or revealed; record it."""
        problem = outcome.problem
        t0 = self.clock()
        hints = 0
        label = f"({Problem.label(index)})" if len(problem.parts) > 1 else "answer"
        prompt = f"{label} {part.form()} › "
        while True:
            cmd, raw = command_or_answer(self.ask(prompt))
            if cmd == "quit":
                raise Quit()
            if cmd == "hint":
                hints += 1
                self.term.show(hint_text(problem, part, hints), style="cyan", markup=False)
                continue
            if cmd == "solution":
                return "revealed"
            if cmd == "skip":
                earlier[part.id] = part.expected     # a gap does not break the chain after it
                po = PartOutcome(part, "", "blank", 0.0, seconds=self.clock() - t0, hints=hints)
                outcome.parts.append(po)
                self.record(outcome, po)
                self.term.show(part_feedback(po, show_expected=not is_concept(problem)))
                return "blank"
            if not raw:
                self.term.show("Type an answer, or ? for a hint, s for the solution, skip, q to quit.",
                               style="yellow", markup=False)
                continue
            if part.kind == "written":
                return self.self_mark(outcome, part, raw, t0, hints)
            try:
                result = check(part, raw, earlier, rounding.counted_for(part) if rounding else None)
            except AnswerParseError as err:
                self.term.show(f"Cannot read that: {err}. Try again (this does not count).", style="yellow", markup=False)
                continue
            problem_text = asked_again(part, result, raw)
            if problem_text:
                self.term.show(f"Cannot read that: {problem_text}. Try again (this does not count).",
                               style="yellow", markup=False)
                continue
            if getattr(result, "value", None) is not None:
                earlier[part.id] = result.value
            if rounding:
                rounding.after(part, result)
            mis = getattr(result, "misconception", None)
            po = PartOutcome(part, raw, result.status, float(result.score), misconception=mis.id if mis else None,
                             explanation=mis.explanation if mis else "", feedback=getattr(result, "feedback", "") or "",
                             seconds=self.clock() - t0, hints=hints)
            outcome.parts.append(po)
            self.record(outcome, po)
            self.term.show(part_feedback(po, show_expected=not is_concept(problem)))
            return po.status

    def self_mark(self, outcome: ProblemOutcome, part: Part, raw: str, t0: float, hints: int) -> str:
        """A written part, once the student has typed an answer: the model answer and rubric, then
        the student's own mark (0 to the part's points), recorded as status "marked"."""
        self.term.show(model_answer_view(part))
        seconds = self.clock() - t0
        mark = self.ask_mark(part)
        po = PartOutcome(part, raw, "marked", mark, feedback="marked by yourself against the rubric",
                         seconds=seconds, hints=hints)
        outcome.parts.append(po)
        self.record(outcome, po)
        self.term.show(part_feedback(po, show_expected=False))
        return po.status

    def ask_mark(self, part: Part) -> float:
        """The student's own mark for a written part, 0 to its points (asked again until it is)."""
        while True:
            reply = self.ask(f"Your mark, 0 to {part.points:g} (by the rubric) › ").strip()
            if COMMANDS.get(reply.lower()) == "quit":
                raise Quit()
            try:
                mark = float(reply)
            except ValueError:
                mark = -1.0
            if 0 <= mark <= part.points:
                return mark
            self.term.show(f"Type a number from 0 to {part.points:g}.", style="yellow", markup=False)

    def mark_written(self, problems: list[Problem], answers: dict) -> dict[tuple[int, str], float]:
        """After an exam: each written part the student answered, with the model answer and rubric,
        marked by the student (untimed: the exam is over). Parts left unmarked (q, end of input)
        stay pending."""
        todo = [(n, i, part) for n, p in enumerate(problems, 1) for i, part in enumerate(p.parts)
                if part.kind == "written" and answers.get((n, part.id))]
        marks: dict[tuple[int, str], float] = {}
        if not todo:
            return marks
        self.deadline = None
        self.term.show("Mark your written answers against the model answers:", style="bold")
        try:
            for n, i, part in todo:
                self.term.show(f"{n}{Problem.label(i)}. {part.prompt}\nYour answer: {answers[(n, part.id)]}",
                               markup=False)
                self.term.show(model_answer_view(part))
                marks[(n, part.id)] = self.ask_mark(part)
        except (Quit, EOFError, KeyboardInterrupt):
            self.term.show("The written parts not marked stay to be marked.", style="yellow")
        return marks

    # -------------------------------------------------------------------------------- exam

    def run_exam(self, problems: list[Problem], *, title: str = "Exam") -> Summary:
        """All problems in order, no feedback; answers can be changed before submitting; time
        shown at every prompt and the answers submitted when it runs out. Then graded, stored
        and scheduled."""
        answers: dict[tuple[int, str], str] = {}
        seconds: dict[tuple[int, str], float] = {}
        reached: set[int] = set()        # problems with a part answered or left blank (Enter, skip)
        ended = "done"
        total = sum(p.points for p in problems)
        limit = f"{fmt_clock(self.remaining())}" if self.deadline is not None else "no time limit"
        self.term.show(exam_header(title, len(problems), total, limit))
        try:
            for n, problem in enumerate(problems, 1):
                self.term.show(problem_panel(problem, n))
                for i, part in enumerate(problem.parts):
                    self.exam_part(n, i, part, problems, answers, seconds)
                    reached.add(n)
            self.exam_review(problems, answers, seconds)
        except TimeUp:
            ended = "time-up"
            self.term.show()
            self.term.show("Time is up: your answers are submitted.", style="bold red")
        except Quit:
            ended = "quit"
        except EOFError:
            ended = "input-ended"
        except KeyboardInterrupt:
            ended = "interrupted"
            self.term.show()
            self.term.show("Interrupted: the answers given so far are submitted.", style="bold yellow")
        marks = self.mark_written(problems, answers) if ended != "interrupted" else {}
        outcomes, report = self.grade_exam(problems, answers, seconds, reached, marks)
        unreached = [stats_topic_of(p, self.bank) for n, p in enumerate(problems, 1) if n not in reached]
        return self.finish(outcomes, ended, report, unreached)

    def exam_part(self, n: int, i: int, part: Part, problems: list[Problem], answers: dict, seconds: dict) -> None:
        t0 = self.clock()
        key = (n, part.id)
        label = f"{n}{Problem.label(i)}"
        while True:
            cmd, raw = command_or_answer(self.ask(f"{label} {part.form()} › "))
            if cmd == "quit":
                if self.confirm_submit(problems, answers):
                    raise Quit()
                continue
            if cmd in ("hint", "solution"):
                self.term.show("No hints or solutions during an exam: answer, `skip`, or q to submit.",
                               style="yellow", markup=False)
                continue
            if cmd == "skip" or not raw:
                answers.pop(key, None)
                break
            if part.kind == "written":            # any text: marked after the exam
                answers[key] = raw
                break
            problem_text = asked_again(part, self.graded_so_far(problems[n - 1], i, raw, answers, n), raw)
            if problem_text:
                self.term.show(f"Cannot read that: {problem_text}. Try again.", style="yellow", markup=False)
                continue
            answers[key] = raw
            break
        seconds[key] = seconds.get(key, 0.0) + self.clock() - t0

    @staticmethod
    def graded_so_far(problem: Problem, i: int, raw: str, answers: dict, n: int) -> Any:
        """Part ``i``'s verdict as `grade` gives it with ``raw`` and the answers given so far to the
        problem's earlier parts (grade_submission itself: the same reading, error carried forward)."""
        given = {address(1, p.id): answers[(n, p.id)] for p in problem.parts[:i] if (n, p.id) in answers}
        return grade_submission([problem], {**given, address(1, problem.parts[i].id): raw}).problems[0].parts[i]

    def confirm_submit(self, problems: list[Problem], answers: dict) -> bool:
        blank = sum(len(p.parts) for p in problems) - len(answers)
        reply = self.ask(f"Submit now, with {blank} part(s) unanswered? [y/N] › ").lower()
        return reply in ("y", "yes")

    def exam_review(self, problems: list[Problem], answers: dict, seconds: dict) -> None:
        """Before submitting: change any answer by its label (e.g. 2b), or submit."""
        labels = {f"{n}{Problem.label(i)}": (n, i) for n, p in enumerate(problems, 1) for i in range(len(p.parts))}
        while True:
            self.term.show(answer_sheet(problems, answers))
            cmd = self.ask("Type a part (e.g. 1a) to change its answer, or Enter to submit › ").lower()
            if cmd in ("", "submit", "q", "quit"):
                return
            if cmd not in labels:
                self.term.show(f"No part {cmd!r}; parts are {', '.join(list(labels)[:4])}, …", style="yellow", markup=False)
                continue
            n, i = labels[cmd]
            self.term.show(problem_panel(problems[n - 1], n))
            self.exam_part(n, i, problems[n - 1].parts[i], problems, answers, seconds)

    def grade_exam(self, problems: list[Problem], answers: dict, seconds: dict,
                   reached: set[int] | None = None,
                   marks: dict[tuple[int, str], float] | None = None) -> tuple[list[ProblemOutcome], Any]:
        """Grade the submission with the grader (examprep.grading: error carried forward within
        a problem), store every part's attempt and update each topic's review card: for the
        problems in ``reached`` only (default all; reached: a part answered or left blank), as an
        exam ended early never got to the rest, which say nothing about the student (they went to
        the history as 0 %, failed and due). The grader's result still covers the whole exam, whose
        score is out of all its points. Returns (outcomes of the problems reached, the result)."""
        submission = {address(n, pid): raw for (n, pid), raw in answers.items()}
        result = grade_submission(problems, submission, student_id="you")
        for pr in result.problems:          # the student's own marks of their written parts
            for k, r in enumerate(pr.parts):
                if (pr.number, r.part_id) in (marks or {}):
                    pr.parts[k] = replace(r, status="marked", score=marks[(pr.number, r.part_id)],
                                          feedback="marked by yourself against the rubric")
        outcomes = []
        for pr in result.problems:
            if reached is not None and pr.number not in reached:
                continue
            outcome = ProblemOutcome(pr.number, pr.problem, stats_topic_of(pr.problem, self.bank), complete=True)
            for part, r in zip(pr.problem.parts, pr.parts):
                mis = r.misconception
                outcome.parts.append(PartOutcome(
                    part, answers.get((pr.number, part.id), ""), "wrong" if r.status == "unparseable" else r.status,
                    float(r.score), mis.id if mis else None, mis.explanation if mis else "", r.feedback or "",
                    seconds.get((pr.number, part.id), 0.0)))
                self.record(outcome, outcome.parts[-1])
            outcome.seconds = sum(p.seconds for p in outcome.parts)
            outcomes.append(outcome)
            self.schedule(outcome)
        return outcomes, result


def _keys_line() -> str:
    return ("At a prompt: ? hint · s worked solution · skip · q quit; =s answers \"s\". Ctrl-C ends the session and "
            "keeps your answers.")
