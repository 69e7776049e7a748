"""Printed sheets never split a problem at a page break between its heading, its statement, its
data and its first part, and never leave a heading alone at the bottom of a page (issue 15: the
midterm's problems 2, 3, 14 and 15 were split). Checked on the bundled recipes at the samples'
seed, page by page, in the text pypdf (an independent reader) extracts."""
import io
import re

import pytest

from examprep import sheets

RECIPES = ("midterm", "transformer", "rnn", "cnn")


@pytest.fixture(scope="module", params=RECIPES)
def sheet_pdfs(request):
    from pypdf import PdfReader

    sheet = sheets.build_sheet(sheets.load_recipe(request.param), sheets.SAMPLE_SEED)
    out = sheets.render_outputs(sheet, ("pdf",))
    pages = {name: [p.extract_text() or "" for p in PdfReader(io.BytesIO(out[name])).pages]
             for name in ("problems.pdf", "solutions.pdf")}
    return sheet, pages


def _page_of(pages: list[str], pattern: str) -> int:
    found = [i for i, text in enumerate(pages) if re.search(pattern, text)]
    assert found, pattern
    return found[0]


def test_a_problem_starts_on_the_page_of_its_first_part(sheet_pdfs):
    sheet, pages = sheet_pdfs
    problems = pages["problems.pdf"]
    for k, p in enumerate(sheet.copies[0].problems, 1):
        head = _page_of(problems, rf"Problem {k}\s+{re.escape(p.title[:12])}")     # not the score table's row
        first_part = _page_of(problems, rf"\bq{k}\.{re.escape(p.parts[0].id)}\b")   # its answer box's reference
        assert head == first_part, (f"problem {k} ({p.generator}): heading on page {head + 1}, "
                                    f"first part on page {first_part + 1}")


def test_in_the_solutions_each_problem_and_each_answers_table_starts_with_content(sheet_pdfs):
    sheet, pages = sheet_pdfs
    solutions = pages["solutions.pdf"]
    for k, p in enumerate(sheet.copies[0].problems, 1):
        heading = rf"Problem {k}\s+{re.escape(p.title[:12])}"
        head = _page_of(solutions, heading)
        assert re.search(heading + r"[\s\S]*\n\(a\) ", solutions[head]), f"problem {k}: no part (a) on its page"
    for n, text in enumerate(solutions, 1):
        for title in ("Answers\nPart Answer Accepted Points", "Typical mistakes", "Worked solution"):
            for m in re.finditer(re.escape(title) + r"\n", text):
                rest = text[m.end():]
                assert re.match(r"\(a\)|\((?:[a-z])\)|Step 1\.", rest), (
                    f"page {n}: {title.splitlines()[0]!r} is not followed by its content on the page")


def test_the_end_marker_shares_its_page_with_the_last_part_and_no_page_is_empty(sheet_pdfs):
    # the midterm's page 22 once held "— end of the sheet —" alone: the marker followed the last,
    # page-filling part instead of travelling inside its unbreakable block
    sheet, pages = sheet_pdfs
    problems = pages["problems.pdf"]
    copy = sheet.copies[0]
    n, last = len(copy.problems), copy.problems[-1].parts[-1]
    marker = _page_of(problems, "end of the sheet")
    assert re.search(rf"\bq{n}\.{re.escape(last.id)}\b", problems[marker]), f"marker alone on page {marker + 1}"
    written = [i for i, text in enumerate(problems) if text.strip()]
    assert written == list(range(len(written))) and len(problems) - len(written) <= 1   # one blank back at most
    for i in written:
        body = re.sub(r"\s+", " ", problems[i])
        body = re.sub(r"page \d+ of \d+|— end of the sheet —", "", body).replace(copy_footer(sheet), "")
        assert len(body.strip()) > 40, f"page {i + 1} is empty apart from its footer: {problems[i]!r}"


def copy_footer(sheet) -> str:
    return f"{sheet.recipe.title} · {sheet.sheet_id}"
