"""`examprep quiz --question FILE.toml`: an authored question practised in the terminal; a written
part shows the model answer and rubric once the student has typed theirs, then asks for and
records the student's own mark."""
from importlib import resources
from pathlib import Path

from typer.testing import CliRunner

from examprep.authoring import build_question, load_question
from examprep.cli import app
from examprep.history import History

from .helpers import typed

runner = CliRunner()
SOFTMAX = Path(str(resources.files("examprep") / "bank" / "questions" / "softmax-by-hand.toml"))


def run(args, lines=()):
    return runner.invoke(app, args, input="".join(f"{x}\n" for x in lines), env={"COLUMNS": "80"})


def test_a_written_part_shows_the_model_answer_then_records_the_students_own_mark():
    problem = build_question(load_question(SOFTMAX), 5)
    lines = [typed(problem.parts[0]), typed(problem.parts[1]), "the log cancels the exponential", "3", "1.5", ""]
    res = run(["quiz", "--question", str(SOFTMAX), "--seed", "5"], lines)
    assert res.exit_code == 0, res.output
    out = res.output
    shown = out.index("model answer")
    assert out.index("the log cancels the exponential") < shown < out.index("Your mark, 0 to 2")
    assert "Rubric:" in out and "names p − y (1)" in out
    assert "Type a number from 0 to 2." in out                 # 3 is above the part's points: asked again
    assert "your mark · 1.5/2 pt" in out and "6.5/7 points" in out
    with History() as h:
        rows = h.attempts()
    written = [a for a in rows if a.part == "w1"]
    assert [(a.status, a.score, a.max_score, a.answer) for a in written] == [
        ("marked", 1.5, 2.0, "the log cancels the exponential")]
    assert {a.generator for a in rows} == {"question:softmax-by-hand"}


def test_question_files_cannot_be_mixed_with_topics_and_a_bad_file_is_one_line(tmp_path):
    res = run(["quiz", "--question", str(SOFTMAX), "--topic", "residual"])
    assert res.exit_code == 2 and "--question practises question files on their own" in res.output
    bad = tmp_path / "bad.toml"
    bad.write_text(SOFTMAX.read_text().replace('solve = "cross-entropy"', 'solve = "nope"'))
    res = run(["quiz", "--question", str(bad)])
    assert res.exit_code == 2 and f"{bad}:9: [question] solve: unknown topic 'nope'" in res.output


def test_after_an_exam_the_student_marks_their_written_answers_and_an_unmarked_one_stays_pending(tmp_path):
    lora = SOFTMAX.parent / "explain-lora.toml"
    recipe = tmp_path / "exam.toml"
    recipe.write_text(f'[sheet]\ntitle = "Written"\nminutes = 10\n[[problem]]\nquestion = "{lora}"\n'
                      f'[[problem]]\nquestion = "{SOFTMAX.parent / "explain-qkv.toml"}"\n')
    lines = ["LoRA learns a rank-r update B A.", "Queries, keys and values.", "", "4", "2.5"]   # then input ends
    res = run(["quiz", "--exam", "--recipe", str(recipe), "--seed", "1"], lines)
    assert res.exit_code == 0, res.output
    out = res.output
    assert out.index("Mark your written answers") < out.index("model answer") < out.index("Your mark, 0 to 3")
    assert "Type a number from 0 to 3." in out
    with History() as h:
        rows = {a.generator: a for a in h.attempts()}
    assert (rows["question:explain-lora"].status, rows["question:explain-lora"].score) == ("marked", 2.5)
    assert (rows["question:explain-qkv"].status, rows["question:explain-qkv"].score) == ("pending", 0.0)
    assert "The written parts not marked stay to be marked." in out


def test_a_written_part_skipped_in_an_exam_is_no_answer_not_to_mark(tmp_path):
    # issue 36 item 4: a skipped essay was recorded "pending" (to be marked) though nothing was written
    lora = SOFTMAX.parent / "explain-lora.toml"
    recipe = tmp_path / "exam.toml"
    recipe.write_text(f'[sheet]\ntitle = "Written"\nminutes = 10\n[[problem]]\nquestion = "{lora}"\n'
                      f'[[problem]]\nquestion = "{SOFTMAX.parent / "explain-qkv.toml"}"\n')
    res = run(["quiz", "--exam", "--recipe", str(recipe), "--seed", "1"], ["LoRA learns B A.", "skip", "", "2"])
    assert res.exit_code == 0, res.output
    assert res.output.count("Your mark, 0 to") == 1            # only the answer written is marked
    with History() as h:
        rows = {a.generator: a for a in h.attempts()}
    assert (rows["question:explain-lora"].status, rows["question:explain-lora"].score) == ("marked", 2.0)
    assert (rows["question:explain-qkv"].status, rows["question:explain-qkv"].score) == ("blank", 0.0)
