"""Anki's side of a card: the note types (fields, templates, style) and each field's HTML.

Math is LaTeX between Anki's MathJax delimiters, \\( … \\) inline and \\[ … \\] displayed (the
Anki manual, "Math & Symbols"), as in the Moodle export, whose block HTML this module reuses: a
problem's statement, worked solution and answers read the same in Anki as in Moodle. The notes'
``$…$`` inline math becomes \\( … \\); their quotes already use \\( \\).

Two note types, each with one card:

    examprep concept   Question (with its choices) → Answer, Explanation, Source (lecture › section:
                       the verbatim quote), Note (where the notes are loose)
    examprep problem   Problem (statement and the parts asked) → Solution (worked steps), Answers,
                       and the generator, level and seed that rebuild it (Origin)

Their ids are fixed numbers (below) so that a re-exported deck's notes keep their note type.
"""
from __future__ import annotations

from typing import Any

from examprep import document as d, escape
from examprep.problem import Problem
from examprep.render import receptive_field_rows
from examprep.render.moodle import _math_text, _statement_html, block_html, solution_html
from examprep.stream import Stream
from examprep.values import fmt_number

# Fixed ids (Anki's note type and deck ids are 64-bit integers chosen by the deck's author; a
# changed id would make Anki import a second note type beside the first).
CONCEPT_MODEL_ID = 1_733_910_251_001
PROBLEM_MODEL_ID = 1_733_910_251_002

CSS = """\
.card { font-family: "Noto Serif", Georgia, serif; font-size: 19px; text-align: left; color: #111;
        background: #fff; max-width: 46em; margin: 0 auto; line-height: 1.45; }
.nightMode.card, .night_mode .card { color: #eee; background: #1e1e1e; }
.examprep-kind { font-size: 13px; color: #777; text-transform: uppercase; letter-spacing: .05em; }
.examprep-choices { list-style: none; padding-left: .5em; }
.examprep-answer { font-weight: bold; }
.examprep-source { font-size: 15px; color: #555; border-left: 3px solid #bbb; padding-left: .6em; }
.nightMode .examprep-source { color: #bbb; }
.examprep-origin { font-size: 12px; color: #888; }
table { border-collapse: collapse; margin: .4em 0; }
td, th { border: 1px solid #bbb; padding: 2px 8px; text-align: right; }
"""

CONCEPT_FIELDS = ("Question", "Answer", "Explanation", "Source", "Note", "Id")
PROBLEM_FIELDS = ("Problem", "Solution", "Answers", "Origin", "Id")

CONCEPT_TEMPLATE = {
    "name": "Recall",
    "qfmt": '<div class="examprep-kind">examprep · concept</div>{{Question}}',
    "afmt": ('{{FrontSide}}<hr id="answer"><div class="examprep-answer">{{Answer}}</div>{{Explanation}}'
             '{{#Note}}<p><em>Where the notes are loose.</em> {{Note}}</p>{{/Note}}'
             '<div class="examprep-source">{{Source}}</div>'),
}
PROBLEM_TEMPLATE = {
    "name": "Worked solution",
    "qfmt": ('<div class="examprep-kind">examprep · problem</div>{{Problem}}'
             '<p><em>Work it out on paper, then show the solution.</em></p>'),
    "afmt": ('{{FrontSide}}<hr id="answer">{{Solution}}{{Answers}}'
             '<div class="examprep-origin">{{Origin}}</div>'),
}


def models() -> tuple[Any, Any]:
    """The two genanki note types (concept, problem)."""
    import genanki

    concept = genanki.Model(CONCEPT_MODEL_ID, "examprep concept", fields=[{"name": f} for f in CONCEPT_FIELDS],
                            templates=[CONCEPT_TEMPLATE], css=CSS, sort_field_index=0)
    problem = genanki.Model(PROBLEM_MODEL_ID, "examprep problem", fields=[{"name": f} for f in PROBLEM_FIELDS],
                            templates=[PROBLEM_TEMPLATE], css=CSS, sort_field_index=0)
    return concept, problem


def concept_fields(concept: Any) -> list[str]:
    """The fields of a concept question (examprep.sources.concepts.Concept), in CONCEPT_FIELDS' order.

    A choice question lists its choices labelled a, b, c, … in the order the quiz shows at seed 0
    (drawn from the question's id: fixed across exports, and not the bank's order, where the right
    answer is written first); the answer names the correct one. The source is the lecture and
    section, then the verbatim quote."""
    question = f"<p>{_math_text(concept.question)}</p>"
    if concept.kind == "choice":
        order = Stream("concept", concept.id, 0).shuffle(range(len(concept.choices)))
        items = "".join(f"<li>{Problem.label(pos)}) {_math_text(concept.choices[orig])}</li>"
                        for pos, orig in enumerate(order))
        question += f'<ul class="examprep-choices">{items}</ul>'
        answer = f"{Problem.label(order.index(concept.answer))}) {_math_text(concept.choices[concept.answer])}"
    else:
        answer = escape.html(fmt_number(concept.answer, 6))
    source = concept.source
    cite = f"{escape.html(source.lecture)} › {escape.html(source.section)}"
    quote = _quote_html(source.quote)
    return [question, answer, f"<p>{_math_text(concept.explanation)}</p>",
            f"{cite}: “{quote}”", _math_text(concept.note) if concept.note else "", concept.id]


def _quote_html(quote: str) -> str:
    # a quote keeps the notes' own \( … \) math; $…$ (rare in quotes) becomes \( … \) too
    return _math_text(quote) if "\\(" not in quote else escape.html(quote)


def figure_html(fig: Any) -> str:
    """A figure the worked solution draws (sheets.build.solution_extras): a heatmap as a shaded
    table, a receptive-field figure as the units each level reads, top layer first (as the
    Markdown sheet writes it)."""
    if isinstance(fig, d.Heatmap):
        return block_html(fig)

    rows = [f"<li>{escape.html(row)}</li>" for row in receptive_field_rows(fig)]
    return ("<p><strong>Receptive field of the middle output</strong> (units it depends on, top layer first):</p>"
            f"<ul>{''.join(rows)}</ul><p>Span at the input: {fig.receptive_field} positions.</p>")


def problem_fields(problem: Problem, *, title: str, figures: list | tuple = (), command: str | None = None) -> list[str]:
    """The fields of a generated problem, in PROBLEM_FIELDS' order: the statement and the parts
    asked (with their tolerance, as on a sheet), the worked solution with the figures it draws, the
    answers, and where it comes from (``command``, by default ``examprep generate <generator> -d
    <level> -s <seed>``, rebuilds it)."""
    parts = "".join(f"<p><strong>({Problem.label(i)})</strong> {_math_text(p.prompt)} "
                    f"<em>[{escape.html(p.tolerance.describe())}]</em></p>" for i, p in enumerate(problem.parts))
    front = f"<h3>{escape.html(problem.title)}</h3>" + _statement_html(problem) + parts
    solution = solution_html(problem)
    worked, _, answers = solution.partition("<h4>Answers</h4>")
    worked += "".join(figure_html(f) for f in figures)
    cf = " --calculator-free" if problem.calculator_free else ""
    command = command or f"examprep generate {problem.generator} -d {problem.difficulty} -s {problem.seed}{cf}"
    origin = f"{escape.html(title)} · level {problem.difficulty} · <code>{escape.html(command)}</code>"
    return [front, worked, "<h4>Answers</h4>" + answers if answers else "", origin, note_key(problem)]


def note_key(problem: Problem) -> str:
    """What identifies a generated problem's note across exports: generator, level, seed and the
    calculator-free flag (the generator's version is left out, so a newer version updates the card)."""
    return f"{problem.generator}/d{problem.difficulty}/s{problem.seed}" + ("/cf" if problem.calculator_free else "")


__all__ = ["CONCEPT_FIELDS", "CONCEPT_MODEL_ID", "CSS", "PROBLEM_FIELDS", "PROBLEM_MODEL_ID", "block_html",
           "concept_fields", "figure_html", "models", "note_key",
           "problem_fields"]
