"""The class table at any terminal width (issue 14, item 8): at 80 columns the 16-question midterm
showed every cell as '…' and cut totals at 120. Now: student, total, percentage and flags always,
whole; per-question columns when they fit; --wide for all of them."""
import json
import random

import pytest
from rich.console import Console
from typer.testing import CliRunner

from examprep import generators
from examprep.cli import app
from examprep.grading import Settings, grade_batch
from examprep.keys import Key, read_key, write_key
from examprep.grading.report_text import class_table, table_width

runner = CliRunner()
IDS = ["ada.lovelace@example.edu", "bo", "cy", "di", "eve"]


def submissions(key, folder):
    folder.mkdir()
    for i, sid in enumerate(IDS):
        rng = random.Random(i)
        answers = {"student_id": sid}
        for n, p in enumerate(key.problems, 1):
            for part in p.parts:
                if rng.random() < 0.7:
                    answers[f"q{n}.{part.id}"] = part.model_answer if part.written else part.exact or part.expected
        (folder / f"{i}.json").write_text(json.dumps(answers))


@pytest.fixture(scope="module")
def midterm(tmp_path_factory):
    d = tmp_path_factory.mktemp("midterm")
    res = runner.invoke(app, ["sheet", "--recipe", "midterm", "--seed", "5", "--format", "md", "--out", str(d / "sheet")])
    assert res.exit_code == 0, res.output
    key = read_key(d / "sheet" / "key.json")
    assert len(key.problems) == 20          # 16 computations and 4 written parts (issue 20)
    submissions(key, d / "class")
    return d / "sheet" / "key.json", d / "class", grade_batch(key, [str(d / "class")], Settings()).results


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("small")
    key = Key("small", [generators.build(t, 3, 1) for t in ("attention", "gru-step", "rnn-step")])
    write_key(d / "key.json", key)
    submissions(key, d / "class")
    return grade_batch(key, [str(d / "class")], Settings()).results


def render(table, width):
    console = Console(width=width, record=True, no_color=True, highlight=False)
    console.print(table, crop=False)
    return console.export_text()


def totals(results):
    return [f"{r.score:g}/{r.max_score:g}" for r in results]


@pytest.mark.parametrize("width", [60, 80, 100, 120])
def test_the_midterm_fits_any_width_with_whole_totals(midterm, width):
    _, _, results = midterm
    text = render(class_table(results, width=width), width)
    assert max(len(line) for line in text.splitlines()) <= width
    for sid, total, r in zip(IDS, totals(results), results):
        row = next(line for line in text.splitlines() if line.strip().startswith(sid[:10]))
        assert total in row and f" {r.percent:.0f} " in row + " ", (sid, row)
    assert not any(cell == "…" for line in text.splitlines() for cell in line.split())
    assert "q20" not in text and "--wide" in text          # per-question columns do not fit: said so
    assert "ada.lovelace@example.edu" in text               # ids whole in the compact table


def test_per_question_columns_when_they_fit(midterm, small):
    _, _, results = midterm
    wide_enough = render(class_table(results, width=200), 200)
    assert "q20" in wide_enough and "--wide" not in wide_enough
    text = render(class_table(small, width=80), 80)
    assert all(f"q{q}" in text for q in (1, 2, 3)) and max(len(line) for line in text.splitlines()) <= 80
    for total in totals(small):
        assert total in text


def test_wide_shows_every_column_whole_whatever_the_terminal(midterm):
    _, _, results = midterm
    table = class_table(results, width=80, wide=True)
    assert table_width(table) > 80
    text = render(table, table_width(table))
    header = next(line for line in text.splitlines() if "q20" in line)
    assert all(f"q{q}" in header.split() for q in range(1, 21))
    assert "…" not in text
    for total in totals(results):
        assert total in text


def test_the_cli_default_and_wide(midterm):
    key, folder, results = midterm
    res = runner.invoke(app, ["grade", str(key), str(folder), "--no-color"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    table = res.stdout.split("class summary")[0]
    assert "q20" not in table and "--wide" in table
    for total in totals(results):
        assert total in table
    res = runner.invoke(app, ["grade", str(key), str(folder), "--no-color", "--wide"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    table = res.stdout.split("class summary")[0]
    assert "q20" in table and "…" not in table


def test_flags_take_the_width_the_terminal_leaves(midterm):
    # at 80 columns the flags wrapped after 15 characters in a 65-column table ("31 no answer, 4 to" / "mark")
    _, _, results = midterm
    text = render(class_table(results, width=80), 80)
    assert max(len(line) for line in text.splitlines()) <= 80
    for sid, r in zip(IDS, results):
        row = next(line for line in text.splitlines() if line.strip().startswith(sid[:10]))
        counts = r.counts()
        assert f"{counts['blank']} no answer, {counts['pending']} to mark" in row, row


def test_ids_that_one_cut_would_make_alike_stay_whole(small):
    # three ids sharing their first 15 characters all showed as "university-of-s…"
    from dataclasses import replace

    ids = [f"university-of-somewhere-cs231n-2026-student-000{i}" for i in (1, 2, 3)]
    results = [replace(r, student_id=sid) for r, sid in zip(small, ids)]
    text = render(class_table(results, width=80), 80)
    assert all(sid in text for sid in ids) and max(len(line) for line in text.splitlines()) <= 80


VERDICTS = ["correct", "ecf", "misconception", "wrong", "blank", "unparseable", "pending", "marked"]


def every_verdict(results):
    """The class's results with each of the eight verdicts somewhere (the widest summary there is)."""
    from dataclasses import replace

    return [replace(r, problems=[replace(pr, parts=[replace(p, status=VERDICTS[(i + j + k) % 8])
                                                    for k, p in enumerate(pr.parts)])
                                 for j, pr in enumerate(r.problems)]) for i, r in enumerate(results)]


def summary_headers(text):
    """The words of the summary tables' header lines (the line above each rule)."""
    lines = text.splitlines()
    return [lines[n - 1].split() for n, line in enumerate(lines) if line.strip().startswith("─")]


@pytest.mark.parametrize("width", [60, 80])
def test_every_summary_header_is_whole_at_80_and_60_columns(midterm, width):
    # issue 36: at 80 columns the class summary's `todo` (and `hand`) headers were cut off
    from examprep.grading.report_text import SHORT, summary_view

    _, _, results = midterm
    text = render(summary_view(every_verdict(results), width=width), width)
    assert max(len(line) for line in text.splitlines()) <= width
    words = [w for header in summary_headers(text) for w in header]
    assert sorted(set(words)) == sorted({"question", "mean", *(SHORT[v] for v in VERDICTS)})
    assert words.count("mean") == 1
    assert "q20 LoRA" in text and "q20 LoRA's factorisation" not in text        # titles shorten, headers do not


def test_an_unused_verdict_leaves_a_narrow_summary_and_is_named(midterm):
    from examprep.grading.report_text import summary_view

    _, _, results = midterm
    text = render(summary_view(results, width=60), 60)
    assert max(len(line) for line in text.splitlines()) <= 60 and len(summary_headers(text)) == 1
    assert "no part was ECF" in " ".join(text.split()) and "ECF" not in summary_headers(text)[0]


def test_the_cli_summary_keeps_its_headers_at_60_columns(midterm):
    key, folder, _ = midterm
    res = runner.invoke(app, ["grade", str(key), str(folder), "--no-color"], env={"COLUMNS": "60"})
    assert res.exit_code == 0, res.output
    summary = res.stdout.split("class summary")[1]
    assert max(len(line) for line in summary.splitlines()) <= 60
    assert all(w in summary_headers(summary)[0] for w in ("question", "mean", "right", "blank"))
    assert not any(w.endswith("…") for header in summary_headers(summary) for w in header)
