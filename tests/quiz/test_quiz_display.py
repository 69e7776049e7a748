"""The quiz shows a score and an expected answer as grade does (issue 36, attack items 2 and 12): a
score to 2 decimals (0.33, not 0.333333), a shape as 16×24×24 and a list of shapes as
3×28×28; 6×24×24; 864, and a skipped written part its model answer (it has no value: not -∞)."""
from importlib import resources
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from examprep.cli import app
from examprep.problem import Part
from examprep.quiz.outcomes import PartOutcome
from examprep.quiz.views import part_feedback
from examprep.grading.report_text import key_answer

runner = CliRunner()
SOFTMAX = Path(str(resources.files("examprep") / "bank" / "questions" / "softmax-by-hand.toml"))


def run(args, lines=()):
    return runner.invoke(app, args, input="".join(f"{x}\n" for x in lines), env={"COLUMNS": "80"})


def test_a_skipped_written_part_shows_its_model_answer():
    res = run(["quiz", "--question", str(SOFTMAX), "--count", "1", "--seed", "1"], ["skip", "skip", "skip", ""])
    assert res.exit_code == 0, res.output
    after = res.output.split("(c) written answer (marked by hand) › skip", 1)[1]
    assert "-∞" not in res.output
    assert "Expected:\n  marked by hand; model answer: Softmax and cross-entropy together give p − y:" in after


def test_a_partly_right_shape_scores_as_grade_shows_it_and_the_key_is_written_as_a_shape():
    # network-shapes seed 1, level 1: (a) is 16×24×24; one entry of three right is 1/3 of its point
    res = run(["quiz", "--topic", "network-shapes", "--count", "1", "--seed", "1"], ["16x1x1"] + ["skip"] * 6 + [""])
    assert res.exit_code == 0, res.output
    assert "◐ partly right · 0.33/1 pt" in res.output and "Expected:\n  16×24×24 " in res.output
    assert "0.33/6.5" in res.output and "0.333333" not in res.output            # the summary too
    assert max(len(line) for line in res.output.splitlines()) <= 80


def test_a_list_of_shapes_is_expected_as_the_sheet_writes_it():
    part = Part("shapes", "Every layer's output shape.", "shapes", [[3, 28, 28], [6, 24, 24], [864]])
    console = Console(width=80, record=True, color_system=None)
    console.print(part_feedback(PartOutcome(part, "", "blank", 0.0)))
    assert "Expected:\n  3×28×28; 6×24×24; 864" in console.export_text()
    assert key_answer(part) == "3×28×28; 6×24×24; 864"          # grade's --show-answers
    shape = Part("out", "The output shape.", "vector", [16.0, 24.0, 24.0], shape=(3,), tensor_shape=True)
    assert key_answer(shape) == "16×24×24"
    assert key_answer(Part("v", "A vector.", "vector", [16.0, 24.0, 24.0], shape=(3,))) == "[16, 24, 24]"


def test_the_worked_solution_lists_a_shape_as_the_sheet_writes_it():
    res = runner.invoke(app, ["generate", "network-shapes", "--seed", "1", "--solution", "--no-color"],
                        env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    line = next(line for line in res.output.splitlines() if "(a) conv2d_shape" in line)     # the answers panel
    assert "16×24×24" in line and "[16, 24, 24]" not in line
