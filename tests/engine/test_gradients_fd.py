"""Every gradient the engine returns, checked by central finite differences on the engine's own
forward pass (an independent route: only the forward formula is shared)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from examprep import engine
from tests.engine.fd import close, numeric_grad

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


@given(seed=SEEDS, batch=st.booleans(), smoothing=st.sampled_from([0.0, 0.1]),
       reduction=st.sampled_from(["mean", "sum"]))
def test_cross_entropy_grad_logits(seed, batch, smoothing, reduction):
    rng = np.random.default_rng(seed)
    c = int(rng.integers(2, 6))
    if batch:
        n = int(rng.integers(1, 4))
        z, t = rng.standard_normal((n, c)), rng.integers(0, c, n).tolist()
    else:
        z, t = rng.standard_normal(c), int(rng.integers(0, c))
    kw = dict(reduction=reduction, label_smoothing=smoothing)
    g = engine.cross_entropy(z, t, **kw).grad_logits
    close(g, numeric_grad(lambda zz: engine.cross_entropy(zz, t, **kw).loss, z))


@given(seed=SEEDS, batch=st.booleans())
def test_dense_gradients(seed, batch):
    rng = np.random.default_rng(seed)
    i, o = rng.integers(1, 4, 2)
    x = rng.standard_normal((2, i) if batch else i)
    w, b = rng.standard_normal((o, i)), rng.standard_normal(o)
    go = rng.standard_normal((2, o) if batch else o)
    t = engine.dense(x, w, b, go)
    L = lambda x_, w_, b_: float(np.sum(go * engine.dense(x_, w_, b_).output))  # noqa: E731
    close(t.grad_input, numeric_grad(lambda v: L(v, w, b), x))
    close(t.grad_weight, numeric_grad(lambda v: L(x, v, b), w))
    close(t.grad_bias, numeric_grad(lambda v: L(x, w, v), b))


@given(seed=SEEDS, act=st.sampled_from(["relu", "sigmoid", "tanh", "gelu", "leaky-relu"]))
def test_mlp_backprop_gradients(seed, act):
    rng = np.random.default_rng(seed)
    i, h, c = 3, 4, 3
    p = dict(x=rng.standard_normal(i), w1=rng.standard_normal((h, i)), b1=rng.standard_normal(h),
             w2=rng.standard_normal((c, h)), b2=rng.standard_normal(c))
    target = int(rng.integers(0, c))
    a = p["w1"] @ p["x"] + p["b1"]
    if act in ("relu", "leaky-relu") and np.min(np.abs(a)) < 1e-3:
        return  # finite differences straddle the kink
    t = engine.mlp_backprop(target=target, activation=act, **p)

    def loss(name):
        return lambda v: engine.mlp_backprop(target=target, activation=act, **(p | {name: v})).loss

    close(t.grad_x, numeric_grad(loss("x"), p["x"]))
    close(t.grad_w1, numeric_grad(loss("w1"), p["w1"]))
    close(t.grad_b1, numeric_grad(loss("b1"), p["b1"]))
    close(t.grad_w2, numeric_grad(loss("w2"), p["w2"]))
    close(t.grad_b2, numeric_grad(loss("b2"), p["b2"]))
    close(t.grad_logits, t.grad_b2)            # ∂L/∂z = ∂L/∂b2
    close(t.grad_hidden_pre, t.grad_b1)        # ∂L/∂a = ∂L/∂b1
    # ∂L/∂h: perturb h through the second layer alone
    close(t.grad_hidden, numeric_grad(lambda hh: engine.cross_entropy(p["w2"] @ hh + p["b2"], target).loss, t.hidden))


@given(seed=SEEDS, loss_kind=st.sampled_from(["mse", "half-mse"]))
def test_linear_regression_gradients(seed, loss_kind):
    rng = np.random.default_rng(seed)
    n, d = rng.integers(1, 5), rng.integers(1, 3)
    X, y, w, b = rng.standard_normal((n, d)), rng.standard_normal(n), rng.standard_normal(d), float(rng.standard_normal())
    t = engine.linear_regression(X, y, w, b, lr=0.1, loss=loss_kind)
    close(t.grad_w, numeric_grad(lambda v: engine.linear_regression(X, y, v, b, lr=0.1, loss=loss_kind).loss, w))
    close(t.grad_b, numeric_grad(lambda v: engine.linear_regression(X, y, w, float(v), lr=0.1, loss=loss_kind).loss,
                                 np.array(b)))
    close(t.w_new, w - 0.1 * t.grad_w)


@given(seed=SEEDS, one_d=st.booleans(), stride=st.integers(1, 2), dilation=st.integers(1, 2),
       padding=st.sampled_from([0, 1, "same", [1, 0]]))
def test_conv2d_gradients(seed, one_d, stride, dilation, padding):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(6 if one_d else (5, 6))
    k = rng.standard_normal(2 if one_d else (2, 3))
    kw = dict(stride=stride, dilation=dilation, padding=padding)
    out = engine.conv2d(x, k, **kw).output
    go = rng.standard_normal(out.shape)
    t = engine.conv2d(x, k, bias=0.5, grad_output=go, **kw)
    L = lambda x_, k_, b_=0.5: float(np.sum(go * engine.conv2d(x_, k_, bias=b_, **kw).output))  # noqa: E731
    close(t.grad_input, numeric_grad(lambda v: L(v, k), x))
    close(t.grad_kernel, numeric_grad(lambda v: L(x, v), k))
    close(t.grad_bias, numeric_grad(lambda v: L(x, k, float(v)), np.array(0.5)))


@given(seed=SEEDS, one_d=st.booleans(), ceil_mode=st.booleans(), padding=st.integers(0, 1))
def test_max_pool_gradient(seed, one_d, ceil_mode, padding):
    rng = np.random.default_rng(seed)
    x = rng.permutation(30)[: 7 if one_d else 30].astype(float)   # distinct values: no ties
    x = x if one_d else x.reshape(5, 6)
    kw = dict(stride=2, padding=padding, ceil_mode=ceil_mode)
    out = engine.max_pool(x, 2, **kw).output
    go = rng.standard_normal(out.shape)
    t = engine.max_pool(x, 2, grad_output=go, **kw)
    close(t.grad_input, numeric_grad(lambda v: float(np.sum(go * engine.max_pool(v, 2, **kw).output)), x))


@pytest.mark.parametrize("name", ["sigmoid", "tanh", "relu", "leaky-relu", "gelu"])
@given(x=st.floats(-4, 4).filter(lambda v: abs(v) > 1e-3))
def test_activation_derivative(name, x):
    t = engine.activation(name, x, negative_slope=0.2)
    close(t.derivative, numeric_grad(lambda v: engine.activation(name, float(v), negative_slope=0.2).output, np.array(x)))


def test_gelu_tanh_derivative():
    x = np.linspace(-3, 3, 13)
    t = engine.activation("gelu", x, approximate="tanh")
    close(t.derivative, np.array([numeric_grad(lambda v: engine.activation("gelu", float(v), approximate="tanh").output,
                                               np.array(xi)) for xi in x]))
