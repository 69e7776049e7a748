"""examprep's own outputs are never graded as students: an output written straight into the folder
of submissions is refused before any work (the next grading of that folder would read it), and a
grades file or item analysis copied among the submissions is unreadable with its reason, not a
phantom student scored on its numbers."""
import json

from typer.testing import CliRunner

from examprep.cli import app
from examprep.generators import build
from examprep.keys import Key, answer_template, write_key

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "80", "NO_COLOR": "1"})


def class_folder(tmp_path):
    problems = [build("softmax-cross-entropy", 1), build("rnn-step", 1)]
    write_key(tmp_path / "key.json", Key("Quiz", problems))
    subs = tmp_path / "subs"
    subs.mkdir()
    for sid in ("s1", "s2", "s3"):
        (subs / f"{sid}.toml").write_text(answer_template(problems, title="Quiz", student_id=sid) + "\n")
    return subs


def test_an_output_inside_the_submissions_folder_is_refused_before_any_work(tmp_path):
    subs = class_folder(tmp_path)
    before = sorted(p.name for p in subs.iterdir())
    for option, path in [("--json", subs / "grades.json"), ("--csv", subs / "grades.csv"),
                         ("--analysis", subs), ("--marks-template", subs / "marks.csv")]:
        res = run("grade", tmp_path / "key.json", subs, option, path, "-q")
        assert res.exit_code == 2, (option, res.output)
        assert res.stderr.startswith(f"error: {option} {path}: is ") and res.stderr.count("\n") == 1, res.stderr
        assert "submissions folder" in res.stderr and "Traceback" not in res.output
        assert sorted(p.name for p in subs.iterdir()) == before          # nothing written
    # a sub-folder is not searched: an analysis there is fine
    res = run("grade", tmp_path / "key.json", subs, "--analysis", subs / "analysis", "-q")
    assert res.exit_code == 0, res.output


def test_grades_and_analyses_copied_among_the_submissions_are_not_students(tmp_path):
    subs = class_folder(tmp_path)
    out = tmp_path / "out"
    res = run("grade", tmp_path / "key.json", subs, "-q", "--json", tmp_path / "g.json", "--csv", tmp_path / "g.csv",
              "--analysis", out)
    assert res.exit_code == 0, res.output
    for src, name in [(tmp_path / "g.json", "grades.json"), (tmp_path / "g.csv", "grades.csv"),
                      (out / "item-analysis.json", "item-analysis.json"), (out / "item-analysis.csv", "item-analysis.csv")]:
        (subs / name).write_bytes(src.read_bytes())
    res = run("grade", tmp_path / "key.json", subs, "-q", "--json", tmp_path / "g2.json")
    assert res.exit_code == 1, res.output
    data = json.loads((tmp_path / "g2.json").read_text())
    assert sorted(s["student_id"] for s in data["submissions"]) == ["s1", "s2", "s3"]
    text = " ".join(res.stderr.split())
    assert "grades.json: this is a class's grades (grade --json), not a submission" in text
    assert "grades.csv: this is a class's grades (grade --csv), not a submission" in text
    assert "item-analysis.json: this is an item analysis (item-analysis.json), not a submission" in text
    assert "item-analysis.csv: this is an item analysis (item-analysis.csv), not a submission" in text


def test_self_test_refuses_outputs_it_would_ignore(tmp_path):
    """`grade KEY --self-test --analysis DIR` said 'self-test passed' and wrote nothing: an option
    silently ignored is refused instead."""
    class_folder(tmp_path)
    for option, value in [("--analysis", tmp_path / "an"), ("--json", tmp_path / "g.json"), ("--csv", tmp_path / "g.csv")]:
        res = run("grade", tmp_path / "key.json", "--self-test", option, value)
        assert res.exit_code == 2, (option, res.output)
        assert res.stderr == (f"error: --self-test checks the key alone and writes nothing: {option} has no class "
                              "to report on\n"), res.stderr
        assert not value.exists()
    res = run("grade", tmp_path / "key.json", "--self-test")
    assert res.exit_code == 0 and "self-test passed" in res.stdout, res.output


def test_an_analysis_folder_under_a_missing_folder_is_refused(tmp_path):
    """`analyze --out nonexist/sub` made both folders; `generate` refuses such a path (a typo would
    scatter outputs): so do --out and --analysis, before any work."""
    subs = class_folder(tmp_path)
    res = run("grade", tmp_path / "key.json", subs, "-q", "--json", tmp_path / "g.json")
    assert res.exit_code == 0, res.output
    for args in (["analyze", tmp_path / "g.json", "--out"], ["grade", tmp_path / "key.json", subs, "--analysis"]):
        target = tmp_path / "nonexist" / "sub"
        res = run(*args, target)
        assert res.exit_code == 2, res.output
        assert f"{target}: the folder {target.parent} does not exist" in res.stderr and res.stderr.count("\n") == 1
        assert not target.parent.exists()
    res = run("analyze", tmp_path / "g.json", "--out", tmp_path / "an")        # one new folder: made
    assert res.exit_code == 0 and (tmp_path / "an" / "item-analysis.json").exists(), res.output


def test_one_missing_submission_is_a_usage_error_and_in_a_batch_one_unreadable_line(tmp_path):
    subs = class_folder(tmp_path)
    res = run("grade", tmp_path / "key.json", tmp_path / "missing.toml", "--json", tmp_path / "g.json")
    assert res.exit_code == 2 and res.stdout == "", res.output
    assert res.stderr == f"error: {tmp_path / 'missing.toml'}: no such answer file or folder\n"
    assert not (tmp_path / "g.json").exists()
    res = run("grade", tmp_path / "key.json", subs / "s1.toml", tmp_path / "missing.toml", "-q")
    assert res.exit_code == 1 and "unreadable: " in res.stderr and "missing.toml: no such file" in res.stderr
