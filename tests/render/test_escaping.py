"""Text from a question file reaches every export as text: an authored question whose title, text,
prompts and model answer hold HTML (<script>, <img onerror>), Markdown links and images, Typst's
special characters and LaTeX's \\left with an unknown delimiter is exported to every format, and
each output is read back by an independent parser (the HTML parser of the standard library,
markdown-it for CommonMark, the XML parser, pypdf for the PDF Typst compiled): no script, image
or link element anywhere, and the literal text is there."""
import html
import json
import re
import xml.etree.ElementTree as ET
import zipfile
from html.parser import HTMLParser

import pytest
from typer.testing import CliRunner

from examprep import escape
from examprep.cli import app

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
LINK = "[click](http://evil.example)"
IMAGE = "![i](http://evil.example/i.png)"
TYPST = "#emph[x] back\\\\slash ] * _ @ref <lbl> ~ % //c"
QUESTION = f'''[question]
id = "evil"
title = "Evil {SCRIPT} #title"
solve = "cross-entropy"
text = "Logits {{logits}}. {SCRIPT} {IMG} {LINK} {IMAGE} Typst: {TYPST} $\\\\left X a \\\\right X$ end"

[question.params]
logits = [1, 2, 0]
target = 0

[[question.part]]
answer = "probs"
prompt = "Probs {IMG} {LINK} #set page"
points = 2

[[question.part]]
kind = "written"
prompt = "Why? {SCRIPT}"
points = 1
model_answer = "Because {SCRIPT} & {LINK}"
'''
DANGEROUS = {"script", "img", "a", "iframe", "object", "embed"}


class Tags(HTMLParser):
    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)

    def handle_data(self, data):
        self.text.append(data)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    d = tmp_path_factory.mktemp("evil")
    (d / "evil.toml").write_text(QUESTION)
    (d / "recipe.toml").write_text('[sheet]\ntitle = "Injected"\n\n[[problem]]\nquestion = "evil.toml"\n')
    res = CliRunner().invoke(app, ["sheet", "-r", str(d / "recipe.toml"), "-f", "pdf,md,moodle,qti21,canvas,blackboard-txt",
                                   "--out", str(d / "o"), "-s", "1"])
    assert res.exit_code == 0, res.output
    return d / "o"


def _check_html(fragment: str, where: str) -> str:
    parsed = Tags(fragment)
    assert not parsed.tags & DANGEROUS, (where, parsed.tags & DANGEROUS)
    return "".join(parsed.text)


def test_blackboard_fields_are_html_text(exported):
    shown = ""
    for line in (exported / "blackboard.txt").read_text().splitlines():
        for field in line.split("\t")[1:]:
            shown += _check_html(field, line[:40]) + "\n"
    assert SCRIPT in shown and IMG in shown and LINK in shown


def test_moodle_question_text_is_html_text(exported):
    root = ET.parse(exported / "moodle.xml").getroot()
    # a question's name and category are plain text (Moodle's PARAM_TEXT strips any tag on import)
    plain = {id(t) for q in root.iter("question") for tag in ("name", "category") for t in q.iterfind(f"{tag}/text")}
    texts = [t.text or "" for t in root.iter("text") if id(t) not in plain]
    shown = "".join(_check_html(t, "moodle") for t in texts)
    assert SCRIPT in shown and IMG in shown


def test_qti21_and_canvas_hold_no_element_from_the_text(exported):
    with zipfile.ZipFile(exported / "qti21.zip") as z:
        items = [ET.fromstring(z.read(n)) for n in z.namelist() if n.startswith("items/")]
    tags = {el.tag.rpartition("}")[2] for item in items for el in item.iter()}
    assert not tags & DANGEROUS
    assert any(SCRIPT in "".join(item.itertext()) for item in items)
    with zipfile.ZipFile(exported / "canvas.zip") as z:
        xml = [ET.fromstring(z.read(n)) for n in z.namelist() if n.endswith(".xml") and "assessment_meta" not in n
               and n != "imsmanifest.xml"]
    mattexts = [m.text or "" for x in xml for m in x.iter() if m.tag.rpartition("}")[2] == "mattext"]
    shown = "".join(_check_html(t, "canvas") for t in mattexts)
    assert SCRIPT in shown and IMG in shown


@pytest.mark.parametrize("name", ["problems.md", "solutions.md"])
def test_markdown_renders_the_text_as_text(exported, name):
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark").render((exported / name).read_text())
    shown = _check_html(rendered, name)
    assert SCRIPT in shown and IMG in shown and LINK in shown and IMAGE in shown


def test_typst_compiles_and_shows_the_literal_text(exported):
    from pypdf import PdfReader

    text = " ".join(" ".join(p.extract_text() for p in PdfReader(exported / name).pages)
                    for name in ("problems.pdf", "solutions.pdf"))
    flat = re.sub(r"\s+", "", text)
    for literal in (SCRIPT, IMG, LINK, "#emph[x]", "back\\slash", "@ref<lbl>~%//c", "#setpage", "#title"):
        assert re.sub(r"\s+", "", literal) in flat, literal


def test_the_key_keeps_the_text_as_written(exported):
    key = json.loads((exported / "key.json").read_text())
    assert SCRIPT in key["variants"].get("", [{}])[0].get("title", "") or SCRIPT in key["problems"][0]["title"]


@pytest.mark.parametrize("text, expected", [
    (SCRIPT, "&lt;script&gt;alert(1)&lt;/script&gt;"),
    ('a "b" \'c\' & d', "a &quot;b&quot; &#x27;c&#x27; &amp; d"),
])
def test_html_escapes_every_markup_character(text, expected):
    assert escape.html(text) == expected
    assert html.unescape(escape.html(text)) == text


@pytest.mark.parametrize("text", [SCRIPT, IMG, LINK, IMAGE, "# heading", "> quote", "1. list", "- item", "`code`",
                                  "&lt; entity", "[ref]: http://x", "a\\*b", "|w| < 1 & x", "<!-- c -->", "<http://x>"])
def test_markdown_shows_the_text_and_makes_nothing(text):
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark").render(escape.markdown(text))
    assert rendered.startswith("<p>") and rendered.count("<") == 2, rendered       # one paragraph, no element
    assert html.unescape(re.sub(r"</?p>", "", rendered)).strip() == text


def test_markdown_math_keeps_math_and_opens_no_tag():
    assert escape.markdown_text("a $x<y$ and $|w| < 1$ <b>") == r"a $x\lt y$ and $|w| < 1$ &lt;b>"


def test_typst_string_and_terminal():
    assert escape.typst_string('a"b\\c\n#x') == '"a\\"b\\\\c\\n#x"'
    assert escape.terminal("[bold]x\x1b[2J") == "\\[bold]x\\x1b[2J"


def test_typographic_spaces_reach_a_terminal_as_spaces_and_controls_do_not():
    """Issue 36 (attack, item 11): "16\\xa0×\\xa028" was shown as Python escapes; a no-break or
    thin space is harmless on a terminal, while ESC, bidi overrides and line separators are not."""
    for spaced in ("16\u00a0×\u00a028", "32\u2009×\u20095", "94\u202f422", "a\u3000b"):
        assert escape.printable(spaced) == spaced and escape.terminal(spaced) == spaced
    hostile = "x\x1b[2J\u202eevil\u2066\u2028\u2029\x00\ud800"
    assert escape.printable(hostile) == "x\\x1b[2J\\u202eevil\\u2066\\u2028\\u2029\\x00\\ud800"
