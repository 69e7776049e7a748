"""activation: values and derivatives against torch autograd, exact forms against sympy."""
import numpy as np
import pytest
import sympy as sp

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances, t64  # noqa: E402


def test_activation_values_and_derivatives_match_torch_autograd():
    for p in instances(["activation"]):
        a = answers(p)
        if p.difficulty < 3:
            x = p.params["x"]
            for name in ("sigmoid", "tanh", "relu"):
                ref = REFERENCES["activation"]({"name": name, "x": x})
                if name in a:
                    agree(a[name], ref["output"])
                if f"{name}_derivative" in a:
                    agree(a[f"{name}_derivative"], ref["derivative"])
            if "max_sigmoid_derivative" in a:
                z = t64(np.linspace(-6, 6, 1201))
                assert a["max_sigmoid_derivative"] == pytest.approx(float((torch.sigmoid(z) * (1 - torch.sigmoid(z))).max()))
                assert a["max_tanh_derivative"] == pytest.approx(float((1 - torch.tanh(z) ** 2).max()))
        else:
            ref = REFERENCES["activation"]({"name": "leaky-relu", "x": p.params["x"],
                                            "negative_slope": p.params["negative_slope"]})
            agree(a["leaky_relu"], ref["output"])
            agree(a["leaky_relu_derivative"], ref["derivative"])
            x0 = t64(p.params["x0"], grad=True)
            (g,) = torch.autograd.grad(torch.sigmoid(torch.sigmoid(x0)), x0)
            agree(a["chain_derivative"], float(g))
            assert a["stack_bound"] == pytest.approx(0.25 ** p.params["layers"], rel=1e-15)


def test_activation_exact_forms_are_sympy_identities():
    """σ(ln a) = a/(1 + a), σ'(ln a) = a/(1 + a)², tanh(ln a) = (a² − 1)/(a² + 1), exactly."""
    a = sp.Symbol("a", positive=True)
    sig = 1 / (1 + sp.exp(-sp.log(a)))
    assert sp.simplify(sig - a / (1 + a)) == 0
    assert sp.simplify(sp.diff(1 / (1 + sp.exp(-sp.Symbol("x"))), "x").subs("x", sp.log(a)) - a / (1 + a) ** 2) == 0
    assert sp.simplify(sp.tanh(sp.log(a)).rewrite(sp.exp) - (a**2 - 1) / (a**2 + 1)) == 0
