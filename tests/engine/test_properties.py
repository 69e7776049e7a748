"""Invariants that hold for every input (hypothesis property tests)."""
import math

import numpy as np
from hypothesis import given, strategies as st

from examprep import engine

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
floats = st.floats(-50, 50, allow_nan=False)


@given(z=st.lists(floats, min_size=1, max_size=8), shift=floats)
def test_softmax_sums_to_one_and_ignores_shifts(z, shift):
    p = engine.softmax(z).probs
    assert abs(p.sum() - 1) < 1e-12 and np.all(p >= 0)
    np.testing.assert_allclose(engine.softmax(np.array(z) + shift).probs, p, rtol=1e-9, atol=1e-300)


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


@given(seed=SEEDS, d=st.integers(2, 8), eps=st.sampled_from([0.0, 1e-5]))
def test_layer_norm_output_has_zero_mean_and_unit_variance(seed, d, eps):
    x = np.random.default_rng(seed).standard_normal((3, d)) * 5
    y = engine.layer_norm(x, eps=eps, eps_placement="inside-sqrt").output
    np.testing.assert_allclose(y.mean(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=1), 1 / (1 + eps / x.var(axis=1)), rtol=1e-9)


@given(pos=st.integers(0, 10_000), half=st.integers(1, 16))
def test_positional_encoding_pairs_lie_on_the_unit_circle(pos, half):
    e = engine.positional_encoding(pos, 2 * half).encoding
    np.testing.assert_allclose(e[0::2] ** 2 + e[1::2] ** 2, 1, rtol=1e-12)


@given(seed=SEEDS, m=st.integers(0, 60), n=st.integers(0, 60), shift=st.integers(0, 40),
       style=st.sampled_from(["interleaved", "rotate-half"]))
def test_rope_keeps_norms_and_depends_only_on_relative_position(seed, m, n, shift, style):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal(6), rng.standard_normal(6)
    rq = engine.rope(q, m, style=style).output
    rk = engine.rope(k, n, style=style).output
    assert abs(np.linalg.norm(rq) - np.linalg.norm(q)) < 1e-12
    shifted = engine.rope(q, m + shift, style=style).output @ engine.rope(k, n + shift, style=style).output
    assert abs(rq @ rk - shifted) < 1e-9


@given(layers=st.lists(st.fixed_dictionaries({"kernel_size": st.integers(1, 5), "stride": st.integers(1, 3),
                                               "dilation": st.integers(1, 3)}), min_size=1, max_size=6))
def test_receptive_field_grows_monotonically(layers):
    t = engine.receptive_field(layers)
    assert t.receptive_fields == sorted(t.receptive_fields)
    assert t.jump == math.prod(layer["stride"] for layer in layers)


@given(n=st.integers(1, 200), k=st.integers(1, 7), s=st.integers(1, 4), d=st.integers(1, 3))
def test_same_padding_keeps_ceil_n_over_s_and_conv2d_agrees(n, k, s, d):
    t = engine.conv_output_size(n, k, stride=s, dilation=d, padding="same")
    assert t.output_size == math.ceil(n / s)
    assert 0 <= t.pad_after - t.pad_before <= 1
    out = engine.conv2d(np.ones(n), np.ones(k), stride=s, dilation=d, padding="same").output
    assert out.shape == (t.output_size,)


@given(seed=SEEDS, h=st.integers(1, 4))
def test_gru_conventions_sum_to_h_plus_n(seed, h):
    rng = np.random.default_rng(seed)
    args = (rng.standard_normal(2), rng.standard_normal(h), rng.standard_normal((3 * h, 2)), rng.standard_normal((3 * h, h)))
    lec = engine.gru_cell(*args, convention="lecture")
    pt = engine.gru_cell(*args, convention="pytorch")
    np.testing.assert_allclose(lec.h_new + pt.h_new, args[1] + lec.n, rtol=1e-12)


@given(x=st.floats(-30, 30))
def test_sigmoid_and_tanh_derivative_bounds(x):
    assert engine.activation("sigmoid", x).derivative <= 0.25 + 1e-15
    assert engine.activation("tanh", x).derivative <= 1.0


@given(d=st.integers(1, 4096), k=st.integers(1, 4096), r=st.integers(1, 64), m=st.integers(1, 8))
def test_lora_counts(d, k, r, m):
    t = engine.lora(d, k, r, num_matrices=m)
    assert t.trainable_params == m * r * (d + k) and t.full_params == m * d * k
    assert abs(t.fraction - r * (d + k) / (d * k)) < 1e-15
