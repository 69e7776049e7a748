"""The quiz reads tensor shapes as grade does (issue 36, item 1): typed 10×26×26, 10x26x26 or
(10, 26, 26), a network table's shapes are accepted at the first try; a wrong number of dimensions
is asked again with the reason."""
import io

from examprep.quiz import QuizOptions, Session, Terminal, plan_problems

from .helpers import typed


class Scripted(Terminal):
    def __init__(self, lines):
        super().__init__(no_color=True, interactive=False, width=100)
        self.lines = list(lines)
        self.console.file = io.StringIO()

    def ask(self, prompt, *, timeout=None):
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


STYLES = ("{}×{}×{}", "{} x {} x {}", "{}x{}x{}", "({}, {}, {})", "[{}, {}, {}]", "{}, {}, {}")


def answers(problem, bad_first: bool = False) -> list[str]:
    lines, k = [], 0
    for part in problem.parts:
        if part.tensor_shape and len(part.expected) == 3:
            if bad_first and k == 0:
                lines.append("10×26")                  # two dimensions: refused, asked again
            lines.append(STYLES[k % len(STYLES)].format(*(int(v) for v in part.expected)))
            k += 1
        elif part.tensor_shape:
            lines.append(f"({int(part.expected[0])},)")
        else:
            lines.append(typed(part))
    return lines


def test_a_quiz_takes_shapes_written_as_the_sheet_prints_them():
    problems = plan_problems(QuizOptions(topics=["network-shapes"], count=2, seed=3, difficulty=2), None, now=0)
    assert all(any(p.tensor_shape for p in problem.parts) for problem in problems)
    for problem in problems:
        term = Scripted([*answers(problem, bad_first=True), ""])
        summary = Session(term, None).run_practice([problem])
        assert [p.status for o in summary.outcomes for p in o.parts] == ["correct"] * len(problem.parts)
        assert term.lines == []
        assert "expected a shape of 3 dimensions, e.g. 3×28×28; got 2" in term.console.file.getvalue()
