"""A damaged key is refused when it is read, before anything is graded: one line naming the key
file and the field, exit 2 — by every command that reads a key. And every key examprep writes
(every generator at every level, every bundled recipe, a sheet with per-student variants) loads."""
import json
import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep import generators
from examprep.cli import app
from examprep.keys import Key, KeyFileError, key_to_json, read_key
from examprep.sheets.build import build_problems
from examprep.sources.recipes import bundled_recipes

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
     'q1.r: kind must be one of number, integer, vector, matrix, expression, choice, written, shapes, got "banana"'),
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
     "problems[0].parts[0].tolerance.value: 1000000000000000000000000000000000000000… is not a finite number"),
    ("atol-huge", lambda r: part(r)["tolerance"].update(atol=10 ** 400),
     "problems[0].parts[0].tolerance.atol: 1000000000000000000000000000000000000000… is not a finite number"),
    ("sigfigs-fraction", lambda r: part(r)["tolerance"].update(rule="sigfigs", value=2.5),
     "q1.r: tolerance sigfigs: the figures must be a whole number, got 2.5"),
    # a string "false" was true: a correct file with decimal points scored 17/47 read with decimal commas
    ("decimal-comma-text", lambda r: r["meta"].update(decimal_comma="false"),
     'meta.decimal_comma: must be true or false, got "false"'),
    # 1e308 points made an infinite total
    ("points-1e308", lambda r: part(r, 1, 2).update(points=1e308),
     "problems[1].parts[2].points: 1e+308 is over the 10000 limit (a number from 0 to 10000)"),
    ("minutes-huge", lambda r: part(r).update(minutes=20000),
     "problems[0].parts[0].minutes: 20000 is over the 10000 limit (a number from 0 to 10000)"),
    ("misconception-value-nan", lambda r: part(r)["misconceptions"][0].update(value=float("nan")),
     "problems[0].parts[0].misconceptions[0].value: NaN is not a finite number"),
    ("misconception-credit-infinite", lambda r: part(r)["misconceptions"][0].update(credit=float("inf")),
     "q1.r: misconception swapped-gates: credit must be a number from 0 to 1, got Infinity"),
    ("tolerance-infinite", lambda r: part(r)["tolerance"].update(value=float("-inf")),
     "problems[0].parts[0].tolerance.value: -Infinity is not a finite number"),
    ("param-huge-int", lambda r: r["problems"][0]["params"].update(x=10 ** 400),
     "problems[0].params.x: 1000000000000000000000000000000000000000… is not a finite number"),
    ("version-text", lambda r: r["problems"][0].update(version="1"), 'problems[0].version: must be a whole number ≥ 1, got "1"'),
    ("seed-negative", lambda r: r["problems"][1].update(seed=-1), "problems[1].seed: must be a whole number ≥ 0, got -1"),
    ("block-type-list", lambda r: r["problems"][0]["statement"][0].update(type=["text"]),
     'problems[0].statement[0].type: must be one of text, math, matrix, table, heatmap, got ["text"]'),
    ("block-unknown-field", lambda r: r["problems"][0]["solution"][0]["blocks"][0].update(colour="red"),
     "problems[0].solution[0].blocks[0].colour: is not a field of a math block"),
    ("conventions-number", lambda r: r["problems"][0]["conventions"].update(blend=1),
     "problems[0].conventions.blend: must be text, got 1"),
    ("recipe-op", lambda r: part(r, 1, 1).update(recipe={"op": 3, "args": {}}),
     "problems[1].parts[1].recipe.op: must be text, got 3"),
    ("variant-code", lambda r: r.update(variant_codes={"s1": 5}), "variant_codes.s1: must be text, got 5"),
    ("ecf-check-shape", lambda r: r.update(ecf_check={"problems": "x"}), 'ecf_check.problems: must be a list, got "x"'),
    # absurd tolerances made every answer correct ([999, -999, 12345] graded right): the ranges of parse_tolerance
    ("rtol-absurd", lambda r: part(r).update(tolerance={"rule": "rtol", "value": 1e308}),
     "q1.r: tolerance rtol: value (a fraction of the expected value) must be over 0 and at most 1, got 1e+308"),
    ("atol-absurd", lambda r: part(r).update(tolerance={"rule": "atol", "value": 1e308}),
     "q1.r: tolerance atol: value 1e+308 is over the 1e+06 limit of an absolute tolerance"),
    ("sigfigs-floor-absurd", lambda r: part(r).update(tolerance={"rule": "sigfigs", "value": 3, "atol": 1e308}),
     "q1.r: tolerance sigfigs: atol 1e+308 is over the 1e+06 limit of an absolute tolerance"),
    ("sigfigs-zero", lambda r: part(r).update(tolerance={"rule": "sigfigs", "value": 0}),
     "q1.r: tolerance sigfigs: value (the figures) must be from 1 to 15, got 0"),
    ("decimals-absurd", lambda r: part(r).update(tolerance={"rule": "decimals", "value": 1e308}),
     "q1.r: tolerance decimals: value (the decimal places) must be a whole number from 0 to 15, got 1e+308"),
    ("depends-on-missing", lambda r: part(r, 0, 2).update(depends_on=["q9.nope"]),
     'q1.n: depends_on "q9.nope" is not an earlier part of this problem'),
    ("depends-on-itself", lambda r: part(r, 0, 2).update(depends_on=["n"]),
     'q1.n: depends_on "n" is not an earlier part of this problem'),
    ("variant-codes-twice", lambda r: r.update(variant_codes={"s1": "AB12", "s2": "AB12"}),
     'damaged key: variant_codes: students s1 and s2 have the same code "AB12"'),
    ("part-id-dotted", lambda r: part(r).update(id="a.b"),
     'q1: a part\'s id must be letters, digits and _ (not first a digit, at most 64), as q2.loss addresses it; got "a.b"'),
    ("format-version-huge", lambda r: r.update(format_version=10 ** 400),
     "format_version 1000000000000000000000000000000000000000…: key format is newer than this examprep reads (1); "
     "upgrade examprep"),
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


# ------------------------------------------------------------------ every field, systematically damaged

BAD_VALUES = {"text": "x", "list": [1], "table": {"a": 1}, "null": None, "bool": True, "nan": float("nan"),
              "huge": 1e308, "negative": -1, "too-big-for-a-float": 10 ** 400}
# Where any JSON value may stand (a problem's own parameters, an ECF rule's arguments, the stored
# ECF check values, how the variants were derived) or a cell of a shown table (a number, an exact
# text such as "\ln 2", null for a masked cell): damage there of another JSON type may be graded.
FREE = re.compile(r"(^|\.)(params|pins|args|ecf_check|meta\.variants)(\.|\[|$)|\.(values|rows|value|expected)(\[|$)")


OPTIONAL = ("shape", "exact", "recipe", "output", "part")      # null: none (no shape given, no ECF rule, ...)
# a sheet's meta fields a sheet may leave unset (written null): examprep.keyfields.META's optional ones
META_OPTIONAL = ("recipe", "recipe_source", "seed", "course", "minutes", "points", "estimated_minutes", "topics",
                 "difficulty")


def _json_type(v):
    return "number" if isinstance(v, (int, float)) and not isinstance(v, bool) else type(v).__name__


def _pattern(path, kind):
    out = []
    for i, p in enumerate(path):
        if isinstance(p, int) or (i > 0 and path[i - 1] in ("variants", "names", "variant_codes") and path[0] != "meta"):
            out.append("*")
        elif i == 1 and path[0] == "variants":
            out.append("*")
        else:
            out.append(p)
    return tuple(out), kind


def _damage_cases(raw):
    seen = set()
    for path, value in _walk_with_kind(raw):
        if not path:
            continue
        pattern = _pattern(path, value[1])
        if pattern in seen:
            continue
        seen.add(pattern)
        yield path, value[0]


def _walk_with_kind(value, path=(), kind=None):
    yield path, (value, kind)
    if isinstance(value, dict):
        kind = value["kind"] if "kind" in value and "tolerance" in value else kind
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for k, v in items:
        yield from _walk_with_kind(v, path + (k,), kind)


def _dotted(path):
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def _set(root, path, value):
    for p in path[:-1]:
        root = root[p]
    root[path[-1]] = value


@pytest.fixture(scope="module")
def real_keys(made, tmp_path_factory):
    """The topic key (gru-step, softmax-cross-entropy) and a roster sheet's key with two variants
    (the cnn recipe), each with an answer file that grades."""
    from examprep import sheets
    from examprep.sheets.variants import Student

    d = tmp_path_factory.mktemp("roster")
    sheet = sheets.build_sheet(sheets.load_recipe("cnn"), 3, roster=[Student("s001", "Ada"), Student("s002", "Alan")],
                               secret=b"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    key = sheets.make_key(sheet)
    for sid in key.variants:          # an integer, a vector and a matrix question: every kind the recipe has
        key.variants[sid] = [key.variants[sid][i] for i in (0, 2, 3)]
    raw = json.loads(key_to_json(key))
    sub = d / "s001.toml"
    sub.write_text('student_id = "s001"\n[q1]\nsize_1 = "24"\n')
    return [("topics", made[1], made[2]), ("roster", raw, sub)]


@pytest.mark.slow
def test_every_field_of_a_real_key_damaged_is_refused_in_one_line_or_graded(real_keys, tmp_path):
    """Each field of a real key (one place per field and part kind), replaced by text, a list, a table,
    null, a boolean, NaN, 1e308, -1 and 10**400: read_key refuses it in one line naming the key and
    the field's path, or the key is one examprep could have written. A value of another JSON type
    than the field's is always refused (outside FREE); so are NaN and integers beyond a float's
    range anywhere. One refusal per field and one accepted damage per field are checked through the
    CLI as well: exit 2 with that line, or a grade with finite totals — never a traceback."""
    checked = refused = 0
    through_cli: dict[tuple, str] = {}
    for label, raw, sub in real_keys:
        for path, original in _damage_cases(raw):
            for bad_name, bad in BAD_VALUES.items():
                damaged_raw = json.loads(json.dumps(raw))
                _set(damaged_raw, path, bad)
                key = tmp_path / f"{label}.json"
                key.write_text(json.dumps(damaged_raw))
                dotted, checked = _dotted(path), checked + 1
                try:
                    read_key(key)
                except KeyFileError as err:
                    refused += 1
                    message = str(err)
                    assert message.startswith(f"{key}: ") and "\n" not in message, (dotted, bad_name, message)
                    named = [p for p in path if isinstance(p, str)]
                    assert (any(n in message or n.rstrip("s") in message for n in named) or path == ("format",)
                            or re.search(r": (variant \S+: )?q\d+(\.\S+)?: ", message)), (dotted, bad_name, message)
                    through_cli.setdefault((label, path[-1], "refused"), (key.read_text(), sub, message))
                    continue
                free = FREE.search(dotted) or original is None or (bad is None and path[-1] in OPTIONAL) or (
                    bad is None and len(path) == 2 and path[0] == "meta" and path[1] in META_OPTIONAL)
                assert bad_name not in ("nan", "too-big-for-a-float"), (dotted, bad_name, "accepted")
                assert free or _json_type(bad) == _json_type(original), (dotted, bad_name, "accepted")
                if path[-1] in ("points", "minutes"):
                    assert bad_name not in ("huge", "negative"), (dotted, bad_name, "accepted")
                through_cli.setdefault((label, path[-1], "accepted"), (key.read_text(), sub, None))
    assert checked > 1500 and refused > 1000
    for (label, field, _), (text, sub, message) in sorted(through_cli.items(), key=str)[::3]:
        key = tmp_path / "cli.json"
        key.write_text(text)
        res = run("grade", key, sub, "--json", "-")
        assert res.exception is None or isinstance(res.exception, SystemExit), (label, field, res.exception)
        if message is not None:
            line = message.replace(str(tmp_path / label) + ".json", str(key))
            assert (res.exit_code, res.stderr, res.stdout) == (2, f"error: {line}\n", ""), (label, field)
        else:
            if res.exit_code == 2:          # a key examprep could have written, for another sheet than the file's
                assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, (label, field, res.stderr)
                continue
            assert res.exit_code in (0, 1), (label, field, res.output)
            graded = json.loads(res.stdout)["submissions"]
            assert graded and all(math.isfinite(g["score"]) and math.isfinite(g["max_score"]) for g in graded), (label, field)


@pytest.mark.parametrize("spec,message", [
    ("rtol:2", "rtol: value (a fraction of the expected value) must be over 0 and at most 1, got 2.0"),
    ("atol:1e308", "atol: value 1e+308 is over the 1e+06 limit of an absolute tolerance"),
    ("sigfigs:3,atol=1e308", "sigfigs: atol 1e+308 is over the 1e+06 limit of an absolute tolerance"),
])
def test_question_files_and_tolerance_options_accept_the_ranges_a_key_does(spec, message):
    """parse_tolerance (question files, recipes, --tolerance) and a key's tolerance refuse the same values."""
    from examprep.answers import parse_tolerance
    from examprep.errors import ParamError

    with pytest.raises(ParamError) as info:
        parse_tolerance(spec)
    assert str(info.value) == f"tolerance {spec!r}: {message}"
    for ok in ("rtol:1", "atol:1e6", "sigfigs:15", "decimals:0", "decimals:15", "sigfigs:1,atol=1e6"):
        parse_tolerance(ok)
