"""The export formats of a sheet, one row each: `sheet --format`'s names, the files each writes,
the names people type for it, whether it is an LMS quiz, and its writer. Everything else derives
from EXPORTS: parse_formats and its "did you mean" hints, the planned and ordered output paths,
the LMS check, the warnings, `sheet --help` and `examprep --help` (examprep.cli.usage) and the
unknown-format message. Adding a format is a row here and its renderer module.

Standard library only at the top: the help screens read this table, and a renderer costs about
60 ms to import, so each writer imports its renderer when it runs (the table's one lazy import
per row, like the CLI's command table).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

Written = tuple[dict[str, bytes], list[str]]      # relative path → bytes, and warnings (parts left out)


@dataclass(frozen=True)
class Export:
    name: str                   # what --format takes
    title: str                  # what it is, as help and the docs say it
    files: tuple[str, ...]      # what it writes into the output folder (one copy, or the class's files)
    write: Callable[[Any], Written] | None   # sheet → files and warnings; None: the PDF pipeline (sheets.write)
    aliases: tuple[str, ...] = ()   # names people type for it: an unknown format suggests this one
    lms: bool = False           # an LMS quiz (no field for a list of shapes)
    student_files: str = ""     # with a roster, one file per student instead: "blackboard/{id}.txt"


def _markdown(sheet: Any) -> Written:
    from examprep.render.markdown import sheet_markdown

    return {"problems.md": sheet_markdown(sheet, solutions=False).encode("utf-8"),
            "solutions.md": sheet_markdown(sheet, solutions=True).encode("utf-8")}, []


def _moodle(sheet: Any) -> Written:
    from examprep.render import moodle

    return {"moodle.xml": moodle.sheet_xml(sheet).encode("utf-8")}, []


def _qti21(sheet: Any) -> Written:
    from examprep.render import qti21

    return {"qti21.zip": qti21.package(sheet)}, []


def _canvas(sheet: Any) -> Written:
    from examprep.render import canvas

    data, warnings = canvas.package(sheet)      # warnings: parts Canvas cannot take
    return {"canvas.zip": data}, warnings


def _blackboard(sheet: Any) -> Written:
    from examprep.render import blackboard_pool

    data, warnings = blackboard_pool.package(sheet)      # warnings: parts it cannot take
    return {"blackboard.zip": data}, warnings


def _blackboard_txt(sheet: Any) -> Written:
    from examprep.render import blackboard

    return blackboard.files(sheet)      # a long file split (blackboard-1.txt…); warnings: choices past 20


# in the order of the help, the docs and the output listing (after the key and answer templates: the LMS quizzes)
EXPORTS: dict[str, Export] = {e.name: e for e in (
    Export("pdf", "problems and solutions typeset by Typst", ("problems.pdf", "solutions.pdf"), None,
           aliases=("typst",)),
    Export("md", "problems and solutions in Markdown", ("problems.md", "solutions.md"), _markdown,
           aliases=("markdown",)),
    Export("moodle", "Moodle XML, cloze questions", ("moodle.xml",), _moodle, aliases=("xml",), lms=True),
    Export("qti21", "an IMS QTI 2.1 package for OpenOLAT, ILIAS, Inspera, Blackboard", ("qti21.zip",), _qti21,
           aliases=("qti", "qti2"), lms=True),
    Export("canvas", "Canvas's QTI 1.2 zip", ("canvas.zip",), _canvas, aliases=("qti12",), lms=True),
    Export("blackboard", "Blackboard's pool package, with points and feedback", ("blackboard.zip",), _blackboard,
           aliases=("bb",), lms=True),
    Export("blackboard-txt", "Blackboard's Upload Questions file (no points or feedback)", ("blackboard.txt",),
           _blackboard_txt, aliases=("bb-txt",), lms=True, student_files="blackboard/{id}.txt"),
)}
DEFAULT_FORMATS = ("pdf", "md")


def format_names() -> str:
    """"pdf, md, moodle, …": every format, in the table's order."""
    return ", ".join(EXPORTS)


def alias_of(name: str) -> str | None:
    """The format that ``name`` is another name for ("markdown" → "md"), or None."""
    return next((e.name for e in EXPORTS.values() if name in e.aliases), None)
