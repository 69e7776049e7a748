"""How a session looks: problem panels, a part's verdict, the exam's header and answer sheet, the
closing summary, and the small text bars and clocks they use (rich)."""
from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from rich import box
from rich.console import Group
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from examprep.authoring.build import option_text
from examprep.document import Text as TextBlock
from examprep.grading.report_text import feedback_view
from examprep.problem import Part, Problem
from examprep.sources.concepts import CONCEPT_PREFIX, is_concept
from examprep.quiz.outcomes import PartOutcome, ProblemOutcome, Summary
from examprep.quiz.prompt import Terminal
from examprep.render import fmt_points, plural, shape_answer
from examprep.render.terminal import block_renderable, inline, value_renderable
from examprep.review_optimize import MIN_TRAINING_REVIEWS, default_parameters

def fmt_clock(seconds: float | None) -> str:
    """h:mm:ss (or m:ss under an hour)."""
    if seconds is None:
        return "–"
    s = max(int(math.ceil(seconds)), 0)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def fmt_duration(seconds: float) -> str:
    """A duration in words: 45 s, 3 min, 2 h 05 min, 3 d."""
    s = abs(seconds)
    if s < 60:
        return f"{s:.0f} s"
    if s < 3600:
        return f"{s / 60:.0f} min"
    if s < 86400:
        h, m = divmod(int(s // 60), 60)
        return f"{h} h {m:02d} min"
    return f"{s / 86400:.0f} d"


def problem_panel(problem: Problem, number: int) -> Any:
    """The problem as a rich panel (statement, conventions, parts with their form and tolerance)."""
    body = [block_renderable(b) for b in problem.statement]
    if problem.conventions:
        body.append(Text("Conventions: " + "; ".join(f"{k}: {v}" for k, v in problem.conventions.items()), style="dim"))
    if not is_concept(problem):
        for i, part in enumerate(problem.parts):
            body.append(Text.assemble((f"({Problem.label(i)}) ", "bold"), inline(part.prompt)))
            how = "" if part.kind == "written" else f" · {part.tolerance.describe()}"
            body.append(Text(f"    {part.points:g} pt · {_short_form(part)}{how}", style="dim"))
        meta = (f"{problem.generator} · level {problem.difficulty} · seed {problem.seed}"
                + (" · calculator-free" if problem.calculator_free else "") + f" · {problem.points:g} pt")
    else:
        part = problem.parts[0]
        form = part.form() + ("" if part.kind == "choice" else f", {part.tolerance.describe()}")
        body.append(Text(f"Answer: {form}", style="dim"))
        meta = f"{problem.generator[len(CONCEPT_PREFIX):]} · {problem.points:g} pt"
    return Panel(Group(*body), title=Text(f"{number}. {problem.title}"), subtitle=Text(meta), title_align="left",
                 subtitle_align="right", box=box.ROUNDED)         # Text: a str title is read as markup


def _short_form(part: Part) -> str:
    """The form without the typing example: "2×2 matrix", "vector of 3", "number"."""
    return part.form().split(" [", 1)[0]



def _expected_renderable(part: Part) -> Any:
    """The key's answer as grade's --show-answers gives it: a shape as 16×24×24, a written part's
    model answer (it has no value to show)."""
    if part.kind == "written":
        return Text("marked by hand; model answer: " + inline(part.model_answer))
    if shape_answer(part) is not None:
        return Text(shape_answer(part))
    text = option_text(part) if part.kind == "choice" else None
    if text is not None:
        return Text(f"{part.expected}) {inline(text)}")
    if isinstance(part.exact, str):
        return Text(part.exact)
    if isinstance(part.exact, list):
        return value_renderable(part.exact, 4)
    return value_renderable(part.expected, 4)


def part_feedback(po: PartOutcome, *, show_expected: bool = True) -> Any:
    """One part's verdict: right (or right from the earlier answers), the misconception and its
    explanation, or the expected answer."""
    pts = f"{fmt_points(po.score)}/{fmt_points(po.part.points)} pt"
    if po.status == "marked":
        return Text(f"✎ your mark · {pts}", style="bold cyan")
    if po.status == "pending":
        return Text(f"✎ to be marked by hand · {pts}", style="bold blue")
    if po.status == "correct":
        return Text(f"✓ correct · {pts}", style="bold green")
    if po.status == "ecf":
        return Text(f"✓ correct from your earlier answer (error carried forward) · {pts}", style="bold green")
    lines: list[Any] = []
    if po.status == "blank":
        lines.append(Text(f"– skipped · {pts}", style="yellow"))
    elif po.status == "misconception":
        lines.append(Text(f"✗ {po.explanation or 'a known mistake'} · {pts}", style="bold red"))
    elif po.score > 0:
        lines.append(Text(f"◐ partly right · {pts}", style="bold yellow"))
    else:
        lines.append(Text(f"✗ not right · {pts}", style="bold red"))
    if po.feedback and po.feedback != po.explanation and po.status != "blank":
        lines.append(Text(po.feedback, style="red"))
    if show_expected:
        lines.append(Text("Expected:", style="dim"))
        lines.append(Padding(_expected_renderable(po.part), (0, 0, 0, 2)))
    return Group(*lines)


def model_answer_view(part: Any) -> Any:
    """A written part's model answer and rubric, shown once the student has written theirs."""
    body: list[Any] = [Text(inline(part.model_answer))]
    if part.rubric:
        body.append(Text("Rubric:", style="dim"))
        body += [Padding(Text(f"• {inline(r)}"), (0, 0, 0, 2)) for r in part.rubric]
    return Panel(Group(*body), title="model answer", title_align="left", border_style="cyan")


def problem_result(outcome: ProblemOutcome) -> Any:
    style = "green" if outcome.score >= outcome.points - 1e-9 else ("yellow" if outcome.score > 0 else "red")
    what = "Question" if is_concept(outcome.problem) else "Problem"
    return Text(f"{what} {outcome.number}: {fmt_points(outcome.score)}/{plural(outcome.points, 'point')} in "
                f"{fmt_clock(outcome.seconds)}",
                style=f"bold {style}")


def concept_explanation(problem: Problem) -> Any:
    """A concept question's explanation, note and source, shown after every answer."""
    lines = []
    for step in problem.solution:
        texts = " ".join(inline(b.text) for b in step.blocks if isinstance(b, TextBlock))
        style = {"Answer": "bold green", "Source": "dim", "Where the notes are loose": "yellow"}.get(step.title, "")
        lines.append(Text.assemble((f"{step.title}: ", "bold"), (texts, style)))
    return Panel(Group(*lines), box=box.ROUNDED, title="why", title_align="left")


def exam_header(title: str, n: int, points: float, limit: str) -> Any:
    text = Text.assemble((f"{plural(n, 'problem')} · {points:g} points · time: {limit}\n", "bold"),
                         "No feedback until the end. Type `skip` (or Enter) to leave a part blank, q to submit early; "
                         "before submitting you can change any answer. Ctrl-C submits what you have.")
    return Panel(text, title=Text(title), title_align="left", box=box.HEAVY)     # a recipe's title, as written


def answer_sheet(problems: list[Problem], answers: dict) -> Any:
    table = Table(box=box.SIMPLE, title="Your answers", title_justify="left")
    table.add_column("part", no_wrap=True)
    table.add_column("answer", overflow="fold")
    for n, p in enumerate(problems, 1):
        for i, part in enumerate(p.parts):
            raw = answers.get((n, part.id))
            table.add_row(f"{n}{Problem.label(i)}", Text(raw) if raw else Text("— blank", style="dim"))
    return table


def print_summary(term: Terminal, summary: Summary) -> None:
    """The closing summary: per-topic score, time, misconceptions, where the attempts went."""
    out = term.console
    outcomes = summary.outcomes
    exam = summary.mode == "exam"
    notes = {"quit": "Submitted." if exam else "Session ended.", "input-ended": "Input ended."}
    if not exam:              # an exam announced these when they happened (they were printed twice)
        notes["interrupted"] = "Interrupted: every answered part is saved."
    if summary.ended in notes:
        out.print(Text(notes[summary.ended], style="yellow"))
    if summary.unanswered:
        n = summary.unanswered
        out.print(Text(f"{plural(n, 'part')} of the unfinished problem {'was' if n == 1 else 'were'} not answered: "
                       f"{'it counts' if n == 1 else 'they count'} as blank (0 points) in its score and your history.",
                       style="dim"))
    if summary.unreached:
        n = len(summary.unreached)
        out.print(Text(f"{plural(n, 'problem')} not reached ({', '.join(dict.fromkeys(summary.unreached))}): "
                       f"{'it counts' if n == 1 else 'they count'} 0 in the exam's score but {'is' if n == 1 else 'are'} "
                       "not recorded in your history.", style="dim"))
    if not outcomes:
        out.print(Text("No answers given; nothing recorded.", style="dim"))
        if exam and summary.report is not None:
            out.print(exam_report(summary))          # the exam's (blank) score, out of all its points
        return
    title = {"exam": "Exam report", "review": "Review summary"}.get(summary.mode, "Quiz summary")
    table = Table(box=box.SIMPLE_HEAVY, title=title, title_justify="left", title_style="bold")
    table.add_column("topic", style="cyan", no_wrap=True)
    table.add_column("problems", justify="right")
    table.add_column("score", justify="right")
    table.add_column("", no_wrap=True)
    table.add_column("time", justify="right")
    by_topic: dict[str, list[ProblemOutcome]] = {}
    for o in outcomes:
        by_topic.setdefault(o.topic, []).append(o)
    for topic, os_ in by_topic.items():
        got, possible = sum(o.score for o in os_), sum(o.points for o in os_)
        frac = got / possible if possible else 0.0
        table.add_row(topic, str(len(os_)), f"{fmt_points(got)}/{fmt_points(possible)}", bar(frac, 10),
                      fmt_clock(sum(o.seconds for o in os_)))
    got, possible = sum(o.score for o in outcomes), sum(o.points for o in outcomes)
    table.add_section()
    table.add_row("total", str(len(outcomes)), f"{fmt_points(got)}/{fmt_points(possible)}",
                  bar(got / possible if possible else 0.0, 10), fmt_clock(summary.seconds), style="bold")
    out.print(table)
    if summary.mode == "exam":
        out.print(exam_report(summary))
    mistakes: dict[str, tuple[str, int]] = {}
    for o in outcomes:
        for p in o.parts:
            if p.misconception:
                key = f"{o.topic}: {p.misconception}"
                mistakes[key] = (p.explanation, mistakes.get(key, ("", 0))[1] + 1)
    if mistakes:
        mt = Table(box=box.SIMPLE, title="Misconceptions", title_justify="left", title_style="bold")
        mt.add_column("×", justify="right")
        mt.add_column("mistake", style="red", no_wrap=False, overflow="fold")
        mt.add_column("what it means", overflow="fold")
        for key, (why, count) in sorted(mistakes.items(), key=lambda kv: -kv[1][1]):
            mt.add_row(str(count), key, why)
        out.print(mt)
    if summary.history_path:
        out.print(Text(f"{plural(summary.saved, 'answer')} saved to {summary.history_path}. "
                       "`examprep stats` shows your progress; `examprep review --due` what to revisit.", style="dim"))


def exam_report(summary: Summary) -> Any:
    """The exam's graded report: the grader's per-part feedback view, with the key's answers."""
    return feedback_view(summary.report, show_answers=True)


def bar(fraction: float, width: int = 10) -> str:
    """A text bar with eighth-block resolution: ███▌······ for 0.35."""
    fraction = min(max(fraction, 0.0), 1.0)
    eighths = round(fraction * width * 8)
    full, rem = divmod(eighths, 8)
    partial = " ▏▎▍▌▋▊▉"[rem].strip() if rem else ""
    return "█" * full + partial + "·" * (width - full - (1 if partial else 0))


def sparkline(values: list[float]) -> str:
    """Scores 0–1 as ▁▂▃▄▅▆▇█, oldest first."""
    ticks = "▁▂▃▄▅▆▇█"
    return "".join(ticks[min(int(v * 7 + 0.5), 7)] for v in values)


def print_optimization(term: Any, result: Any, *, path: Any, now: float) -> None:
    """What `examprep review --optimize` did (examprep.review_optimize.Optimization): the verdict,
    the review counts and log losses as a small table, and what happens next."""
    out = term.console
    in_use = (f"the parameters fitted on {datetime.fromtimestamp(result.previous_time):%Y-%m-%d}"
              if result.previous is not None and result.previous_time else "FSRS's default parameters")
    table = Table(box=box.SIMPLE, show_header=False, pad_edge=False)
    table.add_column(style="cyan")
    table.add_column(justify="right")
    table.add_column(style="dim")
    table.add_row("your reviews", str(result.reviews), "")
    table.add_row("a day or more apart", str(result.days_apart), "after the item's previous review")
    table.add_row("training reviews", str(result.training_reviews),
                  "less fsrs-rs's outliers (rare first intervals)")
    if result.outcome == "too-few":
        table.add_row("needed", str(MIN_TRAINING_REVIEWS), "where fsrs-rs fits all 21 parameters")
        out.print(f"Not enough reviews to fit your own FSRS parameters yet; keeping {in_use}.", markup=False,
                  highlight=False)
        out.print(table)
        out.print("Keep reviewing (`examprep review`) and run `examprep review --optimize` again in a few weeks.",
                  markup=False, highlight=False, style="dim")
        return
    table.add_row("log loss, in use", f"{result.previous_log_loss:.4f}", in_use)
    table.add_row("log loss, fitted", f"{result.log_loss:.4f}", "lower is better; on the training reviews")
    if result.outcome == "not-better":
        out.print(f"Fitted FSRS parameters to your reviews, but they predict them no better; keeping {in_use}.",
                  markup=False, highlight=False)
        out.print(table)
        return
    before = result.previous or default_parameters()
    table.add_row("first-review stability", "", "days to 90 % recall")
    for name, b, a in zip(("Again", "Hard", "Good", "Easy"), before[:4], (result.parameters or ())[:4]):
        table.add_row(f"  after {name}", f"{a:.2f}", f"was {b:.2f}")
    out.print(f"Fitted FSRS parameters to your reviews with {result.optimizer}.", markup=False, highlight=False)
    out.print(table)
    out.print(f"Stored in {path} ({datetime.fromtimestamp(now):%Y-%m-%d %H:%M}); `examprep review` schedules with "
              "them from now on. `examprep review --optimize --reset` returns to the defaults.",
              markup=False, highlight=False, style="dim")
