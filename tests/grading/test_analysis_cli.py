"""`grade --analysis DIR` and `examprep analyze GRADES.json --out DIR` (issue 23) on a class graded
from the midterm with one variant per student: the files, the variant labels in grades.json, the
groups of the attention question (self-attention or Q/K/V, drawn per student), the PDF's pages,
the summary at 80 columns, and bad input."""
import csv
import io
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from examprep.cli import app
from examprep.keys import read_key
from tests.grading.simulated_class import write_class

runner = CliRunner()
STUDENTS = 40


def run(*args, **kw):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "80", "NO_COLOR": "1"}, **kw)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    d = tmp_path_factory.mktemp("midterm")
    (d / "roster.csv").write_text("id,name\n" + "".join(f"s{i:03d},Student {i}\n" for i in range(STUDENTS)))
    # a fixed secret: the same variants (and so the same statistics) on every run
    (d / "secret.txt").write_text("5d1c0f3e9a7b24681357ace02468bdf19e8c7a6b5d4f3e2a1c0b9d8e7f6a5b4c\n")
    (d / "secret.txt").chmod(0o600)
    res = run("sheet", "--recipe", "midterm", "--seed", "2024", "--roster", d / "roster.csv", "--secret-file",
              d / "secret.txt", "--format", "md", "--out", d / "class")
    assert res.exit_code == 0, res.output
    key = read_key(d / "class" / "key.json")
    write_class(key, d / "subs")
    res = run("grade", d / "class" / "key.json", d / "subs", "--json", d / "grades.json", "--analysis", d / "an")
    assert res.exit_code == 0, res.output
    return d, key, res


def strict_load(path):
    def refuse(name):
        raise AssertionError(f"{name} in {path}")
    return json.loads(path.read_text(), parse_constant=refuse)


def test_grade_analysis_writes_the_files_with_the_issues_schema(graded):
    d, key, res = graded
    r = strict_load(d / "an" / "item-analysis.json")
    assert list(r) == ["students", "min_answers", "mean", "sd", "alpha", "sem", "parts", "questions", "groups"]
    assert r["students"] == STUDENTS
    for p in r["parts"]:
        assert list(p) == ["part", "question", "points", "answers", "difficulty", "discrimination", "blank",
                           "unreadable", "misconceptions"]
        assert len(p["misconceptions"]) <= 3
        for m in p["misconceptions"]:
            assert set(m) == {"misconception", "count", "explanation", "top_share", "bottom_share"}
            assert m["explanation"]
    assert [q["question"] for q in r["questions"]] == [f"q{n}" for n in range(1, 17)]   # 17–20 written, pending
    rows = list(csv.DictReader(io.StringIO((d / "an" / "item-analysis.csv").read_text())))
    assert [row["item"] for row in rows if row["kind"] == "part"] == [p["part"] for p in r["parts"]]
    assert (d / "an" / "analysis.pdf").read_bytes().startswith(b"%PDF")
    assert "Item analysis:" in res.stdout and "q17.w1, q18.w1, q19.w1, q20.w1" in res.stdout


def test_statistics_match_numpy_on_the_graded_matrix(graded):
    """The same statistics from grades.json with plain numpy: totals, mean, sd, α over the parts
    every student has, one part's item-rest r."""
    d, key, _ = graded
    g = json.loads((d / "grades.json").read_text())
    r = strict_load(d / "an" / "item-analysis.json")
    cells = {}
    for i, sub in enumerate(g["submissions"]):
        for pr in sub["problems"]:
            for part in pr["parts"]:
                if part["status"] != "pending":
                    cells[(i, f"{pr['question']}.{part['part']}")] = part["score"]
    names = [p["part"] for p in r["parts"]]
    X = np.array([[cells.get((i, a), np.nan) for a in names] for i in range(STUDENTS)])
    T = np.nansum(X, axis=1)
    assert r["mean"] == pytest.approx(T.mean(), abs=1e-4) and r["sd"] == pytest.approx(T.std(ddof=1), abs=1e-4)
    C = X[:, ~np.isnan(X).any(axis=0)]
    k = C.shape[1]
    alpha = k / (k - 1) * (1 - C.var(axis=0, ddof=1).sum() / C.sum(1).var(ddof=1))
    assert r["alpha"] == pytest.approx(alpha, abs=1e-4)
    assert r["sem"] == pytest.approx(C.sum(1).std(ddof=1) * np.sqrt(1 - alpha), abs=1e-4)
    j = names.index("q1.receptive_field") if "q1.receptive_field" in names else 0
    x, rest = X[:, j], T - X[:, j]
    assert r["parts"][j]["discrimination"] == pytest.approx(np.corrcoef(x, rest)[0, 1], abs=1e-4)


def test_variant_labels_reach_grades_json_and_group_the_attention_question(graded):
    d, key, _ = graded
    g = json.loads((d / "grades.json").read_text())
    labels = [next(pr for pr in s["problems"] if pr["question"] == "q15")["variant"] for s in g["submissions"]]
    assert set(labels) == {"self", "qkv"}
    assert labels == [key.variants[s["student_id"]][14].variant for s in g["submissions"]]
    groups = {g["question"]: g for g in strict_load(d / "an" / "item-analysis.json")["groups"]}
    # the structural choices of the midterm: attention (q15), backprop's activation (q6), the loss (q8)
    assert set(groups) == {"q6", "q8", "q15"}
    sizes = {v["variant"]: v["students"] for v in groups["q15"]["variants"]}
    assert sizes == {"self": labels.count("self"), "qkv": labels.count("qkv")}
    for g in groups.values():
        big = all(v["students"] >= 10 for v in g["variants"])
        assert (g["spread"] is not None) == big and ("too small" in g["note"]) == (not big)
        if big:
            d_ = [v["difficulty"] for v in g["variants"]]
            assert g["spread"] == pytest.approx(max(d_) - min(d_), abs=1e-4) and g["flag"] == (g["spread"] > 0.15)


def test_analyze_reruns_from_grades_json_alone(graded, tmp_path):
    d, _, _ = graded
    res = run("analyze", d / "grades.json", "--out", tmp_path)
    assert res.exit_code == 0, res.output
    assert strict_load(tmp_path / "item-analysis.json") == strict_load(d / "an" / "item-analysis.json")
    for line in res.stdout.splitlines():
        assert len(line) <= 80, line


def test_analysis_pdf_pages(graded, tmp_path):
    d, _, _ = graded
    from examprep.render.pdf import page_count

    pdf = (d / "an" / "analysis.pdf").read_bytes()
    assert page_count(pdf) == 2


@pytest.mark.parametrize("content, message", [
    ("{", "line 1: not JSON"),
    ('{"submissions": []}', "not a grades file"),
    ('{"format": "examprep-grades", "submissions": [{"student_id": "a", "problems": [{"question": "q1"}]}]}',
     "submission 1 (a), q1: parts must be a list, got null"),
    ('{"format": "examprep-grades", "submissions": [{"student_id": "a", "problems": [{"question": "q1", "parts": '
     '[{"part": "r", "status": "misconception", "score": 0, "max_score": 1, "misconception": {"a": 1}}]}]}]}',
     'submission 1 (a), q1.r: misconception must be text or null, got {"a": 1}'),
])
def test_analyze_bad_files_one_line_exit_2(tmp_path, content, message):
    f = tmp_path / "g.json"
    f.write_text(content)
    res = run("analyze", f)
    assert res.exit_code == 2
    assert message in res.stderr and "Traceback" not in res.output
    assert len(res.stderr.strip().splitlines()) == 1


def test_analyze_missing_file(tmp_path):
    res = run("analyze", tmp_path / "none.json")
    assert res.exit_code == 2 and "none.json" in res.stderr and "Traceback" not in res.output


@pytest.mark.parametrize("matrix", [[[2, 0, 1]], [[2, 1, 1]] * 4], ids=["one student", "all correct"])
def test_undefined_statistics_read_undefined_on_the_terminal_and_null_in_json(tmp_path, matrix):
    from tests.grading.test_analysis import grades

    f = tmp_path / "grades.json"
    f.write_text(json.dumps({"format": "examprep-grades", "submissions": grades(matrix, [2, 1, 1])}))
    res = run("analyze", f, "--out", tmp_path / "an")
    assert res.exit_code == 0, res.output
    shown = " ".join(res.stdout.split())
    assert "α undefined" in shown and "SEM undefined" in shown and "nan" not in shown.lower()
    r = strict_load(tmp_path / "an" / "item-analysis.json")
    assert r["alpha"] is None and all(p["discrimination"] is None for p in r["parts"])
    from examprep.render.pdf import page_count

    assert page_count((tmp_path / "an" / "analysis.pdf").read_bytes()) >= 1


def test_a_grade_run_that_fails_its_output_checks_writes_nothing(graded, tmp_path):
    # every output is checked before the first is written: --analysis under a file, or two outputs
    # on one path, used to leave --json written behind an error
    d, _, _ = graded
    (tmp_path / "a.log").write_text("a log\n")
    for json_out, extra, message in [
            (tmp_path / "g.json", ["--analysis", tmp_path / "a.log"], "is a file, not a folder"),
            (tmp_path / "both.json", ["--csv", tmp_path / "both.json"],
             f"--csv {tmp_path / 'both.json'} and --json {tmp_path / 'both.json'} name one path"),
            (tmp_path / "an" / "item-analysis.json", ["--analysis", tmp_path / "an"],
             "two outputs would be written to this one file")]:
        (tmp_path / "an").mkdir(exist_ok=True)
        res = run("grade", d / "class" / "key.json", d / "subs", "-q", "--json", json_out, *extra)
        assert res.exit_code == 2 and message in res.stderr, res.output
        assert not json_out.exists() and (tmp_path / "a.log").read_text() == "a log\n"


def test_an_earlier_analysis_is_replaced_only_with_force(graded, tmp_path):
    # as `sheet` and `anki` do: refused in one line before any work, exit 2, the old files untouched
    d, _, _ = graded
    out = tmp_path / "an"
    out.mkdir()
    (out / "analysis.pdf").write_bytes(b"an earlier analysis")
    for args, option in [(["analyze", d / "grades.json", "--out", out], "--out"),
                         (["grade", d / "class" / "key.json", d / "subs", "-q", "--json", tmp_path / "g.json",
                           "--analysis", out], "--analysis")]:
        res = run(*args)
        assert res.exit_code == 2, res.output
        assert res.stderr.startswith(f"error: {option} {out}: {out / 'analysis.pdf'} already exists; use --force")
        assert res.stderr.count("\n") == 1 and "Traceback" not in res.output
        assert (out / "analysis.pdf").read_bytes() == b"an earlier analysis"
        assert not (out / "item-analysis.json").exists() and not (tmp_path / "g.json").exists()
    res = run("analyze", d / "grades.json", "--out", out, "--force", "-q")
    assert res.exit_code == 0, res.output
    assert (out / "analysis.pdf").read_bytes().startswith(b"%PDF")
    res = run("grade", d / "class" / "key.json", d / "subs", "-q", "--analysis", out, "--force")
    assert res.exit_code == 0, res.output
    assert strict_load(out / "item-analysis.json") == strict_load(d / "an" / "item-analysis.json")


def test_analysis_pdf_is_titled_after_the_exam_not_the_key_file(graded, tmp_path):
    from pypdf import PdfReader

    d, key, _ = graded
    assert key.title and key.title != "key.json"
    assert json.loads((d / "grades.json").read_text())["key"]["title"] == key.title
    res = run("analyze", d / "grades.json", "--out", tmp_path / "re", "-q")
    assert res.exit_code == 0, res.output
    for pdf in (d / "an" / "analysis.pdf", tmp_path / "re" / "analysis.pdf"):
        first = " ".join(PdfReader(pdf).pages[0].extract_text().split())
        assert first.startswith(f"Item analysis: {key.title}"), first[:80]
        assert "key.json" not in first and "grades.json" not in first


def test_the_terminal_summary_is_headed_by_the_exams_title_as_the_pdf_is(graded, tmp_path):
    d, key, res = graded
    stats = f"{STUDENTS} students · mean "
    for out in (res.stdout, run("analyze", d / "grades.json").stdout):
        lines = out.splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith("Item analysis"))
        assert lines[head] == f"Item analysis: {key.title}", lines[head:head + 2]
        assert lines[head + 1].startswith(stats), lines[head:head + 2]
    # a grades.json from before it recorded the exam's title: headed by the file's name
    old = json.loads((d / "grades.json").read_text())
    del old["key"]["title"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    lines = run("analyze", tmp_path / "old.json").stdout.splitlines()
    assert lines[0] == "Item analysis of old.json" and lines[1].startswith(stats), lines[:2]


def test_control_characters_in_the_title_do_not_reach_the_terminal(graded, tmp_path):
    d, key, _ = graded
    data = json.loads((d / "grades.json").read_text())
    data["key"]["title"] = "line1\nline2\x1b[31mred"
    (tmp_path / "g.json").write_text(json.dumps(data))
    out = run("analyze", tmp_path / "g.json").stdout
    assert "\x1b" not in out and out.splitlines()[0] == "Item analysis: line1\\nline2\\x1b[31mred", out[:200]


def test_control_characters_in_grades_json_reach_no_output_raw(graded, tmp_path):
    d, key, _ = graded
    data = json.loads((d / "grades.json").read_text())
    for sub in data["submissions"]:
        part = sub["problems"][0]["parts"][0]
        part.update(status="misconception", score=0.0, misconception="evil\x1b[2J<script>")
    data["submissions"][0]["problems"][0]["title"] = "t\x1b[31m"
    data["summary"]["misconceptions"].append({"part": "q1.x", "misconception": "evil\x1b[2J<script>", "count": 1,
                                              "explanation": "why\x07"})
    (tmp_path / "g.json").write_text(json.dumps(data))
    res = run("analyze", tmp_path / "g.json", "--out", tmp_path / "an")
    assert res.exit_code == 0, res.output
    assert "evil\\x1b[2J<script>" in res.stdout
    for text in (res.output, *(f.read_text() for f in (tmp_path / "an").glob("item-analysis.*"))):
        assert "\x1b" not in text and "\x07" not in text
