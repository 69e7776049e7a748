"""Fonts for names the PDF's bundled fonts cannot show (Chinese, Japanese, Korean, emoji, …).

The sheets are typeset with the fonts inside the ``typst`` package only (Libertinus Serif, New
Computer Modern, DejaVu Sans Mono: Latin, Greek, Cyrillic and math), and system fonts are ignored,
so a sheet is the same bytes on every machine. A character those fonts lack prints as an empty box.
So, before typesetting, the text a user gave (student names and ids, title, course, instructions)
is probed: each distinct character is typeset alone and compared with the box Typst draws for a
character no font has. Only when some are missing are installed font files added, by path: Debian's
``fonts-noto-cjk`` and ``fonts-noto-color-emoji``, and any files named in $EXAMPREP_FONT_FILES
(separated by ``os.pathsep``). What is still missing then is reported, naming the student. A sheet
whose text the bundled fonts show is typeset exactly as before, whatever is installed.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from examprep.render.typst.latex import typst_string

# Debian package → the files it installs that we pass to Typst (regular and bold, serif first)
DEBIAN_FONTS = {
    "fonts-noto-cjk": ("/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
                       "/usr/share/fonts/opentype/noto/NotoSerifCJK-Bold.ttc",
                       "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
                       "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc"),
    "fonts-noto-color-emoji": ("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf",),
}
FONT_FILES_ENV = "EXAMPREP_FONT_FILES"
INSTALL_HINT = ("install Debian's fonts-noto-cjk (Chinese, Japanese, Korean) or fonts-noto-color-emoji (emoji), "
                f"or name font files in ${FONT_FILES_ENV}")
_NO_FONT_HAS = "\U0010FFFD"           # a private-use character of plane 16: the box of a missing glyph


def installed_font_files() -> list[Path]:
    """The extra font files present on this machine, in a fixed order."""
    names = [f for files in DEBIAN_FONTS.values() for f in files]
    names += [f for f in os.environ.get(FONT_FILES_ENV, "").split(os.pathsep) if f.strip()]
    return [Path(f) for f in dict.fromkeys(names) if Path(f).is_file()]


def printable_chars(text: str) -> set[str]:
    """The characters of ``text`` that need a glyph (not spaces, controls or format characters)."""
    return {c for c in text if unicodedata.category(c)[0] not in "CZ"}


@contextmanager
def font_folder(files: Iterable[Path]) -> Iterator[str | None]:
    """A temporary folder holding (links to) exactly ``files``, for Typst's font_paths, which takes
    folders; None when there are no files. Removed on exit."""
    files = list(files)
    if not files:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="examprep-fonts-") as folder:
        for i, f in enumerate(files):
            link = Path(folder) / f"{i:02d}-{f.name}"
            try:
                link.symlink_to(f.resolve())
            except OSError:                  # no symlinks here: a copy does as well

                shutil.copyfile(f, link)
        yield folder


def missing_glyphs(chars: Iterable[str], folder: str | None = None) -> set[str]:
    """The characters no font can show: the bundled fonts, plus those in ``folder``. Each is
    typeset alone on a page and compared, as an image, with a character no font has."""
    import typst

    chars = sorted(set(chars))
    if not chars:
        return set()
    pages = "".join(f"#page({typst_string(c)})\n" for c in [_NO_FONT_HAS, *chars])
    source = ('#set page(width: auto, height: auto, margin: 2pt)\n'
              '#set text(font: "Libertinus Serif", size: 40pt)\n' + pages)
    images = typst.compile(source.encode("utf-8"), format="png", ppi=72, ignore_system_fonts=True,
                           font_paths=[folder] if folder else [])
    box = images[0]
    return {c for c, image in zip(chars, images[1:]) if image == box}


@dataclass
class FontPlan:
    """The extra font files a sheet needs (none for text the bundled fonts show) and a warning per
    student or field whose text no available font can show."""

    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _shown(text: str, missing: set[str]) -> tuple[str, int]:
    """The missing characters of ``text`` in the order they appear, and how many there are."""
    chars = [c for c in dict.fromkeys(text) if c in missing]
    return ", ".join(f"{c!r} (U+{ord(c):04X})" for c in chars), len(chars)


def plan(texts: dict[str, str]) -> FontPlan:
    """The fonts for ``texts`` (a label, such as "student s101 (王小明)" or "--title", → the text
    printed). Raises nothing: a character no font has is a warning, the sheet still prints."""
    wanted = {label: printable_chars(text) for label, text in texts.items()}
    missing = missing_glyphs(set().union(*wanted.values()) if wanted else set())
    if not missing:
        return FontPlan()
    files = installed_font_files()
    still = missing
    if files:
        with font_folder(files) as folder:
            still = missing_glyphs(missing, folder)
    warnings = []
    for label, text in texts.items():
        shown, n = _shown(text, still)
        if n:
            warnings.append(f"{label}: no font has a glyph for {shown}: {'it prints' if n == 1 else 'they print'} "
                            f"as an empty box; {INSTALL_HINT}")
    return FontPlan(files if missing - still else [], warnings)
