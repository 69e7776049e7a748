"""A long sheet's progress on stderr: a bar with the time left on a terminal, the plain lines
piped output always had elsewhere."""
import io
import sys

from examprep.render.terminal import StepProgress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_bar_with_the_time_left(monkeypatch):
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    with StepProgress() as progress:
        for n in range(1, 11):
            progress("variants", n, 10)
        for n in range(1, 5):
            progress("PDF parts", n, 12)
        progress.bar.refresh()
        shown = err.getvalue()
    assert "variants" in shown and "10/10" in shown and "PDF parts" in shown and "4/12" in shown
    assert "ETA" in shown and "typeset" not in shown


def test_piped_output_keeps_its_lines(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with StepProgress() as progress:
        for n in range(1, 4):
            progress("variants", n, 3)
        for n in range(1, 5):
            progress("PDF parts", n, 4)
    assert err.getvalue() == "".join(f"typeset {n} of 4 PDF parts\n" for n in range(1, 5))


def test_a_one_copy_sheet_shows_nothing(monkeypatch):
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    with StepProgress() as progress:
        progress("PDF parts", 1, 2)
        progress("PDF parts", 2, 2)
    assert "PDF parts" not in err.getvalue()


def test_a_long_step_without_a_terminal_says_a_few_lines(monkeypatch):
    # the one progress helper, as attention-map uses it: a line per quarter, one for a step of unknown length
    from examprep.render.terminal import StepProgress

    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with StepProgress(plain={"load": "loading…", "dates": "{done} of {total} dates"}, lines=4) as progress:
        progress("load", 0, None)
        progress("load", 0, None)
        for n in range(1, 201):
            progress("dates", n, 200)
        progress("other", 1, 10)                       # a step it names no line for
    assert err.getvalue() == "loading…\n50 of 200 dates\n100 of 200 dates\n150 of 200 dates\n200 of 200 dates\n"


def test_a_step_of_unknown_length_gives_way_to_the_next_on_a_terminal(monkeypatch):
    from examprep.render.terminal import StepProgress

    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    with StepProgress() as progress:
        progress("loading", 0, None)
        progress("dates", 5, 10)
        loading = progress.bar.tasks[0]
        assert loading.description == "loading" and loading.finished
        progress.bar.refresh()
    assert "5/10" in err.getvalue()
