"""Text from a question file, a key or a student, made safe for the program that reads it: one
helper per target format, used by every writer of that format.

- ``html``: HTML and XML text and attributes (Moodle, QTI 2.1, Canvas, Blackboard): & < > " ' as
  entities, so ``<script>`` and ``<img onerror=…>`` are shown, never run or loaded.
- ``markdown`` / ``markdown_text`` / ``markdown_cell``: Markdown prose (problems.md, solutions.md):
  the characters that make HTML, links, images, code or headings backslash-escaped, so none is
  made from the text; inside ``$…$`` math, a "<" that could start a tag becomes \\lt.
- ``markdown_heading``: a name, an id or a title in a Markdown heading: every character Markdown,
  HTML or ``$…$`` math could read escaped, so the heading shows the text as written (never math).
- ``typst_string``: a Typst string literal holding the text verbatim (shown as written: no markup,
  no code, no math is read from it).
- ``printable`` / ``terminal``: text for a terminal or a plain-text report: control and format
  characters as escapes (\\x1b), typographic spaces (no-break, thin) as written, and for rich's
  markup, square brackets escaped.
- ``excerpt`` / ``shown``: a short quotation of a file's text, or a value read from a file as an
  error message names it; ``unprintable_char``: the character a one-line field may not hold.
- ``html_text``: the other way: untrusted HTML (an imported question bank's) reduced to plain text
  (paragraphs, list items, MathJax's \\( \\) as $…$), before any writer escapes it for its format.

No examprep import: this is a base helper, below every renderer (DESIGN.md's layers).
"""
from __future__ import annotations

import html as _html
import json
import re
import unicodedata
from html.parser import HTMLParser
from typing import Any


def html(text: Any, *, quote: bool = True) -> str:
    """Text as HTML/XML character data or an attribute value (``quote``: quotes escaped too)."""
    return _html.escape(str(text), quote=quote)


# What makes Markdown of prose: raw HTML, comments and autolinks (a "<" before a letter, "/", "!"
# or "?"), entities (an "&" before a letter or "#"), code spans (`), the escapes themselves (\\),
# and a link, image or reference (a "]" before "(", "[" or ":"); at a line's start, a heading, a
# block quote or a list ("#", ">", "-", "+", "*", "1." "1)"). Elsewhere these characters are
# text ("|w| < 1", "Loshchilov & Hutter") and stay as written; so do emphasis marks (* and _ in a
# line change how text looks, not what it is: prose uses them, W_ih).
_MARKDOWN_SPECIAL = re.compile(r"[\\`]|<(?=[A-Za-z/!?])|&(?=[A-Za-z#])|\][(\[:]")
# as entities, which every Markdown renderer reads (some take raw HTML after a backslash)
_ENTITY = {"<": "&lt;", "&": "&amp;"}
_LINE_START = re.compile(r"^(\s*)([#>+*-])", re.M)
_LINE_START_NUMBER = re.compile(r"^(\s*\d+)([.)])", re.M)


def _markdown_inline(text: Any) -> str:
    return _MARKDOWN_SPECIAL.sub(lambda m: _ENTITY.get(m.group(0)) or "".join("\\" + c for c in m.group(0)), str(text))


def markdown(text: Any) -> str:
    """Plain text as Markdown that shows exactly that text (no HTML, link, image, code or heading)."""
    escaped = _markdown_inline(text)
    escaped = _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), escaped)
    return _LINE_START_NUMBER.sub(lambda m: m.group(1) + "\\" + m.group(2), escaped)


def markdown_cell(text: Any) -> str:
    """Text for a cell of a Markdown table (one line, where no heading or list can start): as
    ``markdown`` inside a line, and a "|" does not end the cell."""
    return _markdown_inline(text).replace("|", "\\|")


# every character that makes something of a heading's text: code, emphasis, links and images, raw
# HTML and entities, math ($, read by MathJax and GitHub), a table's "|", and "#" (a closing run of
# them is dropped from an ATX heading)
_HEADING_SPECIAL = re.compile(r"[\\`*_\[\]<&#$|~!]")


def markdown_heading(text: Any) -> str:
    """Text (a student's id or name, a question's title) for a Markdown heading, as written: on one
    line, printable, and each character that Markdown, HTML or $…$ math reads backslash-escaped
    ("<" and "&" as entities), so "[red]x[/red]:question:" and "$\\alpha$" show as typed."""
    one_line = printable(" ".join(str(text).split()))
    return _HEADING_SPECIAL.sub(lambda m: _ENTITY.get(m.group(0)) or "\\" + m.group(0), one_line)


_INLINE_MATH = re.compile(r"\$([^$]+)\$")


_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


def markdown_math(latex: str) -> str:
    """LaTeX for Markdown's $…$ or $$…$$: no "<" that a Markdown renderer could read as a tag's start
    (a<b is a\\lt b)."""
    return _TAG_START.sub(r"\\lt ", latex)


def markdown_text(text: Any) -> str:
    """Prose with ``$…$`` inline LaTeX as Markdown: the prose escaped, the math kept as math."""
    text, out, pos = str(text), [], 0
    for m in _INLINE_MATH.finditer(text):
        out += [markdown(text[pos:m.start()]), f"${markdown_math(m.group(1))}$"]
        pos = m.end()
    out.append(markdown(text[pos:]))
    return "".join(out)


def typst_string(text: Any) -> str:
    """A Typst string literal holding ``text`` verbatim (# $ \\ ] * _ and the rest shown as written)."""
    out = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "").replace("\t", " ")
    return f'"{out}"'


def printable(text: Any) -> str:
    """Text safe to show on a terminal or in a report: control and format characters (ESC, bidi
    overrides) and lone surrogates (from a JSON escape, or a file name that is not UTF-8) become
    escapes ("\\x1b", "\\udcff"), so text from a file can neither drive a terminal nor stop an
    output from being encoded. A typographic space (no-break, thin, narrow no-break: Unicode's Zs)
    moves the cursor as a space does and is shown as written ("16\u00a0×\u00a028", "94\u202f422");
    line and paragraph separators (Zl, Zp) break a line, and stay escapes."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or unicodedata.category(ch) == "Zs" else ascii(ch)[1:-1] for ch in text)


def terminal(text: Any) -> str:
    """Text for rich's markup (the terminal and its reports): printable, square brackets escaped."""
    from rich.markup import escape          # lazy: rich is heavy, and `examprep --help` needs none of it

    return escape(printable(text))


LINE_BREAKING = ("Cc", "Zl", "Zp")


def unprintable_char(text: str, allowed: str = "") -> str | None:
    """The first character of ``text`` that cannot be printed in a line of a sheet, an answer file,
    an export or a terminal, or None: a control character (Unicode category Cc: NUL … US, DEL and
    C1, so ESC, BEL, vertical tab, form feed) or a line or paragraph separator (Zl, Zp). ``allowed``:
    characters a field may hold all the same ("\n\t" for text of several lines). The one rule for
    text that examprep prints from what a user wrote (question files; keys' ids)."""
    return next((c for c in text if c not in allowed and unicodedata.category(c) in LINE_BREAKING), None)


def excerpt(text: Any, n: int = 40) -> str:
    """A short quotation of text that came from a file: at most ``n`` characters, printable, in
    quotes ('root:x:0:0:r…')."""
    text = str(text)
    return "'" + printable(text[:n]) + ("…" if len(text) > n else "") + "'"


def shown(value: Any) -> str:
    """A value read from a JSON file as an error message names it: as JSON ("one", -5, Infinity,
    null, [-1], {"a": 1}), at most 40 characters, printable; a longer list as "a list of N", a
    longer table as "a table"."""
    if isinstance(value, str):                 # escaped as every excerpt is ("x\x1b[2J"), in JSON's quotes
        return '"' + printable(value[:40]) + ("…" if len(value) > 40 else "") + '"'
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):            # not a JSON value (not reached for parsed JSON)
        text = repr(value)
    if isinstance(value, (list, dict)) and len(text) > 40:
        return f"a list of {len(value)}" if isinstance(value, list) else "a table"
    return printable(text if len(text) <= 40 else text[:40] + "…")


_BLOCK_TAGS = frozenset({"p", "div", "br", "li", "ul", "ol", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6",
                         "pre", "blockquote", "hr", "dt", "dd", "section", "article"})
_DROPPED_TAGS = frozenset({"script", "style", "head", "title", "template", "object", "iframe", "svg"})
_MATH_DELIMITERS = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]|\$\$(.+?)\$\$", re.S)


class _TextOf(HTMLParser):
    """Collects the text of an HTML fragment: blocks become paragraph breaks, scripts and styles
    are dropped, an image becomes its alt text in brackets; entities are decoded (Python's parser)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.dropped = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in _DROPPED_TAGS:
            self.dropped += 1
        elif tag in _BLOCK_TAGS:
            self.out.append("\n\n" if tag != "li" else "\n\n- ")
        elif tag == "img":
            alt = dict(attrs).get("alt") or "image"
            self.out.append(f"[{alt}]")

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self.handle_starttag(tag, attrs)
        if tag in _DROPPED_TAGS:
            self.dropped -= 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROPPED_TAGS:
            self.dropped = max(0, self.dropped - 1)
        elif tag in _BLOCK_TAGS:
            self.out.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self.dropped:
            self.out.append(data)


def html_text(fragment: str) -> str:
    """Plain text of untrusted HTML (a question bank's): tags removed (script and style with their
    content), entities decoded, paragraphs separated by a blank line, spaces collapsed, control
    characters removed, and MathJax's delimiters \\( \\), \\[ \\] and $$ $$ as $…$ (examprep's inline
    math). The text is then escaped for its target by the helpers above, like any text a user wrote."""
    parser = _TextOf()
    parser.feed(str(fragment))
    parser.close()
    text = "".join(parser.out)
    text = "".join(c if c == "\n" or unicodedata.category(c) not in LINE_BREAKING + ("Cf",) else " " for c in text)
    text = _MATH_DELIMITERS.sub(lambda m: "$" + " ".join(next(g for g in m.groups() if g is not None).split()) + "$",
                                text)
    paragraphs = (" ".join(p.split()) for p in re.split(r"\n\s*\n", text))
    return "\n\n".join(p for p in paragraphs if p)
