"""Real pixels: a scannable class sheet is rendered with pypdfium2, bubbles are filled with pen-like
marks at the layout's positions, pages are distorted (rotation, 180° flips, scale, blur, noise, JPEG)
and scanned back; the answers must equal what was filled, doubtful marks must go to review."""
import csv
import io
import json
import subprocess
import sys

import pytest

cv2 = pytest.importorskip("cv2", reason="needs the optional extra 'scan' (opencv-python-headless)")
pdfium = pytest.importorskip("pypdfium2", reason="needs the optional extra 'scan' (pypdfium2)")
pytest.importorskip("segno", reason="needs the optional extra 'scan' (segno)")
import numpy as np  # noqa: E402

from examprep import sheets  # noqa: E402
from examprep.scan import run_scan  # noqa: E402
from examprep.sheets.variants import secret_file_bytes  # noqa: E402

DPI = 150


@pytest.fixture(scope="session")
def class_sheet(tmp_path_factory):
    d = tmp_path_factory.mktemp("scan")
    roster = d / "roster.csv"
    roster.write_text("id,name\n" + "".join(f"s{k:02d},Student {k}\n" for k in range(1, 11)))
    secret = d / "secret.txt"          # fixed: the same variants (and QR codes) on every run
    secret.write_bytes(secret_file_bytes("d1f3d7c25acde7be066b729a63b7c68bd20e43fbbfef4701e287e2f4d75e736d"))
    sheets.make_sheet(topics=["activation", "causal-mask"], seed=3, roster=str(roster), secret_file=str(secret),
                      formats="md", out=str(d / "class"), scannable=True)
    layout = json.loads((d / "class" / "scan-layout.json").read_text())
    pdf = pdfium.PdfDocument(str(d / "class" / "answer-sheets.pdf"))
    pages = [pdf[i].render(scale=DPI / 72, grayscale=True).to_numpy().copy() for i in range(len(pdf))]
    return d, layout, pages


def _bubbles_for(field, value):
    """Which bubbles a student fills to write ``value`` (written here from the sheet's printed rules)."""
    cols = {}
    for x, y, col, v in field["bubbles"]:
        cols.setdefault(col, {})[v] = (x, y)
    if field["kind"] == "choice":
        return [cols["choice"][value]]
    out = []
    if value.startswith("-"):
        out.append(cols["sign"]["-"])
        value = value[1:]
    mant, _, exp = value.partition("e")
    digits = mant.replace(".", "")
    for i, dgt in enumerate(digits, 1):
        out.append(cols[f"d{i}"][dgt])
    if "." in mant:
        out.append(cols["point"][str(mant.index("."))])
    if exp:
        if exp.startswith("-"):
            out.append(cols["esign"]["-"])
            exp = exp[1:]
        out.append(cols["e"][exp])
    return out


def _pen(img, x, y, fill=1.0, level=40):
    s = DPI / 72
    cv2.circle(img, (round(x * s), round(y * s)), max(1, round(4.6 * s * fill)), level, -1)


def _right(field, part):
    """The key's answer as a student fills the grid: 3 significant figures, ±d.dd×10^±e."""
    if field["kind"] == "choice":
        return "abcd"[part["choices"].index(part["expected"])]
    if field["kind"] == "integer":
        return str(int(part["expected"]))
    mantissa, exponent = f"{float(part['expected']):.2e}".split("e")
    return mantissa + (f"e{int(exponent)}" if int(exponent) else "")


def _answers(field, k, part):
    """Student k's answer: the key's for odd k, else a value the grid can hold, different per student."""
    if k % 2:
        return _right(field, part)
    if field["kind"] == "choice":
        return "ab"[k % 2]
    if field["kind"] == "integer":
        return str(100 + 37 * k)
    return f"{'-' if k % 2 else ''}{k % 9 + 1}.{(7 * k) % 10}{(3 * k) % 10}" + (f"e-{k % 3}" if k % 3 else "")


def _distort(img, rng, angle, flip, scale, sigma, quality):
    h, w = img.shape
    m = cv2.getRotationMatrix2D((w / 2, h / 2), angle + (180 if flip else 0), scale)
    out = cv2.warpAffine(img, m, (w, h), borderValue=30)           # a dark scanner margin
    if sigma:
        out = cv2.GaussianBlur(out, (0, 0), sigma)
    out = np.clip(out + rng.normal(0, 6, out.shape), 0, 255).astype(np.uint8)
    return cv2.imdecode(cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])[1], cv2.IMREAD_GRAYSCALE)


def _fill_class(layout, pages, rng, key):
    """Each student's pages filled; the values expected per student."""
    per_copy = layout["pages"]
    filled, expected = [], {}
    for c, copy in enumerate(layout["copies"]):
        sid = copy["student_id"]
        expected[sid] = {}
        for p in range(1, per_copy + 1):
            img = pages[c * per_copy + p - 1].copy()
            for f in layout["fields"]:
                if f["page"] != p or f["kind"] == "box":
                    continue
                q, part_id = f["address"].split(".", 1)
                part = next(pt for pt in key["variants"][sid][int(q[1:]) - 1]["parts"] if pt["id"] == part_id)
                value = _answers(f, c + 1, part)
                expected[sid][f["address"]] = value
                for x, y in _bubbles_for(f, value):
                    _pen(img, x, y, fill=rng.uniform(0.85, 1.0))
            filled.append(img)
    return filled, expected


def test_class_of_ten_scanned_grades_as_typed(class_sheet, tmp_path):
    d, layout, pages = class_sheet
    rng = np.random.default_rng(0)
    key = d / "class" / "key.json"
    filled, expected = _fill_class(layout, pages, rng, json.loads(key.read_text()))
    scans = tmp_path / "scans"
    scans.mkdir()
    for i, img in enumerate(filled, 1):     # distortions within the stated bounds, one page each
        out = _distort(img, rng, angle=rng.uniform(-3, 3), flip=i % 4 == 0, scale=rng.uniform(0.95, 1.05),
                       sigma=rng.uniform(0, 1), quality=int(rng.integers(60, 95)))
        cv2.imwrite(str(scans / f"page{i}.png"), out)
    result = run_scan([str(scans)], str(key), str(tmp_path / "out"))
    assert result.pages == len(filled)
    assert result.review == [], result.review
    # the typed answer files of the same answers (choices typed as their text) grade the same
    problems = json.loads(key.read_text())["variants"]
    typed = tmp_path / "typed"
    typed.mkdir()
    for sid, values in expected.items():
        lines, table = [f'student_id = "{sid}"', f'name = "Student {int(sid[1:])}"'], ""
        for address, value in sorted(values.items()):
            q, part = address.split(".", 1)
            if q != table:
                lines.append(f"[{q}]")
                table = q
            spec = next(pt for pt in problems[sid][int(q[1:]) - 1]["parts"] if pt["id"] == part)
            text = spec["choices"][ord(value) - 97] if spec["kind"] == "choice" else value
            lines.append(f"{part} = {json.dumps(text)}")
        (typed / f"{sid}.toml").write_text("\n".join(lines) + "\n")

    def grades(folder):
        run = subprocess.run([sys.executable, "-m", "examprep", "grade", str(key), str(folder), "--csv", "-",
                              "--no-details"], capture_output=True, text=True, check=True)
        rows = csv.DictReader(io.StringIO(run.stdout))
        return sorted(tuple((k, v) for k, v in row.items() if not v.endswith(".toml")) for row in rows)

    scanned = grades(tmp_path / "out" / "answers")
    assert len(scanned) == 10
    assert scanned == grades(typed)
    variants = json.loads(key.read_text())["variants"]
    for row in map(dict, scanned):         # who filled the key's answers earns every bubbled part's points
        if int(row["student_id"][1:]) % 2:
            bubbled = sum(pt["points"] for p in variants[row["student_id"]] for pt in p["parts"]
                          if pt["kind"] in ("number", "integer", "choice"))
            assert float(row["total"]) == pytest.approx(bubbled)


def test_doubtful_marks_go_to_review_never_guessed(class_sheet, tmp_path):
    """Double marks, faint (erased) fills and a circled choice are each named for review, the value left empty."""
    d, layout, pages = class_sheet
    img = pages[0].copy()
    fields = [f for f in layout["fields"] if f["page"] == 1 and f["kind"] in ("number", "integer", "choice")]
    double, faint = fields[0], fields[1]
    for x, y, col, v in double["bubbles"]:
        if col == "d1" and v in ("3", "4"):
            _pen(img, x, y)
    for x, y, col, v in faint["bubbles"]:
        if col == "d1" and v == "5":
            _pen(img, x, y, level=200)          # an erased mark: grey, not ink
    cv2.imwrite(str(tmp_path / "p1.png"), img)
    result = run_scan([str(tmp_path / "p1.png")], str(d / "class" / "key.json"), str(tmp_path / "out"))
    text = (tmp_path / "out" / "answers" / "s01.toml").read_text()
    joined = "\n".join(result.review)
    assert f"{double['address']}: double mark" in joined
    assert f"{faint['address']}: faint, partial or erased" in joined
    assert "page(s) 2 of 2 not scanned" in joined
    assert text.count("# scan: review") >= 2
    run = subprocess.run([sys.executable, "-m", "examprep", "grade", str(d / "class" / "key.json"),
                          str(tmp_path / "out" / "answers" / "s01.toml")], capture_output=True, text=True)
    assert "left for review by `examprep scan`" in run.stdout + run.stderr


@pytest.mark.slow
@pytest.mark.parametrize("inside", [True, False], ids=["inside-bounds", "beyond-bounds"])
def test_distortions_drawn_by_hypothesis_never_misread(class_sheet, tmp_path_factory, inside):
    """Inside the bounds (rotation ≤ 3°, flips, scale 95–105 %, blur σ ≤ 1, JPEG ≥ 60) every field of
    the first student is read right; beyond them (rotation to 8°, blur to 2.5, JPEG to 25) a field may
    be flagged (left empty) or the page refused, but a value read is the value filled."""
    from hypothesis import HealthCheck, given, settings, strategies as st

    d, layout, pages = class_sheet
    key = json.loads((d / "class" / "key.json").read_text())
    filled, expected = _fill_class(dict(layout, copies=layout["copies"][:1]), pages, np.random.default_rng(2), key)
    values = expected[layout["copies"][0]["student_id"]]
    hi_angle, hi_sigma, lo_quality = (3.0, 1.0, 60) if inside else (8.0, 2.5, 25)

    @settings(derandomize=True, max_examples=6, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(angle=st.floats(-hi_angle, hi_angle), flip=st.booleans(), scale=st.floats(0.95, 1.05),
           sigma=st.floats(0, hi_sigma), quality=st.integers(lo_quality, 95), seed=st.integers(0, 2 ** 16))
    def check(angle, flip, scale, sigma, quality, seed):
        rng = np.random.default_rng(seed)
        tmp = tmp_path_factory.mktemp("hyp")
        for i, img in enumerate(filled, 1):
            cv2.imwrite(str(tmp / f"p{i}.png"), _distort(img, rng, angle, flip, scale, sigma, quality))
        result = run_scan([str(tmp)], str(d / "class" / "key.json"), str(tmp / "out"))
        if inside:
            assert result.review == [], result.review
        answers = {}
        if result.students:
            import tomllib
            answers = tomllib.loads((tmp / "out" / "answers" / f"{result.students[0].student_id}.toml").read_text())
        for address, value in values.items():
            q, part = address.split(".", 1)
            got = answers.get(q, {}).get(part, "")
            if got == "" and not inside:
                continue                            # flagged or its page refused: allowed beyond the bounds
            spec = next(pt for pt in key["variants"][result.students[0].student_id][int(q[1:]) - 1]["parts"]
                        if pt["id"] == part)
            want = spec["choices"][ord(value) - 97] if spec["kind"] == "choice" else value
            assert got == want if spec["kind"] == "choice" else float(got) == float(want), (address, got, want)

    check()
