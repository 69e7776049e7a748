"""softmax-cross-entropy: answers against torch, the derivation against sympy."""
import numpy as np
import pytest
import sympy as sp

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import instances  # noqa: E402


def test_softmax_cross_entropy_answers_match_torch():
    for p in instances(["softmax-cross-entropy"]):
        pr = {k: p.params[k] for k in ("logits", "target", "reduction", "label_smoothing")}
        ref = REFERENCES["cross-entropy"](pr)
        assert abs(p.part("loss").expected - float(ref["loss"])) < 1e-12
        np.testing.assert_allclose(p.part("grad_logits").expected, ref["grad_logits"], rtol=1e-12, atol=1e-14)


def test_softmax_cross_entropy_derivation_is_p_minus_y_symbolically():
    """∂/∂z_i of −Σ_k y_k log softmax(z)_k equals p_i − y_i for one-hot y (sympy, C = 3)."""
    z = sp.symbols("z0:3")
    denom = sum(sp.exp(v) for v in z)
    p = [sp.exp(v) / denom for v in z]
    for target in range(3):
        y = [1 if k == target else 0 for k in range(3)]
        L = -sum(yk * sp.log(pk) for yk, pk in zip(y, p))
        for i in range(3):
            assert sp.simplify(sp.diff(L, z[i]) - (p[i] - y[i])) == 0
    expected = {q.part("derivation").expected for q in instances(["softmax-cross-entropy"], range(3)) if q.difficulty == 1}
    assert expected == {"p_i - y_i"}
