"""Grading a class when some files are hostile (issue 14): no file stops the batch, nothing is read
from outside the folder given, nothing is skipped in silence, no output carries markup or terminal
control sequences from student text.

The fixture folder is built in tmp_path by ``hostile_class``: files that cannot be committed (a FIFO,
symlinks, names that are not UTF-8) are made there, next to good submissions."""
import json
import os
import re

import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from examprep import generators
from examprep.answers.files import Limits, collect, read_file
from examprep.cli import app
from examprep.keys import Key, write_key

runner = CliRunner()
TOPICS = ["attention", "causal-mask", "softmax-cross-entropy", "gru-step"]
SECRET = "root:x:0:0:secret-line-from-outside"


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def key_path(tmp_path_factory):
    d = tmp_path_factory.mktemp("key")
    problems = [generators.build(t, 3, 1) for t in TOPICS]
    path = d / "key.json"
    write_key(path, Key("hostile", problems))
    return path


def address_of(key_path, kind):
    from examprep.keys import read_key

    for n, p in enumerate(read_key(key_path).problems, 1):
        for part in p.parts:
            if part.kind == kind:
                return f"q{n}", part.id
    raise AssertionError(kind)


def good_answers(key_path, sid):
    from examprep.keys import read_key

    answers = {"student_id": sid}
    for n, p in enumerate(read_key(key_path).problems, 1):
        answers[f"q{n}"] = {part.id: part.exact or part.expected for part in p.parts}
    return answers


def nested_json(depth):
    return "[" * depth + "]" * depth


GOOD = ["s0", "s1", "s2"]
# issue 35: a list of fake entries claiming real students' ids (scaled down from 300 of 900) and an
# honest resubmission, identical, of a good file: the claimed students are conflicts, graded from none
CLAIMED = ["s0", "s1"]
FAKES = 40
# file name -> (the reason it is not graded, or None when it is graded with a bad part)
UNREADABLE = {"deep.json": "nested too deeply", "deep.toml": "nested too deeply", "digits.json": "4,300 digits",
              "digits.toml": "4,300 digits",
              # issue 35 item 4: files over a limit (two lowered by the options the fixture is graded with)
              "unknown.json": "more than 10,000 keys, over the limit for one submission; raise it with --max-keys",
              "huge_rows.csv": "more than 2,000 rows, over the limit for a class file; raise it with --max-class-rows",
              "huge_bytes.csv": "2.1 MB is over the 2.0 MB limit for a class file; raise it with --max-class-size"}
LOWERED = ["--max-class-rows", "2000", "--max-class-size", "2"]
SKIPPED = {"passwd.csv": "outside", "outside.toml": "outside", "pipe.toml": "not a regular file",
           "dangling.toml": "dangling", "x.toml": "a directory", "..toml": "hidden", ".hidden.toml": "hidden",
           "README.txt": "not a .toml, .json or .csv", "sub": "a directory"}


def hostile_class(tmp_path, key_path):
    """Good submissions mixed with every hostile file of issue 14."""
    folder = tmp_path / "class"
    folder.mkdir()
    for sid in GOOD:
        (folder / f"{sid}.json").write_text(json.dumps(good_answers(key_path, sid)), encoding="utf-8")
    cq, cid = address_of(key_path, "choice")
    nq, nid = address_of(key_path, "number")
    mq, mid = address_of(key_path, "matrix")
    # item 1: values no part can take, files no parser can take
    for name, literal in [("nan", "nan"), ("ninf", "-inf"), ("big", "1" + "0" * 399)]:
        (folder / f"choice_{name}.toml").write_text(f'student_id = "c_{name}"\n[{cq}]\n{cid} = {literal}\n')
    (folder / "ragged_num.json").write_text(json.dumps({"student_id": "rn", nq: {nid: [[1, 2], [3]]}}))
    (folder / "ragged_mat.json").write_text(json.dumps({"student_id": "rm", mq: {mid: [[1, 2], [3]]}}))
    (folder / "deep.json").write_text('{"student_id": "dj", "q1": {"x": ' + nested_json(900) + "}}")
    (folder / "deep.toml").write_text('student_id = "dt"\n[q1]\nx = ' + nested_json(500) + "\n")
    (folder / "digits.json").write_text('{"student_id": "dg", "%s": {"%s": %s}}' % (nq, nid, "9" * 5000))
    (folder / "digits.toml").write_text('student_id = "dgt"\n[%s]\n%s = %s\n' % (nq, nid, "9" * 5000))
    (folder / "surrogate.json").write_text('{"student_id": "sur\\udfff", "%s": {"%s": "\\udfff"}}' % (nq, nid))
    with open(os.fsencode(folder) + b"/bytes\xff.toml", "w") as fh:
        fh.write(f'student_id = "by"\n[{nq}]\n{nid} = "1"\n')
    # item 2: a megabyte of unknown part ids (over the key limit since issue 35)
    (folder / "unknown.json").write_text(json.dumps({"student_id": "unk", **{f"z{i}": "1" for i in range(66741)}}))
    # issue 35 item 4: class files just over the limits the fixture is graded with (LOWERED)
    (folder / "huge_rows.csv").write_text(f"student_id,{nq}.{nid}\n" + "".join(f"h{i},1\n" for i in range(2001)))
    (folder / "huge_bytes.csv").write_text(f"student_id,{nq}.{nid}\n" + "hb,1" + " " * 2_100_000 + "\n")
    # item 3: links out of the folder
    (tmp_path / "secret.toml").write_text(f'student_id = "{SECRET}"\n')
    os.symlink(tmp_path / "secret.toml", folder / "outside.toml")
    if os.path.exists("/etc/passwd"):
        os.symlink("/etc/passwd", folder / "passwd.csv")
    else:                                                   # the same hole, on a machine without /etc/passwd
        (tmp_path / "passwd").write_text(SECRET + "\n" + "\n".join(f"user{i}:x:{i}" for i in range(21)) + "\n")
        os.symlink(tmp_path / "passwd", folder / "passwd.csv")
    # item 4: entries that are not answer files
    os.mkfifo(folder / "pipe.toml")
    os.symlink(folder / "nowhere.toml", folder / "dangling.toml")
    (folder / "x.toml").mkdir()
    (folder / "..toml").write_text('student_id = "dotdot"\n')
    (folder / ".hidden.toml").write_text('student_id = "hidden"\n')
    (folder / "README.txt").write_text("not an answer file")
    (folder / "sub").mkdir()
    # item 5: markup and terminal control sequences in ids, names, answers and file names
    (folder / "xss.toml").write_text(
        'student_id = "x\\u001b[2J<script>alert(1)</script>"\n'
        'name = "[x](javascript:alert(1)) <img src=x onerror=alert(1)>"\n'
        f'[{nq}]\n{nid} = "<script>alert(2)</script> [y](javascript:z) \\u001b[31m"\n')
    (folder / "\x1b[2Jclear.toml").write_text(f'[{nq}]\n{nid} = "1"\n')
    (folder / "-rf.toml").write_text(f'student_id = "-rf"\n[{nq}]\n{nid} = "1"\n')
    # issue 35, item 2: fakes claiming classmates' ids (sorted before them: the first won), a double upload
    fakes = [{"student_id": CLAIMED[i % len(CLAIMED)], nq: {nid: str(i)}} for i in range(FAKES)]
    (folder / "class-of-fakes.json").write_text(json.dumps(fakes))
    (folder / "s2 (1).json").write_text(json.dumps(good_answers(key_path, "s2"), indent=2))
    return folder


GRADED = [g for g in GOOD if g not in CLAIMED] + ["c_nan", "c_ninf", "c_big", "rn", "rm", "sur\udfff", "by",
                                                  "x\x1b[2J<script>alert(1)</script>", "\x1b[2Jclear", "-rf"]


@pytest.fixture(scope="module")
def graded(tmp_path_factory, key_path):
    tmp = tmp_path_factory.mktemp("hostile")
    folder = hostile_class(tmp, key_path)
    out = tmp / "out"
    out.mkdir()                                     # a file option's folder must exist (--report makes its own)
    res = run("grade", key_path, folder, "--json", out / "g.json", "--csv", out / "g.csv", "--report", out / "rep",
              "--gradescope", out / "gs", "--no-color", *LOWERED)
    return folder, out, res


def test_the_batch_finishes_grades_every_good_file_and_writes_every_output(graded):
    folder, out, res = graded
    assert res.exit_code == 1, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    data = json.loads((out / "g.json").read_text(encoding="utf-8"))
    assert sorted(s["student_id"] for s in data["submissions"]) == sorted(GRADED)
    for s in data["submissions"]:
        if s["student_id"] in GOOD:
            assert s["percent"] == 100.0, s
    rows = (out / "g.csv").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 1 + len(GRADED) + len(CLAIMED)         # a claimed student's row says "conflict", no score
    assert len(list((out / "rep").iterdir())) == len(GRADED) + len(CLAIMED)    # a claimed student's says "conflict"
    assert len(list((out / "gs").iterdir())) == len(GRADED)


def test_each_unreadable_file_is_named_with_its_reason(graded):
    folder, out, res = graded
    data = json.loads((out / "g.json").read_text(encoding="utf-8"))
    for name, reason in UNREADABLE.items():
        lines = [u for u in data["unreadable"] if name in u]
        assert len(lines) == 1 and reason in lines[0], (name, data["unreadable"])
        line = next(ln for ln in res.stderr.splitlines() if name in ln)
        assert line.startswith("unreadable: ") and reason in line, line
    assert len(data["unreadable"]) == len(UNREADABLE)


def test_each_bad_part_is_named_with_its_reason(graded, key_path):
    _, out, _ = graded
    data = json.loads((out / "g.json").read_text(encoding="utf-8"))
    by_id = {s["student_id"]: s for s in data["submissions"]}

    def unreadable_parts(sid):
        return {p["part"]: p["feedback"] for q in by_id[sid]["problems"] for p in q["parts"]
                if p["status"] == "unparseable"}

    assert "NaN is not a choice" in unreadable_parts("c_nan")["prevents"]
    assert "infinity is not a choice" in unreadable_parts("c_ninf")["prevents"]
    assert "not a choice" in unreadable_parts("c_big")["prevents"]
    assert "rows of different lengths" in unreadable_parts("rn")["loss"]
    assert "rows of different lengths" in unreadable_parts("rm")[address_of(key_path, "matrix")[1]]
    assert "'\\udfff' at column 1: expected a number" in unreadable_parts("sur\udfff")["loss"]


def test_files_read_by_json_and_toml_alone(tmp_path, key_path):
    folder = hostile_class(tmp_path, key_path)
    lowered = Limits(class_rows=2000, class_bytes=2_000_000)
    for name, reason in UNREADABLE.items():
        subs, errors = read_file(folder / name, lowered)
        assert not subs and len(errors) == 1 and reason in str(errors[0]), (name, errors)
    subs, errors = read_file(folder / "surrogate.json")
    assert not errors and subs[0].student_id == "sur\udfff"


@pytest.mark.parametrize("depth,ok", [(30, True), (64, True), (65, False), (300, False), (5000, False)])
def test_nesting_has_one_limit_whatever_the_stack(tmp_path, depth, ok):
    for name, text in [("a.json", '{"q1": {"x": ' + nested_json(depth - 2) + "}}"),
                       ("a.toml", "[q1]\nx = " + nested_json(depth - 2) + "\n")]:
        (tmp_path / name).write_text(text)
        subs, errors = read_file(tmp_path / name)
        assert (len(subs), len(errors)) == ((1, 0) if ok else (0, 1)), (name, depth, errors)
        if not ok:
            assert "nested too deeply (more than 64 levels)" in str(errors[0])


def test_a_five_thousand_digit_integer_is_unreadable_not_a_crash(tmp_path):
    (tmp_path / "a.json").write_text('{"q1": {"x": -%s}}' % ("9" * 5000))
    (tmp_path / "a.toml").write_text("[q1]\nx = %s\n" % ("9" * 5000))
    for name in ("a.json", "a.toml"):
        subs, errors = read_file(tmp_path / name)
        assert not subs and "a number with more than 4,300 digits" in str(errors[0]), errors


def test_every_claimed_student_is_a_conflict_named_with_every_file(graded):
    folder, out, res = graded
    data = json.loads((out / "g.json").read_text(encoding="utf-8"))
    assert [c["student_id"] for c in data["conflicts"]] == CLAIMED
    for sid in CLAIMED:
        conflict = next(c for c in data["conflicts"] if c["student_id"] == sid)
        assert conflict["status"] == "conflict" and str(folder / f"{sid}.json") in conflict["sources"]
        assert len(conflict["sources"]) == 1 + FAKES // len(CLAIMED)
        line = next(ln for ln in res.stderr.splitlines() if ln.startswith(f"conflict: student '{sid}'"))
        assert all(src in line for src in conflict["sources"]) and "remove all but one" in line
    listed = (out / "g-conflicts.csv").read_text(encoding="utf-8").splitlines()
    assert [row.split(",")[0] for row in listed[1:]] == CLAIMED
    assert "note: student 's2': 2 identical submissions" in res.stderr


# ----------------------------------------------------------------------------- item 2: unknown part ids

def test_fuzzy_matching_is_capped_and_the_rest_counted(key_path, tmp_path, monkeypatch):
    import difflib

    from examprep.grading import MAX_SUGGESTIONS

    calls = []
    real = difflib.get_close_matches

    def spy(word, possibilities, *a, **k):
        if "q1.weights" in possibilities:       # a match against the key's part addresses
            calls.append(word)
        return real(word, possibilities, *a, **k)

    monkeypatch.setattr(difflib, "get_close_matches", spy)
    (tmp_path / "u.json").write_text(json.dumps({"student_id": "u", "q1.weigths": "1",
                                                 **{f"z{i}": "1" for i in range(66741)}}))
    res = run("grade", key_path, tmp_path / "u.json", "--json", tmp_path / "g.json", "--csv", tmp_path / "g.csv", "-q",
              "--max-keys", "70000")
    assert res.exit_code == 0, res.output
    assert len(calls) <= MAX_SUGGESTIONS == 10
    warnings = json.loads((tmp_path / "g.json").read_text())["submissions"][0]["warnings"]
    assert "unknown part id 'q1.weigths' ignored (did you mean q1.weights?)" in warnings
    assert warnings[-1] == "… and 66,732 more unknown part ids ignored"
    assert len(warnings) == MAX_SUGGESTIONS + 1
    import csv

    row = list(csv.DictReader((tmp_path / "g.csv").open(encoding="utf-8")))[0]
    assert max(len(cell) for cell in row.values()) < 32_767       # what a spreadsheet cell holds


def test_a_long_unknown_id_is_quoted_as_a_short_excerpt(key_path, tmp_path):
    (tmp_path / "u.json").write_text(json.dumps({"student_id": "u", "q1." + "x" * 100_000: "1"}))
    res = run("grade", key_path, tmp_path / "u.json", "--json", "-")
    warning = json.loads(res.stdout)["submissions"][0]["warnings"][0]
    assert len(warning) < 200 and "…" in warning


# ----------------------------------------------------------------------------- item 3: links out of the folder

def test_symlinks_out_of_the_folder_are_not_read(graded):
    folder, out, res = graded
    data = json.loads((out / "g.json").read_text(encoding="utf-8"))
    everything = res.output + (out / "g.json").read_text(encoding="utf-8") + (out / "g.csv").read_text(encoding="utf-8")
    everything += "".join(p.read_text(encoding="utf-8") for p in (out / "rep").iterdir())
    assert "root:" not in everything and SECRET not in everything
    for name in ("passwd.csv", "outside.toml"):
        note = next(n for n in data["notes"] if name in n)
        assert "skipped" in note and "outside" in note, note


def test_a_symlink_inside_the_folder_is_read(key_path, tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "real.json").write_text(json.dumps(good_answers(key_path, "r")))
    os.symlink("real.json", tmp_path / "c" / "alias.json")
    files, notes = collect([tmp_path / "c"])            # read once: the link and its target are one file
    assert [f.name for f in files] == ["alias.json"]
    assert notes == [f"{tmp_path / 'c' / 'real.json'}: skipped (the same file as {tmp_path / 'c' / 'alias.json'}, "
                     "given twice)"]


def test_an_unreadable_file_is_quoted_only_as_a_short_escaped_excerpt(key_path, tmp_path):
    (tmp_path / "c").mkdir()
    line = "secret\x1b[2J" + "s" * 500
    (tmp_path / "c" / "odd.csv").write_text(line + "\n" + "a:b:c\n" * 20)
    res = run("grade", key_path, tmp_path / "c", "--json", "-")
    assert "s" * 60 not in res.output and "\x1b" not in res.output, res.output
    data = json.loads(res.stdout)
    assert data["submissions"] == [] and "no column names a part" in data["unreadable"][0]


# ----------------------------------------------------------------------------- item 4: nothing skipped in silence

def test_every_entry_not_graded_is_listed_with_its_reason(graded):
    folder, out, res = graded
    data = json.loads((out / "g.json").read_text(encoding="utf-8"))
    for name, reason in SKIPPED.items():
        notes = [n for n in data["notes"] if f"/{name}:" in n]
        assert len(notes) == 1 and "skipped" in notes[0] and reason in notes[0], (name, data["notes"])
        assert any(name in ln and reason in ln for ln in res.stderr.splitlines()), name
    entries = {os.fsdecode(e) for e in os.listdir(os.fsencode(folder))}
    graded_sources = {s["source"].rsplit("/", 1)[-1] for s in data["submissions"]}
    conflicted = {src.rsplit("/", 1)[-1].split(", item")[0] for c in data["conflicts"] for src in c["sources"]}
    assert entries == graded_sources | conflicted | {"s2.json", "s2 (1).json"} | set(UNREADABLE) | set(SKIPPED)


def test_a_fifo_given_by_name_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "p.toml")
    subs, errors = read_file(tmp_path / "p.toml")
    assert not subs and "not a regular file" in str(errors[0])


# ----------------------------------------------------------------------------- item 5: escaping

def test_reports_escape_html_and_markdown_links(graded):
    _, out, _ = graded
    reports = [p.read_text(encoding="utf-8") for p in (out / "rep").iterdir()]
    xss = next(r for r in reports if "script" in r)
    prose = re.sub(r"(`+).*?\1", "", xss)          # a student's answer is a code span: shown verbatim, read as nothing
    prose = re.sub(r"\\[][]", "", prose)           # an escaped bracket (a heading's name) opens and closes no link
    for bad in ("<script>", "<img", "](javascript:", "[x](", "[y](", "\x1b"):
        assert bad not in prose and "\x1b" not in xss, bad
    assert "&lt;script>" in prose and "\\x1b" in xss        # examprep.escape.markdown_cell: a tag cannot open
    assert "| `<script>alert(2)</script> [y](javascript:z) \\x1b[31m` |" in xss
    html = MarkdownIt().enable("table").render(xss)       # as a viewer shows it: no element from the text
    assert not re.search(r"<(script|img|a)\b", html) and "<code>&lt;script&gt;alert(2)" in html


def test_no_control_character_reaches_the_terminal(graded):
    _, _, res = graded
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]", res.output)
    assert "\\x1b[2Jclear" in res.stderr or "\\x1b[2Jclear" in res.stdout


def test_no_output_name_starts_with_a_dash(graded):
    _, out, _ = graded
    for folder in (out / "rep", out / "gs"):
        names = [p.name for p in folder.iterdir()]
        assert names and not any(n.startswith("-") for n in names), names


# ----------------------------------------------------------------------------- issue 35 item 4: limits

def test_every_limit_is_an_option_listed_in_help_with_its_default():
    res = runner.invoke(app, ["grade", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    text = " ".join(res.output.split())
    for option in ("--max-class-size", "--max-class-rows", "--max-file-size", "--max-keys", "--max-nesting"):
        assert option in text, option
    assert ("a class file (CSV or JSON list) 16 MB and 100,000 rows; one student's answers (a file, a row, an item) "
            "1 MB, 10,000 keys, nested 64 levels") in text


def test_a_limit_that_is_not_positive_is_a_usage_error(key_path, tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(good_answers(key_path, "a")))
    res = run("grade", key_path, tmp_path / "a.json", "--max-nesting", "0")
    assert (res.exit_code, res.stderr) == (2, "error: --max-nesting: expected a positive number, got 0\n")


def test_max_nesting_stops_at_what_the_parsers_read_and_a_deeper_file_says_so(key_path, tmp_path):
    """--max-nesting 100000000 was taken, and a 1,500-deep JSON then said "more than 100000000 levels;
    raise it with --max-nesting": Python's recursion limit stopped the parser, not the option."""
    from examprep.answers.files import read_file
    from examprep.answers.limits import MAX_NESTING_CEILING, Limits

    (tmp_path / "a.json").write_text(json.dumps(good_answers(key_path, "a")))
    res = run("grade", key_path, tmp_path / "a.json", "--max-nesting", "100000000")
    assert (res.exit_code, res.stderr) == (2, f"error: --max-nesting: at most {MAX_NESTING_CEILING} (the deepest "
                                              "the TOML and JSON parsers read), got 100000000\n")
    deep = tmp_path / "deep.json"
    deep.write_text('{"q1": ' + "[" * 1500 + "]" * 1500 + "}")
    for limits, why in ((Limits(nesting=MAX_NESTING_CEILING), f"more than {MAX_NESTING_CEILING} levels, the most the "
                                                              "parser reads)"),
                        (Limits(), "more than 64 levels); raise it with --max-nesting")):
        subs, errors = read_file(deep, limits)
        assert not subs and len(errors) == 1 and str(errors[0]).endswith(why), errors
    one = tmp_path / "one.json"
    one.write_text('{"q1": {"a": 1}}')
    assert str(read_file(one, Limits(nesting=1, keys=1))[1][0]).endswith(
        "nested too deeply (more than 1 level); raise it with --max-nesting")


# issue 35, item 8: a damaged key beside the hostile class: (an edit of the key's JSON, what the one line names)
DAMAGED_KEYS = [
    (lambda d: d.setdefault("meta", {}).update(decimal_comma="false"), "meta.decimal_comma"),
    (lambda d: d["problems"][0]["parts"][0].update(points=1e308), "problems[0].parts[0].points"),
    (lambda d: d["problems"][1]["parts"][0].update(points="2"), "points must be a finite number"),
    (lambda d: d["problems"][2].update(parts={"loss": 1}), "q3: parts must be a non-empty list"),
    (lambda d: d.update(problems=None), "problems"),
]


@pytest.mark.parametrize("damage, field", DAMAGED_KEYS, ids=[f for _, f in DAMAGED_KEYS])
def test_a_damaged_key_refuses_the_hostile_class_in_one_line_and_writes_nothing(key_path, tmp_path, damage, field):
    folder = hostile_class(tmp_path, key_path)
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and not p.is_symlink()
              and p.name != "pipe.toml"}
    data = json.loads(key_path.read_text(encoding="utf-8"))
    damage(data)
    bad = tmp_path / "damaged.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    res = run("grade", bad, folder, "--json", out / "g.json", "--report", out / "rep", "--no-color", *LOWERED)
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and field in lines[0], res.stderr
    assert not any(out.iterdir())                                  # nothing written from a key not trusted
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.name in before} == before
