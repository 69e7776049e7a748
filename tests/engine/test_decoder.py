"""The decoder's attention: cross-attention against torch's MultiheadAttention and in both weight
layouts, the causal mask's alignments against torch's CausalBias, causally masked rows that sum to
one and never look ahead, teacher forcing's right shift."""
import numpy as np
from hypothesis import given, strategies as st
import pytest

from examprep import engine

small = st.integers(-3, 3)


def test_causal_mask_bottom_right_is_torch_causal_lower_right():
    pytest.importorskip("torch")
    from torch.nn.attention.bias import causal_lower_right, causal_upper_left

    for n, m in ((2, 5), (3, 3), (1, 4), (4, 6)):
        np.testing.assert_array_equal(engine.causal_mask(n, m, alignment="bottom-right"),
                                      causal_lower_right(n, m)._materialize().numpy())
        np.testing.assert_array_equal(engine.causal_mask(n, m), causal_upper_left(n, m)._materialize().numpy())


def test_cross_attention_equals_torch_multihead_attention_with_one_head():
    """nn.MultiheadAttention(d, 1, kdim, vdim) with zero biases and an identity output projection is exactly
    single-head cross-attention with the 'linear' layout (weights as nn.Linear stores them)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    d, de = 3, 2
    x, z = rng.standard_normal((2, d)), rng.standard_normal((4, de))
    mha = torch.nn.MultiheadAttention(d, 1, kdim=de, vdim=de, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_bias.zero_()
        mha.out_proj.weight.copy_(torch.eye(d, dtype=torch.float64))
        mha.out_proj.bias.zero_()
    out, w = mha(torch.tensor(x)[None], torch.tensor(z)[None], torch.tensor(z)[None])
    ours = engine.cross_attention(x, z, mha.q_proj_weight.detach().numpy(), mha.k_proj_weight.detach().numpy(),
                                  mha.v_proj_weight.detach().numpy(), layout="linear")
    np.testing.assert_allclose(ours.output, out[0].detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.weights, w[0].detach().numpy(), rtol=1e-12)


@given(data=st.data(), n=st.integers(1, 5), extra=st.integers(0, 3), alignment=st.sampled_from(["top-left", "bottom-right"]))
def test_causal_softmax_rows_sum_to_one_and_never_look_ahead(data, n, extra, alignment):
    m = n + extra
    scores = data.draw(st.lists(st.lists(small, min_size=m, max_size=m), min_size=n, max_size=n))
    t = engine.causal_softmax(scores, alignment=alignment)
    w = t.weights
    assert np.all(w[t.allowed == 0] == 0)
    np.testing.assert_allclose(w.sum(axis=1), np.where(t.allowed.sum(axis=1) > 0, 1.0, 0.0), rtol=1e-12)
    if alignment == "bottom-right":
        assert t.allowed[-1].all()              # the newest query sees every key
    assert t.masked_count + t.allowed_count == n * m


@given(tokens=st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=6), eos=st.booleans())
def test_teacher_forcing_shifts_right_by_one(tokens, eos):
    t = engine.teacher_forcing(tokens, bos="<s>", eos="</s>" if eos else None)
    assert t.decoder_input[0] == "<s>" and len(t.decoder_input) == len(t.labels)
    assert t.decoder_input[1:] == t.labels[:-1]          # position t reads y_{t−1} and predicts y_t
    assert t.labels == tokens + (["</s>"] if eos else [])


@given(data=st.data())
def test_cross_attention_layouts_agree_and_roles_matter(data):
    mat = lambda r, c: np.array(data.draw(st.lists(st.lists(small, min_size=c, max_size=c), min_size=r, max_size=r)), float)  # noqa: E731
    x, z = mat(2, 3), mat(4, 2)
    wq, wk, wv = mat(3, 2), mat(2, 2), mat(2, 3)
    a = engine.cross_attention(x, z, wq, wk, wv)
    b = engine.cross_attention(x, z, wq.T, wk.T, wv.T, layout="linear")
    np.testing.assert_allclose(a.output, b.output, rtol=1e-12, atol=1e-12)
    assert a.output.shape == (2, 3) and a.weights.shape == (2, 4)      # one row per decoder position
