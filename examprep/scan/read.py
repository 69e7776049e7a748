"""Reading one scanned page: its QR code (OpenCV's detector), its alignment (a homography from the
QR code's corners, refined on the four corner markers), every bubble's fill and every box's ink.

Nothing is guessed: a bubble is "marked" (ink over MARKED of its inner disc), "empty" (under EMPTY,
and not shaded) or "doubtful" (partial, faint, erased); ink in a ring around a bubble (a circled
choice) makes it doubtful too. A field with a doubtful bubble, two marks in one column, or a gap
inside its digits is left for a person, with its reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from examprep.render.scannable import MARKER, MARKERS, QR_SIZE, QR_X, QR_Y, R, Field, PageId, parse_payload

MARKED, EMPTY, SHADE = 0.45, 0.12, 0.12     # inner-disc ink fraction: marked / empty; mean darkness: faint
RING = 0.22                                 # ink fraction in the ring around a bubble: circled
BOX_BLANK, BOX_INK = 0.002, 0.008           # a box's ink fraction: below blank, above written, between: review


def cv2_module():
    import cv2      # heavy and optional (the scan extra): loaded only by scan

    return cv2


@dataclass
class FieldRead:
    address: str
    value: str = ""                 # the value read ("" blank); None-like states go in review
    review: str = ""                # why a person must look ("" none)
    confidence: float = 1.0
    crop: bytes | None = None       # PNG of a box
    ink: str = ""                   # boxes: "blank", "written", "doubtful"
    marks: list = field(default_factory=list)   # (x, y, state) in image pixels, for the annotated page


@dataclass
class PageRead:
    source: str
    image: np.ndarray | None
    page_id: PageId | None = None
    problem: str = ""               # why the page could not be read ("" read)
    fields: list[FieldRead] = field(default_factory=list)
    homography: np.ndarray | None = None


def find_qr(gray: np.ndarray) -> tuple[str, np.ndarray] | None:
    """The QR code's text and its four corners (QR's own order: top-left, top-right, bottom-right,
    bottom-left of the code, whatever the page's rotation), or None.

    Looked for where it is printed first (the top-left corner, or the bottom-right of a page scanned
    upside down), in a copy about 830 pixels wide (3 pixels a module at least): a tenth of the time
    of the whole page at full resolution; then the other corners, the whole page, full resolution."""
    cv2 = cv2_module()
    detector = cv2.QRCodeDetector()
    h, w = gray.shape
    small = min(1.0, 830 / w)
    ch, cw = h // 3, w // 2
    tries = [(0, 0, ch, cw, small), (h - ch, w - cw, ch, cw, small), (0, 0, ch, cw, 1.0), (h - ch, w - cw, ch, cw, 1.0),
             (0, w - cw, ch, cw, small), (h - ch, 0, ch, cw, small), (0, 0, h, w, small), (0, 0, h, w, 1.0)]
    for y0, x0, hh, ww, scale in tries:
        img = gray[y0:y0 + hh, x0:x0 + ww]
        if scale != 1.0:
            img = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        text, points, _ = detector.detectAndDecode(img)
        if text and points is not None:
            return text, points.reshape(4, 2) / scale + (x0, y0)
    # a blurred, noisy, compressed scan: binarised (Otsu), and OpenCV's other detector (ArUco-based)
    for y0, x0, hh, ww, _ in tries[2:4] + tries[4:6]:
        img = cv2.threshold(gray[y0:y0 + hh, x0:x0 + ww], 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]
        for det in (detector, cv2.QRCodeDetectorAruco()):
            text, points, _ = det.detectAndDecode(img)
            if text and points is not None:
                return text, points.reshape(4, 2) + (x0, y0)
    return None


def _marker_centre(gray: np.ndarray, guess: np.ndarray, side_px: float, ink: float) -> np.ndarray | None:
    cv2 = cv2_module()
    h, w = gray.shape
    half = int(side_px * 2.5)
    x0, y0 = max(int(guess[0]) - half, 0), max(int(guess[1]) - half, 0)
    x1, y1 = min(int(guess[0]) + half, w), min(int(guess[1]) + half, h)
    if x1 - x0 < side_px or y1 - y0 < side_px:
        return None
    window = (gray[y0:y1, x0:x1] < ink).astype(np.uint8)
    n, labels, stats, centres = cv2.connectedComponentsWithStats(window)
    best, best_d = None, None
    for k in range(1, n):
        area = stats[k, cv2.CC_STAT_AREA]
        if not 0.5 * side_px ** 2 <= area <= 1.6 * side_px ** 2:
            continue
        c = centres[k] + (x0, y0)
        d = float(np.hypot(*(c - guess)))
        if best_d is None or d < best_d:
            best, best_d = c, d
    return None if best is None or best_d > 2 * side_px else best


def align(gray: np.ndarray, qr_corners: np.ndarray, ink: float) -> np.ndarray | None:
    """Homography from layout points to image pixels; None when the markers are not where the QR
    code says (a page of another layout, a fold, a torn corner)."""
    cv2 = cv2_module()
    src = np.array([[QR_X, QR_Y], [QR_X + QR_SIZE, QR_Y], [QR_X + QR_SIZE, QR_Y + QR_SIZE], [QR_X, QR_Y + QR_SIZE]],
                   np.float32)
    # affine, not perspective, from the QR code: its corners are a few pixels off, and a perspective
    # fitted to a small square extrapolates those errors wildly across the page
    affine, _ = cv2.estimateAffine2D(src, qr_corners.astype(np.float32))
    if affine is None:
        return None
    coarse = np.vstack([affine, [0, 0, 1]])
    scale = float(np.sqrt(abs(np.linalg.det(coarse[:2, :2]))))     # pixels per point
    layout_pts, image_pts = [], []
    for mx, my in MARKERS:
        centre = np.array([mx + MARKER / 2, my + MARKER / 2], np.float32)
        guess = cv2.perspectiveTransform(centre.reshape(1, 1, 2), coarse).reshape(2)
        found = _marker_centre(gray, guess, MARKER * scale, ink)
        if found is None:
            return None
        layout_pts.append(centre)
        image_pts.append(found)
    return cv2.getPerspectiveTransform(np.array(layout_pts, np.float32), np.array(image_pts, np.float32))


def _to_image(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    cv2 = cv2_module()
    return cv2.perspectiveTransform(pts.reshape(-1, 1, 2).astype(np.float32), h).reshape(-1, 2)


def _bubble_state(gray: np.ndarray, cx: float, cy: float, r_px: float, paper: float, ink: float) -> tuple[str, float]:
    """("marked" | "empty" | "doubtful" | "ringed", margin to the nearest threshold)."""
    h, w = gray.shape
    ro = int(r_px * 1.75) + 2
    x0, y0, x1, y1 = int(cx) - ro, int(cy) - ro, int(cx) + ro + 1, int(cy) + ro + 1
    if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
        return "doubtful", 0.0
    patch = gray[y0:y1, x0:x1].astype(np.float32)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    d = np.hypot(xx - cx, yy - cy)
    inner = patch[d <= 0.6 * r_px]
    ring = patch[(d >= 1.3 * r_px) & (d <= 1.7 * r_px)]
    fill = float(np.mean(inner < ink))
    shade = float(1 - np.mean(inner) / paper)
    if fill >= MARKED:
        return "marked", min(1.0, (fill - MARKED) / (1 - MARKED) + 0.5)
    if float(np.mean(ring < ink)) >= RING:
        return "ringed", 0.0
    if fill <= EMPTY and shade <= SHADE:
        return "empty", min(1.0, (EMPTY - fill) / EMPTY * 0.5 + 0.5)
    return "doubtful", 0.0


def _read_grid(f: Field, states: dict) -> FieldRead:
    """A bubble field's value from its bubbles' states (column by column)."""
    out = FieldRead(f.address)
    columns: dict[str, list] = {}
    for b in f.bubbles:
        columns.setdefault(b.column, []).append((b.value, *states[b]))
    conf = min((c for col in columns.values() for _, _, c in col), default=1.0)
    out.confidence = round(conf, 2)
    picked: dict[str, str] = {}
    for name, col in columns.items():
        bad = [v for v, s, _ in col if s in ("doubtful", "ringed")]
        if bad:
            kind = "circled" if any(s == "ringed" for _, s, _ in col) else "faint, partial or erased"
            out.review = f"{kind} bubble in column {name} ({', '.join(bad)})"
            return out
        marked = [v for v, s, _ in col if s == "marked"]
        if len(marked) > 1:
            out.review = f"double mark in column {name} ({', '.join(marked)})"
            return out
        picked[name] = marked[0] if marked else ""
    if f.kind == "choice":
        out.value = picked["choice"]
        return out
    prefix = "id" if f.kind == "id" else "d"
    digits = [picked[c] for c in sorted((c for c in columns if c.startswith(prefix) and c[len(prefix):].isdigit()),
                                        key=lambda c: int(c[len(prefix):]))]
    text = "".join(digits).strip()
    joined = "".join(d or " " for d in digits).strip()
    if " " in joined:
        out.review = "a gap between the digits"
        return out
    if not text:
        if any(picked.get(c) for c in ("sign", "point", "esign", "e")):
            out.review = "a sign, point or exponent without digits"
        return out
    if f.kind == "id":
        out.value = text
        return out
    first = next(i for i, d in enumerate(digits) if d)
    if f.kind == "number" and picked.get("point"):
        k = int(picked["point"]) - first               # the point after the k-th written digit
        if not 0 < k < len(text) + 1:
            out.review = "the point is outside the digits"
            return out
        text = text[:k] + ("." + text[k:] if k < len(text) else "")
    sign = "-" if picked.get("sign") else ""
    exponent = picked.get("e", "")
    if picked.get("esign") and not exponent:
        out.review = "an exponent sign without its digit"
        return out
    out.value = sign + text + (f"e{'-' if picked.get('esign') else ''}{exponent}" if exponent else "")
    return out


def read_page(gray: np.ndarray, layout_for, source: str) -> PageRead:
    """Read one page (grayscale uint8). ``layout_for(page_id)`` gives the Layout the QR code names,
    or a reason (str) the page is not this scan's."""
    cv2 = cv2_module()
    page = PageRead(source, gray)
    qr = find_qr(gray)
    if qr is None:
        page.problem = "no readable QR code"
        return page
    page.page_id = parse_payload(qr[0])
    if page.page_id is None:
        page.problem = "a QR code that is not an examprep answer sheet's (or fails its checksum)"
        return page
    layout = layout_for(page.page_id)
    if isinstance(layout, str):
        page.problem = layout
        return page
    paper = float(np.percentile(gray[::4, ::4], 90))     # the paper's grey (every 16th pixel: enough)
    ink = 0.55 * paper
    h = align(gray, qr[1], ink)
    if h is None:
        page.problem = "corner markers not found where the QR code places them"
        return page
    page.homography = h
    scale = float(np.sqrt(abs(np.linalg.det(h[:2, :2]))))
    for f in layout.fields:
        if f.page != page.page_id.page:
            continue
        if f.kind == "box":
            page.fields.append(_read_box(gray, h, f, paper, ink, cv2))
            continue
        centres = _to_image(h, np.array([[b.x, b.y] for b in f.bubbles]))
        states = {}
        for b, (cx, cy) in zip(f.bubbles, centres):
            states[b] = _bubble_state(gray, cx, cy, R * scale, paper, ink)
        read = _read_grid(f, states)
        read.marks = [(float(cx), float(cy), states[b][0]) for b, (cx, cy) in zip(f.bubbles, centres)]
        page.fields.append(read)
    return page


def _read_box(gray, h, f: Field, paper: float, ink: float, cv2) -> FieldRead:
    out = FieldRead(f.address)
    inset = 5.0
    top = f.y + 12.0            # scannable.LABEL: the box starts under its label
    w_pt, h_pt = f.w - 2 * inset, f.h - 12.0 - 2 * inset
    px = 150 / 72               # crops at 150 dpi
    dst = np.array([[0, 0], [w_pt * px, 0], [w_pt * px, h_pt * px], [0, h_pt * px]], np.float32)
    src = np.array([[f.x + inset, top + inset], [f.x + f.w - inset, top + inset],
                    [f.x + f.w - inset, top + f.h - 12.0 - inset], [f.x + inset, top + f.h - 12.0 - inset]], np.float32)
    m = cv2.getPerspectiveTransform(_to_image(h, src), dst)
    crop = cv2.warpPerspective(gray, m, (int(w_pt * px), int(h_pt * px)), borderValue=255)
    frac = float(np.mean(crop < ink))
    out.crop = cv2.imencode(".png", crop)[1].tobytes()
    out.ink = "blank" if frac < BOX_BLANK else "written" if frac > BOX_INK else "doubtful"
    if out.ink == "doubtful":
        out.review = f"a box with a little ink ({frac:.2%}): blank or a faint answer?"
    corners = _to_image(h, np.array([[f.x, top], [f.x + f.w, top + f.h - 12.0]]))
    out.marks = [(float(corners[0][0]), float(corners[0][1]), "box"), (float(corners[1][0]), float(corners[1][1]), out.ink)]
    return out
