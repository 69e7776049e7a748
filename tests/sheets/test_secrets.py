"""Variant secrets an attacker cannot guess: only random hex secrets are accepted, `examprep secret`
writes one, the secret is stretched (scrypt) once per sheet before the per-student HMAC, the key
records the derivation, and old sheets regenerate only with --legacy-secret, which warns.

The stretched derivation is recomputed here from its documented parameters with hashlib and hmac
directly (not through examprep's helpers); its cost is measured by bench/variant_secret.py, never
asserted on time here."""
import base64
import hashlib
import hmac
import json
import os
import random
import stat
import struct

import pytest
from typer.testing import CliRunner

from examprep import keys, sheets
from examprep.cli import app
from examprep.sheets import SheetError, Student
from examprep.sheets.variants import read_secret_file

runner = CliRunner()
HEX = "7c1e5b0a93d24f68e1b7a0c5d3f29e4a6b8c0d1e2f3a4b5c6d7e8f9012345678"
ROSTER = [Student("s1", "Ada"), Student("s2", "Alan")]
# Random-looking secrets of the shapes os.urandom and secrets.token_hex give, drawn from a fixed seed:
# the same tests on every run (and in every pytest-xdist worker, which must collect the same ids).
_DRAW = random.Random(2615)
URANDOM_B64 = base64.urlsafe_b64encode(_DRAW.randbytes(24)).rstrip(b"=")
TOKEN_HEX_16, TOKEN_HEX_32 = _DRAW.randbytes(16).hex().encode(), _DRAW.randbytes(32).hex().encode()


def _msg(sheet_id: str, student_id: str) -> bytes:
    msg = b"examprep-sheet-variant"
    for field in (sheet_id, student_id):
        raw = field.encode("utf-8")
        msg += struct.pack(">I", len(raw)) + raw
    return msg


def _code(digest: bytes) -> str:
    raw = base64.b32encode(digest[16:21]).decode()
    return f"{raw[:4]}-{raw[4:]}"


@pytest.mark.parametrize("secret", [
    b"passwordpassword",                     # the reported one
    b"passwordpasswordpassword",             # the base64url clause the notes withdrew
    b"correct-horse-battery-staple-0123456789",
    b"0" * 64,                               # hex, long, but one digit
    b"abab" * 16,                            # two digits
    b"0123456789abcde",                      # 15 hex digits
    b"0123456789abcdef0123456789abcde",      # 31 hex digits
    URANDOM_B64,                             # 32 base64url characters of 24 random bytes
])
def test_weak_or_non_hex_secrets_are_refused(secret):
    with pytest.raises(SheetError, match="examprep secret"):
        sheets.check_secret(secret)


@pytest.mark.parametrize("secret", [TOKEN_HEX_16, TOKEN_HEX_32, HEX.encode(), HEX.upper().encode()])
def test_random_hex_secrets_are_accepted(secret):
    assert sheets.check_secret(secret) == secret


@pytest.mark.parametrize("secret", [
    b"0123456789ABCDEF0123456789abcdef",       # a counting run, twice (it passed before)
    b"fedcba9876543210" * 4,                   # counting down
    b"02468ace13579bdf" * 2,                   # counting in twos
    "".join(f"{i * 3 % 16:x}" for i in range(40)).encode(),      # counting in threes, no block repeated in 16
    hashlib.sha256(b"password").hexdigest()[:16].encode() * 2,   # a hashed word's block, repeated
    b"13579bdf02468ace" + b"13579bdf02468ace"[:16],             # a run that wraps, twice
])
def test_counting_runs_and_repeats_are_refused(secret):
    with pytest.raises(SheetError, match="repeat a block or count in steps"):
        sheets.check_secret(secret)


def test_random_secrets_are_never_taken_for_patterns():
    draw = random.Random(35)
    for n in (16, 32):
        for _ in range(500):
            secret = draw.randbytes(n).hex().encode()
            if len(set(secret)) >= 8:       # the distinct-digit rule is the other check
                assert sheets.check_secret(secret) == secret


def test_the_secret_command_writes_a_private_256_bit_hex_secret(tmp_path):
    path = tmp_path / "secret.txt"
    res = runner.invoke(app, ["secret", str(path)])
    assert res.exit_code == 0, res.output
    mark, text = path.read_text().split("\n", 1)     # the mark, then the secret: 64 hex digits
    assert mark.startswith("# examprep secret")
    assert len(text) == 65 and text.endswith("\n") and int(text, 16) >= 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sheets.read_secret(path) == text.strip().encode()
    text = path.read_text()
    # never replaced by accident: every sheet made with it depends on it
    res = runner.invoke(app, ["secret", str(path)])
    assert res.exit_code == 2 and "already exists; use --force" in res.stderr and path.read_text() == text
    assert runner.invoke(app, ["secret", str(path), "--force"]).exit_code == 0 and path.read_text() != text
    res = runner.invoke(app, ["secret", str(tmp_path / "nope" / "s.txt")])
    assert res.exit_code == 2 and "does not exist" in res.stderr and not (tmp_path / "nope").exists()


def test_a_weak_secret_file_is_one_line_naming_examprep_secret(tmp_path):
    (tmp_path / "roster.csv").write_text("id,name\ns1,Ada\n")
    (tmp_path / "secret.txt").write_text("passwordpassword\n")
    res = runner.invoke(app, ["sheet", "-r", "cnn", "--roster", str(tmp_path / "roster.csv"), "--secret-file",
                              str(tmp_path / "secret.txt"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert res.stderr.startswith("error: --secret-file") and "`examprep secret FILE`" in res.stderr
    assert "--legacy-secret" in res.stderr and not (tmp_path / "o").exists()


def test_variants_come_from_the_stretched_secret_not_the_secret_itself():
    sheet = sheets.build_sheet(sheets.load_recipe("cnn"), 5, roster=ROSTER, secret=HEX.encode())
    meta = sheets.make_key(sheet).meta["variants"]
    kdf = meta["kdf"]
    assert meta["version"] == 2 and kdf["name"] == "scrypt"
    assert kdf["n"] >= 2 ** 15 and kdf["r"] >= 8          # 32 MiB or more per guess
    sid = sheet.sheet_id
    salt = b"examprep-variant-key-v2" + struct.pack(">I", len(sid)) + sid.encode()
    key = hashlib.scrypt(HEX.encode(), salt=salt, n=kdf["n"], r=kdf["r"], p=kdf["p"], dklen=kdf["dklen"],
                         maxmem=2 ** 30)
    for copy in sheet.copies:
        digest = hmac.new(key, _msg(sid, copy.student.id), hashlib.sha256).digest()
        assert copy.problems[0].seed == int.from_bytes(digest[:6], "big") and copy.code == _code(digest)
        raw = hmac.new(HEX.encode(), _msg(sid, copy.student.id), hashlib.sha256).digest()
        assert copy.code != _code(raw)           # one HMAC per guess no longer recovers the secret


def test_the_secret_is_stretched_once_per_sheet(monkeypatch):
    calls = []
    real = hashlib.scrypt
    monkeypatch.setattr(hashlib, "scrypt", lambda *a, **k: calls.append(1) or real(*a, **k))
    roster = [Student(f"s{i}", "") for i in range(6)]
    sheets.build_sheet(sheets.load_recipe("cnn"), 5, roster=roster, secret=HEX.encode())
    assert len(calls) == 1


def test_upper_and_lower_case_hex_give_the_same_variants():
    a = sheets.build_sheet(sheets.load_recipe("cnn"), 5, roster=ROSTER, secret=HEX.encode())
    b = sheets.build_sheet(sheets.load_recipe("cnn"), 5, roster=ROSTER, secret=HEX.upper().encode())
    assert [c.code for c in a.copies] == [c.code for c in b.copies]


def _sheet(tmp_path, secret: str, *extra: str, out: str = "o"):
    (tmp_path / "roster.csv").write_text("id,name\ns1,Ada\ns2,Alan\n")
    (tmp_path / "secret.txt").write_text(secret + "\n")
    return runner.invoke(app, ["sheet", "-r", "cnn", "-s", "3", "-f", "md", "--roster", str(tmp_path / "roster.csv"),
                               "--secret-file", str(tmp_path / "secret.txt"), "--out", str(tmp_path / out), *extra])


def test_legacy_secret_regenerates_the_old_variants_and_warns(tmp_path):
    res = _sheet(tmp_path, "passwordpassword", "--legacy-secret")
    assert res.exit_code == 0, res.output
    assert res.stderr.startswith("warning: --legacy-secret:") and "examprep secret" in res.stderr
    key = keys.read_key(tmp_path / "o" / "key.json")
    assert key.meta["variants"]["version"] == 1 and "kdf" not in key.meta["variants"]
    for sid in ("s1", "s2"):          # the pre-stretching construction: HMAC under the secret itself
        digest = hmac.new(b"passwordpassword", _msg("cnn-3", sid), hashlib.sha256).digest()
        assert key.variant_codes[sid] == _code(digest)
        assert key.variants[sid][0].seed == int.from_bytes(digest[:6], "big")


def test_legacy_secret_needs_a_secret_file(tmp_path):
    res = runner.invoke(app, ["sheet", "-r", "cnn", "--legacy-secret", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "--legacy-secret goes with" in res.stderr


def test_replacing_an_old_key_with_new_variants_warns(tmp_path):
    assert _sheet(tmp_path, HEX, "--legacy-secret").exit_code == 0
    res = _sheet(tmp_path, HEX, "--force")
    assert res.exit_code == 0 and "held variants derived the old way" in res.stderr
    assert json.loads((tmp_path / "o" / "key.json").read_text())["meta"]["variants"]["version"] == 2


# ---------------------------------------------------------------- the class's own secret (no --secret-file)

@pytest.fixture
def cheap_kdf(monkeypatch):
    """scrypt at n = 2¹⁰ for the tests of the secret's file (the derivation itself is tested above
    at its real cost): each run of a class then costs milliseconds, not 0.3 s."""
    from examprep.sheets import variants

    monkeypatch.setattr(variants, "SECRET_KDF", dict(variants.SECRET_KDF, n=2 ** 10))


def _class(tmp_path, *extra: str, out: str = "o"):
    (tmp_path / "roster.csv").write_text("id,name\ns1,Ada\ns2,Alan\n")
    return runner.invoke(app, ["sheet", "-t", "conv2d", "-f", "md", "--roster", str(tmp_path / "roster.csv"),
                               "--out", str(tmp_path / out), *extra])


def _codes(seed: int, secret: bytes) -> dict:
    sheet = sheets.build_sheet(sheets.recipe_from_topics(["conv2d"]), seed, roster=ROSTER, secret=secret)
    return {c.student.id: c.code for c in sheet.copies}


def test_a_roster_without_secret_file_makes_a_private_marked_secret_and_says_how_to_rebuild(tmp_path, monkeypatch, cheap_kdf):
    res = _class(tmp_path, "-s", "3")
    assert res.exit_code == 0 and not res.stderr, res.output
    path = tmp_path / "o" / "secret.hex"
    mark, secret = path.read_text().split("\n", 1)
    assert mark.startswith("# examprep secret") and len(secret.strip()) == 64 and int(secret, 16) >= 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "secret.hex" not in (tmp_path / "o" / ".examprep-files.json").read_text()   # never tidied away
    assert f"wrote {path}: a new 256-bit secret" in res.stdout
    command = res.stdout.split("then run: ")[1].strip()
    assert command == (f"examprep sheet --topics conv2d --seed 3 --roster {tmp_path / 'roster.csv'} "
                       f"--secret-file {path} --format md")
    # the printed command rebuilds the class elsewhere: the same variants
    monkeypatch.chdir(tmp_path)
    again = runner.invoke(app, command.split()[1:] + ["--out", str(tmp_path / "elsewhere")])
    assert again.exit_code == 0 and not again.stderr, again.output
    assert (tmp_path / "elsewhere" / "key.json").read_bytes() == (tmp_path / "o" / "key.json").read_bytes()
    # the variants are those a --secret-file holding the same digits gives (the mark is not part of the secret)
    key = keys.read_key(tmp_path / "o" / "key.json")
    assert key.variant_codes == _codes(3, secret.strip().encode())


def test_a_rerun_into_the_folder_reuses_its_secret_and_seed_and_never_removes_it(tmp_path, cheap_kdf):
    assert _class(tmp_path).exit_code == 0           # no --seed: a fresh one, kept in the key
    secret, key = ((tmp_path / "o" / name).read_bytes() for name in ("secret.hex", "key.json"))
    res = _class(tmp_path, "--force")
    assert res.exit_code == 0 and "reused" in res.stdout and "each student keeps their variant" in res.stdout
    assert (tmp_path / "o" / "secret.hex").read_bytes() == secret
    assert (tmp_path / "o" / "key.json").read_bytes() == key
    # a common sheet over the class folder, and a manifest claiming the secret: the secret stays
    manifest = tmp_path / "o" / ".examprep-files.json"
    manifest.write_text(json.dumps({"files": ["secret.hex", "key.json"]}))
    res = runner.invoke(app, ["sheet", "-t", "conv2d", "-f", "md", "-s", "4", "--out", str(tmp_path / "o"), "--force"])
    assert res.exit_code == 0 and (tmp_path / "o" / "secret.hex").read_bytes() == secret


def test_a_secret_already_in_the_folder_is_used_and_a_weak_one_refused_never_replaced(tmp_path, cheap_kdf):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "secret.hex").write_text(f"# examprep secret\n{HEX}\n")     # copied in by the instructor
    res = _class(tmp_path, "-s", "5")
    assert res.exit_code == 0 and f"reused {tmp_path / 'o' / 'secret.hex'}" in res.stdout, res.output
    assert keys.read_key(tmp_path / "o" / "key.json").variant_codes == _codes(5, HEX.encode())
    (tmp_path / "o" / "secret.hex").write_text("# examprep secret\n" + "ab" * 32 + "\n")
    res = _class(tmp_path, "--force")
    assert res.exit_code == 2 and "not random" in res.stderr and res.stderr.count("\n") == 1
    assert (tmp_path / "o" / "secret.hex").read_text() == "# examprep secret\n" + "ab" * 32 + "\n"


def test_a_secret_file_examprep_did_not_write_warns_in_one_line_and_is_used(tmp_path, cheap_kdf):
    (tmp_path / "old.txt").write_text(HEX + "\n")
    res = _class(tmp_path, "-s", "5", "--secret-file", str(tmp_path / "old.txt"))
    assert res.exit_code == 0 and res.stderr.count("\n") == 1, res.output
    assert res.stderr.startswith(f"warning: --secret-file {tmp_path / 'old.txt'}: not written by `examprep secret`")
    assert "guessed" in res.stderr and not (tmp_path / "o" / "secret.hex").exists()
    assert keys.read_key(tmp_path / "o" / "key.json").variant_codes == _codes(5, HEX.encode())
    # the same digits in a file `examprep secret` marks: the same secret, and no warning
    (tmp_path / "marked.txt").write_text(f"# examprep secret: 256 random bits\n{HEX}\n")
    assert read_secret_file(tmp_path / "marked.txt") == (HEX.encode(), True)
    assert read_secret_file(tmp_path / "old.txt") == (HEX.encode(), False)


@pytest.mark.parametrize("content", ["# examprep secret\n" + "0123456789abcdef" * 2,      # a counting run
                                     "# examprep secret\n" + hashlib.md5(b"password").hexdigest()[:8] * 4,  # repeats
                                     "# examprep secret\n" + "ab" * 32, "# examprep secret\n"])
def test_the_mark_does_not_let_a_weak_secret_pass(tmp_path, content):
    (tmp_path / "s.txt").write_text(content)
    with pytest.raises(SheetError, match="not a random secret|the file is empty"):
        sheets.read_secret(tmp_path / "s.txt")


def test_a_class_made_with_a_secret_file_is_not_replaced_when_the_option_is_forgotten(tmp_path, cheap_kdf):
    (tmp_path / "mine.txt").write_text(f"# examprep secret\n{HEX}\n")
    assert _class(tmp_path, "-s", "5", "--secret-file", str(tmp_path / "mine.txt")).exit_code == 0
    key = (tmp_path / "o" / "key.json").read_bytes()
    res = _class(tmp_path, "--force")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert "its key.json holds a class's variants" in res.stderr and "--secret-file" in res.stderr
    assert (tmp_path / "o" / "key.json").read_bytes() == key and not (tmp_path / "o" / "secret.hex").exists()


def test_a_rerun_says_so_when_the_folders_key_came_from_another_secret(tmp_path, cheap_kdf):
    assert _class(tmp_path).exit_code == 0                                        # makes o/secret.hex
    (tmp_path / "mine.txt").write_text(f"# examprep secret\n{HEX}\n")
    assert _class(tmp_path, "--secret-file", str(tmp_path / "mine.txt"), "--force").exit_code == 0
    res = _class(tmp_path, "--force")                # o/secret.hex again, with the seed of mine.txt's key
    assert res.exit_code == 0 and "that key's variants came from another secret" in res.stdout, res.output
    assert "each student keeps their variant" not in res.stdout



def test_the_rebuild_command_keeps_split_and_the_questions_dir():
    """--split changes what the rebuild writes (one PDF per student), --questions-dir what it may read:
    the printed command keeps both (it dropped them)."""
    from examprep.sheets.variants import rebuild_command

    command = rebuild_command(recipe="cnn", topics=None, count=None, difficulty=None, seed=3, roster="r.csv",
                              secret_file="o/secret.hex", title=None, course=None, decimal_comma=False, formats=None,
                              split=True, questions_dir="qs")
    assert command == ("examprep sheet --recipe cnn --seed 3 --roster r.csv --secret-file o/secret.hex "
                       "--questions-dir qs --split")


def test_secret_and_generate_never_replace_a_pipe_even_with_force(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkfifo("pipe")
    for args in (["secret", "pipe", "--force"], ["secret", "pipe"], ["secret", "-"],
                 ["generate", "attention", "--seed", "1", "--key", "pipe", "--force"],
                 ["generate", "attention", "--seed", "1", "--key", "k.json", "--template", "pipe", "--force"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:"), (args, result.output)
        assert "is not a regular file" in lines[0] or "'-'" in lines[0]
    assert stat.S_ISFIFO(os.stat("pipe").st_mode)
    assert sorted(os.listdir()) == ["pipe"]
    os.mkfifo("pipe.zip")
    os.mkfifo("pipe.apkg")
    assert runner.invoke(app, ["generate", "attention", "--seed", "1", "--key", "k.json"]).exit_code == 0
    for args in (["gradescope-autograder", "k.json", "--out", "pipe.zip", "--force"], ["anki", "--out", "pipe.apkg", "--force"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and "is not a regular file" in result.output, (args, result.output)
    assert sorted(os.listdir()) == ["k.json", "pipe", "pipe.apkg", "pipe.zip"]
    assert all(stat.S_ISFIFO(os.stat(p).st_mode) for p in ("pipe", "pipe.apkg", "pipe.zip"))


def test_the_rebuild_command_keeps_what_changes_the_outputs():
    """--solutions, --scannable and --canvas-per-student each change what a rebuild writes: kept."""
    from examprep.sheets.variants import rebuild_command

    command = rebuild_command(recipe="cnn", topics=None, count=None, difficulty=None, seed=3, roster="r.csv",
                              secret_file="s.hex", title=None, course=None, decimal_comma=False, formats="pdf,canvas",
                              solutions=True, scannable=True, canvas_per_student=True)
    assert command.split()[-3:] == ["--canvas-per-student", "--solutions", "--scannable"]
