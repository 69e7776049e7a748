"""Blackboard Upload Questions files, read back by a parser of Blackboard's documented rules
written here: tab-delimited, one question per row, a known type first, no header, no blank lines,
at most 250 rows; NUM answer and tolerance, MC with exactly one "correct", ESS with a sample."""
import html
import re
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from examprep import sheets
from examprep.cli import app
from examprep.render import blackboard, choices_shown

NUMBER = re.compile(r"-?\d+(\.\d+)?")          # Blackboard's numeric answer: plain decimal, no exponent


def parse(data: bytes) -> list[dict]:
    text = data.decode("utf-8")
    assert text.endswith("\n") and "\r" not in text
    lines = text[:-1].split("\n")
    assert 0 < len(lines) <= 250, len(lines)
    out = []
    for n, line in enumerate(lines, 1):
        assert line.strip(), f"blank line {n}"
        fields = line.split("\t")
        kind = fields[0]
        assert kind in ("NUM", "MC", "ESS", "FIB"), f"line {n}: type {kind!r}"     # so never a header row
        assert all(f == f.strip() and f for f in fields[:2]), f"line {n}: empty or padded field"
        row = {"kind": kind, "text": html.unescape(fields[1])}       # Blackboard shows a question's text as HTML
        if kind == "NUM":
            assert len(fields) in (3, 4), line
            assert all(NUMBER.fullmatch(f) for f in fields[2:]), line
            row |= {"answer": float(fields[2]), "tolerance": float(fields[3]) if len(fields) == 4 else 0.0}
        elif kind == "MC":
            pairs = fields[2:]
            assert len(pairs) % 2 == 0 and 2 <= len(pairs) // 2 <= 20, line
            marks = pairs[1::2]
            assert set(marks) <= {"correct", "incorrect"} and marks.count("correct") == 1, line
            choices = [html.unescape(c) for c in pairs[0::2]]
            row |= {"choices": choices, "correct": choices[marks.index("correct")]}
        elif kind == "ESS":
            assert len(fields) in (2, 3), line
            row["sample"] = html.unescape(fields[2]) if len(fields) == 3 else ""
        else:
            assert len(fields) >= 3, line
            row["answers"] = fields[2:]
        out.append(row)
    return out


def _flat(v):
    return [x for y in v for x in _flat(y)] if isinstance(v, list) else [v]


@pytest.mark.parametrize("recipe", ["midterm", "transformer"])
def test_every_row_reads_back_with_the_answers(recipe):
    sheet = sheets.build_sheet(sheets.load_recipe(recipe), 2024)
    files, warnings = blackboard.files(sheet)
    assert warnings == []
    rows = [r for name in sorted(files, key=lambda n: [int(x) for x in re.findall(r"\d+", n)]) for r in parse(files[name])]
    k = 0
    for number, p in enumerate(sheet.copies[0].problems, 1):
        assert rows[k]["text"].startswith(f"q{number} {p.title}: ")        # the first row carries the stem
        for part in p.parts:
            if part.kind == "written":
                assert rows[k]["kind"] == "ESS"
                assert part.model_answer.split()[0] in rows[k]["sample"] and all(
                    " ".join(line.split()) in rows[k]["sample"] for line in part.rubric)
                k += 1
                continue
            if part.kind == "choice":
                assert rows[k]["choices"] == choices_shown(part) and rows[k]["correct"] == part.expected
                k += 1
                continue
            for v in _flat(part.expected):
                row = rows[k]
                assert row["kind"] == "NUM" and row["answer"] == pytest.approx(float(v), rel=1e-15, abs=1e-15)
                bound = 0.0 if part.kind == "integer" or part.tolerance.rule == "exact" else part.tolerance.bound(v)
                assert row["tolerance"] == pytest.approx(bound, rel=1e-12)
                assert part.tolerance.accepts(row["answer"] + row["tolerance"], v)
                k += 1
    assert k == len(rows)


def test_a_long_sheet_is_split_into_files_within_the_row_limit():
    sheet = sheets.build_sheet(sheets.recipe_from_topics(["conv2d"], count=12, difficulty=3), 4)
    files, _ = blackboard.files(sheet)
    total = sum(len(parse(data)) for data in files.values())
    assert total > 250 and list(files) == [f"blackboard-{k}.txt" for k in range(1, len(files) + 1)]
    assert all(len(parse(data)) <= 250 for data in files.values())


def test_too_many_choices_are_left_out_with_a_warning():
    sheet = sheets.build_sheet(sheets.recipe_from_topics(["attention"], count=1, difficulty=1), 1)
    p = sheet.copies[0].problems[0]
    choices = tuple(f"option {k:02d}" for k in range(21))
    p = replace(p, parts=[replace(p.parts[0], kind="choice", expected=choices[3], choices=choices, shape=None)] + p.parts[1:])
    sheet = replace(sheet, copies=[replace(sheet.copies[0], problems=[p])])
    files, warnings = blackboard.files(sheet)
    assert warnings == [f"blackboard: q1 part ({p.parts[0].id}) has 21 choices; Blackboard takes at most 20; it is left out"]
    assert all(r["kind"] != "MC" for r in parse(files["blackboard.txt"]))


def test_fields_never_hold_tabs_or_line_breaks():
    assert blackboard.field("a\tb\nc  d ") == "a b c d"


def test_variants_get_a_file_each(tmp_path):
    (tmp_path / "roster.csv").write_text("id,name\na1,Ada\nb2,Bo\n")
    res = CliRunner().invoke(app, ["secret", str(tmp_path / "s.txt")])
    assert res.exit_code == 0
    res = CliRunner().invoke(app, ["sheet", "--recipe", "cnn", "--seed", "2", "--roster", str(tmp_path / "roster.csv"),
                                   "--secret-file", str(tmp_path / "s.txt"), "--format", "blackboard-txt",
                                   "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    for sid in ("a1", "b2"):
        assert parse((tmp_path / "o" / "blackboard" / f"{sid}.txt").read_bytes())
    # the summary counts each per-student folder on its own (it said "4 answer templates" for 2 students)
    assert f"{tmp_path / 'o' / 'answers'}/ (2 answer templates, one per student)" in res.stdout
    assert f"{tmp_path / 'o' / 'blackboard'}/ (2 files, one per student)" in res.stdout


def test_sheet_command_writes_the_file(tmp_path):
    res = CliRunner().invoke(app, ["sheet", "--recipe", "cnn", "--seed", "3", "--format", "blackboard-txt",
                                   "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert parse((tmp_path / "o" / "blackboard.txt").read_bytes())
