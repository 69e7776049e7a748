"""`examprep scan`: scanned answer pages (PDFs, PNG/JPEG/TIFF) → one answer file per student that
`grade` takes as it is, crops of the boxes, an annotated image of every page and a review list.

    read.py    one page: QR code, alignment, bubbles, boxes
    here       files → pages (one at a time: bounded memory), pages → students, the outputs
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from examprep import keys
from examprep.answers.files import SCAN_REVIEW
from examprep.errors import ExamprepError
from examprep.fileio import read_user_text, safe_name, write_files
from examprep.render.scannable import Layout, ScanExtraMissing
from examprep.scan.annotate import annotate
from examprep.scan.read import read_page

SUFFIXES = (".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff")
MAX_BYTES = 200 * 2 ** 20          # one scan file
MAX_PIXELS = 60_000_000            # one page image (a decompression bomb is named and skipped)
MAX_PAGES = 2000                   # one PDF
DPI = 200


class ScanError(ExamprepError):
    """Bad scan input or output: one line naming what and where."""


def _need_extra():
    try:
        import cv2  # noqa: F401
        import pypdfium2  # noqa: F401
    except ImportError:
        raise ScanError(str(ScanExtraMissing("examprep scan"))) from None


def natural_key(path: Path):
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", str(path))]


def scan_files(specs: list[str]) -> list[Path]:
    """SCANS as files: folders expanded (their scan files, in natural order: page2 before page10)."""
    out: list[Path] = []
    for spec in specs:
        p = Path(spec)
        if p.is_dir():
            out += sorted((f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in SUFFIXES), key=natural_key)
        elif p.is_file():
            out.append(p)
        else:
            raise ScanError(f"{spec}: no such file or folder")
    if not out:
        raise ScanError(f"{' '.join(specs)}: no scans there (PDF, PNG, JPEG or TIFF files); nothing was read")
    return out


def pages_of(path: Path, problems: list[str]):
    """(source label, grayscale page) one at a time; a file over the limits is named in ``problems``."""
    import cv2

    if path.stat().st_size > MAX_BYTES:
        problems.append(f"{path}: over {MAX_BYTES // 2 ** 20} MiB, skipped")
        return
    if path.suffix.lower() == ".pdf":
        import pypdfium2 as pdfium
        try:
            doc = pdfium.PdfDocument(str(path))
        except pdfium.PdfiumError as err:
            problems.append(f"{path}: not a readable PDF ({err}), skipped")
            return
        if len(doc) > MAX_PAGES:
            problems.append(f"{path}: {len(doc)} pages, over {MAX_PAGES}, skipped")
            return
        for i in range(len(doc)):
            w, h = doc[i].get_size()
            if w * h * (DPI / 72) ** 2 > MAX_PIXELS:
                problems.append(f"{path} page {i + 1}: too large a page, skipped")
                continue
            yield f"{path.name} p{i + 1}", doc[i].render(scale=DPI / 72, grayscale=True).to_numpy().copy()
        doc.close()
        return
    data = np.frombuffer(path.read_bytes(), np.uint8)
    if path.suffix.lower() in (".tif", ".tiff"):
        ok, images = cv2.imdecodemulti(data, cv2.IMREAD_GRAYSCALE)
        images = list(images) if ok else []
    else:
        header = cv2.imdecode(data, cv2.IMREAD_REDUCED_GRAYSCALE_8)
        if header is not None and header.size * 64 > MAX_PIXELS:
            problems.append(f"{path}: over {MAX_PIXELS:,} pixels, skipped")
            return
        image = cv2.imdecode(data, cv2.IMREAD_GRAYSCALE)
        images = [] if image is None else [image]
    if not images:
        problems.append(f"{path}: not a readable image, skipped")
    for k, image in enumerate(images, 1):
        yield (f"{path.name}" + (f" p{k}" if len(images) > 1 else "")), image


@dataclass
class Student:
    student_id: str
    name: str
    copy: int
    pages: dict[int, list] = field(default_factory=dict)      # page → its field reads
    sources: dict[int, str] = field(default_factory=dict)


@dataclass
class ScanResult:
    out: Path
    students: list[Student]
    review: list[str]
    pages: int
    written: list[Path]


def run_scan(scans: list[str], key_path: str, out: str, *, layout_path: str | None = None, force: bool = False,
             progress=None) -> ScanResult:
    """The `examprep scan` command's one function (see the module docstring)."""
    _need_extra()

    key = keys.read_key(key_path)
    layout_file = Path(layout_path) if layout_path else Path(key_path).parent / "scan-layout.json"
    try:
        layout = Layout.from_json(read_user_text(layout_file, "--layout"))
    except (ValueError, KeyError) as err:
        raise ScanError(f"{layout_file}: not a scan layout ({err}); give the sheet's scan-layout.json") from None
    out_dir = Path(out)
    if out_dir.exists() and any(out_dir.iterdir()) and not force:
        raise ScanError(f"--out {out_dir}: not empty; choose another folder or add --force to replace it")
    files = scan_files(scans)
    review: list[str] = []
    outputs: dict[Path, bytes] = {}
    students: dict[str, Student] = {}
    current: Student | None = None       # no roster: the pages after an ID page belong to its student
    unread = 0

    def layout_for(pid):
        if pid.sheet != layout.sheet:
            return f"a page of sheet {pid.sheet}, not {layout.sheet}"
        if pid.fingerprint != layout.fingerprint or pid.pages != layout.pages:
            return "printed from another layout of this sheet (its fingerprint differs)"
        if not 1 <= pid.copy <= len(layout.copies) or not 1 <= pid.page <= layout.pages:
            return f"copy {pid.copy} page {pid.page}: not in the layout"
        return layout

    count = 0
    for path in files:
        for source, gray in pages_of(path, review):
            count += 1
            if progress:
                progress("pages", count, None)
            page = read_page(gray, layout_for, source)
            outputs[out_dir / "pages" / f"{count:04d}.png"] = annotate(page)
            if page.problem:
                review.append(f"{source}: {page.problem}; nothing read")
                continue
            pid = page.page_id
            info = layout.copies[pid.copy - 1]
            if layout.id_grid:
                if pid.page == 1:
                    id_read = next(f for f in page.fields if f.address == "student_id")
                    if id_read.review or not id_read.value:
                        unread += 1
                        sid = f"UNREAD-{unread}"
                        review.append(f"{source}: student id {id_read.review or 'left blank'}; answers in "
                                      f"answers/{sid}.toml")
                    else:
                        sid = id_read.value
                    current = students.get(sid)
                    if current is not None:
                        review.append(f"{source}: a second first page for student {sid}; its answers are not used")
                        current = None
                        continue
                    current = students[sid] = Student(sid, "", pid.copy)
                elif current is None:
                    review.append(f"{source}: page {pid.page} with no first page (student id) before it; nothing used")
                    continue
                student = current
            else:
                sid = info["student_id"]
                student = students.setdefault(sid, Student(sid, info.get("name", ""), pid.copy))
            if pid.page in student.pages:
                review.append(f"{source}: duplicate of page {pid.page} of {student.student_id} "
                              f"({student.sources[pid.page]}); the first is used")
                continue
            student.pages[pid.page] = [f for f in page.fields if f.address != "student_id"]
            student.sources[pid.page] = source
    ordered = sorted(students.values(), key=lambda s: natural_key(Path(s.student_id)))
    marks_rows = []
    for s in ordered:
        missing = [p for p in range(1, layout.pages + 1) if p not in s.pages]
        if missing:
            review.append(f"{s.student_id}: page(s) {', '.join(map(str, missing))} of {layout.pages} not scanned")
        text, rows, notes = answer_file(key, layout, s, out_dir)
        outputs[out_dir / "answers" / f"{safe_name(s.student_id)}.toml"] = text.encode()
        for f in (f for reads in s.pages.values() for f in reads):
            if f.crop is not None and f.ink != "blank":
                outputs[out_dir / "crops" / safe_name(s.student_id) / f"{f.address}.png"] = f.crop
        marks_rows += rows
        review += notes
    outputs[out_dir / "marks.csv"] = marks_csv(marks_rows).encode()
    summary = {"sheet": layout.sheet, "pages_read": count, "students": [
        {"student_id": s.student_id, "pages_seen": sorted(s.pages), "pages": layout.pages} for s in ordered],
        "review": review}
    outputs[out_dir / "summary.json"] = (json.dumps(summary, indent=1, ensure_ascii=False) + "\n").encode()
    outputs[out_dir / "summary.md"] = summary_md(summary).encode()
    drop = _earlier(out_dir) if force and out_dir.exists() else set()
    written = write_files(outputs, folders=[out_dir] if drop else [], drop=drop)
    return ScanResult(out_dir, ordered, review, count, written)


def _earlier(out_dir: Path) -> set[Path]:
    """--force: every file an earlier scan wrote there, replaced whole (a stale answer file of a student
    not in this scan must not be graded); a folder holding anything else is refused."""
    ours = {"answers", "crops", "pages", "marks.csv", "summary.json", "summary.md"}
    others = [p.name for p in out_dir.iterdir() if p.name not in ours]
    if others:
        raise ScanError(f"--out {out_dir}: holds {others[0]}, which scan did not write; choose another folder")
    return {p for p in out_dir.rglob("*") if p.is_file()}


def answer_file(key, layout: Layout, s: Student, out_dir: Path) -> tuple[str, list, list[str]]:
    """The answer template of the student's problems, filled with what was read."""
    problems = key.variants.get(s.student_id) if key.variants else key.problems
    if problems is None:
        problems = next(iter(key.variants.values()))
    reads = {f.address: f for reads in s.pages.values() for f in reads}
    parts = {f"q{n}.{part.id}": part for n, p in enumerate(problems, 1) for part in p.parts}
    text = keys.answer_template(problems, title=key.title, student_id=s.student_id, name=s.name, sheet=layout.sheet)
    lines, table, rows, notes = [], "", [], []
    seen = ", ".join(map(str, sorted(s.pages))) or "none"
    for line in text.splitlines():
        m = re.match(r"^\[(q\d+)\]", line)
        if m:
            table = m.group(1)
        m = re.match(r'^("?[^=]+?"?) = ""$', line)
        if line.startswith("student_id = "):
            lines.append(f"# scanned by examprep scan: pages {seen} of {layout.pages}")
        if m and table:
            part = json.loads(m.group(1)) if m.group(1).startswith('"') else m.group(1)
            address = f"{table}.{part}"
            f = reads.get(address)
            if f is None:
                line += f"  {SCAN_REVIEW}: its page was not scanned"
            elif f.review:
                line += f"  {SCAN_REVIEW}: {f.review}"
                notes.append(f"{s.student_id} {address}: {f.review} (pages/, left empty)")
            elif f.crop is not None:
                if f.ink == "written":
                    crop = f"crops/{safe_name(s.student_id)}/{address}.png"
                    written = next(fl.written for fl in layout.fields if fl.address == address)
                    if written:
                        line = f'{m.group(1)} = {json.dumps("[on paper: " + crop + "]")}  # scanned: marked by hand'
                        rows.append((s.student_id, s.name, address, crop))
                    else:
                        line += f"  {SCAN_REVIEW}: type the answer from {crop}"
                        notes.append(f"{s.student_id} {address}: type the answer from {crop}")
            elif f.value:
                value = f.value
                if parts[address].kind == "choice":          # the bubble's letter → the choice as printed
                    value = parts[address].choices[ord(value) - 97]
                line = f"{m.group(1)} = {json.dumps(value)}  # scanned, confidence {f.confidence:.2f}"
        lines.append(line)
    return "\n".join(lines) + "\n", rows, notes


def marks_csv(rows: list) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["student_id", "name", "part", "points", "comment", "answer"])
    for sid, name, address, crop in rows:
        w.writerow([sid, name, address, "", "", crop])
    return buf.getvalue()


def summary_md(summary: dict) -> str:
    lines = [f"# Scan of sheet {summary['sheet']}", "", f"{summary['pages_read']} pages read.", "",
             "| student | pages seen |", "|---|---|"]
    lines += [f"| {s['student_id']} | {', '.join(map(str, s['pages_seen']))} of {s['pages']} |" for s in summary["students"]]
    lines += ["", "## For review", ""] + [f"- {r}" for r in summary["review"]] + ([] if summary["review"] else ["(none)"])
    return "\n".join(lines) + "\n"
