"""--decimal-comma: the sheets print numbers as their answers are written (0,25; lists with ';'),
in the PDFs (read back with pypdf) and the Markdown; without it nothing changes."""
import io
import re

import pytest
from typer.testing import CliRunner

from examprep.cli import app

runner = CliRunner()
POINT = re.compile(r"\d\.\d")           # a decimal point between two digits


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dc")
    for name, extra in (("comma", ["--decimal-comma"]), ("point", [])):
        res = runner.invoke(app, ["sheet", "-r", "midterm", "-s", "2024", "-f", "pdf,md", "--out", str(tmp / name),
                                  *extra])
        assert res.exit_code == 0, res.output
    return tmp / "comma", tmp / "point"


@pytest.mark.parametrize("name", ["problems.md", "solutions.md"])
def test_markdown_prints_decimal_commas(both, name):
    comma, point = both
    text, plain = (comma / name).read_text(), (point / name).read_text()
    assert POINT.search(plain) and not POINT.search(text), POINT.search(text)
    assert re.search(r"\d\{,\}\d", text) or name == "problems.md"       # in math: 0{,}25, not spaced as a list
    assert re.search(r"\d,\d", text)                                    # in words and tables: 0,5 pt
    # the same sheet otherwise: decimal commas back to points, list entries back to ', '
    back = re.sub(r"(\d)\{,\}(\d)", r"\1.\2", re.sub(r"(?<![\d,])(\d+),(\d+)", r"\1.\2", text))
    back = re.sub(r"\[[^\]\n]*;[^\n]*?\](?= ·)", lambda m: m.group(0).replace("; ", ", "), back)
    back = back.replace("65\u202f536", "65,536")                       # a thousands separator, not a comma
    assert back == plain


def test_answer_forms_ask_for_semicolons(both):
    text = (both[0] / "problems.md").read_text()
    assert "vector of 2 [a; b; …]" in text and "2×2 matrix [[a; b]; [c; d]]" in text
    assert "[a, b" not in text


def _read(pdf: bytes) -> tuple[str, str, int]:
    """(text, its letters and digits, pages) of a PDF, read once by pypdf. The letters leave out the
    ASCII letters pypdf reads from the math font: the pieces of a tall bracket, which it reads as
    whatever letter their code is in the font's subset ("b", "`"), a subset that any other glyph
    on the sheet changes (math italic letters are read as 𝑥, 𝛿, and kept)."""
    from pypdf import PdfReader

    text, kept = [], []

    def visit(piece, cm, tm, font, size):
        text.append(piece)
        kept.append(re.sub(r"[A-Za-z`]", "", piece) if font is not None and "Math" in str(font.get("/BaseFont", ""))
                    else piece)

    pages = PdfReader(io.BytesIO(pdf)).pages
    for page in pages:
        page.extract_text(visitor_text=visit)
    return "".join(text), re.sub(r"[\W_]", "", "".join(kept)), len(pages)


@pytest.mark.parametrize("name", ["problems.pdf", "solutions.pdf"])
def test_pdfs_print_decimal_commas(both, name):
    comma, point = both
    text, letters, pages = _read((comma / name).read_bytes())
    plain, plain_letters, plain_pages = _read((point / name).read_bytes())
    assert POINT.search(plain) and not POINT.search(text), POINT.search(text)
    assert re.search(r"\d,\d", text) and pages == plain_pages
    # the same letters and digits otherwise, in the same order (pypdf's spacing and its pieces of
    # tall brackets aside): only the separators changed
    assert letters == plain_letters


def test_keys_and_templates_are_unchanged_by_the_rendering(both):
    comma, point = both
    assert (comma / "answers.toml").read_text() != (point / "answers.toml").read_text()      # its own header
    assert "DECIMAL COMMAS" in (comma / "answers.toml").read_text()


def test_the_answer_template_asks_for_the_sheets_own_forms(both):
    """A decimal-comma template asked for "[[a, b], [c, d]]" and "±0.001": the comma would have split
    the entries and the point was the ambiguity the sheet refuses. It asks as the sheet does."""
    comma, point = both
    text, plain = (comma / "answers.toml").read_text(), (point / "answers.toml").read_text()
    comments = [line for line in text.splitlines() if line.startswith("#     ")]
    assert comments and not any(POINT.search(line) for line in comments)
    assert "2×2 matrix [[a; b]; [c; d]]" in text and "[a, b" not in "\n".join(comments)
    assert "2×2 matrix [[a, b], [c, d]]" in plain          # a decimal-point sheet as it was


def test_a_flat_answer_for_a_matrix_is_told_the_sheets_row_form():
    from examprep.answers.parse import decimal_comma
    from examprep.answers.result import shape_feedback

    assert shape_feedback((2, 2), (4,), "[1 2; 3 4]").endswith("write the rows: [[a, b], [c, d]] or [a b; c d]")
    with decimal_comma(True):
        # ';' separates entries there: the only row form is bracketed rows
        assert shape_feedback((2, 2), (4,), "[0,5 -2; 3 1,5]").endswith("write the rows: [[a; b]; [c; d]]")
