"""Per-student variants: rosters and secrets read with clear errors; each student's seed is
HMAC-SHA256 of an unambiguous encoding (recomputed here independently; the key is the stretched
secret, see test_secrets.py); variants differ between students, are reproduced from the secret,
and the grader finds each student's by id."""
import base64
import hashlib
import hmac
import struct

import pytest
from hypothesis import given, strategies as st

from examprep import sheets
from examprep.sheets import SheetError, Student

SECRET = b"5d2e8a41c09f7b36e4d1a8c2b7f03e95a6c4d2e1f0b9a8c7d6e5f4a3b2c1d0e9"
OTHER = b"5d2e8a41c09f7b36e4d1a8c2b7f03e95a6c4d2e1f0b9a8c7d6e5f4a3b2c1d0e8"


def reference_digest(secret: bytes, sheet_id: str, student_id: str) -> bytes:
    """The documented construction, written out: tag, then each field with a 4-byte length."""
    msg = b"examprep-sheet-variant"
    for field in (sheet_id, student_id):
        raw = field.encode("utf-8")
        msg += struct.pack(">I", len(raw)) + raw
    return hmac.new(secret, msg, hashlib.sha256).digest()


def test_seed_and_code_follow_the_documented_hmac():
    digest = reference_digest(SECRET, "midterm-7", "s1001")
    seed, code = sheets.variant_seed(SECRET, "midterm-7", "s1001")
    assert seed == int.from_bytes(digest[:6], "big")
    raw = base64.b32encode(digest[16:21]).decode()
    assert code == f"{raw[:4]}-{raw[4:]}"


@given(st.text(max_size=8), st.text(max_size=8), st.text(max_size=8), st.text(max_size=8))
def test_encoding_is_unambiguous(a, b, c, d):
    # different (sheet, student) pairs never share a message: ("ab", "c") vs ("a", "bc") and alike
    if (a, b) != (c, d):
        assert sheets.variant_digest(SECRET, a, b) != sheets.variant_digest(SECRET, c, d)


ROSTER = [Student("s1", "Ada Lovelace"), Student("s2", "Alan Turing"), Student("s3", "Grace Hopper")]


def _values(problems):
    return [p.params for p in problems]


def test_variants_differ_between_students_and_are_reproduced_from_the_secret():
    recipe = sheets.load_recipe("cnn")
    a = sheets.build_sheet(recipe, 5, roster=ROSTER, secret=SECRET)
    b = sheets.build_sheet(recipe, 5, roster=ROSTER, secret=SECRET)
    other = sheets.build_sheet(recipe, 5, roster=ROSTER, secret=OTHER)
    vals = [_values(c.problems) for c in a.copies]
    assert all(vals[i] != vals[j] for i in range(3) for j in range(i))
    assert vals == [_values(c.problems) for c in b.copies]
    assert all(x != y for x, y in zip(vals, [_values(c.problems) for c in other.copies]))
    codes = [c.code for c in a.copies]
    assert len(set(codes)) == 3 and all(len(c) == 9 and c[4] == "-" for c in codes)
    # the printed code is not the seed, nor any part of it
    for c in a.copies:
        assert str(c.problems[0].seed) not in c.code


def test_key_holds_every_variant_and_the_grader_picks_it_by_id():
    from examprep.grading import problems_for

    sheet = sheets.build_sheet(sheets.load_recipe("cnn"), 5, roster=ROSTER, secret=SECRET)
    key = sheets.make_key(sheet)
    assert key.problems == [] and set(key.variants) == {"s1", "s2", "s3"}
    assert key.variant_codes == {c.student.id: c.code for c in sheet.copies}
    for copy in sheet.copies:
        problems, code, warning = problems_for(key, copy.student.id)
        assert [p.params for p in problems] == _values(copy.problems) and code == copy.code and not warning


def test_roster_and_secret_go_together():
    recipe = sheets.load_recipe("cnn")
    with pytest.raises(SheetError, match="--roster needs --secret-file"):
        sheets.build_sheet(recipe, 1, roster=ROSTER)
    with pytest.raises(SheetError, match="only used with --roster"):
        sheets.build_sheet(recipe, 1, secret=SECRET)


@pytest.mark.parametrize("text, expected", [
    ("id,name\ns1,Ada\ns2,Alan\n", [("s1", "Ada"), ("s2", "Alan")]),
    ("Student ID;First name;Last name\n 7 ;Ada;Lovelace\n\n8;Alan;Turing\n", [("7", "Ada Lovelace"), ("8", "Alan Turing")]),
    ("\ufeffID number,Email address\nA-1,a@x.org\n", [("A-1", "")]),
    ('sid\t"name, full"\nx\tq\n', [("x", "")]),
    ('id,name\ns1,"Lovelace, Ada"\ns2,Alan,,\n', [("s1", "Lovelace, Ada"), ("s2", "Alan")]),   # empty trailing cells
])
def test_rosters_in_common_shapes(tmp_path, text, expected):
    f = tmp_path / "roster.csv"
    f.write_text(text, encoding="utf-8")
    assert [(s.id, s.name) for s in sheets.read_roster(f)] == expected


@pytest.mark.parametrize("text, message", [
    ("name,email\nAda,a@x\n", r"roster.csv:1: no id column; the header row has 'name', 'email'"),
    ("id,name\ns1,Ada\ns2,Bob\ns1,Cy\n", r"roster.csv:4: duplicate student id 's1' \(also on line 2\)"),
    ("id,name\nS1,Ada\ns2,Bob\ns1,Cy\n",
     r"roster.csv:4: duplicate student id 's1' \('S1' differs only in case: their files would collide\) "
     r"\(also on line 2\)"),
    ("id,name\ns1,Ada\n,Bob\n", r"roster.csv:3: empty student id"),
    ("id,name\ns1,Ada\ns2,Lovelace, Ada\n",
     r"roster.csv:3: 3 fields, but the header row has 2 \(an unquoted comma inside a name\? put the cell in double "
     r"quotes\); extra: ' Ada'"),
    ("id;name\ns1;Ada;Lovelace\n", r"roster.csv:2: 3 fields, but the header row has 2 \(an unquoted semicolon"),
    ("", r"roster.csv: empty file"),
    ("id,name\n", r"roster.csv: no students"),
    # a name printed on the copy and in its answer file: an escape sequence or a bell reached both
    ("id;name\ns1;Ada\nh1;\x1b[31mRed\n", r"roster.csv:3: the name '\\x1b\[31mRed' holds a control character "
                                           r"\('\\x1b'\); it would be printed on the copy and in its answer file"),
    ("id,name,email\ns1,Ada,ada\x07@x.org\n", r"roster.csv:2: the email 'ada\\x07@x.org' holds a control character"),
    ("id,name\ns\x7f1,Ada\n", r"roster.csv:2: student id 's\\x7f1'… is not an id"),
])
def test_bad_rosters(tmp_path, text, message):
    f = tmp_path / "roster.csv"
    f.write_text(text)
    with pytest.raises(SheetError, match=message):
        sheets.read_roster(f)


def test_missing_roster(tmp_path):
    with pytest.raises(SheetError, match="no such file"):
        sheets.read_roster(tmp_path / "nope.csv")


@pytest.mark.parametrize("content, message", [(None, "no such file"), (b"", "the file is empty"),
                                              (b"  \n", "the file is empty"), (b"short", "not a random secret")])
def test_bad_secrets(tmp_path, content, message):
    f = tmp_path / "secret.txt"
    if content is not None:
        f.write_bytes(content)
    with pytest.raises(SheetError, match=message):
        sheets.read_secret(f)


def test_secret_ignores_surrounding_whitespace(tmp_path):
    f = tmp_path / "secret.txt"
    f.write_bytes(SECRET + b"\n")
    assert sheets.read_secret(f) == SECRET
