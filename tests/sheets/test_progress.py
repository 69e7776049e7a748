"""A long sheet's progress on stderr: a bar with the time left on a terminal, the plain lines
piped output always had elsewhere."""
import io
import sys

from examprep.render.terminal import SheetProgress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_bar_with_the_time_left(monkeypatch):
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    with SheetProgress() as progress:
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
    with SheetProgress() as progress:
        for n in range(1, 4):
            progress("variants", n, 3)
        for n in range(1, 5):
            progress("PDF parts", n, 4)
    assert err.getvalue() == "".join(f"typeset {n} of 4 PDF parts\n" for n in range(1, 5))


def test_a_one_copy_sheet_shows_nothing(monkeypatch):
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    with SheetProgress() as progress:
        progress("PDF parts", 1, 2)
        progress("PDF parts", 2, 2)
    assert "PDF parts" not in err.getvalue()
