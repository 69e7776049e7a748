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


def one(path, *limits):
    subs, errors = read_file(path, *limits)
    assert not errors, errors
    assert len(subs) == 1
    return subs[0]


def error_of(path, *limits):
    subs, errors = read_file(path, *limits)
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
    ("zeros.toml", b"\x00" * 4, "binary"),                  # NULs and 0xFF bytes were called "empty file"
    ("ff.json", b"\x00\xff" * 100, "binary"),
    ("ff2.toml", b"\xff" * 300, "binary"),
    ("bom-blank.toml", b"\xff\xfe \x00\n\x00", "empty file"),      # UTF-16 spaces after a BOM are empty
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


# ----------------------------------------------------------------------------- issue 35 item 4: limits, streams

def roster_class_csv(n, parts=20, extra=""):
    """A class CSV as an LMS or a form exports it: id, name, email, a timestamp, ``parts`` answers."""
    head = "student_id,name,email,Timestamp," + ",".join(f"q{1 + k // 5}.p{k % 5}" for k in range(parts))
    rows = (f"s{i:05d},Student {i},s{i}@uni.example,2026-01-0{1 + i % 9} 10:{i % 60:02d}{extra},"
            + ",".join(f"{(i * 7 + k) % 100 / 10:g}" for k in range(parts)) for i in range(n))
    return head + "\n" + "\n".join(rows) + "\n"


def test_a_roster_sized_class_csv_never_hits_a_limit(tmp_path):
    from examprep.answers.files import DEFAULT_LIMITS

    path = write(tmp_path, "class.csv", roster_class_csv(5000))
    subs, errors = read_file(path)
    assert not errors and len(subs) == 5000 and subs[-1].student_id == "s04999"
    assert subs[-1].answers["q4.p4"] == f"{(4999 * 7 + 19) % 100 / 10:g}"
    assert path.stat().st_size * 10 < DEFAULT_LIMITS.class_bytes and 5000 * 10 < DEFAULT_LIMITS.class_rows
    items = [{"student_id": s.student_id, "answers": s.answers} for s in subs]
    subs2, errors = read_file(write(tmp_path, "class.json", json.dumps(items)))
    assert not errors and [s.answers for s in subs2] == [s.answers for s in subs]


def test_a_class_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from examprep.answers import files

    path = write(tmp_path, "class.csv", roster_class_csv(100))
    monkeypatch.setattr(files, "_read_csv", lambda *a: pytest.fail("read past the size limit"))
    subs, errors = read_file(path, files.Limits(class_bytes=2_000))
    assert not subs and str(errors[0]) == (f"{path}: {path.stat().st_size / 1e3:.0f} kB is over the 2 kB limit for a "
                                           "class file; raise it with --max-class-size")


def test_a_file_growing_past_the_limit_while_it_is_read_is_refused(tmp_path):
    from examprep.fileio import InputError, open_user_file

    path = write(tmp_path, "class.csv", "x" * 900)
    with open_user_file(path, limit=1000, limit_what="a class file") as fh:
        with path.open("ab") as grow:
            grow.write(b"y" * 5000)
        with pytest.raises(InputError, match="grew past the 1 kB limit for a class file while it was read"):
            fh.read()


@pytest.mark.parametrize("name", ["class.csv", "class.json"])
def test_more_rows_than_the_limit_refuse_the_class_file(tmp_path, name):
    from examprep.answers.files import Limits

    rows = [{"student_id": f"s{i}", "q1.loss": "1"} for i in range(11)]
    text = json.dumps(rows) if name.endswith(".json") else "student_id,q1.loss\n" + "".join(f"s{i},1\n" for i in range(11))
    path = write(tmp_path, name, text)
    subs, errors = read_file(path, Limits(class_rows=10))
    assert not subs and len(errors) == 1
    assert str(errors[0]).endswith("more than 10 " + ("items" if name.endswith(".json") else "rows")
                                   + ", over the limit for a class file; raise it with --max-class-rows")
    subs, errors = read_file(path, Limits(class_rows=11))
    assert not errors and len(subs) == 11


def _csv_class(tmp_path):
    # 2,000 students whose forms carry 2 kB of ignored text each: a 4 MB file, a few hundred kB kept
    return write(tmp_path, "class.csv", roster_class_csv(2000, parts=2, extra=" " + "z" * 2000))


def _json_class(tmp_path):
    items = [{"student_id": f"s{i}", "submitted": "z" * 2000, "q1.loss": "1"} for i in range(2000)]
    return write(tmp_path, "class.json", json.dumps(items))


@pytest.mark.parametrize("make", [_csv_class, _json_class], ids=["csv", "json-list"])
def test_a_class_file_is_read_in_memory_bounded_by_what_is_kept(tmp_path, make):
    import tracemalloc

    path = make(tmp_path)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        subs, errors = read_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not errors and len(subs) == 2000
    if make is _json_class:
        assert subs[-1].answers == {"q1.loss": "1"}
    assert size > 4_000_000 and peak < size / 2, (size, peak)


def test_a_streamed_json_list_reads_as_json_loads_does(tmp_path):
    import random

    rng = random.Random(35)
    items = []
    for i in range(3000):          # about 400 kB: items, strings and numbers cut by the 64 kB pieces
        items.append({"student_id": f"s{i}", "q1": {"loss": rng.choice([0.5, -1e-300, 12345678901234567890, "½ ≈ 0.5"]),
                                                    "probs": [rng.random() for _ in range(rng.randrange(1, 9))],
                                                    "why": "\\\"]}[{" * rng.randrange(0, 4) + "é\U0001F600"},
                      "q2.x": None if i % 7 else [[1, 2], [3, 4]]})
    text = "[\n" + ",\n".join(json.dumps(d, ensure_ascii=i % 2 == 0) for i, d in enumerate(items)) + "\n]\n"
    text = text.replace('"q2.x": null', '"q2.x": NaN').replace('"student_id": "s5"', '"student_id": "x", "student_id": "s5"')
    reference = json.loads(text)                    # the independent reading: the whole text at once
    subs, errors = read_file(write(tmp_path, "class.json", text.encode("utf-8")))
    assert not errors and len(subs) == len(reference)
    for sub, ref in zip(subs, reference):
        assert sub.student_id == ref["student_id"]
        assert json.dumps(sub.answers, sort_keys=True) == json.dumps({k: v for k, v in ref.items() if k != "student_id"},
                                                                     sort_keys=True)


@pytest.mark.parametrize("damage", ['{"q1": 1,}', '{"q1": tru}', '{"q1" 1}', '{"q1": "a\x01"}', "{} {}", '{"q1": 1'])
def test_a_malformed_json_list_is_refused_where_json_loads_says(tmp_path, damage):
    good = ",\n".join(json.dumps({"student_id": f"s{i}", "q1.loss": "x" * 40}) for i in range(2000))   # past 64 kB
    text = "[\n" + good + ",\n" + damage + "\n]"
    with pytest.raises(json.JSONDecodeError) as reference:
        json.loads(text)
    msg = error_of(write(tmp_path, "class.json", text))
    where = f"line {reference.value.lineno}, column {reference.value.colno}"
    assert msg.startswith(f"{tmp_path / 'class.json'}: invalid JSON at {where}"), (msg, reference.value)


def test_a_json_list_item_over_the_limit_is_skipped_and_the_rest_read(tmp_path):
    from examprep.answers.files import Limits

    huge = {"student_id": "big", "q1.loss": 'x\\"]}{[' * 30_000}            # 200 kB, brackets inside its string
    items = [{"student_id": "a", "q1.loss": "1"}, huge, {"student_id": "b", "q1.loss": "[2]"}]
    path = write(tmp_path, "class.json", json.dumps(items))
    subs, errors = read_file(path, Limits(file_bytes=50_000))
    assert [s.student_id for s in subs] == ["a", "b"] and subs[1].answers == {"q1.loss": "[2]"}
    assert [str(e) for e in errors] == [f"{path}, item 2: over the 50 kB limit for one submission; "
                                        "raise it with --max-file-size"]


@pytest.mark.parametrize("codec,bom", [("utf-16", b""), ("utf-16-le", b""), ("utf-8", b"\xef\xbb\xbf"), ("cp1252", b"")])
def test_a_streamed_class_csv_is_decoded_as_decode_reads_the_whole(tmp_path, codec, bom):
    import csv
    import io

    text = roster_class_csv(3000, parts=2) + "s9,Zoë “quoted”,z@x,2026,1,2\n"      # the only non-ASCII after 64 kB
    data = bom + text.encode(codec)
    subs, errors = read_file(write(tmp_path, "class.csv", data))
    reference = list(csv.reader(io.StringIO(decode(data, "x"), newline="")))
    assert not errors and len(subs) == len(reference) - 1
    assert subs[-1].name == reference[-1][1] == "Zoë “quoted”"


def test_keys_over_the_limit_refuse_one_students_file(tmp_path):
    from examprep.answers.files import Limits

    limits = Limits(keys=100)
    ok = {"student_id": "s", "q1": {f"p{i}": "1" for i in range(98)}}                  # 100 keys with q1 and the id
    assert not read_file(write(tmp_path, "ok.json", json.dumps(ok)), limits)[1]
    over = {"student_id": "s", "q1": {f"p{i}": "1" for i in range(99)}}
    assert error_of(write(tmp_path, "over.json", json.dumps(over)), limits).endswith(
        "more than 100 keys, over the limit for one submission; raise it with --max-keys")
    toml = 'student_id = "s"\n[q1]\n' + "".join(f"p{i} = 1\n" for i in range(120))
    assert "more than 100 keys" in error_of(write(tmp_path, "over.toml", toml), limits)
    wide = "student_id," + ",".join(f"q1.p{i}" for i in range(101)) + "\ns," + ",".join("1" * 101) + "\n"
    assert "101 answer columns: more than 100 keys" in error_of(write(tmp_path, "wide.csv", wide), limits)


def hostile_toml(depth, lines):
    """Dotted keys ``depth`` segments deep under a table: what made tomllib take 563 s at 900 kB."""
    header = ".".join(["t"] * (depth // 2))
    return f"[{header}]\n" + "".join(".".join(["k"] * (depth - depth // 2 - 1)) + f".x{i} = 1\n" for i in range(lines))


@pytest.mark.parametrize("depth,lines,why", [(60, 200, "more than 10,000 keys"), (70, 1, "nested too deeply"),
                                             (4000, 1, "nested too deeply")])
def test_a_hostile_toml_is_refused_before_tomllib_parses_it(tmp_path, monkeypatch, depth, lines, why):
    import tomllib

    monkeypatch.setattr(tomllib, "loads", lambda *a, **k: pytest.fail("tomllib parsed a file over the limits"))
    msg = error_of(write(tmp_path, "h.toml", hostile_toml(depth, lines)))
    assert why in msg and ("--max-keys" in msg or "--max-nesting" in msg), msg


def test_a_toml_under_the_limits_is_still_parsed(tmp_path):
    s = one(write(tmp_path, "ok.toml", hostile_toml(60, 150)))       # 9,000 keys counted: under the limit
    table = s.answers
    for _ in range(30):
        table = table["t"]
    assert len(table["k"]) == 1 and s.student_id == "ok"
    assert one(write(tmp_path, "quoted.toml", 'student_id = "s"\n"a.b.c.d" = 1\n[q1]\n"x.y" = "a = b, c = d"\n'))


def test_limits_refuse_a_value_that_is_not_positive():
    from examprep.answers.files import Limits
    from examprep.errors import ParamError

    with pytest.raises(ParamError, match="--max-keys: expected a positive number, got 0"):
        Limits(keys=0)
    with pytest.raises(ParamError, match="--max-class-size: expected a positive number of MB"):
        Limits.from_options(class_mb=-1)
    assert Limits.from_options(class_mb=0.5, file_mb=2).class_bytes == 500_000


def test_a_tiny_size_limit_is_shown_in_bytes_not_as_0_kB(tmp_path):
    from examprep.answers.limits import Limits

    msg = error_of(write(tmp_path, "a.toml", TOML), Limits.from_options(file_mb=0.000001))
    assert f"{len(TOML.encode())} bytes is over the 1 byte limit" in msg, msg
