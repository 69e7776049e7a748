"""Activations: derivatives by finite differences, their bounds, the backward and
derivative-from-value ECF formulas."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from examprep import engine
from examprep.engine import activations
from tests.engine.fd import close, numeric_grad


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


floats = st.floats(-50, 50, allow_nan=False)


@given(x=st.floats(-30, 30))
def test_sigmoid_and_tanh_derivative_bounds(x):
    assert engine.activation("sigmoid", x).derivative <= 0.25 + 1e-15
    assert engine.activation("tanh", x).derivative <= 1.0


def test_activation_backward_op_is_the_chain_rule():
    a = np.array([-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(activations.activation_backward([1.0, 2.0, 3.0], a, "relu"), [0.0, 0.0, 3.0])
    s = engine.activation("sigmoid", a)
    np.testing.assert_allclose(activations.activation_backward([1.0, 1.0, 1.0], a, "sigmoid"), s.derivative, rtol=1e-15)


def test_derivative_from_output_ops():
    s = engine.activation("sigmoid", [-1.0, 0.5]).output
    np.testing.assert_allclose(activations.sigmoid_derivative_from_output(s),
                               engine.activation("sigmoid", [-1.0, 0.5]).derivative)
    t = engine.activation("tanh", [-1.0, 0.5]).output
    np.testing.assert_allclose(activations.tanh_derivative_from_output(t), engine.activation("tanh", [-1.0, 0.5]).derivative)


@pytest.mark.parametrize("name, kw", [("sigmoid", {}), ("tanh", {}), ("relu", {}), ("leaky-relu", {"negative_slope": 0.2}),
                                      ("leaky-relu", {"negative_slope": 1.5}), ("gelu", {}),
                                      ("gelu", {"approximate": "tanh"})])
def test_max_derivative_is_the_largest_slope_torch_finds(name, kw):
    # torch's autograd slope of the same function on a fine grid: its largest value is max_derivative
    torch = pytest.importorskip("torch")
    fn = {"sigmoid": torch.sigmoid, "tanh": torch.tanh, "relu": torch.relu,
          "leaky-relu": lambda v: torch.nn.functional.leaky_relu(v, kw.get("negative_slope", 0.01)),
          "gelu": lambda v: torch.nn.functional.gelu(v, approximate=kw.get("approximate", "none"))}[name]
    x = torch.linspace(-8, 8, 160001, dtype=torch.float64, requires_grad=True)
    fn(x).sum().backward()
    want = float(x.grad.max())
    got = activations.max_derivative(name, **kw)
    assert got == pytest.approx(want, rel=1e-8) and got >= want - 1e-15


def test_max_derivative_refuses_an_unknown_activation():
    with pytest.raises(Exception, match="name"):
        activations.max_derivative("softplus")
