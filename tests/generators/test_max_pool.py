"""max-pool: against torch's max_pool2d and its indices."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances, t64  # noqa: E402

F = torch.nn.functional


def test_max_pool_matches_torch_max_pool2d_and_its_indices():
    for p in instances(["max-pool"]):
        a = answers(p)
        ref = REFERENCES["max-pool"](p.params)
        agree(a["output"], ref["output"])
        agree(a["grad_input"], ref["grad_input"])
        if "indices" in a:
            _, idx = F.max_pool2d(t64(p.params["input"])[None, None], 2, stride=p.params["stride"], return_indices=True)
            assert np.array_equal(np.asarray(a["indices"]), idx[0, 0].numpy())
