"""linear-regression: against torch's mse_loss and autograd."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances  # noqa: E402


def test_linear_regression_matches_torch_mse_loss():
    for p in instances(["linear-regression"]):
        a = answers(p)
        ref = REFERENCES["linear-regression"](p.params)
        for name in ("predictions", "loss", "grad_w", "grad_b", "w_new", "b_new"):
            agree(a[name], ref[name])
        if p.difficulty == 3:
            half = REFERENCES["linear-regression"](p.params | {"loss": "half-mse"})
            agree(a["grad_w_half"], half["grad_w"])
            # the ½·MSE step with the answered learning rate equals the MSE step
            agree(np.asarray(p.params["w"]) - a["lr_half"] * np.asarray(half["grad_w"]), ref["w_new"])
