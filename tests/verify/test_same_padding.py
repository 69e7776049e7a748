"""TensorFlow's "SAME" padding in the torch references is one helper (verify._torch.tf_same) with the
dilation in it: the network table's reference once left it out, so a dilated "same" convolution
lost its size (8 → 4) in the reference while the engine, rightly, kept it."""
import pytest

torch = pytest.importorskip("torch")

from examprep import solve  # noqa: E402
from examprep.verify import REFERENCES  # noqa: E402
from examprep.verify._torch import tf_same  # noqa: E402


def test_same_padding_keeps_the_size_of_a_dilated_convolution_in_the_network_reference():
    p = {"input_shape": [1, 8, 8], "layers": [{"type": "conv2d", "out_channels": 2, "kernel_size": 3, "stride": 1,
                                                "padding": "same", "dilation": 3}]}
    assert tf_same(8, 3, 1, 3) == (3, 3)                       # the effective kernel is 3·(3 − 1) + 1 = 7
    ours, torch_says = solve.solve("network-shapes", p).answer, REFERENCES["network-shapes"](p)
    assert torch_says["output_shapes"] == ours["output_shapes"] == [[2, 8, 8]]
    assert torch_says["macs"] == ours["macs"]
