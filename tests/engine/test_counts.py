"""Counting: parameter counts of real torch modules, LoRA and its training memory (a real optimizer
step), scaling laws and training time in exact arithmetic."""
import sympy as sp
from hypothesis import given, strategies as st
import pytest
from torch import nn

from examprep import engine, solve
from examprep.errors import ParamError


@given(C=st.integers(1, 10**6))
def test_scaling_law_compute_optimal_exact(C):
    N = sp.sqrt(sp.Integer(C) * 10**18 / 120)
    t = engine.scaling_law(compute=float(C) * 1e18)
    assert abs(t.params - float(N)) <= 1e-9 * float(N)
    assert abs(t.tokens - float(20 * N)) <= 1e-9 * float(20 * N)
    assert abs(6 * t.params * t.tokens - float(C) * 1e18) <= 1e-9 * float(C) * 1e18


def test_scaling_law_two_of_three():
    assert engine.scaling_law(params=7e9, tokens=2e12).compute == 6 * 7e9 * 2e12
    assert abs(engine.scaling_law(compute=8.4e22, tokens=2e12).params - 7e9) < 1
    assert abs(engine.scaling_law(compute=8.4e22, params=7e9).tokens - 2e12) < 1e3


@given(d=st.integers(1, 4096), k=st.integers(1, 4096), r=st.integers(1, 64), m=st.integers(1, 8))
def test_lora_counts(d, k, r, m):
    t = engine.lora(d, k, r, num_matrices=m)
    assert t.trainable_params == m * r * (d + k) and t.full_params == m * d * k
    assert abs(t.fraction - r * (d + k) / (d * k)) < 1e-15


@pytest.mark.parametrize("layer,sizes", [
    ("transformer-encoder-layer", {"d_model": 512, "num_heads": 8}),
    ("transformer-decoder-layer", {"d_model": 512, "num_heads": 8, "dim_feedforward": 2048}),
    ("multi-head-attention", {"d_model": 64, "num_heads": 4}),
    ("lstm", {"input_size": 10, "hidden_size": 20, "num_layers": 2, "bidirectional": True}),
    ("gru", {"input_size": 7, "hidden_size": 5, "bias": False}),
    ("conv2d", {"in_channels": 3, "out_channels": 64, "kernel_size": [7, 5]}),
])
def test_param_count_of_real_torch_modules(layer, sizes):
    pytest.importorskip("torch")
    from examprep.verify import REFERENCES

    p = {"layer": layer, **sizes}
    assert solve.answer_only("param-count", p)["count"] == REFERENCES["param-count"](p)["count"]


@pytest.mark.parametrize("optimizer,values", [("adam", 3), ("sgd-momentum", 2), ("sgd", 1)])
def test_lora_memory_bytes_are_what_a_real_optimizer_step_keeps(optimizer, values):
    pytest.importorskip("torch")
    from examprep.verify import REFERENCES


    p = {"d": 24, "k": 40, "r": 4, "num_matrices": 2, "bytes_per_value": 4, "optimizer": optimizer}
    ours, theirs = solve.answer_only("lora-memory", p), REFERENCES["lora-memory"](p)
    for name, want in theirs.items():
        assert ours[name] == pytest.approx(want, rel=1e-12), name
    assert ours["full_training_bytes"] == 2 * 24 * 40 * values * 4


def test_training_time_and_scaling_law_in_exact_arithmetic():
    N, D = sp.Integer(7) * 10 ** 9, sp.Rational(14, 10) * 10 ** 12
    C = 6 * N * D
    thr = 1024 * sp.Rational(312, 1) * 10 ** 12 * sp.Rational(2, 5)
    tt = engine.training_time(params=7e9, tokens=1.4e12, num_gpus=1024, peak_flops=3.12e14, utilization=0.4)
    assert tt.compute == pytest.approx(float(C), rel=1e-15)
    assert tt.seconds == pytest.approx(float(C / thr), rel=1e-14)
    assert tt.days == pytest.approx(float(C / thr / 86400), rel=1e-14)
    assert engine.training_time(compute=float(C), num_gpus=1024, peak_flops=3.12e14, utilization=0.4).seconds == \
        pytest.approx(tt.seconds, rel=1e-15)


@given(d=st.integers(1, 300), k=st.integers(1, 300), r=st.integers(1, 16), num=st.integers(1, 4), nbytes=st.sampled_from([2, 4]),
       opt=st.sampled_from(["adam", "sgd-momentum", "sgd"]))
def test_lora_memory_saved_is_untrained_parameters_times_bytes(d, k, r, num, nbytes, opt):
    t = engine.lora_memory(d, k, r, num_matrices=num, bytes_per_value=nbytes, optimizer=opt)
    per = nbytes * {"adam": 3, "sgd-momentum": 2, "sgd": 1}[opt]
    assert t.saved_bytes == (num * d * k - num * r * (d + k)) * per
    assert t.saved_mib == t.saved_bytes / 2 ** 20


def test_batch_norm_and_layer_norm_counts_are_torch_modules_numel():
    torch = pytest.importorskip("torch")
    for c in (1, 16, 64):
        for affine in (True, False):
            bn = torch.nn.BatchNorm2d(c, affine=affine)
            assert engine.param_count("batch-norm", num_features=c, affine=affine)["count"] == \
                sum(p.numel() for p in bn.parameters())
            ln = torch.nn.LayerNorm(c, elementwise_affine=affine)
            assert engine.param_count("layer-norm", normalized_shape=c, affine=affine)["count"] == \
                sum(p.numel() for p in ln.parameters())
    # Keras's BatchNormalization trains γ and β only: param-count counts trainable parameters
    assert engine.param_count("batch-norm", num_features=32, framework="keras")["count"] == 64


def test_depthwise_separable_counts():
    # MobileNet's block on 32 → 64 channels, 3×3: depthwise 32·9 (+32) and pointwise 32·64 (+64)
    dw = engine.param_count("conv2d", in_channels=32, out_channels=32, kernel_size=3, groups=32)["count"]
    pw = engine.param_count("conv2d", in_channels=32, out_channels=64, kernel_size=1)["count"]
    assert (dw, pw) == (32 * 9 + 32, 32 * 64 + 64)


def test_attention_bias_per_projection_gpt2_small():
    # GPT-2 small's attention block (d = 768, 12 heads) counted with qkv without bias and out_proj with bias
    # (issue 38 item 8): 2,360,064, against four torch.nn.Linear modules
    t = engine.param_count("multi-head-attention", d_model=768, num_heads=12, bias=False, out_bias=True)
    mods = [nn.Linear(768, 768, bias=False) for _ in range(3)] + [nn.Linear(768, 768)]
    assert t["count"] == sum(q.numel() for m in mods for q in m.parameters()) == 2_360_064
    # Whisper's attention: the key projection alone without a bias
    w = engine.param_count("multi-head-attention", d_model=8, num_heads=2, k_bias=False)
    assert w["count"] == 4 * 8 * 8 + 3 * 8 and w["breakdown"]["q_proj.bias"] == 8 and "k_proj.bias" not in w["breakdown"]
    assert engine.param_count("multi-head-attention", d_model=8, num_heads=2)["count"] == \
        engine.param_count("multi-head-attention", d_model=8, num_heads=2, q_bias=True, k_bias=True, v_bias=True,
                           out_bias=True)["count"]
    with pytest.raises(ParamError, match="q_bias: a bias flag per projection applies to multi-head-attention only"):
        engine.param_count("linear", in_features=2, out_features=2, q_bias=False)
