"""The annotated page a person checks: green read marks, red what was left for review, blue boxes."""
from __future__ import annotations

import numpy as np

COLOURS = {"marked": (0, 160, 0), "empty": None, "doubtful": (0, 0, 230), "ringed": (0, 0, 230),
           "box": (200, 90, 0), "written": (200, 90, 0), "blank": (150, 150, 150), "doubtful-box": (0, 0, 230)}


def annotate(page, width: int = 900) -> bytes:
    """PNG of the page, scaled to ``width`` pixels, with what was read and what was doubtful."""
    import cv2

    gray = page.image
    if gray is None:
        gray = np.full((10, 10), 255, np.uint8)
    f = width / gray.shape[1]
    img = cv2.cvtColor(cv2.resize(gray, None, fx=f, fy=f, interpolation=cv2.INTER_AREA), cv2.COLOR_GRAY2BGR)
    for read in page.fields:
        if read.crop is not None and len(read.marks) == 2:
            (x0, y0, _), (x1, y1, ink) = read.marks
            colour = (0, 0, 230) if read.review else COLOURS.get(ink) or (150, 150, 150)
            cv2.rectangle(img, (int(x0 * f), int(y0 * f)), (int(x1 * f), int(y1 * f)), colour, 2)
            cv2.putText(img, f"{read.address}: {ink}", (int(x0 * f), int(y0 * f) - 3), cv2.FONT_HERSHEY_SIMPLEX, 0.4,
                        colour, 1)
            continue
        for x, y, state in read.marks:
            colour = COLOURS.get(state)
            if colour:
                cv2.circle(img, (int(x * f), int(y * f)), max(4, int(8 * f * 2)), colour, 2)
        if read.marks:          # the value or REVIEW over the field's label, cut to its width (summary.md: in full)
            x, y, _ = read.marks[0]
            span = max(m[0] for m in read.marks) - x
            text = "REVIEW: " + read.review if read.review else f"read {read.value or '(blank)'}"
            text = text[:max(8, int((span * f + 30) / 7))]
            org = (int(x * f) - 6, int(y * f) - 12)
            (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.4, 1)
            cv2.rectangle(img, (org[0] - 1, org[1] - th - 2), (org[0] + tw + 1, org[1] + 3), (255, 255, 255), -1)
            cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 230) if read.review else (0, 120, 0), 1)
    banner = (f"{page.source}: " + (f"NOT READ: {page.problem}" if page.problem else
                                   f"sheet {page.page_id.sheet} copy {page.page_id.copy} page {page.page_id.page}"
                                   f"/{page.page_id.pages}"))
    cv2.putText(img, banner, (10, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 230) if page.problem else (0, 120, 0), 1)
    return cv2.imencode(".png", img)[1].tobytes()
