"""The scannable answer pages' geometry: where every bubble and box of every part lies, in PDF points
from the page's top-left corner, and what the QR code on each page says.

A copy's answer pages hold, in order: on its first page an ID grid (8 digit columns) when no roster
prints the student's name; then per part a field: a choice part one bubble per choice; an integer
part a sign bubble and 6 digit columns; a number part a sign bubble, 5 digit columns, a "point
after digit k" column (k = 1..4; none: no point), an exponent sign and one exponent digit (the value
is ±d₁…d₅ with the point × 10^±e); every other part (vectors, matrices, shapes, expressions,
written) a framed box, cropped for a person. Only the parts' kinds and choice counts decide the
geometry, so every variant of a question has the same pages (only the numbers differ), and the
layout's fingerprint (SHA-256 of the geometry) is the same for every copy.

The QR code (``qr_payload``) carries the sheet's printed id (never its seed), the copy number, the
page and page count, the layout fingerprint, the variant code and a checksum.
"""
from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass

from examprep.errors import ExamprepError
from examprep.render.pdf import compile_pdf

PAGE_W, PAGE_H = 595.28, 841.89          # A4 in points
MARKER = 16.0                             # side of the four corner squares
MARKERS = ((24.0, 24.0), (PAGE_W - 24.0 - MARKER, 24.0), (24.0, PAGE_H - 24.0 - MARKER),
           (PAGE_W - 24.0 - MARKER, PAGE_H - 24.0 - MARKER))
QR_X, QR_Y, QR_SIZE = 60.0, 50.0, 78.0
R = 5.0                                   # bubble radius
STEP = 14.0                               # bubble pitch
TOP, BOTTOM, LEFT, RIGHT = 150.0, PAGE_H - 60.0, 60.0, PAGE_W - 60.0
LABEL = 12.0                              # a field's label line
GAP = 12.0
ID_DIGITS = 8
INT_DIGITS = 6
NUM_DIGITS = 5
PAYLOAD_TAG = "EXS1"


@dataclass(frozen=True)
class Bubble:
    x: float
    y: float
    column: str         # "sign", "d1".., "point", "esign", "e", "choice", "id1"..
    value: str          # the digit, "-", the choice label, the point position


@dataclass(frozen=True)
class Field:
    address: str        # "q2.loss" (as grade names parts) or "student_id"
    kind: str           # "choice", "integer", "number", "box", "id"
    page: int           # 1-based
    x: float
    y: float
    w: float
    h: float
    label: str
    bubbles: tuple[Bubble, ...] = ()
    written: bool = False

    def to_json(self) -> dict:
        return {"address": self.address, "kind": self.kind, "page": self.page, "rect": [self.x, self.y, self.w, self.h],
                "label": self.label, "written": self.written,
                "bubbles": [[b.x, b.y, b.column, b.value] for b in self.bubbles]}

    @staticmethod
    def from_json(d: dict) -> "Field":
        x, y, w, h = d["rect"]
        return Field(d["address"], d["kind"], d["page"], x, y, w, h, d["label"],
                     tuple(Bubble(bx, by, c, v) for bx, by, c, v in d["bubbles"]), d.get("written", False))


@dataclass(frozen=True)
class Layout:
    sheet: str                       # the printed sheet id
    pages: int
    fields: tuple[Field, ...]
    copies: tuple[dict, ...]         # per copy (1-based by position): {"student_id", "name", "code"}

    @property
    def fingerprint(self) -> str:
        geometry = json.dumps([f.to_json() for f in self.fields], sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(geometry.encode()).hexdigest()[:12]

    @property
    def id_grid(self) -> bool:
        return any(f.kind == "id" for f in self.fields)

    def to_json(self) -> str:
        return json.dumps({"format": "examprep-scan-layout", "version": 1, "sheet": self.sheet, "pages": self.pages,
                           "fingerprint": self.fingerprint, "page_size": [PAGE_W, PAGE_H],
                           "markers": [[x, y, MARKER] for x, y in MARKERS], "qr": [QR_X, QR_Y, QR_SIZE],
                           "fields": [f.to_json() for f in self.fields], "copies": list(self.copies)}, indent=1) + "\n"

    @staticmethod
    def from_json(text: str) -> "Layout":
        d = json.loads(text)
        if d.get("format") != "examprep-scan-layout":
            raise ValueError("not an examprep scan layout")
        return Layout(d["sheet"], d["pages"], tuple(Field.from_json(f) for f in d["fields"]), tuple(d["copies"]))


def _grid(address: str, kind: str, page: int, x: float, y: float, label: str, columns: list[tuple[str, list[str]]]) -> Field:
    """Columns of bubbles, one column per digit position, values top to bottom."""
    bubbles = []
    for c, (name, values) in enumerate(columns):
        for r, value in enumerate(values):
            bubbles.append(Bubble(x + R + c * STEP, y + LABEL + R + r * STEP, name, value))
    rows = max(len(v) for _, v in columns)
    return Field(address, kind, page, x, y, len(columns) * STEP, LABEL + rows * STEP, label, tuple(bubbles))


DIGITS = [str(d) for d in range(10)]


def _columns(kind: str) -> list[tuple[str, list[str]]]:
    if kind == "integer":
        return [("sign", ["-"])] + [(f"d{i}", DIGITS) for i in range(1, INT_DIGITS + 1)]
    return ([("sign", ["-"])] + [(f"d{i}", DIGITS) for i in range(1, NUM_DIGITS + 1)]
            + [("point", [str(k) for k in range(1, NUM_DIGITS)]), ("esign", ["-"]), ("e", DIGITS)])


def field_kind(part) -> str:
    if part.kind == "choice" and part.choices:
        return "choice"
    if part.kind in ("integer", "number"):
        return part.kind
    return "box"


def build_layout(problems: list, sheet: str, copies: list[dict], id_grid: bool) -> Layout:
    """The answer pages of one copy's ``problems`` (every copy of a sheet shares them)."""
    fields: list[Field] = []
    page, x, y, row_h = 1, LEFT, TOP, 0.0

    def place(w: float, h: float) -> tuple[int, float, float]:
        nonlocal page, x, y, row_h
        if x + w > RIGHT:                          # next row
            x, y, row_h = LEFT, y + row_h + GAP, 0.0
        if y + h > BOTTOM:                         # next page
            page, x, y, row_h = page + 1, LEFT, TOP, 0.0
        at = (page, x, y)
        x, row_h = x + w + 2 * GAP, max(row_h, h)
        return at

    if id_grid:
        cols = [(f"id{i}", DIGITS) for i in range(1, ID_DIGITS + 1)]
        p, fx, fy = place(len(cols) * STEP, LABEL + 10 * STEP)
        fields.append(_grid("student_id", "id", p, fx, fy, "Student id (one digit per column)", cols))
        x = RIGHT + 1                              # the ID grid has its row alone
    for n, problem in enumerate(problems, 1):
        for i, part in enumerate(problem.parts):
            address, label = f"q{n}.{part.id}", f"{n}({chr(97 + i) if i < 26 else i})"
            kind = field_kind(part)
            if kind == "choice":               # one row per choice, its text beside it (per copy)
                n_choices = len(part.choices)
                x = RIGHT + 1
                p, fx, fy = place(RIGHT - LEFT, LABEL + n_choices * STEP)
                x = RIGHT + 1
                fields.append(Field(address, kind, p, fx, fy, RIGHT - LEFT, LABEL + n_choices * STEP, label,
                                    tuple(Bubble(fx + R, fy + LABEL + R + k * STEP, "choice", chr(97 + k))
                                          for k in range(n_choices))))
            elif kind in ("integer", "number"):
                cols = _columns(kind)
                p, fx, fy = place(len(cols) * STEP, LABEL + 10 * STEP)
                hint = "   ± digits .k E± e" if kind == "number" else "   ± digits"
                fields.append(_grid(address, kind, p, fx, fy, label + hint, cols))
            else:
                h = 110.0 if part.kind == "written" else 56.0
                x = RIGHT + 1                      # a box has a row of its own
                p, fx, fy = place(RIGHT - LEFT, h)
                x = RIGHT + 1
                fields.append(Field(address, "box", p, fx, fy, RIGHT - LEFT, h, label, (), part.kind == "written"))
    return Layout(sheet, max((f.page for f in fields), default=1), tuple(fields), tuple(copies))


def checksum(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()[:6]


def qr_payload(layout: Layout, copy: int, page: int, code: str) -> str:
    body = f"{PAYLOAD_TAG}|{layout.sheet}|{copy}|{page}/{layout.pages}|{layout.fingerprint}|{code}"
    return f"{body}|{checksum(body)}"


@dataclass(frozen=True)
class PageId:
    sheet: str
    copy: int
    page: int
    pages: int
    fingerprint: str
    code: str


def parse_payload(text: str) -> PageId | None:
    """The page identity a QR code says, or None for a code that is not ours or fails its checksum."""
    parts = text.split("|")
    if len(parts) != 7 or parts[0] != PAYLOAD_TAG or checksum("|".join(parts[:6])) != parts[6]:
        return None
    try:
        page, pages = (int(v) for v in parts[3].split("/"))
        return PageId(parts[1], int(parts[2]), page, pages, parts[4], parts[5])
    except ValueError:
        return None


def _qr_svg(payload: str) -> str:
    """The QR code as SVG (segno: the scan extra; nothing fetched)."""
    try:
        import segno
    except ImportError:
        raise ScanExtraMissing("--scannable") from None
    buf = io.BytesIO()
    segno.make(payload, error="m").save(buf, kind="svg", xmldecl=False, svgns=True, border=0, dark="#000")
    return buf.getvalue().decode()


class ScanExtraMissing(ExamprepError):
    """The optional extra `scan` is not installed (segno, OpenCV, pypdfium2)."""

    def __init__(self, what: str):
        super().__init__(f"{what} needs the optional extra 'scan': pip install 'examprep[scan]'")


def _typst_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _at(x: float, y: float, body: str) -> str:
    return f"#place(top + left, dx: {x:.2f}pt, dy: {y:.2f}pt, {body})"


def typst_source(layout: Layout, title: str, choices: list[dict[str, tuple]] | None = None) -> str:
    """Typst source of every copy's answer pages (absolute positions: what the layout says is
    where the ink is). ``title`` is printed as text, never markup. ``choices``: per copy, each choice
    part's texts by address (printed beside its bubbles: a variant's texts may differ, never their count)."""
    out = [f"#set page(width: {PAGE_W}pt, height: {PAGE_H}pt, margin: 0pt)", "#set text(size: 8pt)"]
    first = True
    for c, copy in enumerate(layout.copies, 1):
        for page in range(1, layout.pages + 1):
            if not first:
                out.append("#pagebreak()")
            first = False
            for mx, my in MARKERS:
                out.append(_at(mx, my, f"rect(width: {MARKER}pt, height: {MARKER}pt, fill: black)"))
            svg = _qr_svg(qr_payload(layout, c, page, copy.get("code", "")))
            out.append(_at(QR_X, QR_Y, f'image(bytes({_typst_string(svg)}), format: "svg", width: {QR_SIZE}pt)'))
            who = copy.get("name") or copy.get("student_id") or ""
            head = [title, f"Answer sheet {layout.sheet} · page {page} of {layout.pages}",
                    (f"{who} · variant {copy.get('code', '')}" if who else "Name: ______________________________"),
                    "Fill bubbles fully with a dark pen; write the other answers inside the boxes."]
            for k, line in enumerate(head):
                size = "11pt" if k == 0 else "8pt"
                out.append(_at(QR_X + QR_SIZE + 16, QR_Y + 4 + 16 * k, f"text(size: {size}, {_typst_string(line)})"))
            for f in layout.fields:
                if f.page != page:
                    continue
                out.append(_at(f.x, f.y, f"text(size: 7pt, weight: \"bold\", {_typst_string(f.label)})"))
                if f.kind == "box":
                    out.append(_at(f.x, f.y + LABEL, f"rect(width: {f.w:.2f}pt, height: {f.h - LABEL:.2f}pt, "
                                                     "stroke: 0.8pt + black)"))
                texts = (choices[c - 1] if choices else {}).get(f.address, ())
                for k, b in enumerate(f.bubbles if f.kind == "choice" else ()):
                    if k < len(texts):
                        out.append(_at(b.x + 2 * R, b.y - R + 1, f"text(size: 7pt, {_typst_string(texts[k])})"))
                for b in f.bubbles:
                    out.append(_at(b.x - R, b.y - R, f"circle(radius: {R}pt, stroke: 0.5pt + luma(120))"))
                    out.append(_at(b.x - R, b.y - R, f"box(width: {2 * R}pt, height: {2 * R}pt, align(center + horizon, "
                                                     f"text(size: 5pt, fill: luma(175), {_typst_string(_mark(b))})))"))
    return "\n".join(out) + "\n"


def _mark(b: Bubble) -> str:
    if b.column == "point":
        return "." + b.value
    return b.value


SCANNABLE_FILES = ("answer-sheets.pdf", "scan-layout.json")


def scannable_check() -> None:
    """Before any work: the scan extra is there (one line naming it otherwise)."""
    try:
        import segno  # noqa: F401
    except ImportError:
        raise ScanExtraMissing("sheet --scannable") from None


def scannable_outputs(sheet) -> dict[str, bytes]:
    """The answer pages of every copy (answer-sheets.pdf) and their layout (scan-layout.json).
    The problems PDF is not touched: a sheet printed without --scannable is the same byte for byte."""
    copies = [{"student_id": c.student.id if c.student else "", "name": (c.student.name if c.student else "") or "",
               "code": c.code} for c in sheet.copies]
    layout = build_layout(sheet.copies[0].problems, sheet.printed_id, copies, id_grid=not sheet.variants)
    choices = [{f"q{n}.{part.id}": tuple(part.choices) for n, p in enumerate(c.problems, 1) for part in p.parts
                if field_kind(part) == "choice"} for c in sheet.copies]
    return {"answer-sheets.pdf": compile_pdf(typst_source(layout, sheet.recipe.title, choices)),
            "scan-layout.json": layout.to_json().encode()}
