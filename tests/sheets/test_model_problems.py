"""A model problem (attention-from-model: its numbers come from a trained model) on a sheet:
`examprep sheet --checkpoint DIR` gives the model to the recipe's model problems; without it, or
with one that no problem reads, the sheet is refused before anything is written. Question files
go on a sheet from --topics as from a recipe."""
import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep.cli import app

runner = CliRunner()
QUESTION = Path(__file__).resolve().parents[2] / "examprep" / "bank" / "questions" / "softmax-by-hand.toml"
RECIPE = '[sheet]\ntitle = "Trained heads"\n[[problem]]\ntopic = "conv2d"\n[[problem]]\ntopic = "attention-from-model"\n'


def recipe(tmp_path, text=RECIPE):
    path = tmp_path / "heads.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="tiny_dates trains a model: the train extra")
def test_a_recipe_with_a_model_problem_makes_a_sheet_with_the_checkpoint(tmp_path, tiny_dates):
    out = tmp_path / "out"
    res = runner.invoke(app, ["sheet", "--recipe", recipe(tmp_path), "--checkpoint", str(tiny_dates), "--seed", "3",
                              "--format", "md", "--out", str(out)])
    assert res.exit_code == 0, res.output
    key = json.loads((out / "key.json").read_text(encoding="utf-8"))
    assert [p["generator"] for p in key["problems"]] == ["conv2d", "attention-from-model"]
    # the same problem `generate` draws from the same checkpoint at the same seed (the sheet's seed + 1)
    alone = runner.invoke(app, ["generate", "attention-from-model", "--checkpoint", str(tiny_dates), "--seed", "4",
                                "--json"])
    assert alone.exit_code == 0, alone.output
    assert key["problems"][1] == json.loads(alone.output)[0]
    assert "A Transformer trained on the dates task" in (out / "problems.md").read_text(encoding="utf-8")
    # its points are checked once its parts are known (a recipe's check cannot build it without the model)
    res = runner.invoke(app, ["sheet", "--recipe", recipe(tmp_path, RECIPE + "points = 0.5\n"), "--checkpoint",
                              str(tiny_dates), "--format", "md", "--out", str(tmp_path / "few")])
    assert res.exit_code == 2 and "points: 0.5 cannot give each of the" in res.output, res.output
    assert "parts of attention-from-model half a point" in res.output and not (tmp_path / "few").exists()


def test_a_model_problem_without_a_checkpoint_is_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "out"
    res = runner.invoke(app, ["sheet", "--recipe", recipe(tmp_path), "--out", str(out)])
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert "attention-from-model needs a trained model (--checkpoint): give --checkpoint DIR" in res.output
    assert not out.exists()


def test_a_checkpoint_that_no_problem_reads_is_refused(tmp_path):
    out = tmp_path / "out"
    res = runner.invoke(app, ["sheet", "--topics", "conv2d", "--checkpoint", "runs/dates", "--out", str(out)])
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert "--checkpoint: none of the sheet's problems reads a trained model" in res.output and not out.exists()


def test_a_model_problem_has_no_parameters_to_pin(tmp_path):
    text = RECIPE + 'params = { head = 0 }\n'
    res = runner.invoke(app, ["sheet", "--recipe", recipe(tmp_path, text), "--out", str(tmp_path / "out")])
    assert res.exit_code == 2 and "heads.toml:7: problem 2 params: attention-from-model reads its parameters" in res.output


def test_sheet_topics_take_a_question_file(tmp_path):
    out = tmp_path / "out"
    res = runner.invoke(app, ["sheet", "--topics", f"{QUESTION},conv2d", "--seed", "3", "--format", "md", "--out", str(out)])
    assert res.exit_code == 0, res.output
    key = json.loads((out / "key.json").read_text(encoding="utf-8"))
    assert [(p["generator"], p["seed"]) for p in key["problems"]] == [("question:softmax-by-hand", 3), ("conv2d", 4)]


def test_a_class_sheets_rebuild_command_keeps_the_checkpoint():
    from examprep.sheets.variants import rebuild_command

    line = rebuild_command(recipe="heads.toml", topics=None, count=None, difficulty=None, seed=3, roster="r.csv",
                           secret_file="out/secret.hex", title=None, course=None, decimal_comma=False, formats="md",
                           checkpoint="runs/dates")
    assert line.endswith("--format md --checkpoint runs/dates")
