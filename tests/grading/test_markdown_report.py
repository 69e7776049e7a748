"""The Markdown feedback file (grade --report) shows a student's answer once, as it was written, and as
text: a written answer is never followed by a "(read as …)" copy of itself, and nothing in an answer
becomes math, Markdown or HTML when the file is viewed (read back by markdown-it, an independent
CommonMark parser, as GitHub or a MathJax page would render it)."""
from markdown_it import MarkdownIt

from examprep.answers import check_part
from examprep.grading.grade import ProblemResult, SubmissionResult
from examprep.problem import Part, Problem, Tolerance
from examprep.grading.report_text import markdown_report

WRITTEN = Part("why", "Why?", "written", None, points=2, model_answer="p - y.")
NUMBER = Part("loss", "The loss.", "number", 1 / 3, tolerance=Tolerance("sigfigs", 3))
PROBLEM = Problem("q", 1, 0, 1, "Softmax", {}, [], [WRITTEN, NUMBER], [])
LONG = ("The log cancels the exp: \\(p − y\\) | see $x_1$ and `code` <b>bold</b>, "
        "then the gradient is p − y because the softmax and the log cancel.")


def report(written: str, number: str) -> str:
    parts = [check_part(WRITTEN, written), check_part(NUMBER, number)]
    return markdown_report(SubmissionResult("ann", [ProblemResult(1, PROBLEM, parts)]))


def cells(markdown: str) -> list[str]:
    """The HTML of each table cell of the rendered report (markdown-it with GFM tables)."""
    html = MarkdownIt().enable("table").render(markdown)
    return [c.split(">", 1)[1].split("</td>")[0] for c in html.split("<td")[1:]]


def test_a_long_written_answer_is_shown_once_and_whole_below_its_table():
    """Issue 36 (attack, item 15): an essay was cut at 80 characters ("…") in its own student's report."""
    essay = LONG + "\n\nA second paragraph, " + "and more words " * 20 + "to the end."
    text = report(essay, "1/3")
    line = next(line for line in text.splitlines() if line.startswith("| (a) `why`"))
    assert "The log cancels" not in line and "shown in full below the table" in line
    assert text.count("The log cancels") == 1 and "…" not in text and "(read as 0.3333)" in text
    html = MarkdownIt().enable("table").render(text)
    block = html.split("<pre><code", 1)[1].split("</code></pre>", 1)[0].split(">", 1)[1]
    assert " ".join(html_text(block).split()) == " ".join(essay.split())      # whole, verbatim: no math, no markup
    assert html.index("</table>") < html.index("<pre>")
    short = report(LONG[:70], "1/3")
    assert "<pre>" not in MarkdownIt().enable("table").render(short) and "shown in full" not in short


def html_text(fragment: str) -> str:
    import html

    return html.unescape(fragment)


def test_headings_show_ids_names_and_titles_as_written():
    """Issue 36 (attack, item 16): "[red]evil[/red]:question:" became "[red]evil[/red\\]\\:question:" and
    "$\\alpha$" became "$\\\\alpha$" inside a math span; a heading's names are text, never math."""
    sid, name, title = "[red]evil[/red]:question:", "$\\alpha$ *b* <i>x</i> & `c` [l](http://e.com) #", "Soft_max $x$ |#"
    problem = Problem("q", 1, 0, 1, title, {}, [], [WRITTEN, NUMBER], [])
    parts = [check_part(WRITTEN, "p - y"), check_part(NUMBER, "1/3")]
    text = markdown_report(SubmissionResult(sid, [ProblemResult(1, problem, parts)], name=name))
    html = MarkdownIt().enable("table").render(text)
    h1 = html.split("<h1>", 1)[1].split("</h1>", 1)[0]
    h2 = html.split("<h2>", 1)[1].split("</h2>", 1)[0]
    assert "<" not in h1.replace("&lt;", "") and "<" not in h2.replace("&lt;", "")      # no element made
    assert html_text(h1) == f"Feedback — {sid} ({name})"
    assert html_text(h2) == f"q1. {title} — 1 / 3"
    assert "$" not in text.replace("\\$", "")          # no unescaped $: MathJax and GitHub read no math


def test_an_answer_is_code_so_no_math_markup_or_html_is_read_from_it():
    text = report(LONG[:70], "1/3")
    answer = cells(text)[3]
    assert answer.startswith("<code>") and "\\(p − y\\)" in answer      # one backslash, as written: no MathJax math
    assert "$x_1$" in answer and "&lt;b&gt;" in answer and "<b>" not in answer
    assert "| see" in answer                                            # the pipe stays inside its cell
    assert cells(text)[8].startswith("<code>1/3</code> (read as 0.3333)")


def test_an_answer_with_backticks_keeps_them():
    answer = cells(report("``a` b", "1/3"))[3]
    assert answer == "<code>``a` b</code>"
