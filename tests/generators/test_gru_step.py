"""gru-step: answers against torch.nn.GRUCell."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import instances  # noqa: E402


def test_gru_answers_match_torch_grucell():
    for p in instances(["gru-step"]):
        ref = REFERENCES["gru-cell"](p.params)
        np.testing.assert_allclose(np.ravel(p.part("h_new").expected), ref["h_new"], rtol=1e-12)
        if p.difficulty == 3:
            pt = REFERENCES["gru-cell"](p.params | {"convention": "pytorch"})
            np.testing.assert_allclose(np.ravel(p.part("h_new_pytorch").expected), pt["h_new"], rtol=1e-12)
