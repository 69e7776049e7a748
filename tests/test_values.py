"""examprep.values: the one rounding rule and the one float-noise snapper, and every output's number
formatter standing on them (the PDF, Markdown and the terminal write the same digits)."""
import math

import pytest

from examprep.render import markdown, terminal
from examprep.render.typst import blocks
from examprep.values import rounded, snap


@pytest.mark.parametrize("x, digits, text", [(3.0, 4, "3"), (-2.0, 4, "-2"), (0.123456, 4, "0.1235"),
                                             (4.5399e-05, 3, "4.54e-05"), (1e15, 4, "1e+15"), (2.5, 2, "2.5")])
def test_rounded_writes_whole_numbers_plainly_and_the_rest_to_n_figures(x, digits, text):
    assert rounded(x, digits) == text


def test_snap_zeroes_noise_relative_to_the_array_and_below_an_absolute_floor():
    assert snap([1.0, -2.8e-17, 0.5]) == [1.0, 0.0, 0.5]
    assert snap([1e6, 1e-7]) == [1e6, 0.0]                    # below 1e-12 of the largest entry
    assert snap([1e-3, 1e-7]) == [1e-3, 1e-7]                 # a real small value stays
    assert snap(5e-14) == 0.0 and snap(5e-13) == 5e-13       # a lone number: the absolute floor only
    assert snap([1, 2]) == [1, 2] and snap([None, 1e-20]) == [None, 1e-20] and snap("1e-20") == "1e-20"


@pytest.mark.parametrize("x, typst, latex, text", [
    (-2.7755575615628914e-17, "0", "0", "0"),                         # a cancelled gradient
    (4.54e-05, "4.54 × 10^(-5)", r"4.54 \times 10^{-5}", "4.54e-05"),
    (5.88e23, "5.88 × 10^(23)", r"5.88 \times 10^{23}", "5.88e+23"),
    (math.inf, "∞", r"\infty", "∞"), (-math.inf, "-∞", r"-\infty", "-∞"), (None, "-∞", r"-\infty", "-∞"),
    (0.123456, "0.1235", "0.1235", "0.1235"), (12.0, "12", "12", "12"),
])
def test_the_pdf_markdown_and_terminal_write_the_same_number(x, typst, latex, text):
    assert blocks.number(x) == typst and markdown.number(x) == latex and terminal.fmt_number(x, 4) == text


def test_markdown_shows_nan_and_noise_in_arrays_as_the_pdf_does():
    assert markdown.number(math.nan) == r"\text{undefined}"          # it raised ValueError
    assert markdown.latex_value([[1.0, 3e-17], [0.5, 0.25]]) == r"\begin{bmatrix} 1 & 0 \\ 0.5 & 0.25 \end{bmatrix}"
    assert "0" in blocks.value_math([1.0, 3e-17]) and "e-17" not in markdown.latex_value([1.0, 3e-17])
