"""Positions: sinusoidal encodings and RoPE exactly and as invariants (unit circle, norms kept,
scores that depend on the offset only)."""
import numpy as np
import sympy as sp
from hypothesis import given, strategies as st
import pytest

from examprep import engine


def test_positional_encoding_exact_at_nice_points():
    t = engine.positional_encoding(1, 4)
    want = [sp.sin(1), sp.cos(1), sp.sin(sp.Rational(1, 100)), sp.cos(sp.Rational(1, 100))]
    np.testing.assert_allclose(t.encoding, [float(w) for w in want], rtol=1e-14)


SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


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


def test_positional_encoding_relative_dot_is_sum_of_cosines_exactly():
    p, k, d = 3, 2, 6
    pos = sp.Integer(p)
    omegas = [sp.Integer(10000) ** sp.Rational(-2 * i, d) for i in range(d // 2)]
    pe = lambda q: [f(q * w) for w in omegas for f in (sp.sin, sp.cos)]  # noqa: E731
    dot = sum(a * b for a, b in zip(pe(pos), pe(pos + k)))
    tr = engine.positional_encoding_relative(p, k, d)
    assert tr.dot == pytest.approx(float(dot), abs=1e-14)
    assert float(sp.simplify(dot - sum(sp.cos(k * w) for w in omegas))) == pytest.approx(0, abs=1e-14)
    np.testing.assert_allclose(tr.wavelengths, [float(2 * sp.pi / w) for w in omegas], rtol=1e-14)


def test_rope_score_exact_for_quarter_turns():
    """With base = 1 every θ_j = 1; sympy rotates exactly and the score matches."""
    q, k = [1, 2, -1, 0], [0, 1, 3, -2]
    m, n = 3, 1
    R = lambda a: sp.Matrix([[sp.cos(a), -sp.sin(a)], [sp.sin(a), sp.cos(a)]])  # noqa: E731
    rot = lambda v, a: [c for j in range(2) for c in R(a) * sp.Matrix(v[2 * j: 2 * j + 2])]  # noqa: E731
    want = sum(a * b for a, b in zip(rot(q, m), rot(k, n)))
    assert engine.rope_score(q, k, m, n, base=1).score == pytest.approx(float(want), abs=1e-13)


small = st.integers(-3, 3)


@given(q=st.lists(small, min_size=4, max_size=4), k=st.lists(small, min_size=4, max_size=4),
       m=st.integers(0, 20), n=st.integers(0, 20), s=st.integers(0, 20), style=st.sampled_from(["interleaved", "rotate-half"]))
def test_rope_score_depends_only_on_the_offset(q, k, m, n, s, style):
    a = engine.rope_score(q, k, m, n, style=style)
    b = engine.rope_score(q, k, m + s, n + s, style=style)
    assert a.score == pytest.approx(b.score, abs=1e-9)
    if m == n:
        assert a.score == pytest.approx(a.unrotated_score, abs=1e-9)


@given(p=st.integers(0, 200), q=st.integers(0, 200), k=st.integers(0, 50), half=st.integers(1, 8))
def test_sinusoidal_dot_product_does_not_depend_on_the_position(p, q, k, half):
    a = engine.positional_encoding_relative(p, k, 2 * half)
    b = engine.positional_encoding_relative(q, k, 2 * half)
    assert a.dot == pytest.approx(b.dot, abs=1e-9)
    assert a.dot == pytest.approx(float(np.sum(a.pair_terms)), abs=1e-9)
