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
    # its seconds-long step says so (StepProgress: one plain line without a terminal)
    assert res.stderr.startswith("building examprep's wheel (a few seconds)…\nwrote "), res.stderr
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
    # who submitted comes from Gradescope's metadata; a common sheet needs no roster
    run_ag = (src / "run_autograder").read_text()
    assert '--metadata "$ROOT/submission_metadata.json"' in run_ag and "--roster" not in run_ag
    assert not (src / "roster.json").exists() and "one common sheet" in (src / "README.md").read_text()


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


# ---------------------------------------------------------------- who submitted (issue 35, item 3)
# In-process: results_for is what run_autograder runs (main() writes its dict as results.json).

ROSTER = ("id,name,email,sis_id\n"
          "s0001,Ada Lovelace,ada@example.edu,900001\n"
          "s0002,Bob Byron,bob@example.edu,900002\n"
          "s0003,Cy Twin,cy@example.edu,900003\n")


def gs_metadata(*users):
    """submission_metadata.json in the shape Gradescope documents at
    https://gradescope-autograders.readthedocs.io/en/latest/submission_metadata/ (the source is
    gradescope/autograder_samples, docs/submission_metadata.md): users carry email, id (Gradescope's
    own user id) and name; Gradescope adds "sid", the Student ID of its course roster, where the
    instructor has one (a user below without it is matched by e-mail)."""
    return {"id": 123456, "created_at": "2018-07-01T14:22:32.365935-07:00",
            "assignment": {"due_date": "2018-07-31T23:00:00.000000-07:00", "group_size": 4, "group_submission": True,
                           "id": 25828, "course_id": 1234, "late_due_date": None,
                           "release_date": "2018-07-02T00:00:00.000000-07:00", "title": "Programming Assignment 1",
                           "total_points": "20.0"},
            "submission_method": "upload",
            "users": [{"email": email, "id": 1234 + n, "name": name, **({"sid": sid} if sid is not None else {})}
                      for n, (email, name, sid) in enumerate(users)],
            "previous_submissions": [{"submission_time": "2017-04-06T14:24:48.087023-07:00", "score": 0.0,
                                      "results": {}}]}


ADA = ("ada@example.edu", "Ada Lovelace", None)        # matched by e-mail alone
BOB = ("bob@example.edu", "Bob Byron", "s0002")
CY = ("cy@example.edu", "Cy Twin", "900003")           # a SID that is the roster's sis_id


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    """A key with one variant per student (s0003's the same problems as s0001's), roster.json as
    build_zip bundles it, and a writer of one submission."""
    from examprep.generators import build
    from examprep.grading.autograder import roster_mapping
    from examprep.keys import Key, write_key

    d = tmp_path_factory.mktemp("class")
    ada, bob = [build("softmax-cross-entropy", 1)], [build("softmax-cross-entropy", 2)]
    key = Key("Exam", [], variants={"s0001": ada, "s0002": bob, "s0003": ada},
              variant_codes={"s0001": "AAAA", "s0002": "BBBB", "s0003": "CCCC"})
    write_key(d / "key.json", key)
    (d / "roster.csv").write_text(ROSTER)
    (d / "roster.json").write_text(json.dumps(roster_mapping(key, str(d / "roster.csv"))))
    return d, key


def right(problems, **fields):
    out = dict(fields)
    for n, p in enumerate(problems, 1):
        for part in p.parts:
            out[f"q{n}.{part.id}"] = part.expected if isinstance(part.expected, str) else json.dumps(part.expected)
    return out


def all_right(data):
    """Every auto-graded part passed (a written part stays pending, without a status)."""
    statuses = [t.get("status", "pending") for t in data["tests"]]
    return "passed" in statuses and "failed" not in statuses


def grade_as(d, tmp_path, answers, meta, name="answers.json"):
    from examprep.grading.autograder import results_for

    sub = tmp_path / "submission"
    sub.mkdir(exist_ok=True)
    (sub / name).write_text(json.dumps(answers))
    mpath = tmp_path / "submission_metadata.json"
    if meta is not None:
        mpath.write_text(meta if isinstance(meta, str) else json.dumps(meta))
    data = results_for(str(d / "key.json"), str(sub), metadata=str(mpath), roster=str(d / "roster.json"))
    check_format(data)
    return data


def test_a_friends_answers_are_graded_against_the_submitters_own_variant(classroom, tmp_path):
    d, key = classroom
    data = grade_as(d, tmp_path, right(key.variants["s0002"], student_id="s0002"), gs_metadata(ADA))
    assert data["output"].startswith("s0001: ")
    assert ("warning: this file names 's0002' but was submitted by s0001 (ada@example.edu): graded against your own "
            "variant") in data["output"]
    assert not all_right(data)                      # bob's numbers are wrong for ada's variant
    # ada's own answers under bob's id: full marks, graded as hers
    data = grade_as(d, tmp_path, right(key.variants["s0001"], student_id="s0002", variant="BBBB"), gs_metadata(ADA))
    assert all_right(data) and "names 's0002'" in data["output"]
    # bob's own file, submitted by bob: his variant, no warning
    data = grade_as(d, tmp_path, right(key.variants["s0002"], student_id="s0002"), gs_metadata(BOB))
    assert all_right(data) and "warning" not in data["output"]


def test_the_sid_matches_the_roster_id_then_its_sis_id_then_the_email(classroom, tmp_path):
    d, key = classroom
    for user, who in [(("", "Bob", "s0002"), "s0002"), (("", "Cy", "900003"), "s0003"),
                      (("cy@EXAMPLE.edu ", "Cy", None), "s0003"), (("ada@example.edu", "Ada", "nobody"), "s0001")]:
        data = grade_as(d, tmp_path, right(key.variants[who], student_id=who), gs_metadata(user))
        assert data["output"].startswith(f"{who}: ") and "warning" not in data["output"], (user, data["output"])
        assert all_right(data)
    data = grade_as(d, tmp_path, right(key.variants["s0002"]), gs_metadata(("ada@example.edu", "Ada", "s0002")))
    assert data["score"] == 0 and data["tests"] == [] and "SID is s0002's" in data["output"]
    assert "e-mail is s0001's" in data["output"]


@pytest.mark.parametrize("meta, message", [
    (gs_metadata(("eve@example.edu", "Eve", "s0009")), "Eve, eve@example.edu, SID s0009 is not on the roster"),
    (gs_metadata(ADA, BOB), "this group submission's members have different variants (s0001 (Ada Lovelace, "
                         "ada@example.edu) has variant AAAA; s0002 (Bob Byron, bob@example.edu, SID s0002) has variant BBBB)"),
    (None, "submission_metadata.json): no such metadata file; this submission cannot be matched"),
    ("{not json", "is not valid JSON"),
    (json.dumps({"users": []}), "names no submitter"),
])
def test_who_submitted_unknown_is_a_zero_with_the_reason_never_anothers_variant(classroom, tmp_path, meta, message):
    d, key = classroom
    data = grade_as(d, tmp_path, right(key.variants["s0002"], student_id="s0002"), meta)
    assert data["score"] == 0 and data["tests"] == [], data
    assert message in data["output"] and "Traceback" not in data["output"], data["output"]
    assert len(data["output"].splitlines()) == 1


def test_a_group_with_one_variant_is_graded(classroom, tmp_path):
    d, key = classroom          # s0003's variant is s0001's problems
    data = grade_as(d, tmp_path, right(key.variants["s0001"], student_id="s0001"), gs_metadata(CY, ADA))
    assert all_right(data) and data["output"].startswith("s0003: ")
    assert "names 's0001' but was submitted by s0003 (cy@example.edu)" in data["output"]


def test_a_common_sheet_needs_no_metadata(tmp_path):
    from examprep.generators import build
    from examprep.grading.autograder import results_for
    from examprep.keys import Key, write_key

    problems = [build("softmax-cross-entropy", 1)]
    write_key(tmp_path / "key.json", Key("Exam", problems))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.json").write_text(json.dumps(right(problems, student_id="anyone")))
    data = results_for(str(tmp_path / "key.json"), str(tmp_path / "sub"), metadata=str(tmp_path / "absent.json"))
    assert all_right(data) and data["output"].startswith("anyone: ") and "warning" not in data["output"]


def test_no_answer_file_says_why_each_file_was_skipped(tmp_path):
    from examprep.generators import build
    from examprep.grading.autograder import results_for
    from examprep.keys import Key, write_key

    write_key(tmp_path / "key.json", Key("Exam", [build("softmax-cross-entropy", 1)]))
    sub = tmp_path / "sub"
    (sub / "folder").mkdir(parents=True)
    (sub / "answers.toml.txt").write_text("x")
    (sub / ".answers.toml").write_text("x")
    data = results_for(str(tmp_path / "key.json"), str(sub))
    assert data["score"] == 0
    assert data["output"].splitlines() == [
        "no answer files in this submission; each file was skipped:",
        "  .answers.toml: skipped (a hidden file)",
        "  answers.toml.txt: skipped (not a .toml, .json or .csv answer file)",
        "  folder: skipped (a directory: folders are not searched)",
        "Submit one answer file (.toml or .json)."]
    (sub / "a.json").write_text(json.dumps({"student_id": "a"}))        # graded, the rest named
    assert "Also submitted, not read:\n  .answers.toml: skipped (a hidden file)" in results_for(
        str(tmp_path / "key.json"), str(sub))["output"]


@pytest.fixture
def no_wheel(monkeypatch, tmp_path):
    """build_zip without building a wheel (the tree fixture above builds and installs a real one)."""
    from examprep.grading import autograder

    wheel = tmp_path / "examprep-0-py3-none-any.whl"
    wheel.write_bytes(b"wheel")
    monkeypatch.setattr(autograder, "build_wheel", lambda tmp: wheel)


def test_the_roster_is_bundled_and_run_autograder_matches_submitters_on_it(classroom, tmp_path, no_wheel):
    d, key = classroom
    res = run("gradescope-autograder", d / "key.json", "--roster", d / "roster.csv", "--out", tmp_path / "a.zip")
    assert res.exit_code == 0 and "roster.json (3 students)" in res.stderr and "note:" not in res.stderr, res.output
    with zipfile.ZipFile(tmp_path / "a.zip") as z:
        z.extractall(tmp_path / "source")
    src = tmp_path / "source"
    assert json.loads((src / "roster.json").read_text())["students"] == [
        {"id": "s0001", "email": "ada@example.edu", "sis_id": "900001"},
        {"id": "s0002", "email": "bob@example.edu", "sis_id": "900002"},
        {"id": "s0003", "email": "cy@example.edu", "sis_id": "900003"}]
    run_ag = (src / "run_autograder").read_text()
    assert '--metadata "$ROOT/submission_metadata.json" --roster "$ROOT/source/roster.json"' in run_ag
    assert "never the one the file names" in (src / "README.md").read_text()
    # the container's entry point with the arguments run_autograder gives it
    from examprep.grading.autograder import main

    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "a.json").write_text(json.dumps(right(key.variants["s0002"], student_id="s0002")))
    (tmp_path / "submission_metadata.json").write_text(json.dumps(gs_metadata(ADA)))
    (tmp_path / "results").mkdir()
    assert main([str(src / "key.json"), str(tmp_path / "submission"), str(tmp_path / "results"), "--metadata",
                 str(tmp_path / "submission_metadata.json"), "--roster", str(src / "roster.json")]) == 0
    data = json.loads((tmp_path / "results" / "results.json").read_text())
    assert data["output"].startswith("s0001: ") and "submitted by s0001 (ada@example.edu)" in data["output"]


def test_without_a_roster_only_the_sid_matches_the_keys_ids(classroom, tmp_path, no_wheel):
    from examprep.grading.autograder import results_for

    d, key = classroom
    res = run("gradescope-autograder", d / "key.json", "--out", tmp_path / "a.zip")
    assert res.exit_code == 0 and "note: 3 variants and no --roster" in res.stderr, res.output
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.json").write_text(json.dumps(right(key.variants["s0002"], student_id="s0002")))
    for user, verdict in [(BOB, "s0002: "), (ADA, "Ada Lovelace, ada@example.edu is not on the roster")]:
        (tmp_path / "m.json").write_text(json.dumps(gs_metadata(user)))
        data = results_for(str(d / "key.json"), str(tmp_path / "sub"), metadata=str(tmp_path / "m.json"))
        assert verdict in data["output"], data["output"]


@pytest.mark.parametrize("roster, message", [
    ("id,email\ns0001,ada@example.edu\ns0002,ADA@example.edu\n", "the email 'ADA@example.edu' is both s0001's and s0002's"),
    ("id,sis_id\ns0001,9\ns0002,9\n", "the sis_id '9' is both s0001's and s0002's"),
    ("id\nx1\nx2\n", "none of its 2 students has a variant in the key"),
    (None, "no such file"),
])
def test_a_roster_that_cannot_identify_submitters_is_refused_in_one_line(classroom, tmp_path, no_wheel, roster, message):
    d, _ = classroom
    if roster is not None:
        (tmp_path / "r.csv").write_text(roster)
    res = run("gradescope-autograder", d / "key.json", "--roster", tmp_path / "r.csv", "--out", tmp_path / "a.zip")
    assert res.exit_code == 2 and message in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.output
    assert not (tmp_path / "a.zip").exists()


def test_the_summary_names_key_students_off_the_roster_and_an_unused_roster(classroom, tmp_path, no_wheel):
    d, _ = classroom
    (tmp_path / "r.csv").write_text("id,email\ns0001,ada@example.edu\ns0002,bob@example.edu\n")
    res = run("gradescope-autograder", d / "key.json", "--roster", tmp_path / "r.csv", "--out", tmp_path / "a.zip")
    assert res.exit_code == 0, res.output
    assert "note: 1 of the key's students are not on --roster (s0003): their submissions will get a 0" in \
        " ".join(res.stderr.split())
    from examprep.generators import build
    from examprep.keys import Key, write_key

    write_key(tmp_path / "common.json", Key("Exam", [build("softmax-cross-entropy", 1)]))
    res = run("gradescope-autograder", tmp_path / "common.json", "--roster", tmp_path / "r.csv", "--out", tmp_path / "b.zip")
    assert res.exit_code == 0 and "--roster unused: the key has one common sheet" in " ".join(res.stderr.split())
    with zipfile.ZipFile(tmp_path / "b.zip") as z:
        assert "roster.json" not in z.namelist()
