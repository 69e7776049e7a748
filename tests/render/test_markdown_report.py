"""The Markdown feedback file (grade --report) shows a student's answer once, as it was written, and as
text: a written answer is never followed by a "(read as …)" copy of itself, and nothing in an answer
becomes math, Markdown or HTML when the file is viewed (read back by markdown-it, an independent
CommonMark parser, as GitHub or a MathJax page would render it)."""
from markdown_it import MarkdownIt

from examprep.answers import check_part
from examprep.grading.grade import ProblemResult, SubmissionResult
from examprep.problem import Part, Problem, Tolerance
from examprep.render.report import markdown_report

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


def test_a_long_written_answer_is_shown_once():
    text = report(LONG, "1/3")
    line = next(line for line in text.splitlines() if "`why`" in line)
    assert line.count("The log cancels") == 1 and "read as" not in line and "…" in line      # cut at 80, once
    assert "(read as 0.3333)" in text                 # a value that reads differently is still named


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
