"""Joining a long run's chunks into one class PDF, and cutting --split's one PDF per student out of
a chunk: the pages are the ones Typst typeset, copied as they are (the same content streams, read
back with pypdf), each part padded to an even page count, with the sheet's metadata, and the same
bytes for the same parts."""
import io

import pytest

from examprep import sheets
from examprep.render.pdf import PdfJoin, compile_copies, compile_pdf, merge_pdfs, page_count, split_pdf
from examprep.render.typst.sheet import sheet_source

SECRET = b"2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"


def _reader(pdf: bytes):
    from pypdf import PdfReader

    return PdfReader(io.BytesIO(pdf))


def _streams(pdf: bytes) -> list[bytes]:
    """Each page's content stream, decoded: what the page draws."""
    return [page.get_contents().get_data() if page.get_contents() is not None else b"" for page in _reader(pdf).pages]


def _fonts(pdf: bytes) -> list[set[str]]:
    return [{str(f["/BaseFont"]) for f in (page["/Resources"].get("/Font") or {}).values()} for page in _reader(pdf).pages]


@pytest.fixture(scope="module")
def chunks():
    """Five students' problems in chunks of two copies, as render_outputs compiles them, and the class
    PDF render_outputs writes from them."""
    from examprep.sheets import write

    roster = [sheets.Student(f"s{i}", f"Student {i}") for i in range(5)]
    sheet = sheets.build_sheet(sheets.load_recipe("transformer"), 1, roster=roster, secret=SECRET)
    groups = [sheet.copies[i:i + 2] for i in range(0, 5, 2)]
    parts = [compile_copies(sheet_source(sheet, solutions=False, copies=g))[0] for g in groups]
    chunk, write.PDF_CHUNK = write.PDF_CHUNK, 2
    try:
        whole = sheets.render_outputs(sheet, ("pdf",))["problems.pdf"]
        again = sheets.render_outputs(sheets.build_sheet(sheets.load_recipe("transformer"), 1, roster=roster,
                                                         secret=SECRET), ("pdf",))["problems.pdf"]
    finally:
        write.PDF_CHUNK = chunk
    assert again == whole                                             # the same inputs, the same bytes
    return sheet, parts, whole


def test_the_class_pdf_holds_each_chunks_pages_as_typst_drew_them(chunks):
    _, parts, whole = chunks
    expected = [s for part in parts for s in _streams(part) + [b""] * (page_count(part) % 2)]
    assert all(page_count(part) % 2 == 0 for part in parts)          # sheet_source ends each chunk evenly
    assert _streams(whole) == expected and page_count(whole) == len(expected)
    assert _fonts(whole) == [f for part in parts for f in _fonts(part)]
    assert [p.mediabox for p in _reader(whole).pages] == [p.mediabox for part in parts for p in _reader(part).pages]


def test_the_class_pdf_is_titled_as_the_sheet_and_deterministic(chunks):
    sheet, parts, whole = chunks
    meta = _reader(whole).metadata
    assert meta.title == sheet.recipe.title and meta.author == sheet.recipe.course
    assert b"CreationDate" not in whole and b"ModDate" not in whole
    assert whole.startswith(parts[0][:9]) and parts[0].startswith(b"%PDF-1.7")    # Typst's PDF version, kept
    assert merge_pdfs(parts) == merge_pdfs(list(parts))              # the same parts, the same bytes
    ids = _reader(whole).trailer["/ID"]
    assert ids[0] == _reader(parts[0]).trailer["/ID"][0]             # the document, as Typst names it
    plain, other = merge_pdfs(parts), merge_pdfs(parts[::-1])
    assert len({ids[1], _reader(plain).trailer["/ID"][1], _reader(other).trailer["/ID"][1]}) == 3   # one file, one id


def _outline(pdf: bytes) -> list[tuple[str, int]]:
    reader = _reader(pdf)
    return [(item.title, reader.get_destination_page_number(item)) for item in reader.outline]


def test_the_class_pdf_has_a_bookmark_per_student_at_their_first_page(chunks):
    sheet, _, whole = chunks
    marks = _outline(whole)
    assert [title for title, _ in marks] == [f"Student {i} (s{i})" for i in range(5)]
    pages = [" ".join((p.extract_text() or "").split()) for p in _reader(whole).pages]
    for (_, first), copy in zip(marks, sheet.copies):
        assert f"s{copy.student.id[1:]} · variant {copy.code}" in pages[first] and "page 1 of" in pages[first]
        assert first == 0 or f"variant {copy.code}" not in pages[first - 1]       # their first page, not a later one
    assert _reader(whole).trailer["/Root"]["/PageMode"] == "/UseOutlines"         # the list shows when it opens


def test_a_class_in_one_chunk_is_bookmarked_too_and_a_common_sheet_is_typsts_own():
    roster = [sheets.Student("a1", ""), sheets.Student("b2", "Bea")]
    sheet = sheets.build_sheet(sheets.load_recipe("transformer"), 1, roster=roster, secret=SECRET)
    out = sheets.render_outputs(sheet, ("pdf",))
    alone = compile_copies(sheet_source(sheet, solutions=True))[0]
    assert [t for t, _ in _outline(out["solutions.pdf"])] == ["a1", "Bea (b2)"]
    assert out["solutions.pdf"][:9] == alone[:9]
    assert _streams(out["solutions.pdf"]) == _streams(alone)
    common = sheets.build_sheet(sheets.load_recipe("transformer"), 1)
    assert sheets.render_outputs(common, ("pdf",))["problems.pdf"] == compile_copies(
        sheet_source(common, solutions=False))[0]


def test_an_odd_part_is_padded_with_a_blank_page_of_its_size():
    odd = compile_pdf('#set page(width: 10cm, height: 12cm)\nA\n#pagebreak()\nB\n#pagebreak()\nC\n')
    even = compile_pdf('#set page(width: 10cm, height: 12cm)\nD\n#pagebreak()\nE\n')
    assert page_count(odd) == 3
    joined = merge_pdfs([odd, even])
    texts = [(p.extract_text() or "").strip() for p in _reader(joined).pages]
    assert texts == ["A", "B", "C", "", "D", "E"]
    assert {(float(p.mediabox.width), float(p.mediabox.height)) for p in _reader(joined).pages} == {
        (float(p.mediabox.width), float(p.mediabox.height)) for p in _reader(odd).pages}
    assert page_count(merge_pdfs([odd])) == 4                        # one part alone is padded too
    assert merge_pdfs([even]) == even                                 # and kept as it is when even


def test_nothing_to_join_is_an_error():
    with pytest.raises(ValueError):
        PdfJoin().pdf()


def test_split_copies_pages_titles_each_and_is_deterministic():
    doc = compile_pdf('#set text(lang: "en")\n#set page(width: 10cm, height: 12cm)\n'
                      'A\n#pagebreak()\nB\n#pagebreak()\nC\n#pagebreak()\nD\n')
    first, second = split_pdf(doc, [(range(0, 1), "Sheet — Ada (s1)"), (range(1, 4), "Sheet — Alan (s2)")],
                              author="Course")
    assert _streams(first) == _streams(doc)[:1] and _streams(second) == _streams(doc)[1:]
    assert first[:9] == second[:9] == doc[:9]
    assert _reader(second).metadata.title == "Sheet — Alan (s2)" and _reader(second).metadata.author == "Course"
    assert _reader(second).trailer["/Root"]["/Lang"] == _reader(doc).trailer["/Root"]["/Lang"]
    again = split_pdf(doc, [(range(0, 1), "Sheet — Ada (s1)"), (range(1, 4), "Sheet — Alan (s2)")], author="Course")
    assert again == [first, second]
    assert _reader(first).trailer["/ID"] != _reader(second).trailer["/ID"]


def test_a_joined_class_pdf_has_the_same_bytes_in_a_fresh_process(monkeypatch):
    import os
    import subprocess
    import sys

    from examprep.sheets import write

    code = ("import sys; from examprep import sheets; from examprep.sheets import write; write.PDF_CHUNK = 1; "
            "roster = [sheets.Student('s1', 'Ada'), sheets.Student('s2', 'Alan')]; "
            f"sheet = sheets.build_sheet(sheets.load_recipe('cnn'), 2, roster=roster, secret={SECRET!r}); "
            "sys.stdout.buffer.write(sheets.render_outputs(sheet, ('pdf',))['solutions.pdf'])")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300,
                         env=dict(os.environ, PYTHONHASHSEED="123"))
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    monkeypatch.setattr(write, "PDF_CHUNK", 1)
    roster = [sheets.Student("s1", "Ada"), sheets.Student("s2", "Alan")]
    here = sheets.render_outputs(sheets.build_sheet(sheets.load_recipe("cnn"), 2, roster=roster, secret=SECRET),
                                 ("pdf",))["solutions.pdf"]
    assert res.stdout == here and [t for t, _ in _outline(here)] == ["Ada (s1)", "Alan (s2)"]
