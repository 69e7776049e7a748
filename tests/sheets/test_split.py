"""A class's PDFs: each copy's pages where the class PDF puts them, and `--split`'s one PDF per
student holding exactly those pages. The page structure is checked against each copy compiled on
its own (the way a copy was typeset before copies shared a compile), with pypdf, an independent
reader."""
import io
import re

import pytest
from typer.testing import CliRunner

from examprep import sheets
from examprep.cli import app
from examprep.fileio import safe_name
from examprep.render.pdf import compile_pdf, page_count
from examprep.render.typst.sheet import sheet_source

runner = CliRunner()
SECRET = "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae\n"
ROSTER = "student_id,name\ns101,Ada Lovelace\ns102,Alan Turing\nx/y 1,Odd Id\n"


def _pages(pdf: bytes) -> list[str]:
    from pypdf import PdfReader

    return [re.sub(r"\s+", " ", page.extract_text() or "").strip() for page in PdfReader(io.BytesIO(pdf)).pages]


@pytest.fixture(scope="module")
def split_class(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("split")
    (tmp / "roster.csv").write_text(ROSTER)
    (tmp / "secret.txt").write_text(SECRET)
    out = tmp / "class"
    res = runner.invoke(app, ["sheet", "-r", "cnn", "-s", "4", "--roster", str(tmp / "roster.csv"),
                              "--secret-file", str(tmp / "secret.txt"), "-f", "pdf", "--split", "--solutions",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    sheet = sheets.build_sheet(sheets.load_recipe("cnn"), 4, roster=sheets.read_roster(tmp / "roster.csv"),
                               secret=SECRET.strip().encode())
    return out, res.output, sheet


@pytest.mark.parametrize("kind", ["problems", "solutions"])
def test_each_copy_keeps_its_pages_in_the_class_pdf_and_its_own(split_class, kind):
    out, _, sheet = split_class
    whole = _pages((out / f"{kind}.pdf").read_bytes())
    start = 0
    for copy in sheet.copies:
        alone = compile_pdf(sheet_source(sheet, solutions=kind == "solutions", copies=[copy]))
        n = sum(1 for page in _pages(alone) if page)          # the copy typeset on its own, without its filler
        own = _pages((out / kind / f"{safe_name(copy.student.id)}.pdf").read_bytes())
        assert len(own) == n and own == whole[start:start + n]     # the same pages, in the same order
        assert start % 2 == 0                                       # every copy starts on an odd page
        for i, page in enumerate(own, 1):
            assert f"{copy.student.id} · variant {copy.code}" in page and f"page {i} of {n}" in page
        filler = page_count(alone) - n
        assert filler in (0, 1) and (n + filler) % 2 == 0
        assert all(not page for page in whole[start + n:start + n + filler])      # a blank back page
        start += n + filler
    assert start == len(whole)                                      # nothing before, between or after


def test_split_files_are_listed_and_named_from_safe_ids(split_class):
    out, output, _ = split_class
    assert sorted(p.name for p in (out / "problems").iterdir()) == ["s101.pdf", "s102.pdf", f"{safe_name('x/y 1')}.pdf"]
    assert sorted(p.name for p in (out / "solutions").iterdir()) == sorted(p.name for p in (out / "problems").iterdir())
    assert f"{out / 'problems'}/ (3 PDFs, one per student)" in output
    assert f"{out / 'solutions'}/ (3 PDFs, one per student)" in output
    assert [p.name for p in out.rglob(".*")] == [".examprep-files.json"]      # no temporary files left


def test_split_pdfs_carry_the_students_title(split_class):
    from pypdf import PdfReader

    out, _, _ = split_class
    meta = PdfReader(out / "solutions" / "s101.pdf").metadata
    assert meta.title == "CNN practice sheet — solutions — Ada Lovelace (s101)"


def test_split_needs_a_roster_and_pdf(tmp_path):
    (tmp_path / "roster.csv").write_text(ROSTER)
    (tmp_path / "secret.txt").write_text(SECRET)
    res = runner.invoke(app, ["sheet", "-r", "cnn", "--split", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and res.output == "error: --split writes one PDF per student: give --roster too\n"
    res = runner.invoke(app, ["sheet", "-r", "cnn", "--split", "-f", "md", "--roster", str(tmp_path / "roster.csv"),
                              "--secret-file", str(tmp_path / "secret.txt"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and res.output == "error: --split writes one PDF per student: add pdf to --format\n"
    assert not (tmp_path / "o").exists()


def test_split_files_are_refused_over_existing_ones_without_force(split_class, tmp_path):
    out, _, _ = split_class
    tmp = out.parent
    before = (out / "problems" / "s101.pdf").read_bytes()
    res = runner.invoke(app, ["sheet", "-r", "cnn", "-s", "5", "--roster", str(tmp / "roster.csv"),
                              "--secret-file", str(tmp / "secret.txt"), "-f", "pdf", "--split", "--out", str(out)])
    assert res.exit_code == 2 and "already exist" in res.output
    assert (out / "problems" / "s101.pdf").read_bytes() == before
