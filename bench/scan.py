"""Benchmark of `examprep scan` at 200 dpi: pages read per second, and how many fields were read right.

A scannable class sheet (a roster of --students, three topics: numbers, integers, a choice, boxes)
is made, its answer pages rendered at 200 dpi with pypdfium2, each student fills the key's answers
with pen-like marks (the first also a double mark and an erased one, to show review), the pages are
rotated (±2°) and written as PNGs; then `examprep scan` reads them. Goal (issue 41): ≥ 2 pages/s on
2 cores. Baseline, measured in the same run: rendering the same pages from the PDF at 200 dpi.

Usage: python bench/scan.py [--students 10] [--picture docs/scan-page.png]
(--picture: the first annotated page, as docs/scan.md shows it).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2  # noqa: E402
import numpy as np  # noqa: E402
import pypdfium2 as pdfium  # noqa: E402

from examprep import sheets  # noqa: E402
from examprep.scan import run_scan  # noqa: E402

DPI = 200


def key_value(kind: str, part: dict) -> str:
    if kind == "choice":
        return "abcd"[part["choices"].index(part["expected"])]
    if kind == "integer":
        return str(int(part["expected"]))
    mantissa, exponent = f"{float(part['expected']):.2e}".split("e")
    return mantissa + (f"e{int(exponent)}" if int(exponent) else "")


def bubbles(field: dict, value: str) -> list[tuple[float, float]]:
    cols: dict = {}
    for x, y, col, v in field["bubbles"]:
        cols.setdefault(col, {})[v] = (x, y)
    if field["kind"] == "choice":
        return [cols["choice"][value]]
    out = []
    if value.startswith("-"):
        out.append(cols["sign"]["-"])
        value = value[1:]
    mantissa, _, exponent = value.partition("e")
    out += [cols[f"d{i}"][d] for i, d in enumerate(mantissa.replace(".", ""), 1)]
    if "." in mantissa:
        out.append(cols["point"][str(mantissa.index("."))])
    if exponent:
        if exponent.startswith("-"):
            out.append(cols["esign"]["-"])
            exponent = exponent[1:]
        out.append(cols["e"][exponent])
    return out


def pen(img, x, y, level=40):
    s = DPI / 72
    cv2.circle(img, (round(x * s), round(y * s)), round(4.5 * s), level, -1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, default=10)
    ap.add_argument("--picture", help="write the first annotated page here (PNG)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "roster.csv").write_text("id,name\n" + "".join(f"s{k:02d},Student {k}\n" for k in range(1, args.students + 1)))
        sheets.make_sheet(topics=["activation", "causal-mask", "network-shapes"], seed=3, roster=str(d / "roster.csv"),
                          formats="md", out=str(d / "class"), scannable=True)
        layout = json.loads((d / "class" / "scan-layout.json").read_text())
        key = json.loads((d / "class" / "key.json").read_text())
        t0 = time.perf_counter()
        doc = pdfium.PdfDocument(str(d / "class" / "answer-sheets.pdf"))
        pages = [doc[i].render(scale=DPI / 72, grayscale=True).to_numpy().copy() for i in range(len(doc))]
        render_s = time.perf_counter() - t0
        (d / "scans").mkdir()
        expected, rng = {}, np.random.default_rng(1)
        for i, img in enumerate(pages):
            copy, page = divmod(i, layout["pages"])
            sid = layout["copies"][copy]["student_id"]
            for f in layout["fields"]:
                if f["page"] != page + 1 or f["kind"] == "box":
                    continue
                q, part_id = f["address"].split(".", 1)
                part = next(p for p in key["variants"][sid][int(q[1:]) - 1]["parts"] if p["id"] == part_id)
                value = key_value(f["kind"], part)
                marks = bubbles(f, value)
                numbers = sum(1 for a, _ in expected.get(sid, {}).items() if a.startswith("q1."))
                # the first student's first two numbers: a second mark in a digit column, an erased (grey) mark
                doubt = copy == 0 and f["kind"] == "number" and numbers < 2
                for k, (x, y) in enumerate(marks):
                    pen(img, x, y, level=200 if doubt and numbers == 1 and k == len(marks) - 1 else 40)
                if doubt and numbers == 0:
                    x, y = marks[-1]
                    pen(img, x, y + (14 if y < 300 else -14))
                expected.setdefault(sid, {})[f["address"]] = None if doubt else (f["kind"], part, value)
            h, w = img.shape
            m = cv2.getRotationMatrix2D((w / 2, h / 2), float(rng.uniform(-2, 2)), 1.0)
            cv2.imwrite(str(d / "scans" / f"page{i + 1}.png"), cv2.warpAffine(img, m, (w, h), borderValue=40))
        t0 = time.perf_counter()
        result = run_scan([str(d / "scans")], str(d / "class" / "key.json"), str(d / "out"))
        scan_s = time.perf_counter() - t0
        right = total = flagged = 0
        for sid, values in expected.items():
            answers = tomllib.loads((d / "out" / "answers" / f"{sid}.toml").read_text())
            for address, want in values.items():
                q, part_id = address.split(".", 1)
                got = answers[q][part_id]
                total += 1
                if want is None:
                    flagged += got == ""
                    right += got == ""
                    continue
                kind, part, value = want
                right += (got == part["expected"]) if kind == "choice" else float(got) == float(value)
        n = len(pages)
        print(f"{n} pages at {DPI} dpi: scan {scan_s:.1f} s = {n / scan_s:.2f} pages/s (goal ≥ 2); "
              f"baseline, rendering them from the PDF: {n / render_s:.1f} pages/s (scan/render time {scan_s / render_s:.1f}×)")
        print(f"fields read right: {right}/{total} ({flagged} doubtful fields left empty and named for review); "
              f"review list: {len(result.review)} items")
        if args.picture:
            shutil.copyfile(d / "out" / "pages" / "0001.png", args.picture)
            print(f"wrote {args.picture}")


if __name__ == "__main__":
    main()
