"""`examprep generate --key --template` and `examprep grade` end to end: a template filled by hand,
batches with corrupt files mixed in, reports, Gradescope JSON, the key self-test on every topic."""
import hashlib
import json

import numpy as np
import os
import re
import subprocess
import sys
import tomllib

import pytest
from typer.testing import CliRunner

from examprep import generators
from examprep.cli import app
from examprep.grading import self_test
from examprep.keys import KEY_FORMAT, Key, read_key, write_key

runner = CliRunner()
TOPICS = ["attention", "gru-step", "receptive-field", "softmax-cross-entropy"]


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def sheet(tmp_path_factory):
    d = tmp_path_factory.mktemp("sheet")
    res = run("generate", *TOPICS, "--seed", "7", "--key", d / "key.json", "--template", d / "answers.toml")
    assert res.exit_code == 0, res.output
    assert f"wrote {d / 'key.json'}" in res.stderr
    return d, read_key(d / "key.json")


def fill(template: str, answers: dict[str, str]) -> str:
    """Fill a template the way a student does: edit the lines `part = ""` under [qN]."""
    out, table = [], None
    for line in template.splitlines():
        m = re.match(r"\[(q\d+)\]", line)
        if m:
            table = m.group(1)
        m = re.match(r'(\w+) = ""$', line)
        if m and table and f"{table}.{m.group(1)}" in answers:
            line = f'{m.group(1)} = "{answers[f"{table}.{m.group(1)}"]}"'
        elif m and m.group(1) == "student_id" and "student_id" in answers:
            line = f'student_id = "{answers["student_id"]}"'
        out.append(line)
    return "\n".join(out) + "\n"


def test_key_and_template_from_generate(sheet):
    d, key = sheet
    raw = json.loads((d / "key.json").read_text())
    assert raw["format"] == "examprep-key" and raw["format_version"] == KEY_FORMAT
    assert [p.generator for p in key.problems] == TOPICS
    template = (d / "answers.toml").read_text()
    data = tomllib.loads(template)
    for n, p in enumerate(key.problems, 1):
        assert set(data[f"q{n}"]) == {part.id for part in p.parts}
        for part in p.parts:
            assert part.form() in template
    assert "2×2 matrix" in template and "each entry to 3 significant figures" in template
    assert oct((d / "answers.toml").stat().st_mode & 0o044) != "0o0"      # readable by the class


def test_hand_filled_template_grades_as_expected(sheet, tmp_path):
    d, key = sheet
    attention = key.problems[0]
    w = attention.part("weights").expected
    first = attention.parts[0]                                 # the (scaled) scores, whichever variant was drawn
    mistake = first.misconceptions[0]
    wrong = np.exp(np.asarray(mistake.value, dtype=float))
    wrong = np.round(wrong / wrong.sum(axis=1, keepdims=True), 3)
    answers = {
        "student_id": "ada",
        f"q1.{first.id}": json.dumps(mistake.value),          # a known mistake: misconception
        "q1.weights": json.dumps(wrong.tolist()),              # consistent with those scores: ECF
        "q1.output": "",                                       # blank
        "q2.r": "0,5",                                         # decimal comma: unreadable, with a hint
        "q2.z": "0.182", "q2.n": "0.635", "q2.h_new": "−0.933",
        "q3.size_1": "22", "q3.size_2": "11", "q3.receptive_field": "8",
        "q4.probs": "e^0/(1 + e^2 + 1)  e^2/(2 + e^2)  1/(e^2+2)", "q4.loss": "ln(2 + e^2)",
        "q4.grad_logits": "[-0.893, 0.787, 0.107]", "q4.derivation": "y_i - p_i",
    }
    assert not np.allclose(w, wrong, atol=1e-3)                # the weights really are carried forward
    sub = tmp_path / "ada.toml"
    sub.write_text(fill((d / "answers.toml").read_text(), answers), encoding="utf-8")
    res = run("grade", d / "key.json", sub, "--json", "-")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    got = {f"{p['question']}.{part['part']}": (part["status"], part["misconception"])
           for p in data["submissions"][0]["problems"] for part in p["parts"]}
    assert got[f"q1.{first.id}"] == ("misconception", mistake.id)
    assert got["q1.weights"] == ("ecf", None)
    assert got["q1.output"] == ("blank", None)
    assert got["q2.r"] == ("unparseable", None)
    assert got["q2.h_new"][0] == "wrong"
    assert got["q3.receptive_field"] == ("misconception", "sum-kernels")
    assert got["q4.probs"] == ("correct", None) and got["q4.loss"] == ("correct", None)
    assert got["q4.derivation"] == ("misconception", "y-minus-p")
    sub_json = data["submissions"][0]
    assert sub_json["student_id"] == "ada" and 0 < sub_json["score"] < sub_json["max_score"]

    view = run("grade", d / "key.json", sub, "--no-color")
    assert view.exit_code == 0
    for text in (f"misconception ({mistake.id})", "carried forward", "use a decimal point", "no answer",
                 mistake.explanation[:30], "the sign is wrong"):
        assert text in view.stdout, text


def test_batch_with_corrupt_files_grades_the_good_ones_and_leaves_inputs_untouched(sheet, tmp_path):
    d, key = sheet
    template = (d / "answers.toml").read_text()
    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / "good1.toml").write_text(fill(template, {"student_id": "s1", "q3.size_1": "22"}))
    (batch / "good2.json").write_text(json.dumps({"student_id": "s2", "q3": {"size_1": 22, "size_2": 11}}))
    (batch / "good3.toml").write_bytes(b"\xff\xfe" + fill(template, {"student_id": "s3"}).encode("utf-16-le"))
    (batch / "class.csv").write_text("student_id,q3.size_1,q3.size_2\ns4,22,11\ns5,20,10\ns1,22,11\n")
    (batch / "broken.toml").write_text("[q1]\nscores = [[1, 2]\n")
    (batch / "broken.json").write_text('{"q1": ')
    (batch / "empty.toml").write_text("")
    (batch / "photo.toml").write_bytes(bytes(range(256)) * 8)
    (batch / "big.toml").write_text('[q1]\nscores = "' + "1" * 1_100_000 + '"\n')
    (batch / "README.txt").write_text("not an answer file")
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in batch.iterdir()}

    res = run("grade", d / "key.json", batch, "--csv", tmp_path / "grades.csv", "--json", tmp_path / "grades.json",
              "--report", tmp_path / "reports", "--no-color")
    assert res.exit_code == 1, res.output
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in batch.iterdir()}
    assert after == before                                         # inputs unchanged byte for byte
    for name, reason in [("broken.toml", "invalid TOML"), ("broken.json", "invalid JSON"), ("empty.toml", "empty"),
                         ("photo.toml", "binary"), ("big.toml", "limit")]:
        line = next((ln for ln in res.stderr.splitlines() if name in ln), "")
        assert "unreadable" in line and reason in line, (name, res.stderr)
    assert "README.txt: skipped" in res.stderr
    assert "could not be read" in res.stderr
    data = json.loads((tmp_path / "grades.json").read_text())
    ids = sorted(s["student_id"] for s in data["submissions"])
    # s1 answered differently in good1.toml and class.csv: a conflict (issue 35), graded from neither
    assert ids == ["s2", "s3", "s4", "s5"]
    assert len(data["unreadable"]) == 5
    assert [(c["student_id"], c["status"]) for c in data["conflicts"]] == [("s1", "conflict")]
    assert "conflict: student 's1': 2 submissions with different answers" in res.stderr
    rows = (tmp_path / "grades.csv").read_text().splitlines()
    assert rows[0].startswith(f"student_id,name,source,variant,q1,q2,q3,q4,q1.{key.problems[0].parts[0].id}")
    assert len(rows) == 6 and rows[5].startswith("s1,,") and ",conflict,,,," in rows[5]      # s1: no scores
    reports = sorted(p.name for p in (tmp_path / "reports").iterdir())
    assert reports == ["s1.md", "s2.md", "s3.md", "s4.md", "s5.md"]         # s1.md: in conflict, no score
    assert "**Not graded: this submission is in conflict.**" in (tmp_path / "reports" / "s1.md").read_text()
    listed = (tmp_path / "grades-conflicts.csv").read_text().splitlines()      # beside grades.json
    assert listed[0] == "student_id,status,reason,sources" and listed[1].startswith("s1,conflict,2 submissions")
    s5 = (tmp_path / "reports" / "s5.md").read_text()
    assert s5.startswith("# Feedback — s5") and "carried forward" in s5          # 10 follows from their 20
    assert "class summary" in res.stdout and "q3" in res.stdout


def test_all_readable_batch_exits_zero_and_summarises(sheet, tmp_path):
    d, key = sheet
    (tmp_path / "class.csv").write_text("id,name,q2.r,q2.z,q4.derivation\n"
                                        "a,A,0.5,0.2,y_i - p_i\nb,B,0.5,0.182,p_i - y_i\nc,C,,,y_i-p_i\n")
    res = run("grade", d / "key.json", tmp_path / "class.csv", "--no-color")
    assert res.exit_code == 0, res.output
    assert "most frequent misconceptions" in res.stdout
    assert re.search(r"q4\.derivation\s+y-minus-p\s+2", res.stdout)
    assert "graded 3 submissions" in res.stderr


def test_gradescope_results(sheet, tmp_path):
    d, key = sheet
    sub = tmp_path / "one.json"
    sub.write_text(json.dumps({"student_id": "g1", "q3": {"size_1": "22", "size_2": "12"}}))
    res = run("grade", d / "key.json", sub, "--gradescope", tmp_path / "gs", "--gradescope-visibility", "after_published")
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "gs" / "results.json").read_text())
    n_parts = sum(len(p.parts) for p in key.problems)
    assert set(data) >= {"score", "tests"} and len(data["tests"]) == n_parts
    for t in data["tests"]:
        assert set(t) >= {"name", "score", "max_score", "output", "visibility"}
        assert t["visibility"] == "after_published" and 0 <= t["score"] <= t["max_score"]
    assert data["score"] == pytest.approx(sum(t["score"] for t in data["tests"])) == 1.0
    size_1 = next(t for t in data["tests"] if "size_1" in t["name"])
    assert size_1["score"] == size_1["max_score"] == 1 and size_1["name"].startswith("q3(a) size_1")
    # several submissions: one folder per student, names made safe
    (tmp_path / "two.json").write_text(json.dumps({"student_id": "../../etc/evil", "q3": {"size_1": "1"}}))
    res = run("grade", d / "key.json", sub, tmp_path / "two.json", "--gradescope", tmp_path / "gs2")
    assert res.exit_code == 0
    folders = sorted(p.name for p in (tmp_path / "gs2").iterdir())
    assert folders[0] == "etc_evil-" + hashlib.sha1(b"../../etc/evil").hexdigest()[:8] and folders[1] == "g1"
    assert not (tmp_path / "etc").exists()


def test_gradescope_shows_the_raw_text_of_an_unreadable_answer(sheet, tmp_path):
    d, _ = sheet
    sub = tmp_path / "one.json"
    sub.write_text(json.dumps({"student_id": "g1", "q3": {"size_1": "twenty two", "size_2": "12"}}))
    res = run("grade", d / "key.json", sub, "--gradescope", tmp_path / "gs")
    assert res.exit_code != 2, res.output
    data = json.loads((tmp_path / "gs" / "results.json").read_text())
    size_1 = next(t for t in data["tests"] if "size_1" in t["name"])
    assert "your answer: 'twenty two' (could not be read)" in size_1["output"]
    blank = next(t for t in data["tests"] if "size_1" not in t["name"] and "size_2" not in t["name"])
    assert "your answer: —" in blank["output"]


@pytest.mark.parametrize("sid", ["a/b", "..", "CON", "x" * 300, "é", "a\\b", ""])
def test_output_names_are_safe(sid):
    from examprep.fileio import safe_name

    name = safe_name(sid)
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,80}", name) and ".." not in name and name.upper() != "CON"


def test_usage_errors_exit_two(sheet, tmp_path):
    d, key = sheet
    sub = tmp_path / "s.toml"
    sub.write_text('[q1]\nscores = "1"\n')
    cases = [
        (["grade", d / "key.json"], "missing SUBMISSION"),
        (["grade", tmp_path / "nokey.json", sub], "no such key file"),
        (["grade", sub, sub], "not a key"),
        (["grade", d / "key.json", sub, "--ecf-credit", "2"], "--ecf-credit"),
        (["grade", d / "key.json", sub, "--tolerance", "sigfigs:x"], "tolerance"),
        (["grade", d / "key.json", sub, "--csv", sub], "overwrite an input"),
        (["grade", d / "key.json", tmp_path / "empty_dir"], "no answer files"),
        (["grade", d / "key.json", "--self-test", sub], "--self-test"),
    ]
    (tmp_path / "empty_dir").mkdir()
    for args, msg in cases:
        res = run(*args)
        assert res.exit_code == 2, (args, res.output)
        assert res.stderr.startswith("error: ") and msg in res.stderr and res.stderr.count("\n") == 1, res.stderr
    assert sub.read_text() == '[q1]\nscores = "1"\n'


def test_key_from_a_newer_examprep_is_refused(sheet, tmp_path):
    d, _ = sheet
    raw = json.loads((d / "key.json").read_text())
    raw["format_version"] = KEY_FORMAT + 1
    (tmp_path / "new.json").write_text(json.dumps(raw))
    res = run("grade", tmp_path / "new.json", "--self-test")
    assert res.exit_code == 2 and "newer" in res.stderr


def test_tolerance_and_ecf_options(sheet, tmp_path):
    d, key = sheet
    sub = tmp_path / "t.json"
    z = key.problems[1].part("z").expected
    sub.write_text(json.dumps({"student_id": "t", "q2": {"z": f"{z:.2f}"}}))
    strict = json.loads(run("grade", d / "key.json", sub, "--json", "-").stdout)
    loose = json.loads(run("grade", d / "key.json", sub, "--json", "-", "--tolerance", "q2.z=sigfigs:2").stdout)

    def status(data):
        return next(p["status"] for q in data["submissions"][0]["problems"] for p in q["parts"] if p["part"] == "z")

    assert status(strict) == "wrong" and status(loose) == "correct"


def test_variants_are_picked_by_student_id_or_code(tmp_path):
    p1 = generators.build("receptive-field", 1, 1)
    p2 = generators.build("receptive-field", 2, 1)
    key = Key("v", [], variants={"s1": [p1], "s2": [p2]}, variant_codes={"s1": "K7Q", "s2": "B2X"})
    write_key(tmp_path / "key.json", key)
    answers = {"q1": {p.id: str(p.expected) for p in p2.parts}}
    (tmp_path / "s2.json").write_text(json.dumps({"student_id": "s2", **answers}))
    (tmp_path / "x.json").write_text(json.dumps({"student_id": "x", "variant": "b2x", **answers}))
    (tmp_path / "y.json").write_text(json.dumps({"student_id": "y", **answers}))
    res = run("grade", tmp_path / "key.json", tmp_path / "s2.json", tmp_path / "x.json", tmp_path / "y.json",
              "--json", "-")
    assert res.exit_code == 1
    data = json.loads(res.stdout)
    assert [(s["student_id"], s["percent"]) for s in data["submissions"]] == [("s2", 100.0), ("x", 100.0)]
    assert "no variant for student id 'y'" in data["unreadable"][0]
    assert run("grade", tmp_path / "key.json", "--self-test").exit_code == 0


# ----------------------------------------------------------------------------- self-test

def every_topic_key():
    problems = []
    for name, g in sorted(generators.load_all().items()):
        for level in g.levels:
            for cf in (False, True) if g.calculator_free else (False,):
                for seed in (1, 2):
                    problems.append(generators.build(name, seed, level, cf))
    return Key("every topic", problems)


def test_self_test_passes_on_keys_of_every_topic():
    key = every_topic_key()
    checks, issues = self_test(key)
    assert checks > 3 * sum(len(p.parts) for p in key.problems)
    assert issues == []


def test_self_test_command_and_a_tampered_key(sheet, tmp_path):
    d, _ = sheet
    res = run("grade", d / "key.json", "--self-test", "--no-color")
    assert res.exit_code == 0 and "self-test passed" in res.stdout
    raw = json.loads((d / "key.json").read_text())
    part = raw["problems"][1]["parts"][0]                  # gru r: make a misconception equal the answer
    part["misconceptions"][0]["value"] = part["expected"]
    raw["problems"][2]["parts"][0]["expected"] += 1        # receptive field size_1: a wrong key answer
    (tmp_path / "bad.json").write_text(json.dumps(raw))
    res = run("grade", tmp_path / "bad.json", "--self-test", "--no-color")
    assert res.exit_code == 1
    assert "FAIL q2.r (gru-step): misconception" in res.stdout
    assert "FAIL q3.size_2 (receptive-field): its carried-forward rule" in res.stdout
    assert "self-test failed" in res.stdout


def test_grade_help_imports_neither_sympy_nor_torch():
    code = ("import sys; sys.argv = ['examprep', 'grade', '--help']\n"
            "from examprep.cli import app\n"
            "try:\n    app()\nexcept SystemExit:\n    pass\n"
            "print('IMPORTED', [m for m in ('torch', 'sympy', 'numpy') if m in sys.modules])")
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "IMPORTED []" in res.stdout, res.stdout + res.stderr


def test_keys_in_other_encodings_and_broken_keys(sheet, tmp_path):
    d, key = sheet
    text = (d / "key.json").read_text(encoding="utf-8")
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    (tmp_path / "u16.json").write_bytes(b"\xff\xfe" + text.encode("utf-16-le"))
    for name in ("bom.json", "u16.json"):
        assert len(read_key(tmp_path / name).problems) == len(key.problems)
    (tmp_path / "bin.json").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "cut.json").write_text(text[: len(text) // 2])
    raw = json.loads(text)
    del raw["problems"][0]["parts"][0]["kind"]
    (tmp_path / "damaged.json").write_text(json.dumps(raw))
    for name, msg in [("bin.json", "binary"), ("cut.json", "invalid JSON at line"), ("damaged.json", "damaged key")]:
        res = run("grade", tmp_path / name, "--self-test")
        assert res.exit_code == 2 and msg in res.stderr, res.stderr



@pytest.fixture
def ada(sheet, tmp_path):
    """The sheet's folder and one student's filled-in answer file (for the output-path tests)."""
    d, _ = sheet
    sub = tmp_path / "s.toml"
    sub.write_text(fill((d / "answers.toml").read_text(), {"student_id": "ada"}))
    return d, sub

@pytest.mark.parametrize("option", ["--json", "--csv", "--gradebook"])
def test_earlier_grades_are_replaced_only_with_force(ada, tmp_path, option):
    # grades.json of another class (or an earlier grading) is not lost to a reused name
    d, sub = ada
    earlier = tmp_path / "grades.out"
    earlier.write_text("the other class's grades\n")
    report = tmp_path / "rep"
    target = ["--gradebook", "canvas", earlier] if option == "--gradebook" else [option, earlier]
    res = run("grade", d / "key.json", sub, *target, "--report", report, "--quiet")
    assert res.exit_code == 2, res.output
    assert res.stderr == f"error: {option} {earlier}: already exists (earlier grades?); use --force to replace it, " \
                         "or another name\n"
    assert earlier.read_text() == "the other class's grades\n" and not report.exists()     # refused before any work
    res = run("grade", d / "key.json", sub, *target, "--report", report, "--quiet", "--force")
    assert res.exit_code == 0, res.output
    assert earlier.read_text() != "the other class's grades\n" and (report / "ada.md").exists()


def test_a_new_grades_file_and_stdout_need_no_force(ada, tmp_path):
    d, sub = ada
    res = run("grade", d / "key.json", sub, "--json", tmp_path / "g.json", "--quiet")
    assert res.exit_code == 0 and json.loads((tmp_path / "g.json").read_text())["submissions"]
    res = run("grade", d / "key.json", sub, "--csv", "-")
    assert res.exit_code == 0 and res.stdout.startswith("student_id")
    res = run("grade", d / "key.json", sub, "--csv", sub)             # an input: refused as one, --force or not
    assert res.exit_code == 2 and "overwrite an input" in res.stderr
    res = run("grade", d / "key.json", sub, "--csv", sub, "--force")
    assert res.exit_code == 2 and "overwrite an input" in res.stderr


def test_a_pipe_or_device_as_a_grades_file_is_refused_not_renamed_over(ada, tmp_path):
    # the atomic write renamed a grades file over it: as root, --json /dev/null replaced the device
    d, sub = ada
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    for option in ("--json", "--csv"):
        res = run("grade", d / "key.json", sub, option, fifo, "--force", "--quiet")
        assert res.exit_code == 2 and "is not a regular file (a device, pipe or socket)" in res.stderr, res.output
        assert fifo.is_fifo()


def test_gradebook_to_stdout_and_empty_names_are_refused(ada, tmp_path):
    d, sub = ada
    res = run("grade", d / "key.json", sub, "--gradebook", "canvas", "-")
    assert res.exit_code == 2 and "--gradebook: '-' (stdout) is not offered" in res.stderr
    assert not (tmp_path / "-").exists() and not os.path.exists("-")
    for option in ("--json", "--csv"):
        res = run("grade", d / "key.json", sub, option, "")
        assert res.exit_code == 2 and res.stderr == f"error: {option}: an empty file name; give a file name (or - for stdout)\n"


def test_marks_and_roster_files_are_inputs_refused_at_once_with_or_without_force(ada, tmp_path):
    # the "already exists; use --force" advice led to a second refusal ("would overwrite an input")
    d, sub = ada
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nada,Ada\n")
    marks = tmp_path / "marks.csv"
    marks.write_text("student_id,part,points\n")
    for extra in ([], ["--force"]):
        res = run("grade", d / "key.json", sub, "--roster", roster, "--gradebook", "canvas", roster, *extra)
        assert res.exit_code == 2 and res.stderr == (f"error: --gradebook {roster}: an output would overwrite an input "
                                                     "file; choose another path\n"), res.output
        res = run("grade", d / "key.json", sub, "--marks", marks, "--json", marks, *extra)
        assert res.exit_code == 2 and res.stderr == (f"error: --json {marks}: an output would overwrite an input "
                                                     "file; choose another path\n"), res.output
    assert roster.read_text() == "id,name\nada,Ada\n" and marks.read_text() == "student_id,part,points\n"


@pytest.mark.parametrize("option", ["--json", "--csv", "--gradebook"])
def test_a_grades_file_in_a_missing_folder_is_refused_before_any_work(ada, tmp_path, option):
    # as generate and sheet refuse it: a typo in the folder never creates folders, nor any output
    d, sub = ada
    target = tmp_path / "typo" / "grades.out"
    report = tmp_path / "rep"
    args = ["--gradebook", "canvas", target] if option == "--gradebook" else [option, target]
    res = run("grade", d / "key.json", sub, *args, "--report", report, "--quiet", "--force")
    assert res.exit_code == 2, res.output
    assert res.stderr == (f"error: {option} {target}: the directory {target.parent} does not exist; "
                          f"create it first (mkdir -p {target.parent})\n")
    assert not target.parent.exists() and not report.exists()


def test_two_grades_options_naming_one_file_are_named_by_option(ada, tmp_path):
    d, sub = ada
    (tmp_path / "sub").mkdir()
    one, same = tmp_path / "g.out", tmp_path / "sub" / ".." / "g.out"
    res = run("grade", d / "key.json", sub, "--csv", one, "--json", same, "--quiet")
    assert res.exit_code == 2 and res.stderr == f"error: --csv {one} and --json {same} name one path; " \
                                                "give each its own\n", res.output
    assert not one.exists()


def test_a_linked_grades_file_is_updated_through_its_link(ada, tmp_path):
    # an instructor's grades.json linked into a shared folder: the link stays, the shared file is new
    d, sub = ada
    (tmp_path / "shared").mkdir()
    shared = tmp_path / "shared" / "grades.json"
    shared.write_text("{}")
    link = tmp_path / "grades.json"
    link.symlink_to(shared)
    res = run("grade", d / "key.json", sub, "--json", link, "--force", "--quiet")
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and json.loads(shared.read_text())["submissions"][0]["student_id"] == "ada"


@pytest.mark.parametrize("file_option, folder_option", [("--csv", "--report"), ("--json", "--analysis"),
                                                         ("--csv", "--gradescope"), ("--marks-template", "--report"),
                                                         ("--gradebook", "--report"), ("--report", "--analysis")])
def test_a_file_and_a_folder_output_on_one_path_are_refused_before_any_work(ada, tmp_path, file_option, folder_option):
    # the file was written, then the folder failed on it (or the folder's files, then the file)
    d, sub = ada
    both = tmp_path / "g.x"
    first = ["--gradebook", "canvas", both] if file_option == "--gradebook" else [file_option, both]
    res = run("grade", d / "key.json", sub, "--quiet", *first, folder_option, both)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and f"{folder_option} {both} name one path; give each its own" in res.stderr
    assert not both.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]


def test_output_links_that_loop_or_point_into_a_missing_folder_are_refused(ada, tmp_path):
    d, sub = ada
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    (tmp_path / "dm.json").symlink_to(tmp_path / "missing" / "x.json")
    res = run("grade", d / "key.json", sub, "--json", tmp_path / "loop1", "--force", "--quiet")
    assert res.exit_code == 2 and res.stderr == f"error: --json {tmp_path / 'loop1'}: cannot write " \
                                                "(Too many levels of symbolic links)\n", res.output
    res = run("grade", d / "key.json", sub, "--csv", tmp_path / "dm.json", "--quiet")
    assert res.exit_code == 2 and "whose folder does not exist; create it first" in res.stderr, res.output
    res = run("grade", d / "key.json", sub, "--csv", f"{tmp_path / 'g.csv'}/", "--quiet")
    assert res.exit_code == 2 and "ends with '/' (a folder's name)" in res.stderr, res.output
    assert not (tmp_path / "missing").exists() and not (tmp_path / "g.csv").exists()


@pytest.mark.parametrize("option, earlier", [("--report", "ada.md"), ("--gradescope", "results.json")])
def test_an_earlier_gradings_feedback_is_replaced_only_with_force(ada, tmp_path, option, earlier):
    # --report and --gradescope replaced last week's files silently, where every other output asks
    d, sub = ada
    folder = tmp_path / "out"
    (folder / earlier).parent.mkdir(parents=True)
    (folder / earlier).write_text("last week\n")
    res = run("grade", d / "key.json", sub, option, folder, "--quiet")
    assert res.exit_code == 2 and res.stderr == (f"error: {option} {folder}: {folder / earlier} already exists, of an "
                                                 "earlier grading; use --force to replace, or another folder\n"), res.output
    assert (folder / earlier).read_text() == "last week\n" and len(list(folder.rglob("*"))) == earlier.count("/") + 1
    res = run("grade", d / "key.json", sub, option, folder, "--quiet", "--force")
    assert res.exit_code == 0, res.output
    assert (folder / ("ada.md" if option == "--report" else "results.json")).read_text() != "last week\n"


def test_only_the_files_a_grading_would_replace_count_as_earlier(ada, tmp_path):
    # the instructor's notes.md in the report folder, or another class's bo/results.json beside a
    # single submission's results.json, were counted as "(and 1 more)" of an earlier grading
    d, sub = ada
    (tmp_path / "rep").mkdir()
    (tmp_path / "rep" / "notes.md").write_text("mine\n")
    (tmp_path / "gs" / "bo").mkdir(parents=True)
    (tmp_path / "gs" / "bo" / "results.json").write_text("{}\n")
    res = run("grade", d / "key.json", sub, "--report", tmp_path / "rep", "--gradescope", tmp_path / "gs", "--quiet")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "rep" / "notes.md").read_text() == "mine\n" and (tmp_path / "rep" / "ada.md").is_file()
    assert (tmp_path / "gs" / "bo" / "results.json").read_text() == "{}\n" and (tmp_path / "gs" / "results.json").is_file()


@pytest.mark.parametrize("option", ["--report", "--gradescope", "--analysis"])
def test_folder_outputs_empty_dash_dangling_loop_or_missing_parent_are_one_line(ada, tmp_path, option):
    # '' was silently ignored, '-' made a folder named '-', a dangling link or a loop failed after the
    # CSV was written, and a missing parent was created
    d, sub = ada
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    cases = [("", f"error: {option}: an empty folder name; give a folder\n"),
             ("-", f"error: {option}: '-' (stdout) is not offered for a folder of outputs; give a folder\n"),
             (str(tmp_path / "dangling"), f"error: {option} {tmp_path / 'dangling'}: a symbolic link to "
                                          f"{tmp_path / 'gone'}, which does not exist; create it first "
                                          f"(mkdir -p {tmp_path / 'gone'})\n"),
             (str(tmp_path / "loop"), f"error: {option} {tmp_path / 'loop'}: cannot write (Too many levels of "
                                      "symbolic links)\n"),
             (str(tmp_path / "typo" / "out"), f"error: {option} {tmp_path / 'typo' / 'out'}: the folder "
                                              f"{tmp_path / 'typo'} does not exist (a typo?); create it first — "
                                              "only the last folder of the path is made\n")]
    for folder, line in cases:
        res = run("grade", d / "key.json", sub, option, folder, "--csv", tmp_path / "g.csv", "--quiet")
        assert (res.exit_code, res.stderr) == (2, line), (folder, res.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "loop", "s.toml"]


def test_one_file_named_twice_is_graded_once(ada, tmp_path):
    # graded as two submissions of one student, "duplicate student id 'ada' (also in )"
    d, sub = ada
    res = run("grade", d / "key.json", sub, sub, "--json", "-")
    assert res.exit_code == 0, res.output
    assert [s["student_id"] for s in json.loads(res.stdout)["submissions"]] == ["ada"]
    assert f"note: {sub}: skipped (the same file as {sub}, given twice)" in res.stderr
    assert "duplicate" not in res.stderr
