"""Shapes in keys (issue 36, item 1): a key written before tensor shapes were declared grades
10×26×26 right for its shape parts, and the default midterm sheet, graded from a class folder whose
students wrote shapes in all six ways, gives those parts full marks."""
import json
from pathlib import Path

from typer.testing import CliRunner

from examprep.cli import app
from examprep.grading.grade import grade_submission
from examprep.keys import read_key

# written by examprep at ab5f574 (before this change): `examprep generate network-shapes multi-head
# cross-attention --seed 3 --key key-before-shapes.json`
OLD_KEY = Path(__file__).resolve().parents[1] / "answers" / "fixtures" / "key-before-shapes.json"
STYLES = (lambda s: "×".join(s), lambda s: " x ".join(s), lambda s: "x".join(s), lambda s: "(" + ", ".join(s) + ")",
          lambda s: "[" + ", ".join(s) + "]", lambda s: ", ".join(s))
SHAPE_PARTS = {1: {"conv2d_shape", "max_pool_shape", "flatten_shape"}, 2: {"query_shape", "scores_shape", "output_shape"},
               3: {"scores_shape", "output_shape"}}


def shape_answers(problems, style, ids=None) -> dict[str, str]:
    """The shape parts' answers written in ``style`` (the parts the key marks, or those of ``ids``)."""
    return {f"q{n}.{part.id}": style([str(int(v)) for v in part.expected])
            for n, problem in enumerate(problems, 1) for part in problem.parts
            if (part.id in ids[n] if ids else part.tensor_shape)}


def test_a_key_written_before_shapes_were_declared_grades_them_as_shapes_written_six_ways():
    assert "tensor_shape" not in OLD_KEY.read_text(encoding="utf-8")       # the old key has no mark of its own
    key = read_key(OLD_KEY)
    for style in STYLES:
        result = grade_submission(key.problems, shape_answers(key.problems, style, SHAPE_PARTS))
        graded = [r for pr in result.problems for r in pr.parts if r.part_id in SHAPE_PARTS[pr.number]]
        assert len(graded) == 8 and all(r.status == "correct" and r.score == r.max_score for r in graded), \
            [(r.part_id, r.raw, r.status, r.feedback) for r in graded]


def test_the_midterm_graded_from_a_class_folder_gives_full_marks_to_shapes_written_six_ways(tmp_path):
    runner = CliRunner()
    out = tmp_path / "midterm"
    made = runner.invoke(app, ["sheet", "--recipe", "midterm", "--format", "md", "--seed", "5", "--out", str(out)])
    assert made.exit_code == 0, made.output
    template = (out / "answers.toml").read_text(encoding="utf-8")
    assert "shape C×H×W, e.g. 3×28×28" in template and "[[a, b, c]]" not in template
    problems = read_key(out / "key.json").problems
    shapes = shape_answers(problems, STYLES[0])
    assert len(shapes) >= 5                                  # the network table's shapes, at least
    folder = tmp_path / "class"
    folder.mkdir()
    for i, style in enumerate(STYLES):
        lines = [f'student_id = "s{i}"'] + [f'{address} = "{text}"' for address, text in
                                             shape_answers(problems, style).items()]
        (folder / f"s{i}.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    graded = runner.invoke(app, ["grade", str(out / "key.json"), str(folder), "--json", str(tmp_path / "g.json")])
    assert graded.exit_code == 0, graded.output
    results = json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))["submissions"]
    assert len(results) == len(STYLES)
    for student in results:
        parts = [p for n, q in enumerate(student["problems"], 1) for p in q["parts"] if f"q{n}.{p['part']}" in shapes]
        assert len(parts) == len(shapes)
        assert all(p["status"] == "correct" and p["score"] == p["max_score"] for p in parts), \
            (student["student_id"], [(p["part"], p["raw"], p["feedback"]) for p in parts if p["status"] != "correct"])
