"""Heatmaps in the terminal fit the console: every weight stays readable at any width."""
import numpy as np
import pytest
from rich.console import Console

from examprep.document import Heatmap
from examprep.render.terminal import HeatmapView, block_renderable


def _heatmap(n_cols: int) -> Heatmap:
    rng = np.random.default_rng(n_cols)
    w = rng.random((3, n_cols))
    w[0] = 0.0
    w[0, 1] = 1.0                             # one certain row: 1.00 / 100 / █
    w /= w.sum(axis=1, keepdims=True)
    return Heatmap("head 0", w.tolist(), ["2", "0", "<eos>"], [f"k{i}" for i in range(n_cols)])


def _render(block: Heatmap, width: int) -> str:
    console = Console(width=width, no_color=True, record=True, highlight=False)
    console.print(block_renderable(block))
    return console.export_text()


def test_block_renderable_of_a_heatmap_is_the_fitting_view():
    assert isinstance(block_renderable(_heatmap(3)), HeatmapView)


@pytest.mark.parametrize("width", [40, 60, 80, 120, 200])
@pytest.mark.parametrize("n_cols", [3, 12, 18, 40])
def test_no_weight_is_cut_off_at_any_width(n_cols, width):
    text = _render(_heatmap(n_cols), width)
    assert "…" not in text
    assert all(len(line) <= width for line in text.splitlines())
    assert "<eos>" in text                      # row labels are kept whole


def test_two_decimals_where_they_fit_then_percentages_then_shades():
    block = _heatmap(12)
    wide = _render(block, 200)
    assert "1.00" in wide and "(weights in %)" not in wide
    rows = [line for line in wide.splitlines() if line.strip().startswith("2 ")]
    assert len(rows) == 1 and rows[0].split()[1:] == ["0.00", "1.00"] + ["0.00"] * 10

    narrow = _render(block, 80)
    assert "head 0 (weights in %)" in narrow and "1.00" not in narrow
    row = next(line for line in narrow.splitlines() if line.strip().startswith("2 "))
    assert row.split()[1:] == ["0", "100"] + ["0"] * 10
    # each percentage is the weight rounded
    row = next(line for line in narrow.splitlines() if line.strip().startswith("0 "))
    assert [int(v) for v in row.split()[1:]] == [round(100 * v) for v in block.values[1]]

    tiny = _render(_heatmap(40), 60)
    assert "shaded" in tiny and "█" in tiny
    row = next(line for line in tiny.splitlines() if line.startswith("    2 "))
    assert row[6:8] == " █" and row[8:].strip() == ""       # label right-aligned, one column per key
    assert "kkk" in tiny and "keys: k0 k1" in tiny            # the keys are named


def test_values_outside_0_1_are_clamped_not_crashed():
    block = Heatmap("h", [[-0.5, 1.5]], ["r"], ["a", "b"])
    text = _render(block, 80)
    assert "0.00" in text and "1.00" in text


@pytest.mark.parametrize("width", [40, 80, 120])
def test_a_long_input_continues_in_bands_that_fit(width):
    block = _heatmap(187)
    text = _render(block, width)
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines)
    # every key of every row is drawn once: the bands of row "2" hold 187 cells in all
    cells = sum(len(line) - 6 for line in lines if line.startswith("    2 "))
    assert cells == 187
    bands = [line for line in lines if line.startswith("keys ") and " of 187" in line]
    assert len(bands) == -(-187 // (width - 6)) and bands[0].startswith("keys 1–")


def test_multi_character_key_labels_are_not_cut():
    block = Heatmap("head 3", [[0.1] * 11 + [0.9]], ["2"], list("29 Nov 2026") + ["<eos>"])
    text = _render(block, 80)
    assert "<eos>" in text and "<eo " not in text
