"""A network's shape and parameter table: LeNet-5 and a VGG block by hand, the real torch layers, and
one error naming the layer whose output would be empty."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from examprep import engine
from examprep.errors import ParamError, ShapeError

LENET = [{"type": "conv2d", "out_channels": 6, "kernel_size": 5}, {"type": "tanh"},
         {"type": "avg-pool", "kernel_size": 2}, {"type": "conv2d", "out_channels": 16, "kernel_size": 5},
         {"type": "tanh"}, {"type": "avg-pool", "kernel_size": 2}, {"type": "flatten"},
         {"type": "linear", "out_features": 120}, {"type": "tanh"}, {"type": "linear", "out_features": 84},
         {"type": "tanh"}, {"type": "linear", "out_features": 10}]


def test_lenet5_table_as_the_textbooks_give_it():
    # LeCun et al. 1998 on 1×32×32: C1 6×28×28 (156 params), S2 6×14×14, C3 16×10×10 (2,416 with full
    # connections), S4 16×5×5, F5 120 (48,120), F6 84 (10,164), output 10 (850): 61,706 in all
    t = engine.network_shapes([1, 32, 32], LENET)
    assert t.output_shapes[0] == [6, 28, 28] and t.output_shapes[3] == [16, 10, 10] and t.output_shapes[6] == [400]
    assert [t.params[i] for i in (0, 3, 7, 9, 11)] == [156, 2416, 48120, 10164, 850]
    assert t.total_params == 61706
    assert t.macs[0] == 6 * 28 * 28 * 25 and t.macs[7] == 400 * 120


def test_cs231n_conv_layer_of_20_filters():
    # 32×32×3 input, 20 filters 5×5×3, stride 1, pad 2 (CS231n "Convolutional Networks"): 20×32×32 and
    # (5·5·3 + 1)·20 = 1,520 parameters
    t = engine.network_shapes([3, 32, 32], [{"type": "conv2d", "out_channels": 20, "kernel_size": 5, "padding": 2}])
    assert t.output_shapes == [[20, 32, 32]] and t.total_params == 1520


def test_batch_norm_counts_2c_in_pytorch_and_4c_as_keras_summarises():
    layers = [{"type": "conv2d", "out_channels": 8, "kernel_size": 3, "padding": "same", "bias": False},
              {"type": "batch-norm"}, {"type": "relu"}, {"type": "global-avg-pool"}, {"type": "flatten"},
              {"type": "batch-norm"}]
    torch_t = engine.network_shapes([3, 16, 16], layers)
    keras_t = engine.network_shapes([3, 16, 16], layers, framework="keras")
    assert torch_t.params == [216, 16, 0, 0, 0, 16] and keras_t.params[1] == 32 and keras_t.params[5] == 32
    assert torch_t.output_shapes[3] == [8, 1, 1] and torch_t.output_shapes[4] == [8]


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1))
def test_network_table_equals_the_real_torch_layers(seed):
    pytest.importorskip("torch")
    from examprep.verify import random_params, REFERENCES
    p = random_params("network-shapes", np.random.default_rng(seed))
    t = engine.network_shapes(p["input_shape"], p["layers"], framework=p["framework"])
    want = REFERENCES["network-shapes"](p)
    assert t.output_shapes == want["output_shapes"] and t.params == want["params"] and t.macs == want["macs"]


def test_a_layer_whose_output_would_be_empty_is_named():
    with pytest.raises(ShapeError, match=r"layers\[2\] \(conv2d\)"):
        engine.network_shapes([1, 8, 8], [{"type": "conv2d", "out_channels": 4, "kernel_size": 5},
                                          {"type": "max-pool", "kernel_size": 2},
                                          {"type": "conv2d", "out_channels": 4, "kernel_size": 5}])
    with pytest.raises(ShapeError, match=r"layers\[1\] \(linear\).*flatten"):
        engine.network_shapes([1, 8, 8], [{"type": "relu"}, {"type": "linear", "out_features": 3}])
    with pytest.raises(ParamError, match=r"layers\[0\] \(conv2d\): unknown option 'filters'"):
        engine.network_shapes([1, 8, 8], [{"type": "conv2d", "filters": 3, "kernel_size": 3}])
    with pytest.raises(ParamError, match="groups"):
        engine.network_shapes([3, 8, 8], [{"type": "conv2d", "out_channels": 4, "kernel_size": 3, "groups": 2}])


L1 = r"layers\[1\] "


@pytest.mark.parametrize("layer, message", [
    ({"type": "conv2d", "out_channels": 0, "kernel_size": 3}, L1 + r"\(conv2d\)\.out_channels: expected an integer ≥ 1, got 0"),
    ({"type": "conv2d", "out_channels": 2, "kernel_size": [3, 0]},
     L1 + r"\(conv2d\)\.kernel_size\[1\]: expected an integer ≥ 1, got 0"),
    ({"type": "conv2d", "out_channels": 2, "kernel_size": 3, "stride": 1.5},
     L1 + r"\(conv2d\)\.stride: expected an integer, got 1\.5"),
    ({"type": "conv2d", "out_channels": 2, "kernel_size": 3, "padding": -1},
     L1 + r"\(conv2d\)\.padding: expected an integer ≥ 0, got -1"),
    ({"type": "conv2d", "out_channels": 2, "kernel_size": 3, "bias": "yes"}, L1 + r"\(conv2d\)\.bias: expected true or false"),
    ({"type": "max-pool", "kernel_size": 2, "ceil_mode": 2}, L1 + r"\(max-pool\)\.ceil_mode: expected true or false"),
    ({"type": "max-pool", "kernel_size": True}, L1 + r"\(max-pool\)\.kernel_size: expected an integer, got True"),
    ({"type": "Conv2d", "out_channels": 2, "kernel_size": 3}, r"layers\[1\]\.type: expected one of 'conv2d'"),
    ({"type": 7}, r"layers\[1\]\.type: expected one of"),
])
def test_network_shapes_errors_name_the_layer_and_option(layer, message):
    """Each option's check names the layer and option (the fast paths of issue 26 write the name only
    for a wrong value: these are the wrong values)."""
    with pytest.raises(ParamError, match=f"^{message}"):
        engine.network_shapes([1, 8, 8], [{"type": "relu"}, layer])
