"""The files of an item analysis (item-analysis.json, item-analysis.csv, analysis.pdf) and the
`examprep analyze GRADES.json` command; `grade --analysis DIR` plans the same files."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from examprep.fileio import InputError, OutputError, check_output_folder, read_user_text, real_path, write_outputs
from examprep.grading.analysis import ItemData, analyse, csv_text, from_grades
from examprep.grading.analysis_text import terminal_summary, typst_source
from examprep.grading.report_text import escape
from examprep.render.pdf import compile_pdf
from examprep.render.terminal import console

FILES = ("item-analysis.json", "item-analysis.csv", "analysis.pdf")


def plan(data: ItemData, out_dir: str | Path, title: str = "Item analysis") -> tuple[dict[str, Any],
                                                                                   list[tuple[Path, bytes]]]:
    """The analysis and the files it writes in ``out_dir`` (nothing written yet)."""
    result = analyse(data)
    totals = np.nansum(data.scores, axis=1).tolist() if data.scores.size else [0.0] * len(data.students)
    out = Path(out_dir)
    text = json.dumps(result, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    pdf = compile_pdf(typst_source(result, totals, title=title, left_out=data.left_out))
    return result, [(out / FILES[0], text.encode()), (out / FILES[1], csv_text(result).encode()), (out / FILES[2], pdf)]


def check_out_dir(out_dir: str | Path, option: str, *, force: bool) -> None:
    """Before the work: an earlier analysis in ``out_dir`` (any of FILES) is replaced only with
    ``force``, as `sheet` and `anki` replace their outputs; a path whose parent folder is missing
    is refused (a typo would scatter analyses). OutputError names the option and file."""
    out = check_output_folder(str(out_dir), option)
    existing = [name for name in FILES if (out / name).exists()]
    if existing and not force:
        more = f" (and {len(existing) - 1} more of an earlier analysis)" if len(existing) > 1 else ""
        raise OutputError(f"{option} {out}: {out / existing[0]} already exists{more}; use --force to replace "
                          "it, or another directory")


def pdf_title(title: str | None, fallback: str) -> str:
    """analysis.pdf's heading: the exam's title (the key's, which grades.json records), else the file's name."""
    return f"Item analysis: {title}" if title and title.strip() else f"Item analysis of {fallback}"


def write(planned: list[tuple[Path, bytes]], inputs: set[Path] = frozenset(), out_dir: str | Path | None = None) -> None:
    """Write the analysis's files after the checks every grading output gets (fileio.write_outputs),
    ``out_dir`` replaced whole (its other files carried over)."""
    write_outputs(list(planned), set(inputs), [Path(out_dir)] if out_dir else [])


def _load(path: str) -> Any:
    text = read_user_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: line {err.lineno}: not JSON ({err.msg}); give the file `examprep grade --json` "
                         "wrote") from None


def read_grades(path: str) -> tuple[ItemData, str | None]:
    """ItemData of a grades.json and the exam's title it records (its key's; None in a file from
    before it did); InputError names the file and what is wrong."""
    data = _load(path)
    key = data.get("key") if isinstance(data, dict) else None
    title = key.get("title") if isinstance(key, dict) else None
    return from_grades(data, where=path), title if isinstance(title, str) else None


def run_analyze(grades: str, out_dir: str | None, *, quiet: bool = False, no_color: bool = False,
                force: bool = False) -> int:
    """`examprep analyze GRADES.json [--out DIR] [--force]`: the summary on the terminal, the files in
    DIR (an earlier analysis there only replaced with ``force``)."""
    if out_dir is not None:                 # '' and '-' are refused, never taken as "no folder"
        check_out_dir(out_dir, "--out", force=force)
    data, title = read_grades(grades)
    err = Console(stderr=True, no_color=no_color, highlight=False, soft_wrap=True)
    if out_dir:
        result, planned = plan(data, out_dir, title=pdf_title(title, Path(grades).name))

        write(planned, {real_path(grades)}, out_dir)
    else:
        result, planned = analyse(data), []
    if not quiet:
        console(no_color).print(terminal_summary(result, data.left_out, title=pdf_title(title, Path(grades).name)))
    for path, _ in planned:
        err.print(f"wrote {escape(str(path))}")
    return 0
