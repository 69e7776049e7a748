"""Text of a question's author, of a student or from the history reaches the terminal as written:
never read as rich markup ("[bold]") or emoji codes (":question:" became ❓), in `quiz`, `review`,
`stats` and `generate` (issue 36, item 6)."""
from __future__ import annotations

import time
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep import review
from examprep.cli import app
from examprep.history import Attempt, History

runner = CliRunner()
SOFTMAX = Path(str(resources.files("examprep") / "bank" / "questions" / "softmax-by-hand.toml"))
TITLE = "[bold]Mine[/bold] :question: q"
TOPIC = "[bold]old:question:"                     # a topic an older examprep recorded (no longer a generator)


def run(args, lines=()):
    return runner.invoke(app, args, input="".join(f"{x}\n" for x in lines), env={"COLUMNS": "120"})


@pytest.fixture
def titled(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(SOFTMAX.read_text().replace('title = "Softmax of three logits"', f'title = "{TITLE}"'))
    return path


def test_a_question_title_is_shown_as_written_by_generate_and_quiz(titled):
    for args, lines in ((["generate", str(titled), "--seed", "1"], ()),
                        (["quiz", "--question", str(titled), "--seed", "1"], ["q"])):
        res = run(args, lines)
        assert res.exit_code == 0, res.output
        assert f"─ {'1. ' if args[0] == 'quiz' else ''}{TITLE} ─" in res.output and "❓" not in res.output, args[0]


def test_what_a_student_types_is_echoed_as_written(titled):
    answer = ":question: [bold]the log[/bold] cancels"
    res = run(["quiz", "--question", str(titled), "--seed", "1"], ["skip", "skip", answer, "1", ""])
    assert res.exit_code == 0, res.output
    assert f"› {answer}" in res.output and "❓" not in res.output


def test_a_topic_from_the_history_is_shown_as_written_by_stats_and_review():
    now = time.time()
    with History() as h:
        h.record(Attempt(kind="problem", topic=TOPIC, item=f"topic:{TOPIC}", generator=TOPIC, version=1, part="x",
                         answer="1", status="correct", score=1.0, max_score=1.0, seconds=5.0, time=now - 86400))
        review.review(h, f"topic:{TOPIC}", 1, now=now - 86400)
    stats = run(["stats"])
    assert f" {TOPIC} " in stats.output and "❓" not in stats.output
    due = run(["review", "--due"])
    assert f"\n  {TOPIC}: no such topic in this examprep" in due.output and "❓" not in due.output   # a card review cannot serve
    res = run(["review"])
    assert f"Not reviewed: {TOPIC}: no such topic in this examprep; `examprep review --drop '{TOPIC}'` ends the card" \
        in res.output and "❓" not in res.output
    assert run(["review", "--drop", TOPIC]).exit_code == 0
