"""vanishing-gradient: against a torch RNN's autograd; saturation beats a large weight."""
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances, t64  # noqa: E402

T64 = torch.float64


def test_vanishing_gradient_matches_torch_rnn_autograd():
    for p in instances(["vanishing-gradient"]):
        a = answers(p)
        ref = REFERENCES["vanishing-gradient"](p.params)
        for name in ("hidden", "local_derivatives", "gradient"):
            agree(a[name], ref[name])
        if "bound" in a:
            assert a["bound"] == pytest.approx(ref["bound"], rel=1e-14)
            assert abs(a["gradient"]) <= a["bound"]
        if "clipped" in a:
            x20 = p.params["x"] + [1.0] * 16
            g20 = REFERENCES["vanishing-gradient"](p.params | {"x": x20})["gradient"]
            agree(a["gradient_20"], g20)
            w = torch.zeros(1, dtype=T64, requires_grad=True)
            w.grad = t64([g20])
            torch.nn.utils.clip_grad_norm_([w], 5.0)
            agree(a["clipped"], float(w.grad[0]), rtol=1e-6)      # torch divides by ‖g‖ + 1e-6
        if p.difficulty == 1:
            assert a["long_run"] == "vanishes" and abs(p.params["w"]) < 1
        if p.difficulty == 3:
            assert a["verdict"] == ("shrinks" if abs(a["gradient"]) < 1 else "grows")


def test_vanishing_gradient_level3_shows_saturation_beating_a_large_weight():
    """|w| > 1 everywhere at level 3, yet saturated tanh units make some gradients shrink."""
    level3 = [p for p in instances(["vanishing-gradient"]) if p.difficulty == 3]
    assert all(abs(p.params["w"]) > 1 for p in level3)
    assert any(p.part("verdict").expected == "shrinks" for p in level3)
