"""A sheet without a roster (the student-id grid), a written part marked by hand from its crop, and
what must be refused or flagged: a page of another layout, a circled choice, an unreadable id."""
import csv
import json
import subprocess
import sys

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2", reason="needs the optional extra 'scan' (opencv-python-headless)")
pdfium = pytest.importorskip("pypdfium2", reason="needs the optional extra 'scan' (pypdfium2)")
pytest.importorskip("segno", reason="needs the optional extra 'scan' (segno)")

from examprep import sheets  # noqa: E402
from examprep.scan import run_scan  # noqa: E402

DPI = 150
QUESTION = '''[question]
id = "why-softmax"
title = "Softmax in words"
solve = "cross-entropy"
text = "Logits {logits}."

[question.params]
logits = [1, 2, 0]
target = 0

[[question.part]]
answer = "loss"
prompt = "The loss."
points = 2

[[question.part]]
kind = "written"
prompt = "Why does softmax subtract the maximum?"
points = 1
model_answer = "Numerical stability."
'''


@pytest.fixture(scope="session")
def common_sheet(tmp_path_factory):
    d = tmp_path_factory.mktemp("scan-common")
    (d / "why.toml").write_text(QUESTION)
    sheets.make_sheet(topics=[str(d / "why.toml"), "causal-mask"], seed=5, formats="pdf", out=str(d / "sheet"),
                      scannable=True, questions_dir=str(d))
    layout = json.loads((d / "sheet" / "scan-layout.json").read_text())
    doc = pdfium.PdfDocument(str(d / "sheet" / "answer-sheets.pdf"))
    pages = [doc[i].render(scale=DPI / 72, grayscale=True).to_numpy().copy() for i in range(len(doc))]
    return d, layout, pages


def _pen(img, x, y, level=40, radius=4.6):
    s = DPI / 72
    cv2.circle(img, (round(x * s), round(y * s)), round(radius * s), level, -1)


def _field(layout, kind):
    return next(f for f in layout["fields"] if f["kind"] == kind)


def _fill_id(img, grid, digits):
    for x, y, col, v in grid["bubbles"]:
        if col.startswith("id") and int(col[2:]) <= len(digits) and digits[int(col[2:]) - 1] == v:
            _pen(img, x, y)


def test_id_grid_written_box_to_marks_and_unread_id(common_sheet, tmp_path):
    d, layout, pages = common_sheet
    assert layout["pages"] >= 1 and _field(layout, "id")
    box = next(f for f in layout["fields"] if f["kind"] == "box" and f["written"])
    scans = tmp_path / "scans"
    scans.mkdir()
    for n, sid in enumerate(("20240017", "")):
        for p, page in enumerate(pages, 1):
            img = page.copy()
            if p == 1:
                _fill_id(img, _field(layout, "id"), sid)
            if p == box["page"] and sid:
                x, y, w, h = box["rect"]
                s = DPI / 72
                cv2.putText(img, "overflow of exp", (round((x + 20) * s), round((y + 50) * s)),
                            cv2.FONT_HERSHEY_SIMPLEX, 1.0, 30, 2)
            cv2.imwrite(str(scans / f"s{n}-page{p}.png"), img)
    out = tmp_path / "out"
    result = run_scan([str(scans)], str(d / "sheet" / "key.json"), str(out))
    assert sorted(s.student_id for s in result.students) == ["20240017", "UNREAD-1"]
    assert any("student id left blank" in r for r in result.review)
    crop = out / "crops" / "20240017" / f"{box['address']}.png"
    assert crop.is_file() and cv2.imread(str(crop)).shape[1] > 100
    rows = list(csv.DictReader((out / "marks.csv").open()))
    assert [(r["student_id"], r["part"]) for r in rows] == [("20240017", box["address"])]
    rows[0]["points"] = "1"
    with (tmp_path / "marks.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    run = subprocess.run([sys.executable, "-m", "examprep", "grade", str(d / "sheet" / "key.json"),
                          str(out / "answers" / "20240017.toml"), "--marks", str(tmp_path / "marks.csv"), "--json", "-"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "merged 1 hand mark" in run.stdout + run.stderr


def test_circled_choice_and_another_layout_are_flagged_not_read(common_sheet, tmp_path):
    d, layout, pages = common_sheet
    choice = _field(layout, "choice")
    images = [page.copy() for page in pages]
    _fill_id(images[0], _field(layout, "id"), "7")
    x, y, _, _ = choice["bubbles"][1]
    s = DPI / 72
    cv2.circle(images[choice["page"] - 1], (round(x * s), round(y * s)), round(7.5 * s), 40, 2)   # around b, not in
    for p, img in enumerate(images, 1):
        cv2.imwrite(str(tmp_path / f"page{p}.png"), img)
    result = run_scan([str(tmp_path / f"page{p}.png") for p in range(1, len(images) + 1)],
                      str(d / "sheet" / "key.json"), str(tmp_path / "out"))
    assert [s.student_id for s in result.students] == ["7"]
    assert any(f"{choice['address']}: circled bubble" in r for r in result.review)
    assert "circled bubble" in (tmp_path / "out" / "answers" / "7.toml").read_text()
    other = json.loads((d / "sheet" / "scan-layout.json").read_text())
    other["fields"] = other["fields"][:-1]                                   # another layout of this sheet
    (tmp_path / "other.json").write_text(json.dumps(other))
    cv2.imwrite(str(tmp_path / "p1.png"), pages[0])
    result = run_scan([str(tmp_path / "p1.png")], str(d / "sheet" / "key.json"), str(tmp_path / "out2"),
                      layout_path=str(tmp_path / "other.json"))
    assert result.students == [] and any("another layout" in r for r in result.review)


def test_problems_pdf_is_the_same_without_scannable(common_sheet, tmp_path):
    d, _, _ = common_sheet
    sheets.make_sheet(topics=[str(d / "why.toml"), "causal-mask"], seed=5, formats="pdf", out=str(tmp_path / "plain"),
                      questions_dir=str(d))
    assert (tmp_path / "plain" / "problems.pdf").read_bytes() == (d / "sheet" / "problems.pdf").read_bytes()
    assert not (tmp_path / "plain" / "answer-sheets.pdf").exists()


def test_without_the_extra_one_line_names_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "segno", None)
    with pytest.raises(sheets.SheetError.__mro__[1]) as err:
        sheets.make_sheet(topics=["activation"], seed=1, formats="md", out=str(tmp_path / "x"), scannable=True)
    assert "optional extra 'scan'" in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "x").exists()


def test_multipage_tiff_and_natural_order(common_sheet, tmp_path):
    from examprep.scan import scan_files

    d, layout, pages = common_sheet
    images = [p.copy() for p in pages]
    _fill_id(images[0], _field(layout, "id"), "42")
    assert cv2.imwritemulti(str(tmp_path / "class.tif"), images)
    result = run_scan([str(tmp_path / "class.tif")], str(d / "sheet" / "key.json"), str(tmp_path / "out"))
    assert result.pages == len(pages) and [s.student_id for s in result.students] == ["42"]
    assert sorted(result.students[0].pages) == list(range(1, layout["pages"] + 1))
    for name in ("page10.png", "page2.png", "page1.png"):
        (tmp_path / "f" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "f" / name).write_bytes(b"")
    assert [p.name for p in scan_files([str(tmp_path / "f")])] == ["page1.png", "page2.png", "page10.png"]


def _scan_cli(*args):
    return subprocess.run([sys.executable, "-m", "examprep", "scan", *args], capture_output=True, text=True)


def test_pages_of_no_sheet_write_no_answer_file_exit_1_and_suggest_no_grade(common_sheet, tmp_path):
    d, _, _ = common_sheet
    noise = (np.random.default_rng(0).random((400, 300)) * 255).astype(np.uint8)
    cv2.imwrite(str(tmp_path / "noise.png"), noise)
    (tmp_path / "fake.pdf").write_text("not a pdf")
    for scan in ("noise.png", "fake.pdf"):
        run = _scan_cli(str(tmp_path / scan), "--key", str(d / "sheet" / "key.json"), "--out", str(tmp_path / scan[:4]))
        assert run.returncode == 1, run.stderr
        assert "no answer file written" in run.stderr and "Traceback" not in run.stderr
        assert "grade them" not in run.stdout
        assert (tmp_path / scan[:4] / "summary.md").is_file()        # the reason is in the summary


def test_a_folder_without_scans_is_refused_in_one_line(common_sheet, tmp_path):
    d, _, _ = common_sheet
    (tmp_path / "empty").mkdir()
    run = _scan_cli(str(tmp_path / "empty"), "--key", str(d / "sheet" / "key.json"), "--out", str(tmp_path / "o"))
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "no scans there" in run.stderr
    assert not (tmp_path / "o").exists()
