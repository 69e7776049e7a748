"""`examprep gradescope-autograder` (issue 23): the zip is built, unpacked into a tree shaped like
Gradescope's (/autograder/source, submission, results), the bundled wheel is installed into a fresh
virtual environment as setup.sh does, run_autograder grades a submission, and results.json is
checked against Gradescope's documented format (score; tests with name, score, max_score, output,
visibility).

Offline: the wheel is installed from the zip with pip --no-index, exactly as setup.sh's last pip
step. setup.sh's `pip install -r requirements.txt` needs the network (this machine's pip cache
holds no wheels of the dependencies), so that one step is replaced by a .pth file that shows the
fresh environment the dependencies already installed here — the very versions requirements.txt
pins, which the test checks line by line."""
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep.cli import app
from examprep.keys import read_key

runner = CliRunner()
VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}


# Gradescope's machine has no checkout of ours: with PYTHONPATH pointing at one, pip saw its examprep
# as installed and skipped the wheel, and the autograder ran this checkout's code
AWAY = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

def run(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "80", "NO_COLOR": "1"})


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    d = tmp_path_factory.mktemp("gs")
    res = run("generate", "softmax-cross-entropy", "attention", "--seed", "7", "--key", d / "key.json")
    assert res.exit_code == 0, res.output
    res = run("gradescope-autograder", d / "key.json", "--out", d / "autograder.zip")
    assert res.exit_code == 0, res.output
    root = d / "autograder"
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True)
    with zipfile.ZipFile(d / "autograder.zip") as z:
        z.extractall(root / "source")
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120, env=AWAY)
    [wheel] = (root / "source").glob("examprep-*.whl")
    vpy = venv / "bin" / "python"
    res = subprocess.run([sys.executable, "-m", "pip", "--python", str(vpy), "install", "--no-deps", "--no-index", "-q",
                          str(wheel)], capture_output=True, text=True, timeout=300, env=AWAY)
    assert res.returncode == 0, res.stderr
    site = subprocess.run([str(vpy), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, env=AWAY).stdout.strip()
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "_dependencies_installed_here.pth").write_text("\n".join(sorted(here)) + "\n")
    key = read_key(d / "key.json")
    return d, root, key, modes


def answers(key, right=True):
    out = {"student_id": "ada"}
    for n, p in enumerate(key.problems, 1):
        for part in p.parts:
            out[f"q{n}.{part.id}"] = json.dumps(part.expected) if right else ""
    return out


def run_autograder(root):
    shutil.rmtree(root / "results")
    (root / "results").mkdir()
    env = AWAY | {"AUTOGRADER_ROOT": str(root)}
    res = subprocess.run(["bash", str(root / "source" / "run_autograder")], capture_output=True, text=True, env=env,
                         timeout=300, cwd=root)       # away from this checkout, whose examprep/ would shadow the wheel's
    assert res.returncode == 0, res.stderr
    return json.loads((root / "results" / "results.json").read_text())


def check_format(data):
    """Gradescope's results.json: a numeric score (or tests that carry theirs), output text,
    visibility, tests each with name, score, max_score, output, visibility."""
    assert isinstance(data["score"], (int, float)) and isinstance(data["output"], str)
    assert data.get("visibility", "visible") in VISIBILITIES
    for t in data["tests"]:
        assert isinstance(t["name"], str) and t["name"]
        assert isinstance(t["score"], (int, float)) and isinstance(t["max_score"], (int, float))
        assert 0 <= t["score"] <= t["max_score"]
        assert isinstance(t["output"], str) and t["visibility"] in VISIBILITIES
        assert t.get("status", "passed") in ("passed", "failed")


def test_zip_layout_and_scripts(tree):
    d, root, key, modes = tree
    src = root / "source"
    assert {"setup.sh", "run_autograder", "key.json", "requirements.txt", "README.md"} <= {p.name for p in src.iterdir()}
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert (src / "key.json").read_bytes() == (d / "key.json").read_bytes()
    for script in ("setup.sh", "run_autograder"):
        assert subprocess.run(["bash", "-n", str(src / script)]).returncode == 0
    setup = (src / "setup.sh").read_text()
    assert "sys.version_info < (3, 11)" in setup and "apt-get install -y python3.11 python3.11-venv" in setup
    [wheel] = src.glob("examprep-*.whl")
    assert f'install --no-deps "$HERE"/{wheel.name}' in setup
    assert "Zip file upload" in (src / "README.md").read_text()


def test_requirements_pin_the_running_versions(tree):
    _, root, _, _ = tree
    pins = dict(line.split("==") for line in (root / "source" / "requirements.txt").read_text().split())
    assert {"numpy", "typer", "rich", "sympy", "typst"} <= set(pins)
    for name, version in pins.items():
        assert metadata.version(name) == version, name


def test_the_fresh_environment_runs_the_bundled_wheel(tree):
    _, root, _, _ = tree
    vpy = root / "venv" / "bin" / "python"
    where = subprocess.run([str(vpy), "-c", "import examprep; print(examprep.__file__)"], capture_output=True,
                           text=True, check=True, cwd=root, env=AWAY).stdout.strip()     # cwd: not this checkout
    assert Path(where).resolve().is_relative_to((root / "venv").resolve())


def test_run_autograder_grades_a_submission(tree):
    d, root, key, _ = tree
    for f in (root / "submission").iterdir():
        f.unlink()
    (root / "submission" / "answers.json").write_text(json.dumps(answers(key)))
    data = run_autograder(root)
    check_format(data)
    n_parts = sum(len(p.parts) for p in key.problems)
    assert len(data["tests"]) == n_parts
    assert data["score"] == pytest.approx(sum(t["score"] for t in data["tests"]))
    # the same as examprep grade --gradescope here
    res = run("grade", d / "key.json", root / "submission" / "answers.json", "--gradescope", d / "here", "-q")
    assert res.exit_code == 0, res.output
    assert data == json.loads((d / "here" / "results.json").read_text())
    assert data["score"] > 0


@pytest.mark.parametrize("files, message", [
    ({}, "no answer files"),
    ({"a.json": {"student_id": "a"}, "b.json": {"student_id": "b"}}, "exactly one answer file"),
    # one id, different answers (issue 35): a conflict, still two files to name (was graded as two)
    ({"a.json": {"student_id": "a", "q1.x": "1"}, "b.json": {"student_id": "a", "q1.x": "2"}},
     "exactly one answer file; this submission has 2: a.json, b.json"),
    ({"a.json": "{not json"}, "could not be read"),
])
def test_a_bad_submission_is_a_zero_with_the_reason(tree, files, message):
    _, root, _, _ = tree
    for f in (root / "submission").iterdir():
        f.unlink()
    for name, content in files.items():
        (root / "submission" / name).write_text(content if isinstance(content, str) else json.dumps(content))
    data = run_autograder(root)
    check_format(data)
    assert data["score"] == 0 and message in data["output"]


def test_missing_key_is_one_line_exit_2(tmp_path):
    res = run("gradescope-autograder", tmp_path / "nokey.json", "--out", tmp_path / "a.zip")
    assert res.exit_code == 2 and "nokey.json" in res.stderr and "Traceback" not in res.output
    assert not (tmp_path / "a.zip").exists()


def test_the_zip_never_overwrites_its_key_or_an_existing_file_and_is_a_zip(tmp_path):
    key = tmp_path / "key.json"
    assert run("generate", "softmax-cross-entropy", "--seed", "1", "--key", key).exit_code == 0
    before = key.read_bytes()
    (tmp_path / "old.zip").write_bytes(b"keep")
    for out, message in [(key, "must"), (tmp_path / "old.zip", "exists; add --force to replace it"),
                         (tmp_path / "a.txt", "Gradescope takes a .zip"), (tmp_path / "no" / "a.zip", "does not exist")]:
        res = run("gradescope-autograder", key, "--out", out)
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr
        if message != "must":
            assert message in res.stderr, res.stderr
    key_copy = tmp_path / "copy.zip"            # the key itself under a .zip name: never overwritten
    key_copy.write_bytes(before)
    res = run("gradescope-autograder", key_copy, "--out", key_copy, "--force")
    assert res.exit_code == 2 and "would overwrite the key it is built from" in res.stderr, res.stderr
    assert key.read_bytes() == before and key_copy.read_bytes() == before
    assert (tmp_path / "old.zip").read_bytes() == b"keep" and not (tmp_path / "a.txt").exists()


def test_a_failed_wheel_build_says_why_and_what_to_do(tmp_path, monkeypatch):
    # a venv with setuptools 65.5 (no bdist_wheel): pip's last line was "hint: See above for details."
    from examprep.grading import autograder

    stderr = ("  error: subprocess-exited-with-error\n  × Building wheel for examprep (pyproject.toml) did not run"
              " successfully.\n  error: invalid command 'bdist_wheel'\n  hint: See above for details.\n")
    monkeypatch.setattr(autograder.subprocess, "run",
                        lambda *a, **k: subprocess.CompletedProcess(a, 1, stdout="", stderr=stderr))
    with pytest.raises(autograder.AutograderError) as err:
        autograder.build_wheel(tmp_path)
    assert str(err.value) == ("could not build the examprep wheel (error: invalid command 'bdist_wheel'); examprep's "
                              "install provides setuptools>=70.1: reinstall with pip install -e '.[train]'")


def test_the_install_provides_a_setuptools_that_builds_wheels_offline():
    # build_wheel runs pip without build isolation (nothing downloaded): the environment's setuptools
    # must have bdist_wheel, which setuptools has itself from 70.1
    from packaging.requirements import Requirement
    from packaging.version import Version

    reqs = [Requirement(r) for r in metadata.requires("examprep") or []]
    [setuptools] = [r for r in reqs if r.name == "setuptools" and not r.marker]
    assert not setuptools.specifier.contains("70.0") and setuptools.specifier.contains("70.1")
    assert Version(metadata.version("setuptools")) >= Version("70.1")
