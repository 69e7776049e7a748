"""dense-backward: every part against torch.nn.functional.linear and autograd."""
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances, t64  # noqa: E402


def test_dense_backward_matches_torch_linear_autograd():
    for p in instances(["dense-backward"]):
        a = answers(p)
        ref = REFERENCES["dense"]({k: p.params[k] for k in ("x", "weight", "bias", "grad_output")})
        for name in ("output", "grad_weight", "grad_bias", "grad_input"):
            agree(a[name], ref[name])
        if "delta" in a:                 # L = ½ Σ (y − t)²: autograd's ∂L/∂y
            y = t64(ref["output"], grad=True)
            (g,) = torch.autograd.grad(0.5 * ((y - t64(p.params["target"])) ** 2).sum(), y)
            agree(a["delta"], g.numpy())
