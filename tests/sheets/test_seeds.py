"""A sheet's seed rebuilds its key, so a sheet made without --seed draws 63 random bits and its
copies never print them: every output a student or an LMS sees (both PDFs and Markdown files, the
answer template, the Moodle, QTI, Canvas and Blackboard exports) names the sheet by a printed id
that is a hash of the seed; key.json and the instructor's terminal (stderr) keep the seed, and
`--seed` with it rebuilds the same files. A seed a user types below 2³² is printed as before."""
import hashlib
import io
import json
import secrets
import struct
import zipfile
from base64 import b32encode

import pytest
from typer.testing import CliRunner

from examprep import keys, sheets
from examprep.cli import app
from examprep.sheets.build import fresh_seed, printed_id
from tests.sheets.helpers import pdf_text

runner = CliRunner()
SEED = 0x5EED_C0DE_1234_5678          # 63 bits, as a fresh draw gives
FORMATS = "pdf,md,moodle,qti21,canvas,blackboard,blackboard-txt"


def _reference_id(name: str, seed: int) -> str:
    """The documented printed id, written here with hashlib alone."""
    msg = b"examprep-sheet-id"
    for field in (name.encode(), str(seed).encode()):
        msg += struct.pack(">I", len(field)) + field
    code = b32encode(hashlib.sha256(msg).digest()[:5]).decode()
    return f"{name}-{code[:4]}-{code[4:]}"


def _texts(folder):
    """Every output file's text as a reader sees it: PDFs through pypdf (and their raw bytes, for
    metadata), zips member by member."""
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        if path.suffix == ".zip":
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                for member in z.namelist():
                    yield f"{path.name}:{member}", z.read(member).decode("utf-8", "replace")
        elif path.suffix == ".pdf":
            yield path.name, pdf_text(data)[0] + data.decode("latin-1")
        else:
            yield path.name, data.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """A sheet made without --seed, in every format; the draw is fixed (SEED, after a small one
    fresh_seed must draw again) so that the test is the same on every run."""
    draws = [7, SEED]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(secrets, "randbits", lambda bits: draws.pop(0) if bits == 63 else pytest.fail(f"{bits} bits"))
        out = tmp_path_factory.mktemp("fresh") / "o"
        res = runner.invoke(app, ["sheet", "-t", "conv2d,softmax-cross-entropy", "-f", FORMATS, "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert not draws
    return out, res


def test_a_fresh_seed_is_kept_in_the_key_and_shown_only_on_stderr(fresh):
    out, res = fresh
    meta = json.loads((out / "key.json").read_text())["meta"]
    assert meta["seed"] == SEED and meta["sheet_id"] == f"practice-{SEED}"
    assert meta["printed_id"] == _reference_id("practice", SEED)
    assert str(SEED) in res.stderr and f"--seed {SEED}" in res.stderr
    assert str(SEED) not in res.stdout and meta["printed_id"] in res.stdout


def test_no_printed_output_holds_the_seed_or_a_problems_seed(fresh):
    out, _ = fresh
    texts = dict(_texts(out))
    assert {"problems.pdf", "problems.md", "answers.toml", "moodle.xml", "blackboard.txt"} <= set(texts)
    assert any(name.startswith("qti21.zip:") for name in texts) and any(n.startswith("canvas.zip:") for n in texts)
    leaks = {name for name, text in texts.items() if name != "key.json"
             for s in (SEED, SEED + 1) if str(s) in text or str(s)[:12] in text}
    assert not leaks
    assert str(SEED) in texts["key.json"]
    printed = _reference_id("practice", SEED)
    for name in ("problems.md", "solutions.md", "problems.pdf", "solutions.pdf"):   # the footer and header name it
        assert printed in texts[name].replace("\n", ""), name


def test_the_keys_seed_rebuilds_the_same_files(fresh, tmp_path):
    out, _ = fresh
    res = runner.invoke(app, ["sheet", "-t", "conv2d,softmax-cross-entropy", "-f", FORMATS, "-o", str(tmp_path / "r"),
                              "--seed", str(SEED)])
    assert res.exit_code == 0, res.output
    # (qti21.zip is left out: a second QTI export in one process writes "ns0:" prefixes, since the
    # Canvas export re-registers ElementTree's default namespace; a fresh process writes the same bytes)
    for name in ("key.json", "problems.md", "solutions.md", "answers.toml", "moodle.xml", "blackboard.txt", "blackboard.zip",
                 "canvas.zip"):
        assert (tmp_path / "r" / name).read_bytes() == (out / name).read_bytes(), name
    key = keys.read_key(out / "key.json")
    assert [p.seed for p in key.problems] == [SEED, SEED + 1]


def test_a_typed_small_seed_is_printed_as_before(tmp_path):
    res = runner.invoke(app, ["sheet", "-t", "conv2d", "-f", "md,moodle", "-o", str(tmp_path / "o"), "--seed", "2024"])
    assert res.exit_code == 0 and "seed 2024; sheet practice-2024" in res.stdout and not res.stderr
    assert "sheet practice-2024" in (tmp_path / "o" / "problems.md").read_text()
    assert "seed 2024)" in (tmp_path / "o" / "moodle.xml").read_text()
    assert "printed_id" not in json.loads((tmp_path / "o" / "key.json").read_text())["meta"]


@pytest.mark.parametrize("seed, shown", [(0, "cnn-0"), (2 ** 32 - 1, f"cnn-{2 ** 32 - 1}"),
                                         (2 ** 32, _reference_id("cnn", 2 ** 32)), (SEED, _reference_id("cnn", SEED))])
def test_the_printed_id_hides_seeds_from_two_to_the_32(seed, shown):
    assert printed_id("cnn", seed) == shown
    sheet = sheets.build_sheet(sheets.load_recipe("cnn"), seed)
    assert sheet.printed_id == shown and sheet.sheet_id == f"cnn-{seed}"


def test_fresh_seeds_are_63_bits_and_never_small(monkeypatch):
    draws = [0, 2 ** 32 - 1, 2 ** 32]
    monkeypatch.setattr(secrets, "randbits", lambda bits: draws.pop(0) if bits == 63 else pytest.fail(f"{bits} bits"))
    assert fresh_seed() == 2 ** 32 and not draws


def test_a_rostered_sheet_with_a_fresh_seed_prints_the_printed_id(tmp_path, monkeypatch):
    monkeypatch.setattr(secrets, "randbits", lambda bits: SEED)
    from examprep.sheets import variants

    monkeypatch.setattr(variants, "SECRET_KDF", dict(variants.SECRET_KDF, n=2 ** 10))   # cheap: not tested here
    roster = [sheets.Student("s1", "Ada")]
    sheet = sheets.build_sheet(sheets.load_recipe("cnn"), fresh_seed(), roster=roster, secret=b"7c1e5b0a93d24f68e1b7a0c5d3f29e4a")
    from examprep.render.markdown import sheet_markdown

    assert str(SEED) not in sheet_markdown(sheet, solutions=True)
    assert sheets.make_key(sheet).meta["printed_id"] == _reference_id("cnn", SEED)


def test_a_key_with_a_secret_seed_grades_as_any_other(fresh, tmp_path):
    """(A guard: the key's new printed_id must not disturb grading.)"""
    out, _ = fresh
    key = keys.read_key(out / "key.json")
    answers = {f"q{n}": {part.id: part.expected for part in p.parts} for n, p in enumerate(key.problems, 1)}
    (tmp_path / "a.json").write_text(json.dumps({"student_id": "s1", **answers}))
    res = runner.invoke(app, ["grade", str(out / "key.json"), str(tmp_path / "a.json")])
    assert res.exit_code == 0, res.output
    total = sum(p.points for p in key.problems)
    assert f"{total:g}/{total:g}" in res.output.replace(" ", "")
