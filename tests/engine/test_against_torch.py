"""Every torch-checkable engine topic against an independent torch implementation.

The references live in examprep.verify (shared with `examprep verify`): torch
modules (GRUCell, LSTMCell, RNNCell, LayerNorm, MultiheadAttention, Transformer layers), torch's
functional ops (conv2d, max_pool2d, cross_entropy with label smoothing, scaled_dot_product_attention)
and autograd for every gradient.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

torch = pytest.importorskip("torch")

from examprep import solve  # noqa: E402
from examprep.verify import REFERENCES, random_params  # noqa: E402

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


def assert_agrees(topic: str, params: dict) -> None:
    ours = solve.answer_only(topic, params)
    theirs = REFERENCES[topic](params)
    for name, want in theirs.items():
        got = np.asarray(ours[name], dtype=float)
        want = np.asarray(want, dtype=float)
        assert got.shape == want.shape, f"{topic}.{name}: shape {got.shape} vs torch {want.shape} for {params}"
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11, err_msg=f"{topic}.{name} for {params}")


@pytest.mark.parametrize("topic", sorted(REFERENCES))
@given(seed=SEEDS)
def test_engine_matches_torch_on_random_instances(topic, seed):
    assert_agrees(topic, random_params(topic, np.random.default_rng(seed)))


def test_gru_both_conventions_and_resets_match_torch_gates():
    rng = np.random.default_rng(1)
    for convention in ("lecture", "pytorch"):
        for reset in ("after", "before"):
            p = random_params("gru-cell", rng) | {"convention": convention, "reset": reset}
            assert_agrees("gru-cell", p)


def test_gru_pytorch_convention_is_torch_grucell_exactly():
    p = random_params("gru-cell", np.random.default_rng(2)) | {"convention": "pytorch", "reset": "after"}
    cell = torch.nn.GRUCell(len(p["x"]), len(p["h"]), dtype=torch.float64)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, name).copy_(torch.tensor(p[name], dtype=torch.float64))
        want = cell(torch.tensor([p["x"]], dtype=torch.float64), torch.tensor([p["h"]], dtype=torch.float64))[0]
    np.testing.assert_allclose(solve.answer_only("gru-cell", p)["h_new"], want.numpy(), rtol=1e-12)


def test_max_pool_ties_route_to_first_maximum_like_torch():
    p = {"input": [[3, 3, 1], [3, 2, 3], [0, 3, 3]], "kernel_size": 2, "stride": 1, "grad_output": [[1, 2], [4, 8]]}
    assert_agrees("max-pool", p)
    assert solve.answer_only("max-pool", p)["grad_input"].tolist() == [[1, 2, 0], [4, 0, 8], [0, 0, 0]]


def test_fully_masked_attention_row_matches_torch_sdpa_zeros():
    p = {"query": [[1.0, 0.0], [0.5, 0.5]], "key": [[1.0, 2.0], [0.0, 1.0]], "value": [[1.0], [2.0]],
         "mask": [[0, 0], [1, 1]]}
    assert_agrees("attention", p)
    ans = solve.answer_only("attention", p)
    assert ans["weights"][0].tolist() == [0.0, 0.0] and ans["output"][0].tolist() == [0.0]


def test_causal_attention_matches_torch_is_causal():
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    want = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(a)[None] for a in (q, k, v)), is_causal=True)[0]
    got = solve.answer_only("attention", {"query": q.tolist(), "key": k.tolist(), "value": v.tolist(), "causal": True})
    np.testing.assert_allclose(got["output"], want.numpy(), rtol=1e-10)


@pytest.mark.parametrize("layer,sizes", [
    ("transformer-encoder-layer", {"d_model": 512, "num_heads": 8}),
    ("transformer-decoder-layer", {"d_model": 512, "num_heads": 8, "dim_feedforward": 2048}),
    ("multi-head-attention", {"d_model": 64, "num_heads": 4}),
    ("lstm", {"input_size": 10, "hidden_size": 20, "num_layers": 2, "bidirectional": True}),
    ("gru", {"input_size": 7, "hidden_size": 5, "bias": False}),
    ("conv2d", {"in_channels": 3, "out_channels": 64, "kernel_size": [7, 5]}),
])
def test_param_count_of_real_torch_modules(layer, sizes):
    p = {"layer": layer, **sizes}
    assert solve.answer_only("param-count", p)["count"] == REFERENCES["param-count"](p)["count"]


def test_layer_norm_inside_sqrt_is_torch_layernorm_module():
    x = np.random.default_rng(4).standard_normal((3, 6))
    ln = torch.nn.LayerNorm(6, dtype=torch.float64)
    want = ln(torch.tensor(x)).detach().numpy()
    got = solve.answer_only("layer-norm", {"x": x.tolist(), "eps_placement": "inside-sqrt"})["output"]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
