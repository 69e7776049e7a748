"""Answer files in: TOML, JSON and class CSV; encodings; every kind of unreadable file reported
with its reason and never stopping the others."""
import json

import pytest

from examprep.answers.files import MAX_SUBMISSION_BYTES, collect, decode, read_file

TOML = '''student_id = "s1"
name = "Ada"
[q1]
probs = "[0.1, 0.2, 0.7]"
loss = 0.5
'''


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return p


def one(path):
    subs, errors = read_file(path)
    assert not errors, errors
    assert len(subs) == 1
    return subs[0]


def error_of(path):
    subs, errors = read_file(path)
    assert not subs and len(errors) == 1
    msg = str(errors[0])
    assert str(path) in msg and "\n" not in msg
    return msg


def test_toml_submission(tmp_path):
    s = one(write(tmp_path, "a.toml", TOML))
    assert (s.student_id, s.name, s.id_from) == ("s1", "Ada", "file")
    assert s.answers == {"q1": {"probs": "[0.1, 0.2, 0.7]", "loss": 0.5}}


def test_id_falls_back_to_the_file_name(tmp_path):
    s = one(write(tmp_path, "bob.toml", '[q1]\nloss = "1"\n'))
    assert (s.student_id, s.id_from) == ("bob", "filename")
    s = one(write(tmp_path, "carol.toml", 'student_id = ""\n[q1]\nloss = "1"\n'))
    assert s.student_id == "carol"


@pytest.mark.parametrize("data", [
    {"student_id": "s2", "q1": {"loss": "0.5"}},
    {"student_id": "s2", "answers": {"q1.loss": "0.5"}},
    {"student_id": "s2", "q1.loss": "0.5"},
])
def test_json_shapes(tmp_path, data):
    s = one(write(tmp_path, "a.json", json.dumps(data)))
    assert s.student_id == "s2"


def test_class_csv_one_row_per_student(tmp_path):
    csv = "student_id,name,Timestamp,q1.probs,q1.loss\ns1,Ada,2024-01-01,\"[0.1, 0.2, 0.7]\",0.5\n,,x,,1\n\n" \
          "s3,Cy,,0.1 0.2 0.7,\n"
    subs, errors = read_file(write(tmp_path, "class.csv", csv))
    assert not errors
    assert [s.student_id for s in subs] == ["s1", "class-row3", "s3"]
    assert subs[0].answers == {"q1.probs": "[0.1, 0.2, 0.7]", "q1.loss": "0.5"}
    assert subs[1].id_from == "row" and "row 3" in subs[1].source
    assert any("Timestamp" in w for w in subs[0].warnings)


def test_semicolon_csv_from_a_european_spreadsheet(tmp_path):
    subs, errors = read_file(write(tmp_path, "class.csv", "id;q1.loss\ns1;0,5\n"))
    assert not errors and subs[0].answers == {"q1.loss": "0,5"}      # the decimal comma is refused later


@pytest.mark.parametrize("encoding,prefix", [("utf-8", b"\xef\xbb\xbf"), ("utf-16-le", b"\xff\xfe"),
                                             ("utf-16-be", b"\xfe\xff"), ("utf-16-le", b""), ("cp1252", b""),
                                             ("latin-1", b"")])
def test_encodings(tmp_path, encoding, prefix):
    text = 'student_id = "Zoë"\n[q1]\nloss = "−0.5"\n' if encoding not in ("cp1252", "latin-1") else \
        'student_id = "Zoë"\n[q1]\nloss = "-0.5"\n'
    s = one(write(tmp_path, "z.toml", prefix + text.encode(encoding)))
    assert s.student_id == "Zoë"


@pytest.mark.parametrize("name,data,reason", [
    ("bad.toml", "[q1]\nloss = 0.5\nprobs = [0.1, \n", "invalid TOML"),
    ("bad2.toml", "[q1]\nloss = = 3\n", "line 2"),
    ("bad.json", '{"q1": {"loss": 0.5,}}', "invalid JSON at line 1, column"),
    ("bad.csv", 'student_id,q1.loss\n"s1,0.5\n', "invalid CSV"),
    ("empty.toml", "", "empty file"),
    ("blank.json", "   \n\n", "empty file"),
    ("bin.toml", bytes(range(256)) * 4, "binary"),
    ("nul.json", b'{"a": 1}\x00\x00\x00\x00\x01\x02\x03', "binary"),
    ("list.json", "[1, 2]", "one object per student"),
    ("num.json", "3", "expected a JSON object"),
    ("key.json", json.dumps({"format": "examprep-key", "format_version": 1, "problems": []}), "answer key"),
    ("header.csv", "student_id,q1.loss\n", "no student rows"),
])
def test_unreadable_files_say_why(tmp_path, name, data, reason):
    assert reason in error_of(write(tmp_path, name, data))


def test_malformed_toml_names_line_and_column(tmp_path):
    msg = error_of(write(tmp_path, "bad.toml", 'student_id = "a"\n[q1]\nloss = 0.5.5\n'))
    assert "line 3" in msg and "column" in msg


def test_one_megabyte_cap_per_submission_but_not_per_class_file(tmp_path):
    big = '[q1]\nloss = "' + "1" * (MAX_SUBMISSION_BYTES + 10) + '"\n'
    assert "limit" in error_of(write(tmp_path, "big.toml", big))
    rows = "".join(f"s{i},{'0.5' + ' ' * 100}\n" for i in range(12_000))      # > 1 MB in all
    subs, errors = read_file(write(tmp_path, "class.csv", "student_id,q1.loss\n" + rows))
    assert not errors and len(subs) == 12_000
    huge_row = "student_id,q1.loss\ns1,0.5\ns2," + "9" * (MAX_SUBMISSION_BYTES + 1) + "\ns3,0.5\n"
    subs, errors = read_file(write(tmp_path, "class2.csv", huge_row))
    assert [s.student_id for s in subs] == ["s1", "s3"] and len(errors) == 1 and "row 3" in str(errors[0])


def test_missing_file_and_directory(tmp_path):
    assert "no such file" in error_of(tmp_path / "nope.toml")
    files, notes = collect([tmp_path])
    assert files == []
    write(tmp_path, "a.toml", TOML)
    write(tmp_path, "notes.txt", "hello")
    write(tmp_path, ".hidden.toml", TOML)
    files, notes = collect([tmp_path])
    assert [f.name for f in files] == ["a.toml"]
    assert notes == [f"{tmp_path / '.hidden.toml'}: skipped (a hidden file)",            # never in silence (issue 14)
                     f"{tmp_path / 'notes.txt'}: skipped (not a .toml, .json or .csv answer file)"]


def test_decode_refuses_binary_even_when_it_is_valid_utf8():
    with pytest.raises(Exception, match="binary"):
        decode(b"\x01\x02\x03\x04\x05\x06" * 100, "x")
