"""Attention: sympy exact scaled dot products, rows that sum to one (or zero) and never look
ahead, torch's SDPA masks and MultiheadAttention, multi-head cost (the decoder's cross-attention,
causal mask and teacher forcing: test_decoder.py)."""
import numpy as np
import sympy as sp
from hypothesis import given, strategies as st
import pytest

from examprep import engine, solve

small = st.integers(-3, 3)


@given(q=st.lists(st.lists(small, min_size=2, max_size=2), min_size=1, max_size=3),
       k=st.lists(st.lists(small, min_size=2, max_size=2), min_size=1, max_size=3), data=st.data())
def test_scaled_dot_attention_exact(q, k, data):
    v = data.draw(st.lists(st.lists(small, min_size=1, max_size=1), min_size=len(k), max_size=len(k)))
    Q, K, V = sp.Matrix(q), sp.Matrix(k), sp.Matrix(v)
    scores = Q * K.T / sp.sqrt(2)
    weights = sp.Matrix([[sp.exp(scores[i, j]) / sum(sp.exp(scores[i, jj]) for jj in range(K.rows))
                          for j in range(K.rows)] for i in range(Q.rows)])
    t = engine.attention(q, k, v)
    np.testing.assert_allclose(t.weights, np.array(weights.evalf(30).tolist(), dtype=float), rtol=1e-12)
    np.testing.assert_allclose(t.output, np.array((weights * V).evalf(30).tolist(), dtype=float), rtol=1e-11, atol=1e-12)


SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


@given(seed=SEEDS, n=st.integers(1, 5), m=st.integers(1, 5))
def test_attention_rows_sum_to_one_or_zero_and_never_nan(seed, n, m):
    rng = np.random.default_rng(seed)
    mask = rng.integers(0, 2, (n, m))
    t = engine.attention(rng.standard_normal((n, 3)), rng.standard_normal((m, 3)), rng.standard_normal((m, 2)), mask=mask)
    sums = t.weights.sum(axis=1)
    for row, s in zip(mask, sums):
        assert abs(s - (1.0 if row.any() else 0.0)) < 1e-12
    assert np.all(t.weights[mask == 0] == 0) and np.all(np.isfinite(t.output))


@given(seed=SEEDS, n=st.integers(2, 6))
def test_causal_attention_ignores_later_positions(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3))
    before = engine.attention(x, x, x, causal=True).output
    y = x.copy()
    y[-1] += 5.0                                     # change only the last token
    after = engine.attention(y, y, y, causal=True).output
    np.testing.assert_allclose(after[:-1], before[:-1], rtol=1e-12)


def test_fully_masked_attention_row_matches_torch_sdpa_zeros():
    pytest.importorskip("torch")
    from tests.verify.helpers import assert_agrees

    p = {"query": [[1.0, 0.0], [0.5, 0.5]], "key": [[1.0, 2.0], [0.0, 1.0]], "value": [[1.0], [2.0]],
         "mask": [[0, 0], [1, 1]]}
    assert_agrees("attention", p)
    ans = solve.answer_only("attention", p)
    assert ans["weights"][0].tolist() == [0.0, 0.0] and ans["output"][0].tolist() == [0.0]


def test_causal_attention_matches_torch_is_causal():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    want = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(a)[None] for a in (q, k, v)), is_causal=True)[0]
    got = solve.answer_only("attention", {"query": q.tolist(), "key": k.tolist(), "value": v.tolist(), "causal": True})
    np.testing.assert_allclose(got["output"], want.numpy(), rtol=1e-10)


def test_multi_head_shapes_of_a_real_cross_attention_module():
    pytest.importorskip("torch")
    from examprep.verify import REFERENCES


    p = {"n": 7, "m": 11, "d_model": 512, "num_heads": 8, "batch": 2, "bytes_per_value": 2}
    ours, theirs = solve.answer_only("multi-head-shapes", p), REFERENCES["multi-head-shapes"](p)
    for name, want in theirs.items():
        np.testing.assert_array_equal(np.asarray(ours[name]), np.asarray(want), err_msg=name)
    assert ours["scores_shape"] == [7, 11] and ours["score_macs"] == 2 * 7 * 11 * 512


@given(n=st.integers(1, 8), m=st.integers(1, 8), heads=st.integers(1, 4), dk=st.integers(1, 8), batch=st.integers(1, 3))
def test_multi_head_cost_is_n_m_d_model_and_quadratic_in_self_attention(n, m, heads, dk, batch):
    d = heads * dk
    t = engine.multi_head_shapes(n, d, heads, m=m, batch=batch)
    assert t.score_macs == batch * n * m * d == t.weighted_sum_macs
    assert t.score_macs_per_head * heads * batch == t.score_macs
    assert engine.multi_head_shapes(2 * n, d, heads).score_macs == 4 * engine.multi_head_shapes(n, d, heads).score_macs
    assert engine.multi_head_shapes(2 * n, d, heads).projection_macs == 2 * engine.multi_head_shapes(n, d, heads).projection_macs
    assert t.score_bytes == 4 * t.score_entries and t.score_mib == t.score_bytes / 2 ** 20


# ------------------------------------------------------------------ self-attention (issue 18)

@given(seed=st.integers(0, 2**32 - 1), heads=st.sampled_from([1, 2]), causal=st.booleans())
def test_self_attention_equals_torch_multihead_attention(seed, heads, causal):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    n, d = 3, 4
    x = rng.standard_normal((n, d))
    wq, wk, wv, wo = (rng.standard_normal((d, d)) for _ in range(4))
    mha = torch.nn.MultiheadAttention(d, heads, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():       # nn.Linear computes x Wᵀ: its weights are the transposes of X W's
        mha.in_proj_weight.copy_(torch.tensor(np.concatenate([wq.T, wk.T, wv.T])))
        mha.out_proj.weight.copy_(torch.tensor(wo.T))
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1) if causal else None
    out, weights = mha(*(torch.tensor(x)[None],) * 3, attn_mask=mask, average_attn_weights=False)
    t = engine.self_attention(x, wq, wk, wv, num_heads=heads, w_output=wo, causal=causal)
    np.testing.assert_allclose(t.output, out[0].detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.reshape(t.weights, (heads, n, n)), weights[0].detach().numpy(), rtol=1e-10, atol=1e-12)


def test_self_attention_of_small_integers_is_exact():
    x = [[1, 0], [0, 1], [1, 1]]
    t = engine.self_attention(x, [[1, 0], [0, 1]], [[1, 1], [0, 1]], [[2, 0], [0, 1]], scale=1.0)
    X = sp.Matrix(x)
    S = X * sp.Matrix([[1, 0], [0, 1]]) * (X * sp.Matrix([[1, 1], [0, 1]])).T
    A = sp.Matrix(3, 3, lambda i, j: sp.exp(S[i, j]) / sum(sp.exp(S[i, k]) for k in range(3)))
    out = A * X * sp.Matrix([[2, 0], [0, 1]])
    np.testing.assert_allclose(t.output, np.array(out.evalf(30).tolist(), dtype=float), rtol=1e-14)


def test_self_attention_heads_split_the_columns_and_scale_by_the_head_size():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 4)), [rng.standard_normal((4, 4)) for _ in range(3)]
    t = engine.self_attention(x, *w, num_heads=2)
    assert t.scores.shape == (2, 2, 2) and t.heads.shape == (2, 2, 2) and t.output.shape == (2, 4)
    assert abs(t.scale - 1 / np.sqrt(2)) < 1e-15
    one = engine.attention(t.query[:, :2], t.key[:, :2], t.value[:, :2])      # head 0 alone: d_k = 2
    np.testing.assert_allclose(t.heads[0], one.output, rtol=1e-13)


def test_self_attention_bad_shapes_name_the_projection():
    from examprep.errors import ParamError, ShapeError
    x = [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(ShapeError, match="w_key"):
        engine.self_attention(x, [[1, 0], [0, 1]], [[1, 0, 0], [0, 1, 0]], [[1, 0], [0, 1]])
    with pytest.raises(ShapeError, match="w_query"):
        engine.self_attention(x, [[1, 0]], [[1, 0], [0, 1]], [[1, 0], [0, 1]])
    with pytest.raises(ParamError, match="num_heads"):
        engine.self_attention(x, [[1, 0, 0], [0, 1, 0]], [[1, 0, 0], [0, 1, 0]], [[1, 0], [0, 1]], num_heads=2)
