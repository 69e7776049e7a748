"""`examprep attention-map` as a user runs it: bad input fails early with one line, the input is
shown verbatim (never as markup or math), and the figure is written only when all went well."""
import pytest

pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from examprep.cli import app  # noqa: E402

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, ["attention-map", *args, "--no-color"], env={"COLUMNS": "100"})


@pytest.mark.parametrize("text", ["", "   "])
def test_empty_text_is_an_error(tiny_dates, text):
    res = _run("-c", str(tiny_dates), text, "--alignment", "0")
    assert res.exit_code == 2 and "TEXT" in res.output and "empty" in res.output


def test_an_unwritable_out_fails_before_the_work_and_names_the_reason(tiny_dates, tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("keep me")
    res = _run("-c", str(tiny_dates), "1 Jan 2000", "--out", str(blocker / "map.png"))
    assert res.exit_code != 0 and "is a file, not a directory" in res.output
    assert "head 0" not in res.output            # nothing computed or printed first
    assert blocker.read_text() == "keep me"
    res = _run("-c", str(tiny_dates), "1 Jan 2000", "--out", str(tmp_path))
    assert res.exit_code != 0 and "--out" in res.output


def test_a_directory_that_cannot_be_made_fails_before_the_work(tiny_dates):
    # /proc refuses new directories even to root (and "/" refuses them where there is no /proc)
    res = _run("-c", str(tiny_dates), "1 Jan 2000", "--out", "/proc/examprep-test/map.pdf")
    assert res.exit_code != 0 and "cannot write" in res.output and "head 0" not in res.output


def test_the_input_is_shown_verbatim_in_the_terminal_and_the_figure(tiny_dates, tmp_path):
    pypdf = pytest.importorskip("pypdf")
    text = "a $b^2$ [red]c[/] 2026"
    out = tmp_path / "map.pdf"
    res = _run("-c", str(tiny_dates), text, "--head", "0", "--alignment", "0", "--out", str(out))
    assert res.exit_code == 0, res.output
    assert repr(text) in res.output.replace("\n", "")
    words = pypdf.PdfReader(out).pages[0].extract_text()
    assert "$b^2$" in words and "[red]c[/]" in words


def test_layer_and_head_errors_read_well_for_a_one_layer_model(tiny_dates):
    res = _run("-c", str(tiny_dates), "1 Jan 2000", "--layer", "3", "--alignment", "0")
    assert res.exit_code == 2 and "this model has 1 cross layer (0), got 3" in res.output
    res = _run("-c", str(tiny_dates), "1 Jan 2000", "--head", "2", "--alignment", "0")
    assert res.exit_code == 2 and "2 heads (0…1), got 2" in res.output


def test_the_command_leaves_the_callers_torch_thread_count_alone(tiny_dates):
    import torch

    # a count of our own, neither 1 (what the command sets while it works) nor the pytest-xdist
    # worker's pinned count, so that a command that does not restore it fails here
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        assert _run("-c", str(tiny_dates), "1 Jan 2000", "--alignment", "5").exit_code == 0
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("count", ["-1", "2001", "100000000000"])
def test_an_alignment_count_out_of_range_is_refused_at_once(tiny_dates, count):
    res = _run("-c", str(tiny_dates), "1 Jan 2000", "--alignment", count)
    assert res.exit_code == 2 and "--alignment" in res.output and "2,000" in res.output
    assert "head 0" not in res.output


def test_the_alignment_rate_shows_its_progress_in_a_few_lines(tiny_dates):
    # issue 36: attention-map was silent for 5 s (torch, the model, 200 held-out dates)
    res = _run("-c", str(tiny_dates), "1 Jan 2000", "--alignment", "20")
    assert res.exit_code == 0, res.output
    assert res.stderr.splitlines() == [
        f"alignment rate: {n} of 20 held-out dates" for n in (5, 10, 15, 20)]
    assert "alignment rate on 20 held-out dates" in res.stdout
