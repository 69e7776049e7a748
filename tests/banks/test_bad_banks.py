"""Untrusted banks: malformed XML, entities (billion laughs, external), an oversized file, a zip
without a manifest, something that is no bank, an existing output — each one line, exit 2, nothing
written; HTML reduced to text (escape.html_text); Moodle formulas translated or refused by name,
the translation checked against Python's math on the same numbers."""
import math
import os
import zipfile

import pytest
from typer.testing import CliRunner

from examprep import expr
from examprep.answers.limits import MAX_CLASS_FILE_BYTES
from examprep.banks.formula import FormulaError, translate
from examprep.cli import app
from examprep.escape import html_text

runner = CliRunner()
GOOD = """<?xml version="1.0"?><quiz><question type="numerical"><name><text>n</text></name>
<questiontext><text>2+2?</text></questiontext><answer fraction="100"><text>4</text></answer></question></quiz>"""
LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE quiz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<quiz><question type="numerical"><name><text>&lol3;</text></name></question></quiz>"""
EXTERNAL = """<?xml version="1.0"?><!DOCTYPE quiz [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<quiz><question type="numerical"><name><text>&x;</text></name></question></quiz>"""


def run(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})


def refused(tmp_path, name, data, *words):
    bank = tmp_path / name
    bank.write_bytes(data) if isinstance(data, bytes) else bank.write_text(data)
    res = run("import", bank, "--out", tmp_path / "out")
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.output and all(w in lines[0] for w in words), res.output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_malformed_xml(tmp_path):
    refused(tmp_path, "bad.xml", "<quiz><question></quiz>", "bad.xml", "not well-formed XML")


@pytest.mark.parametrize("doc", [LAUGHS, EXTERNAL], ids=["billion-laughs", "external-entity"])
def test_entities_are_refused_not_expanded(tmp_path, doc):
    refused(tmp_path, "e.xml", doc, "e.xml", "declares entities")


def test_oversized_file(tmp_path):
    bank = tmp_path / "big.xml"
    with open(bank, "wb") as fh:                        # sparse: the size is refused before reading
        fh.truncate(MAX_CLASS_FILE_BYTES + 1)
    res = run("import", bank, "--out", tmp_path / "out")
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1 and "limit" in res.output


def test_not_a_bank_and_a_zip_without_manifest(tmp_path):
    refused(tmp_path, "page.xml", "<html><body>hi</body></html>", "<html> is not a bank")
    with zipfile.ZipFile(tmp_path / "p.zip", "w") as z:
        z.writestr("item.xml", GOOD)
    refused(tmp_path, "p.zip", (tmp_path / "p.zip").read_bytes(), "without imsmanifest.xml")


def test_an_existing_file_needs_force_and_nothing_is_half_written(tmp_path):
    bank = tmp_path / "b.xml"
    bank.write_text(GOOD.replace("</quiz>", GOOD.split("<quiz>")[1].replace("<text>n</text>", "<text>m</text>")))
    out = tmp_path / "out"
    out.mkdir()
    (out / "n.toml").write_text("mine")
    res = run("import", bank, "--out", out)
    assert res.exit_code == 2 and "n.toml already exists; use --force" in res.output
    assert sorted(os.listdir(out)) == ["n.toml"] and (out / "n.toml").read_text() == "mine"   # m.toml not written either
    res = run("import", bank, "--out", out, "--force")
    assert res.exit_code == 0, res.output
    assert sorted(os.listdir(out)) == ["m.toml", "n.toml"] and 'value = "4"' in (out / "n.toml").read_text()


def test_html_is_reduced_to_text():
    assert html_text('<p>A &amp; B \\(x^2\\) <script>alert(1)</script><b>bold</b></p>'
                     '<ul><li>one</li></ul>x\x1b[2Jy<img src=x onerror="alert(2)" alt="fig">') == \
        "A & B $x^2$ bold\n\n- one\n\nx [2Jy[fig]"
    assert html_text("<style>p{}</style>$$a\n+b$$ &lt;i&gt;") == "$a +b$ <i>"


@pytest.mark.parametrize("formula, python", [
    ("pow({a},2) + sqrt({b})*pi()", lambda a, b: a ** 2 + math.sqrt(b) * math.pi),
    ("log10({a}) - log({b})", lambda a, b: math.log10(a) - math.log(b)),
    ("abs({a} - {b}) / max({a}, {b})", lambda a, b: abs(a - b) / max(a, b)),
    ("exp(-{a}) * round({b}, 1)", lambda a, b: math.exp(-a) * round(b, 1)),
])
def test_moodle_formulas_match_python(formula, python):
    text = translate(formula, {"a", "b"})
    for a, b in [(1.5, 2.25), (3.0, 7.1), (0.2, 9.99)]:
        assert expr.evaluate(text, {"a": a, "b": b}) == pytest.approx(python(a, b), rel=1e-12)


@pytest.mark.parametrize("formula, words", [
    ("sin({a})", "sin() has no counterpart"), ("{a}^2", "is not allowed"), ("{c} + 1", "{c}, which no dataset"),
    ("__import__('os')", "__import__() has no counterpart"), ("{a}.real", "no attributes"),
    ("{a} {b}", "not a formula"),
])
def test_moodle_formulas_refused(formula, words):
    with pytest.raises(FormulaError, match=None) as err:
        translate(formula, {"a", "b"})
    assert words in str(err.value)
