"""The engine's floats against sympy's exact arithmetic on small integer inputs ("nice" numbers)."""
import numpy as np
import sympy as sp
from hypothesis import given, strategies as st

from examprep import engine

small = st.integers(-3, 3)


def exact_softmax(z):
    e = [sp.exp(sp.Integer(v)) for v in z]
    s = sum(e)
    return [ei / s for ei in e]


@given(z=st.lists(small, min_size=2, max_size=5), data=st.data())
def test_softmax_and_cross_entropy_exact(z, data):
    t = data.draw(st.integers(0, len(z) - 1))
    p = exact_softmax(z)
    ce = engine.cross_entropy(z, t)
    np.testing.assert_allclose(ce.probs, [float(v) for v in p], rtol=1e-13)
    assert abs(ce.loss - float(-sp.log(p[t]))) < 1e-12
    grad = [pi - (1 if i == t else 0) for i, pi in enumerate(p)]
    np.testing.assert_allclose(ce.grad_logits, [float(g) for g in grad], rtol=1e-12, atol=1e-14)


def test_cross_entropy_gradient_is_p_minus_y_symbolically():
    """∂/∂z_i of −log softmax(z)_y is p_i − [i = y], derived by sympy, evaluated against the engine."""
    z = sp.symbols("z0:3")
    p = [sp.exp(zi) / sum(sp.exp(zj) for zj in z) for zi in z]
    loss = -sp.log(p[1])
    vals = {z[0]: 1, z[1]: -2, z[2]: sp.Rational(1, 2)}
    want = [float(sp.diff(loss, zi).subs(vals)) for zi in z]
    np.testing.assert_allclose(engine.cross_entropy([1, -2, 0.5], 1).grad_logits, want, rtol=1e-13)


@given(x=st.lists(small, min_size=2, max_size=5))
def test_layer_norm_exact(x):
    if len(set(x)) == 1:
        return
    xs = [sp.Integer(v) for v in x]
    mu = sum(xs) / len(xs)
    var = sum((v - mu) ** 2 for v in xs) / len(xs)
    eps = sp.Rational(1, 100000)
    for placement, denom in (("inside-sqrt", sp.sqrt(var + eps)), ("added-to-std", sp.sqrt(var) + eps)):
        t = engine.layer_norm(x, eps=1e-5, eps_placement=placement)
        np.testing.assert_allclose(t.output, [float((v - mu) / denom) for v in xs], rtol=1e-12, atol=1e-13)
        assert abs(t.mean - float(mu)) < 1e-14 and abs(t.var - float(var)) < 1e-12


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


@given(X=st.lists(st.lists(small, min_size=2, max_size=2), min_size=1, max_size=4), data=st.data())
def test_linear_regression_exact_rationals(X, data):
    n = len(X)
    y = data.draw(st.lists(small, min_size=n, max_size=n))
    w = data.draw(st.lists(small, min_size=2, max_size=2))
    Xm, ym, wm, lr = sp.Matrix(X), sp.Matrix(y), sp.Matrix(w), sp.Rational(1, 10)
    e = Xm * wm - ym
    loss = (e.T * e)[0] / n
    gw = 2 * Xm.T * e / n
    t = engine.linear_regression(X, y, w, 0, lr=0.1)
    assert abs(t.loss - float(loss)) < 1e-12
    np.testing.assert_allclose(t.grad_w, [float(g) for g in gw], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(t.w_new, [float(v) for v in wm - lr * gw], rtol=1e-12, atol=1e-13)


@given(n=st.integers(1, 300), k=st.integers(1, 11), s=st.integers(1, 5), p=st.integers(0, 5), d=st.integers(1, 3))
def test_conv_output_size_is_the_exact_floor(n, k, s, p, d):
    eff = d * (k - 1) + 1
    if eff > n + 2 * p:
        return
    want = sp.floor(sp.Rational(n + 2 * p - eff, s)) + 1
    assert engine.conv_output_size(n, k, stride=s, padding=p, dilation=d).output_size == int(want)


def test_positional_encoding_exact_at_nice_points():
    t = engine.positional_encoding(1, 4)
    want = [sp.sin(1), sp.cos(1), sp.sin(sp.Rational(1, 100)), sp.cos(sp.Rational(1, 100))]
    np.testing.assert_allclose(t.encoding, [float(w) for w in want], rtol=1e-14)


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
