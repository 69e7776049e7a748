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
    finally:
        write.PDF_CHUNK = chunk
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
    assert merge_pdfs(parts) == whole                                # the same parts, the same bytes
    ids = _reader(whole).trailer["/ID"]
    assert ids[0] == _reader(parts[0]).trailer["/ID"][0]             # the document, as Typst names it
    other = merge_pdfs(parts[::-1])
    assert _reader(other).trailer["/ID"][1] != ids[1]                # another file, another instance id


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
    assert _reader(second).metadata.title == "Sheet — Alan (s2)" and _reader(second).metadata.author == "Course"
    assert _reader(second).trailer["/Root"]["/Lang"] == _reader(doc).trailer["/Root"]["/Lang"]
    again = split_pdf(doc, [(range(0, 1), "Sheet — Ada (s1)"), (range(1, 4), "Sheet — Alan (s2)")], author="Course")
    assert again == [first, second]
    assert _reader(first).trailer["/ID"] != _reader(second).trailer["/ID"]
