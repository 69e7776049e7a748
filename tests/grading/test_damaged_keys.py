"""A damaged key is refused when it is read, before anything is graded: one line naming the key
file and the field, exit 2 — by every command that reads a key. And every key examprep writes
(every generator at every level, every bundled recipe, a sheet with per-student variants) loads."""
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep import generators
from examprep.cli import app
from examprep.keys import Key, KeyFileError, key_to_json, read_key
from examprep.sheets.build import build_problems
from examprep.sheets.recipes import bundled_recipes

runner = CliRunner()
SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A key and one filled-in answer file made by examprep (gru-step and softmax-cross-entropy)."""
    d = tmp_path_factory.mktemp("key")
    res = run("generate", "gru-step", "softmax-cross-entropy", "--seed", "7", "--key", d / "key.json",
              "--template", d / "answers.toml")
    assert res.exit_code == 0, res.output
    sub = d / "ada.toml"
    sub.write_text((d / "answers.toml").read_text().replace('student_id = ""', 'student_id = "ada"')
                   .replace('r = ""', 'r = "0.5"'))
    return d, json.loads((d / "key.json").read_text()), sub


def damaged(made, tmp_path, change, name="bad.json"):
    raw = json.loads(json.dumps(made[1]))
    change(raw)
    path = tmp_path / name
    path.write_text(json.dumps(raw))
    return path


def part(raw, n=0, i=0):
    return raw["problems"][n]["parts"][i]


CASES = [
    ("points-text", lambda r: part(r).update(points="one"), 'q1.r: points must be a finite number ≥ 0, got "one"'),
    ("points-negative", lambda r: part(r).update(points=-5), "q1.r: points must be a finite number ≥ 0, got -5"),
    ("points-infinite", lambda r: part(r).update(points=float("inf")),
     "q1.r: points must be a finite number ≥ 0, got Infinity"),
    ("points-bool", lambda r: part(r).update(points=True), "q1.r: points must be a finite number ≥ 0, got true"),
    ("minutes-nan", lambda r: part(r).update(minutes=float("nan")),
     "q1.r: minutes must be a finite number ≥ 0, got NaN"),
    ("kind", lambda r: part(r).update(kind="banana"),
     'q1.r: kind must be one of number, integer, vector, matrix, expression, choice, written, got "banana"'),
    ("expected-text", lambda r: part(r).update(expected="abc"), 'q1.r: expected must be a number, got "abc"'),
    ("expected-ragged", lambda r: part(r, 1, 0).update(expected=[[1, 2], [3]]),
     "q2.probs: expected must be a vector (a list of numbers), got [[1, 2], [3]]"),
    ("expected-shape", lambda r: part(r, 1, 0).update(expected=[0.5, 0.5]),
     "q2.probs: expected has shape [2], but shape says [3]"),
    ("shape-negative", lambda r: part(r, 1, 0).update(shape=[-1]),
     "q2.probs: shape must be a list of 1 positive whole number, got [-1]"),
    ("no-problems", lambda r: r.update(problems=[]), "damaged key: it has no problems (nothing to grade)"),
    ("problems-table", lambda r: r.update(problems={}), "damaged key: problems must be a list of problems, got {}"),
    ("parts-null", lambda r: r["problems"][0].update(parts=None),
     "q1: parts must be a non-empty list of parts, got null"),
    ("duplicate-part", lambda r: r["problems"][0]["parts"].append(part(r)), 'q1: two parts have the id "r"'),
    ("format-text", lambda r: r.update(format_version="1"),
     'damaged key: format_version must be a whole number ≥ 1, got "1"'),
    ("misconception-id", lambda r: part(r)["misconceptions"][0].update(id=1),
     "q1.r: a misconception's id must be non-empty text, got 1"),
    ("misconception-credit", lambda r: part(r)["misconceptions"][0].update(credit=2),
     "q1.r: misconception swapped-gates: credit must be a number from 0 to 1, got 2"),
    ("misconception-value", lambda r: part(r)["misconceptions"][0].update(value="x"),
     'q1.r: misconception swapped-gates: value must be numeric, got "x"'),
    ("missing-field", lambda r: part(r).pop("tolerance"), "q1.r: damaged key: the part has no 'tolerance'"),
    # an int too large for a float was an OverflowError traceback from the tolerance's check
    ("tolerance-huge", lambda r: part(r)["tolerance"].update(rule="sigfigs", value=10 ** 400),
     "q1.r: tolerance sigfigs: value must be a finite number ≥ 0, got 1000000000000000000000000000000000000000…"),
    ("atol-huge", lambda r: part(r)["tolerance"].update(atol=10 ** 400),
     "q1.r: tolerance " + "{rule}" + ": atol must be a finite number ≥ 0, got 1000000000000000000000000000000000000000…"),
    ("sigfigs-fraction", lambda r: part(r)["tolerance"].update(rule="sigfigs", value=2.5),
     "q1.r: tolerance sigfigs: the figures must be a whole number, got 2.5"),
]


@pytest.mark.parametrize("name,change,message", CASES, ids=[c[0] for c in CASES])
def test_damaged_key_is_refused_in_one_line_naming_file_and_field(made, tmp_path, name, change, message):
    key = damaged(made, tmp_path, change)
    before = key.read_bytes()
    res = run("grade", key, made[2])
    assert res.exit_code == 2, res.output
    if "{rule}" in message:
        message = message.replace("{rule}", part(json.loads(key.read_text()))["tolerance"]["rule"])
    assert res.stderr == f"error: {key}: {message}\n"
    assert res.stdout == ""                                  # nothing graded, no empty class table
    assert key.read_bytes() == before


def test_every_command_that_reads_a_key_refuses_it(made, tmp_path):
    key = damaged(made, tmp_path, lambda r: part(r).update(points="one"))
    line = f'error: {key}: q1.r: points must be a finite number ≥ 0, got "one"\n'
    for args in (["grade", key, made[2]], ["grade", key, "--self-test"], ["grade", key, made[2], "--json", "-"],
                 ["gradescope-autograder", key, "--out", tmp_path / "ag.zip"]):
        res = run(*args)
        assert (res.exit_code, res.stderr) == (2, line), args
    assert not (tmp_path / "ag.zip").exists()


def test_an_integer_of_thousands_of_digits_is_refused_without_a_traceback(made, tmp_path):
    text = (made[0] / "key.json").read_text().replace('"expected": 0.5', '"expected": ' + "1" * 5001, 1)
    assert "1" * 5001 in text
    (tmp_path / "huge.json").write_text(text)
    res = run("grade", tmp_path / "huge.json", made[2])
    assert (res.exit_code, res.stderr) == (2, f"error: {tmp_path / 'huge.json'}: damaged key "
                                              "(a number with thousands of digits)\n")


def test_a_variant_key_names_the_variant(tmp_path):
    problems = [generators.build("gru-step", 1, 1)]
    raw = json.loads(key_to_json(Key(title="v", problems=[], variants={"s001": problems})))
    raw["variants"]["s001"][0]["parts"][0]["points"] = -1
    (tmp_path / "v.json").write_text(json.dumps(raw))
    with pytest.raises(KeyFileError, match=r"v.json: variant s001: q1.r: points must be a finite number ≥ 0, got -1$"):
        read_key(tmp_path / "v.json")


def test_keys_examprep_writes_all_load(tmp_path):
    """Every generator at every level (two seeds), every bundled recipe, a per-student variant key:
    what examprep writes is what read_key accepts (the checks are not stricter than the writer)."""
    problems = []
    for name, gen in generators.all_generators().items():
        if gen.requires:                  # needs a trained checkpoint: its parts are vectors and matrices
            continue
        problems += [generators.build(name, seed, level) for level in gen.levels for seed in (1, 2)]
    for recipe in bundled_recipes().values():
        problems += build_problems(recipe, 3)
    kinds = {p.kind for problem in problems for p in problem.parts}
    assert kinds == {"number", "integer", "vector", "matrix", "expression", "choice", "written"}
    path = tmp_path / "all.json"
    path.write_text(key_to_json(Key(title="all", problems=problems, variants={"s1": problems[:3]})))
    assert len(read_key(path).problems) == len(problems)


@pytest.mark.parametrize("sample", sorted(SOLUTIONS.glob("*-key.json")), ids=lambda p: p.name)
def test_sample_keys_load(sample):
    assert read_key(sample).problems


@pytest.mark.parametrize("change, message", [
    (lambda r: part(r, 1, 3)["misconceptions"][0].update(id="y\x1b[31mRED"),
     "q2.derivation: a misconception's id \"y\\x1b[31mRED\" holds a control character (\\x1b)"),
    (lambda r: part(r).update(id="../x\x1b"), "q1: a part's id \"../x\\x1b\" holds a control character (\\x1b)"),
    (lambda r: part(r).update(id="r\u2028"), "q1: a part's id \"r\\u2028\" holds a control character (\\u2028)"),
], ids=["misconception", "part", "line-separator"])
def test_an_id_with_a_control_character_is_refused_never_printed_raw(made, tmp_path, change, message):
    key = damaged(made, tmp_path, change)
    res = run("grade", key, made[2])
    assert (res.exit_code, res.stderr) == (2, f"error: {key}: {message}\n")
    assert "\x1b" not in res.output


def test_prose_with_control_characters_in_a_key_is_shown_escaped(made, tmp_path):
    """Titles and explanations are prose: the key is graded, and they reach no output raw."""
    def change(r):
        r["title"] = "x\x1b[2Jy"
        r["problems"][1]["title"] = "Soft\x1b[41mmax"
        part(r, 1, 3)["misconceptions"][0]["explanation"] = "expl\x1b[2J\x07"
    key = damaged(made, tmp_path, change)
    sub = tmp_path / "bo.toml"
    sub.write_text(made[2].read_text().replace('"ada"', '"bo"').replace('derivation = ""', 'derivation = "y_i - p_i"'))
    res = run("grade", key, sub, "--analysis", tmp_path / "an")
    assert res.exit_code == 0, res.output
    assert "misconception (y-minus-p)" in res.output and "expl\\x1b[2J\\x07" in res.output
    assert "Soft\\x1b[41mmax" in res.output
    for text in (res.output, *(f.read_text() for f in (tmp_path / "an").glob("item-analysis.*"))):
        assert "\x1b" not in text and "\x07" not in text
