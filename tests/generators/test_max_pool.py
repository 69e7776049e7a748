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


def test_level_3_is_tensorflows_same_padding_with_overlapping_windows():
    for p in instances(["max-pool"], range(10)):
        if p.difficulty != 3:
            continue
        x = t64(p.params["input"], grad=True)
        n = x.shape[0]
        o = -(-n // 2)                                             # ⌈n/s⌉
        total = max((o - 1) * 2 + 3 - n, 0)
        before, after = total // 2, total - total // 2             # TensorFlow: the extra cell at the end
        assert p.part("padding").expected == [before, after]
        padded = F.pad(x[None, None], (before, after, before, after), value=float("-inf"))
        y = F.max_pool2d(padded, 3, stride=2)[0, 0]
        (y * t64(p.params["grad_output"])).sum().backward()
        agree(p.part("output").expected, y.detach())
        agree(p.part("grad_input").expected, x.grad)
        assert y.shape == (o, o)
