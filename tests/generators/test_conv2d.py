"""conv2d: against torch's convolution and autograd; level 1's δ is the output."""
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances  # noqa: E402


def test_conv2d_matches_torch_conv_autograd():
    for p in instances(["conv2d"]):
        a = answers(p)
        ref = REFERENCES["conv2d"](p.params)
        for name in ("output", "grad_kernel", "grad_input") + (("grad_bias",) if "grad_bias" in a else ()):
            agree(a[name], ref[name])


def test_conv2d_level1_delta_is_the_output_for_half_sum_of_squares():
    for p in instances(["conv2d"], range(5)):
        if p.difficulty == 1:
            assert p.params["grad_output"] == p.part("output").expected
