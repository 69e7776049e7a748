"""User errors found by a fresh user's trial: each is one line, exit 2, and nothing is written."""
import pytest
from typer.testing import CliRunner

from examprep.cli import app

runner = CliRunner()


def test_sheet_count_zero_is_refused(tmp_path):
    res = runner.invoke(app, ["sheet", "--topics", "attention", "--count", "0", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "--count" in res.output and not (tmp_path / "x").exists()


def test_stats_unknown_topic_suggests_close_names(tmp_path, monkeypatch):
    monkeypatch.setenv("EXAMPREP_HOME", str(tmp_path))
    res = runner.invoke(app, ["stats", "--topic", "atention"])
    assert res.exit_code == 2 and "did you mean attention" in res.output


def test_grade_tolerance_for_a_part_the_key_lacks(tmp_path):
    key = tmp_path / "k.json"
    assert runner.invoke(app, ["generate", "attention", "--seed", "7", "--key", str(key), "--template",
                               str(tmp_path / "a.toml"), "--json"]).exit_code == 0
    res = runner.invoke(app, ["grade", str(key), str(tmp_path / "a.toml"), "--tolerance", "q1.wieghts=rtol:0.1"])
    assert res.exit_code == 2 and "did you mean q1.weights" in res.output
    res = runner.invoke(app, ["grade", str(key), str(tmp_path / "a.toml"), "--tolerance", "q1.weights=rtol:0.1", "--quiet"])
    assert res.exit_code == 0


def test_topics_that_need_a_trained_model_are_refused_by_the_quiz_and_asked_for_by_the_sheets(tmp_path, monkeypatch):
    monkeypatch.setenv("EXAMPREP_HOME", str(tmp_path))
    for args in (["quiz", "--topic", "attention-from-model", "--count", "1"],
                 ["quiz", "--exam", "--topic", "attention-from-model", "--count", "1"]):
        res = runner.invoke(app, args, input="")
        assert res.exit_code == 2, (args, res.output)
        assert "needs a trained model" in res.output and "examprep generate attention-from-model --checkpoint" in res.output
        assert "Traceback" not in res.output
    # a sheet takes the model (sheet --checkpoint DIR: tests/sheets/test_model_problems.py), so it asks for it
    res = runner.invoke(app, ["sheet", "--topics", "attention-from-model", "--out", str(tmp_path / "s")])
    assert res.exit_code == 2 and "needs a trained model (--checkpoint): give --checkpoint DIR" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "s").exists()


def test_a_file_system_error_no_command_maps_is_one_line_not_a_traceback(tmp_path):
    import subprocess
    import sys

    long_name = str(tmp_path / ("a" * 300))
    for args in (["sheet", "--recipe", "cnn", "--out", long_name],
                 ["generate", "attention", "--seed", "1", "--key", long_name + ".json"]):
        res = subprocess.run([sys.executable, "-m", "examprep", *args], capture_output=True, text=True, timeout=120)
        assert res.returncode == 2, (args, res.stderr)
        assert "Traceback" not in res.stderr and res.stderr.startswith("error: ") and "too long" in res.stderr


REJECTED_BY_TYPER = [
    (["verify", "-n", "abc"], "error: --instances: expected an integer, got 'abc'"),
    (["train", "--steps", "x"], "error: --steps: expected an integer, got 'x'"),
    (["train", "--lr-factor", "fast"], "error: --lr-factor: expected a number, got 'fast'"),
    (["attention-map", "--head", "1.5", "--checkpoint", "x", "t"], "error: --head: expected an integer, got '1.5'"),
    (["generate", "attention", "--seed"], "error: --seed: needs a value"),
    (["train", "--compile=yes"], "error: --compile: is a flag and takes no value"),
    (["sheet", "--fource"], "error: --fource: no such option; did you mean"),
    # the closest option first (issue 36: --recpie suggested --force before --recipe)
    (["sheet", "--recpie", "midterm"], "error: --recpie: no such option; did you mean --recipe or --checkpoint or --force?"),
    # an option the typed one begins is what was meant; --help is offered only when begun
    (["train", "--lr-sched", "cosine"], "error: --lr-sched: no such option; did you mean --lr-schedule? (see --help)"),
    (["grade", "k", "--hlp"], "error: --hlp: no such option; did you mean --help? (see --help)"),
    (["translate"], "error: TEXT...: missing argument"),
    (["translate", "hi"], "error: --checkpoint: missing option"),
    (["solve", "lora", "extra"], "error: unexpected extra argument 'extra'"),
    (["generat", "attention"], "error: no such command 'generat'; did you mean 'generate'?"),
]


@pytest.mark.parametrize("args,line", REJECTED_BY_TYPER, ids=lambda x: " ".join(x) if isinstance(x, list) else "")
def test_every_value_typer_rejects_is_one_error_line(args, line):
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1 and res.stderr.startswith(line), res.stderr
    assert "╭" not in res.stderr and "Usage:" not in res.stderr and "Traceback" not in res.stderr


def test_the_console_script_prints_usage_errors_on_one_line_too():
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "examprep", "verify", "-n", "abc"], capture_output=True, text=True,
                         timeout=120)
    assert (res.returncode, res.stdout, res.stderr) == (2, "", "error: --instances: expected an integer, got 'abc'\n")
