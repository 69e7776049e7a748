"""Recipes pin, weigh and mix (issue 20): pinned generator parameters (stored in the key, rebuilt
with them), points and minutes, a fixed seed, a question file relative to the recipe and a concept
question — and each bad item refused in one line naming the recipe's line."""
import json
import re
import shutil
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep import generators, sheets
from examprep.cli import app
from examprep.keys import read_key
from examprep.problem import Problem
from examprep.sources.recipes import SheetError

BANK = Path(str(resources.files("examprep") / "bank" / "questions"))
RECIPE = """[sheet]
title = "Authored mix"
minutes = 40
difficulty = 2

[[problem]]
question = "q/softmax.toml"
points = 10

[[problem]]
topic = "softmax-cross-entropy"
params = { reduction = "sum" }
minutes = 8

[[problem]]
topic = "receptive-field"
seed = 7

[[problem]]
concept = "lstm-gate-count"
"""


@pytest.fixture
def recipe(tmp_path):
    (tmp_path / "q").mkdir()
    shutil.copy(BANK / "softmax-by-hand.toml", tmp_path / "q" / "softmax.toml")
    path = tmp_path / "mix.toml"
    path.write_text(RECIPE)
    return path


def test_a_recipe_mixes_a_question_file_pinned_and_seeded_generators_and_a_concept(recipe):
    r = sheets.load_recipe(str(recipe))
    copy = sheets.build_sheet(r, 5).copies[0]
    q1, q2, q3, q4 = copy.problems
    assert q1.generator == "question:softmax-by-hand" and q1.points == 10
    assert [p.points for p in q1.parts] == [3.0, 4.0, 3.0]          # 2:3:2 scaled to 10 in halves
    assert q2.params["reduction"] == "sum" and q2.pins == {"reduction": "sum"} and q2.minutes == pytest.approx(8)
    assert q3.seed == 7 and sheets.build_sheet(r, 99).copies[0].problems[2].to_json() == q3.to_json()
    assert q4.generator == "concept:lstm-gate-count" and q4.parts[0].expected == 3


def test_pins_hold_on_every_seed_and_a_pinned_problem_rebuilds_from_its_key(recipe):
    for seed in range(15):
        p = generators.build("softmax-cross-entropy", seed, 2, pins={"reduction": "sum"})
        assert p.params["reduction"] == "sum"
    p = generators.build("softmax-cross-entropy", 3, 2, pins={"reduction": "sum"})
    again = Problem.from_dict(json.loads(p.to_json()))
    assert again.pins == {"reduction": "sum"}
    assert generators.build(again.generator, again.seed, again.difficulty, pins=again.pins).to_json() == p.to_json()


def test_an_unpinned_problem_writes_no_pins_field_so_old_keys_stay_byte_identical():
    assert "pins" not in generators.build("softmax-cross-entropy", 3, 2).to_dict()


@pytest.mark.parametrize("old, new, line, message", [
    ('params = { reduction = "sum" }', 'params = { reducton = "sum" }', 12, "has no parameter 'reducton'"),
    ('params = { reduction = "sum" }', 'params = { reduction = "max" }', 12, 'no draw of softmax-cross-entropy at level 2 '
                                                                            'has reduction = "max" in 1000 tries'),
    ('question = "q/softmax.toml"', 'question = "q/nope.toml"', 7, "problem 1 question:"),
    ('concept = "lstm-gate-count"', 'concept = "lstm-gate-cnt"', 20, "no concept question 'lstm-gate-cnt'; did you mean"),
    ("points = 10", "points = 0", 8, "points: expected a number above 0"),
    ("points = 10", "points = 1", 8, "problem 1 points: 1 cannot give each of its 3 parts half a point; give at least 1.5"),
    ("points = 10", "points = 2.3", 8, "problem 1 points: whole or half points"),
    ("minutes = 8", "minutes = 8\npoints = 0.5", 14, "problem 2 points: 0.5 cannot give each of its"),
    ("seed = 7", "seed = -1", 17, "seed: expected a non-negative integer"),
    ('question = "q/softmax.toml"', 'question = "q/softmax.toml"\ndifficulty = 2', 8, "a question file has no levels"),
    ('concept = "lstm-gate-count"', 'concept = "lstm-gate-count"\ntopic = "residual"', 20,
     "give one of topic, question and concept"),
])
def test_bad_items_name_the_recipe_line(recipe, old, new, line, message):
    recipe.write_text(RECIPE.replace(old, new))
    with pytest.raises(SheetError) as info:
        sheets.load_recipe(str(recipe))
    msg = str(info.value)
    assert msg.startswith(f"{recipe}:{line}: ") and message in msg, msg


def test_a_bad_question_file_in_a_recipe_names_both_files(recipe):
    (recipe.parent / "q" / "softmax.toml").write_text(
        (BANK / "softmax-by-hand.toml").read_text().replace('answer = "probs"', 'answer = "prob"'))
    with pytest.raises(SheetError) as info:
        sheets.load_recipe(str(recipe))
    msg = str(info.value)
    assert msg.startswith(f"{recipe}:7: problem 1 question: ") and "softmax.toml:18: part 1 answer" in msg


@pytest.mark.parametrize("points, shares", [(1.5, [0.5, 0.5, 0.5]), (3, [1, 1, 1]), (4, [1, 2, 1]),
                                            (7, [2, 3, 2]), (8.5, [2.5, 3.5, 2.5]), (25, [7, 11, 7])])
def test_recipe_points_split_in_halves_that_sum_exactly(recipe, points, shares):
    recipe.write_text(RECIPE.replace("points = 10", f"points = {points}"))
    q1 = sheets.build_sheet(sheets.load_recipe(str(recipe)), 5).copies[0].problems[0]
    assert [p.points for p in q1.parts] == shares and sum(p.points for p in q1.parts) == points
    assert q1.points == points


def test_the_sheet_command_prints_it_and_its_key_self_tests(recipe, tmp_path):
    out = tmp_path / "out"
    runner = CliRunner()
    res = runner.invoke(app, ["sheet", "-r", str(recipe), "--seed", "5", "-o", str(out), "-f", "md"])
    assert res.exit_code == 0, res.output
    md = (out / "problems.md").read_text()
    assert "## Problem 1 — Softmax of three logits" in md and "written answer, marked by hand" in md
    assert "How many gates does an LSTM cell have?" in md and "answer `q4.answer`" in md
    sol = (out / "solutions.md").read_text()
    assert "Rubric: names p − y (1); explains the cancellation (1)." in sol
    assert "| (c) w1 | the model answer and rubric above | marked by hand | 3 |" in sol
    key = read_key(out / "key.json")
    assert key.problems[1].pins == {"reduction": "sum"}
    test = runner.invoke(app, ["grade", str(out / "key.json"), "--self-test"])
    assert test.exit_code == 0 and "self-test passed" in test.stdout, test.output


CHECKLIST = {   # the exam checklist's explain/sketch items (000_392edd5986859fa2.txt) → the facts its model answer states
    "explain-vanishing-gradients": ["product", "W_hh", "vanish", "explod", "clipping", "tanh", "(−1, 1)", "LSTM"],
    "explain-qkv": ["query", "key", "value", "√d_k", "encoder", "cross-attention", "decoder", "masked"],
    "explain-positions-mask": ["permutation-invariant", "sin(pos/10000^{2i/d_model})", "−∞", "j > i", "parallel"],
    "explain-lora": ["W₀", "B A", "r(d + k)", "d·k", "B starts at zero", "merged"],
}


def test_the_midterm_has_a_written_part_for_each_checklist_explain_item_within_its_three_hours():
    problems = sheets.build_sheet(sheets.load_recipe("midterm"), 3).copies[0].problems
    written = {p.generator.removeprefix("question:"): p for p in problems if all(x.kind == "written" for x in p.parts)}
    assert set(written) == set(CHECKLIST)
    # the 16 computations first, so they keep their seeds; the written parts last
    assert len(problems) == 20 and not any(p.generator.startswith("question:") for p in problems[:16])
    for qid, facts in CHECKLIST.items():
        part = written[qid].parts[0]
        assert all(f in part.model_answer for f in facts), (qid, [f for f in facts if f not in part.model_answer])
    assert 165 <= sum(p.minutes for p in problems) <= 195


@pytest.mark.parametrize("path", sorted(BANK.glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_rubric_adds_up_to_its_parts_points(path):
    from examprep.authoring import load_question

    for part in load_question(path).parts:
        if part.kind == "written":
            marks = [float(m) for r in part.rubric for m in re.findall(r"\((\d+(?:\.\d+)?)\)\s*$", r)]
            assert len(marks) == len(part.rubric) and sum(marks) == part.points, (path.name, part.id)
