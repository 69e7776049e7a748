"""causal-mask: against torch's CausalBias."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import close, instances  # noqa: E402

SEEDS = range(10)


def test_causal_mask_answers_match_torch_causal_bias():
    from torch.nn.attention.bias import causal_upper_left

    for p in instances(["causal-mask"], SEEDS):
        ref = REFERENCES["causal-mask"]({k: p.params[k] for k in ("scores", "alignment", "scale")})
        close(p.part("mask").expected, ref["allowed"])
        close(p.part("weights").expected, ref["weights"])
        if p.difficulty == 1:
            assert p.part("masked_count").expected == ref["masked_count"]
        if p.difficulty == 2:
            tokens = p.params["tokens"]
            assert p.part("decoder_input").expected == " ".join(["[GO]"] + tokens[:-1])
        if p.difficulty == 3:
            n, m = np.shape(p.params["scores"])
            assert p.part("top_left_visible").expected == int(causal_upper_left(n, m)._materialize()[-1].sum())
