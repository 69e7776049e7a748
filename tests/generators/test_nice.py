"""generators.nice, the statements' own number text: a whole number's zeros are digits, not
trailing zeros (999.96 printed "1" and 150.3 "15": scaling-law's "D/N = … against 20" would have
said so had a draw reached it)."""
import pytest

from examprep.generators import nice


@pytest.mark.parametrize("x, sig, text", [
    (999.96, 3, "1000"), (150.3, 3, "150"), (1000.4, 3, "1000"), (120.0001, 3, "120"),
    (12345.6, 3, "12346"), (-3.14159, 3, "-3.14"), (0.000123456, 4, "0.0001235"), (2.0, 3, "2"), (0.5, 3, "0.5"),
])
def test_nice_keeps_the_zeros_of_a_whole_number(x, sig, text):
    assert nice(x, sig) == text
