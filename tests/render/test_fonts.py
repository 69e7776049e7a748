"""Names the bundled PDF fonts cannot show (Chinese, Japanese, Korean, emoji): installed Noto font
files are passed to Typst by path, only then, so a Latin-only sheet is the same bytes whatever is
installed; a name no available font can show is a warning naming the student.

The CJK path needs Debian's fonts-noto-cjk (.ci/run installs it); where it is absent, those tests
are skipped and say so. Fonts are read from the PDF by pypdf, an independent reader."""
import io
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep import sheets
from examprep.cli import app
from examprep.render import fonts
from examprep.render.pdf import compile_pdf
from examprep.render.typst.sheet import sheet_source
from examprep.sheets import Student

NOTO_CJK = Path(fonts.DEBIAN_FONTS["fonts-noto-cjk"][0])
needs_cjk = pytest.mark.skipif(not NOTO_CJK.is_file(), reason=f"fonts-noto-cjk is not installed ({NOTO_CJK} is "
                               "absent): apt-get install fonts-noto-cjk, as .ci/run does, to test the CJK path")
SECRET = b"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
HIEROGLYPH = "\U00013080"              # in no font examprep passes: always a warning
runner = CliRunner()


def _fonts_used(pdf: bytes) -> set[str]:
    from pypdf import PdfReader

    names = set()
    for page in PdfReader(io.BytesIO(pdf)).pages:
        for font in page["/Resources"].get("/Font", {}).values():
            names.add(re.sub(r"^[A-Z]{6}\+", "", str(font.get_object()["/BaseFont"]).lstrip("/")))
    return names


def _streams(pdf: bytes) -> list[bytes]:
    """What each page draws: its content stream, decoded."""
    from pypdf import PdfReader

    return [page.get_contents().get_data() for page in PdfReader(io.BytesIO(pdf)).pages]


def _sheet(names: list[str]):
    roster = [Student(f"s{i}", name) for i, name in enumerate(names, 1)]
    return sheets.build_sheet(sheets.load_recipe("cnn"), 3, roster=roster, secret=SECRET)


def test_the_probe_finds_what_the_bundled_fonts_lack():
    assert fonts.missing_glyphs("AbzÖŌëЖжλΩ–€") == set()                 # Latin, Greek, Cyrillic
    assert fonts.missing_glyphs(["王", "😀", "한", "あ", HIEROGLYPH, "x"]) == {"王", "😀", "한", "あ", HIEROGLYPH}


def test_latin_only_sheets_are_the_same_bytes_whatever_fonts_are_installed(monkeypatch):
    sheet = _sheet(["Zoë Ōsaka", "Jürgen Weiß", "Ñandú Łukasz", "Жанна Ωμέγα"])
    assert sheets.font_plan(sheet).files == [] and sheets.font_plan(sheet).warnings == []
    source = sheet_source(sheet, solutions=False)
    plain = compile_pdf(source)                   # built-in fonts only, as before this feature
    monkeypatch.setattr(fonts, "installed_font_files", lambda: [NOTO_CJK])
    with_cjk = sheets.render_outputs(sheet, ("pdf",))["problems.pdf"]
    monkeypatch.setattr(fonts, "installed_font_files", lambda: [])
    assert sheets.render_outputs(sheet, ("pdf",))["problems.pdf"] == with_cjk
    # the class PDF (bookmarked for each student) holds the very pages Typst drew with its own fonts
    assert _streams(with_cjk) == _streams(plain) and _fonts_used(with_cjk) == _fonts_used(plain)


@needs_cjk
def test_cjk_names_print_with_the_installed_noto_font(tmp_path):
    sheet = _sheet(["王小明", "佐藤 はるか", "김민준", "Ada Lovelace"])
    plan = sheets.font_plan(sheet)
    assert plan.warnings == [] and NOTO_CJK in plan.files
    pdf = sheets.render_outputs(sheet, ("pdf",), font_files=plan.files)["problems.pdf"]
    assert any(name.startswith(("NotoSansCJK", "NotoSerifCJK")) for name in _fonts_used(pdf)), _fonts_used(pdf)
    from pypdf import PdfReader

    text = "".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    for name in ("王小明", "はるか", "김민준"):
        assert name in text
    assert fonts.missing_glyphs("王小明佐藤はるか김민준") == set("王小明佐藤はるか김민준")   # the bundled fonts alone


@needs_cjk
def test_the_sheet_command_warns_only_about_what_no_font_shows(tmp_path):
    (tmp_path / "roster.csv").write_text(f"id,name\ns1,王小明\ns2,Ra {HIEROGLYPH}\ns3,Ada\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_bytes(b"# examprep secret\n" + SECRET)     # marked: no warning about it
    res = runner.invoke(app, ["sheet", "-r", "cnn", "-s", "3", "-f", "pdf", "--roster", str(tmp_path / "roster.csv"),
                              "--secret-file", str(tmp_path / "secret.txt"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    warnings = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: student s2 (Ra {HIEROGLYPH}): no font has a glyph for '{HIEROGLYPH}' (U+13080): "
                        "it prints as an empty box; install Debian's fonts-noto-cjk (Chinese, Japanese, Korean) or "
                        "fonts-noto-color-emoji (emoji), or name font files in $EXAMPREP_FONT_FILES"], res.stderr
    assert any(n.startswith(("NotoSansCJK", "NotoSerifCJK")) for n in _fonts_used((tmp_path / "o/problems.pdf").read_bytes()))


def test_without_the_fonts_each_cjk_name_is_a_warning_naming_the_student(monkeypatch):
    monkeypatch.setattr(fonts, "installed_font_files", lambda: [])
    sheet = _sheet(["王小明", "Ada", "김민준"])
    sheet.recipe = sheet.recipe.__class__(**{**sheet.recipe.__dict__, "course": "深度学习"})
    plan = sheets.font_plan(sheet)
    assert plan.files == []
    assert [w.split(":")[0] for w in plan.warnings] == ["the course", "student s1 (王小明)", "student s3 (김민준)"]
    assert "'王' (U+738B), '小' (U+5C0F), '明' (U+660E)" in plan.warnings[1] and "fonts-noto-cjk" in plan.warnings[1]
