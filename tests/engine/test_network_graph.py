"""Networks that are not a chain (issue 38 items 6-7): ResNet-50 written as a graph of named layers with
residual adds, checked against a torch module built here (torchvision's Bottleneck layout, written out:
torchvision is not required); MobileNet v1's Keras count; VGG-16's mult-adds as torchinfo reports them;
DenseNet-style concat; activation memory against torch tensors; bad graphs refused in one line."""
import pytest
import torch
from torch import nn

from examprep import engine
from examprep.errors import ParamError, ShapeError


def _conv(name, c, k, s=1, p=0, bias=False, inputs=None):
    layer = {"type": "conv2d", "out_channels": c, "kernel_size": k, "stride": s, "padding": p, "bias": bias, "name": name}
    return layer | ({"inputs": [inputs]} if inputs else {})


def resnet50_spec(bias: bool = False) -> list[dict]:
    """ResNet-50 (He et al. 2016, torchvision's v1.5: the stride on the 3×3 conv) as network-shapes layers."""
    layers = [_conv("conv1", 64, 7, 2, 3, bias), {"type": "batch-norm", "name": "bn1"}, {"type": "relu", "name": "relu"},
              {"type": "max-pool", "kernel_size": 3, "stride": 2, "padding": 1, "name": "maxpool"}]
    prev = "maxpool"
    for stage, (blocks, width) in enumerate(zip((3, 4, 6, 3), (64, 128, 256, 512)), start=1):
        for b in range(blocks):
            s = 2 if b == 0 and stage > 1 else 1
            n = f"layer{stage}.{b}"
            layers += [_conv(f"{n}.conv1", width, 1, bias=bias, inputs=prev), {"type": "batch-norm", "name": f"{n}.bn1"},
                       {"type": "relu", "name": f"{n}.relu1"}, _conv(f"{n}.conv2", width, 3, s, 1, bias),
                       {"type": "batch-norm", "name": f"{n}.bn2"}, {"type": "relu", "name": f"{n}.relu2"},
                       _conv(f"{n}.conv3", 4 * width, 1, bias=bias), {"type": "batch-norm", "name": f"{n}.bn3"}]
            shortcut = prev
            if b == 0:
                layers += [_conv(f"{n}.downsample.0", 4 * width, 1, s, bias=bias, inputs=prev),
                           {"type": "batch-norm", "name": f"{n}.downsample.1"}]
                shortcut = f"{n}.downsample.1"
            layers += [{"type": "add", "inputs": [f"{n}.bn3", shortcut], "name": f"{n}.add"},
                       {"type": "relu", "name": f"{n}.out"}]
            prev = f"{n}.out"
    return layers + [{"type": "global-avg-pool"}, {"type": "flatten"}, {"type": "linear", "out_features": 1000}]


class Bottleneck(nn.Module):
    def __init__(self, c_in, width, stride):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c_in, width, 1, bias=False), nn.BatchNorm2d(width)
        self.conv2, self.bn2 = nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width)
        self.conv3, self.bn3 = nn.Conv2d(width, 4 * width, 1, bias=False), nn.BatchNorm2d(4 * width)
        self.downsample = (nn.Sequential(nn.Conv2d(c_in, 4 * width, 1, stride, bias=False), nn.BatchNorm2d(4 * width))
                           if stride != 1 or c_in != 4 * width else nn.Identity())

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)))
        return torch.relu(self.bn3(self.conv3(y)) + self.downsample(x))


def resnet50_module() -> nn.Module:
    blocks, c_in = [], 64
    for stage, (n, width) in enumerate(zip((3, 4, 6, 3), (64, 128, 256, 512))):
        for b in range(n):
            blocks.append(Bottleneck(c_in, width, 2 if b == 0 and stage else 1))
            c_in = 4 * width
    return nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1),
                         *blocks, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000))


def test_resnet50_as_torchvision_counts_it_and_as_keras():
    t = engine.network_shapes([3, 224, 224], resnet50_spec())
    model = resnet50_module()
    assert t.total_params == sum(q.numel() for q in model.parameters()) == 25_557_032
    with torch.no_grad():
        assert list(model[:-3].eval()(torch.zeros(1, 3, 224, 224)).shape[1:]) == t.output_shapes[-4] == [2048, 7, 7]
    # Keras's ResNet50: its convs have biases and its summary counts BN's moving mean and variance (4C)
    keras = engine.network_shapes([3, 224, 224], resnet50_spec(bias=True), framework="keras")
    extra = sum(m.out_channels for m in model.modules() if isinstance(m, nn.Conv2d)) + sum(
        b.numel() for name, b in model.named_buffers() if "running_" in name)
    assert keras.total_params == 25_557_032 + extra == 25_636_712


def test_mobilenet_v1_keras_summary_total():
    # Howard et al. 2017, Keras's MobileNet(alpha=1, 224): 4,253,864 parameters in its summary (BN 4C,
    # convs without bias, the classifier a 1×1 conv with bias: the same count as a linear layer)
    layers = [_conv("conv1", 32, 3, 2, 1), {"type": "batch-norm"}, {"type": "relu"}]
    c = 32
    for out, s in ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), *[(512, 1)] * 5, (1024, 2), (1024, 1)):
        layers += [{"type": "conv2d", "out_channels": c, "kernel_size": 3, "stride": s, "padding": 1, "groups": c,
                    "bias": False}, {"type": "batch-norm"}, {"type": "relu"},
                   {"type": "conv2d", "out_channels": out, "kernel_size": 1, "bias": False}, {"type": "batch-norm"},
                   {"type": "relu"}]
        c = out
    layers += [{"type": "global-avg-pool"}, {"type": "flatten"}, {"type": "dropout"}, {"type": "linear", "out_features": 1000}]
    assert engine.network_shapes([3, 224, 224], layers, framework="keras").total_params == 4_253_864


VGG16 = [*[L for c, n in ((64, 2), (128, 2), (256, 3), (512, 3), (512, 3)) for L in
           [{"type": "conv2d", "out_channels": c, "kernel_size": 3, "padding": 1}, {"type": "relu"}] * n
           + [{"type": "max-pool", "kernel_size": 2}]],
         {"type": "flatten"}, {"type": "linear", "out_features": 4096}, {"type": "relu"},
         {"type": "linear", "out_features": 4096}, {"type": "relu"}, {"type": "linear", "out_features": 1000}]


def test_vgg16_flops_conventions():
    # torchinfo's summary of torchvision's vgg16 on 1×3×224×224: "Total mult-adds (G): 15.48"
    t = engine.network_shapes([3, 224, 224], VGG16, flops_convention="macs+bias")
    assert round(t.total_flops / 1e9, 2) == 15.48 and t.total_params == 138_357_544
    macs = engine.network_shapes([3, 224, 224], VGG16)
    assert macs.total_flops == macs.total_macs and round(macs.total_macs / 1e9, 2) == 15.47
    assert engine.network_shapes([3, 224, 224], VGG16, flops_convention="2macs").total_flops == 2 * macs.total_macs
    # the bias adds: one per output element of every conv and linear layer
    outputs = sum(t.activation_count[i] for i, L in enumerate(VGG16) if L["type"] in ("conv2d", "linear"))
    assert t.total_flops - macs.total_macs == outputs


def test_vgg16_activation_memory_as_cs231n_counts_it():
    # CS231n "Convolutional Networks", VGGNet: "TOTAL memory: 24M * 4 bytes ~= 93MB / image (only forward!
    # ~*2 for bwd)"; their table folds each ReLU into its conv, so count the layers they list
    listed = [L | {"name": f"l{i}"} for i, L in enumerate(VGG16) if L["type"] != "relu"]
    t = engine.network_shapes([3, 224, 224], listed)
    assert round(t.total_activation_count / 1e6) == 15      # 15.2M: the sum of their rows (their stated total, "24M", is larger)
    assert t.total_activation_bytes == 4 * t.total_activation_count == t.training_activation_bytes // 2
    half = engine.network_shapes([3, 224, 224], listed, dtype="bfloat16", batch_size=8, count_input=False)
    assert half.total_activation_bytes == 2 * 8 * (t.total_activation_count - 3 * 224 * 224)


def test_dense_block_concat_and_activation_bytes_against_torch():
    # a DenseNet block (Huang et al. 2017): each layer adds k = 4 channels to the concatenation of all before it
    layers = [_conv("h1", 4, 3, p=1), {"type": "concat", "inputs": ["input", "h1"], "name": "c1"},
              _conv("h2", 4, 3, p=1, inputs="c1"), {"type": "concat", "inputs": ["c1", "h2"], "name": "c2"}]
    t = engine.network_shapes([6, 5, 5], layers, dtype="float16", batch_size=2)
    x = torch.zeros(2, 6, 5, 5, dtype=torch.float16)
    h1 = nn.Conv2d(6, 4, 3, padding=1, bias=False)
    c1 = torch.cat([x, torch.zeros(2, 4, 5, 5, dtype=torch.float16)], 1)
    h2 = nn.Conv2d(10, 4, 3, padding=1, bias=False)
    c2 = torch.cat([c1, torch.zeros(2, 4, 5, 5, dtype=torch.float16)], 1)
    assert t.output_shapes[-1] == list(c2.shape[1:]) == [14, 5, 5]
    assert t.total_params == sum(q.numel() for m in (h1, h2) for q in m.parameters())
    branch = torch.zeros(2, 4, 5, 5, dtype=torch.float16)
    assert t.total_activation_bytes == sum(v.numel() * v.element_size() for v in (x, branch, c1, branch, c2))


def test_the_chain_form_is_unchanged():
    chain = [{"type": "conv2d", "out_channels": 4, "kernel_size": 3}, {"type": "relu"}, {"type": "flatten"},
             {"type": "linear", "out_features": 2}]
    named = [L | {"name": f"x{i}"} | ({"inputs": [f"x{i - 1}" if i else "input"]}) for i, L in enumerate(chain)]
    a, b = engine.network_shapes([1, 6, 6], chain), engine.network_shapes([1, 6, 6], named)
    assert (a.output_shapes, a.params, a.macs) == (b.output_shapes, b.params, b.macs)


@pytest.mark.parametrize("layers, message", [
    ([{"type": "add", "inputs": ["input"]}], "layers[0] (add).inputs: add merges two or more layers, got 1"),
    ([{"type": "add"}], "layers[0] (add): needs \"inputs\""),
    ([_conv("a", 2, 1), {"type": "add", "inputs": ["input", "a"]}], "layers[1] (add): add needs inputs of one shape"),
    ([_conv("a", 2, 3), {"type": "concat", "inputs": ["input", "a"]}], "layers[1] (concat): concat joins along the channels"),
    ([{"type": "relu", "inputs": ["later"]}, {"type": "relu", "name": "later"}], "'later' names no earlier layer"),
    ([{"type": "relu", "name": "r"}, {"type": "relu", "name": "r"}, {"type": "relu", "inputs": ["r"]}], "'r' names two layers"),
])
def test_bad_graphs_are_refused_naming_the_layer(layers, message):
    with pytest.raises((ParamError, ShapeError)) as err:
        engine.network_shapes([3, 4, 4], layers)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_bad_conventions_are_refused():
    with pytest.raises(ParamError, match="flops_convention"):
        engine.network_shapes([3], [{"type": "linear", "out_features": 2}], flops_convention="flops")
    with pytest.raises(ParamError, match="dtype"):
        engine.network_shapes([3], [{"type": "linear", "out_features": 2}], dtype="fp8")


LENET_C3 = [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5], [0, 4, 5], [0, 1, 5], [0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5],
            [0, 3, 4, 5], [0, 1, 4, 5], [0, 1, 2, 5], [0, 1, 3, 4], [1, 2, 4, 5], [0, 2, 3, 5], [0, 1, 2, 3, 4, 5]]


def test_lenet5_c3_partial_connection_table():
    # LeCun et al. 1998, Table I: C3 has 1,516 trainable parameters and 151,600 connections (bias included)
    t = engine.network_shapes([6, 14, 14], [{"type": "conv2d", "out_channels": 16, "kernel_size": 5,
                                              "connection_table": LENET_C3}], flops_convention="macs+bias")
    convs = [nn.Conv2d(len(row), 1, 5) for row in LENET_C3]
    assert t.params == [sum(q.numel() for m in convs for q in m.parameters())] == [1516]
    assert t.output_shapes == [[16, 10, 10]] and t.total_flops == 151_600
    with pytest.raises(ParamError, match=r"connection_table\[1\]: expected distinct input channels in 0..5"):
        engine.network_shapes([6, 14, 14], [{"type": "conv2d", "out_channels": 2, "kernel_size": 5,
                                              "connection_table": [[0], [6]]}])


def test_locally_connected_as_keras_counts_it():
    # Keras's LocallyConnected2D(filters 2, kernel 3) on 4×6×6 (channels first): 4×4 positions, each with its own
    # 2·4·3·3 weights and 2 biases: 16·(72 + 2) = 1,184
    t = engine.network_shapes([4, 6, 6], [{"type": "locally-connected", "out_channels": 2, "kernel_size": 3}])
    x = torch.randn(4, 6, 6, dtype=torch.float64)
    w, b = torch.randn(16, 2, 36, dtype=torch.float64), torch.randn(2, 4, 4, dtype=torch.float64)
    y = torch.einsum("poc,cp->op", w, nn.functional.unfold(x[None], 3)[0]).reshape(2, 4, 4) + b
    assert t.output_shapes == [list(y.shape)] and t.params == [w.numel() + b.numel()] == [1184]
    assert t.macs == [w.numel()]


def test_param_count_takes_a_network():
    # param-count's layer "network": network-shapes' total, per named layer; ResNet-50 as torchvision counts it
    t = engine.param_count("network", input_shape=[3, 224, 224], layers=resnet50_spec())
    assert t["count"] == 25_557_032 and t["breakdown"]["conv1"] == 64 * 3 * 7 * 7
    with pytest.raises(ParamError, match="bias: a network's layers give their own bias"):
        engine.param_count("network", input_shape=[3], layers=[{"type": "linear", "out_features": 2}], bias=False)
