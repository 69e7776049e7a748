"""Generated answers against independent references: torch modules, sympy's calculus."""
import numpy as np
import pytest
import sympy as sp

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import instances  # noqa: E402


def test_attention_answers_match_torch():
    for p in instances(["attention"]):
        pr = {k: p.params[k] for k in ("query", "key", "value", "causal", "scale")}
        ref = REFERENCES["attention"](pr)
        np.testing.assert_allclose(p.part("weights").expected, ref["weights"], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(p.part("output").expected, ref["output"], rtol=1e-11, atol=1e-12)


def test_softmax_cross_entropy_answers_match_torch():
    for p in instances(["softmax-cross-entropy"]):
        pr = {k: p.params[k] for k in ("logits", "target", "reduction", "label_smoothing")}
        ref = REFERENCES["cross-entropy"](pr)
        assert abs(p.part("loss").expected - float(ref["loss"])) < 1e-12
        np.testing.assert_allclose(p.part("grad_logits").expected, ref["grad_logits"], rtol=1e-12, atol=1e-14)


def test_gru_answers_match_torch_grucell():
    for p in instances(["gru-step"]):
        ref = REFERENCES["gru-cell"](p.params)
        np.testing.assert_allclose(np.ravel(p.part("h_new").expected), ref["h_new"], rtol=1e-12)
        if p.difficulty == 3:
            pt = REFERENCES["gru-cell"](p.params | {"convention": "pytorch"})
            np.testing.assert_allclose(np.ravel(p.part("h_new_pytorch").expected), pt["h_new"], rtol=1e-12)


def test_receptive_field_answers_match_torch_autograd_and_real_layers():
    for p in instances(["receptive-field"]):
        layers = [{k: L[k] for k in ("kernel_size", "stride", "dilation")} for L in p.params["layers"]]
        assert p.part("receptive_field").expected == REFERENCES["receptive-field"]({"layers": layers})["receptive_field"]
        n = p.params["input_size"]
        for i, L in enumerate(p.params["layers"]):
            ref = REFERENCES["conv-output-size"]({"input_size": n, "kernel_size": L["kernel_size"], "stride": L["stride"],
                                                  "padding": L["padding"], "dilation": L["dilation"],
                                                  "op": "pool" if L["type"] == "max-pool" else "conv"})
            assert p.part(f"size_{i + 1}").expected == ref["output_size"]
            n = ref["output_size"]


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
