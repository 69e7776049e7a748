"""multi-head: against torch.nn.MultiheadAttention and its FLOP counter."""
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import close, instances  # noqa: E402

SEEDS = range(10)


def test_multi_head_answers_match_torch_multihead_attention_and_its_flop_counter():
    for p in instances(["multi-head"], SEEDS):
        ref = REFERENCES["multi-head-shapes"](p.params if p.difficulty == 3 else
                                              {k: p.params[k] for k in ("n", "d_model", "num_heads")})
        for part in p.parts:
            if part.id in ref:
                close(part.expected, ref[part.id])
        if p.difficulty == 2:
            k = p.params["growth_factor"]
            longer = REFERENCES["multi-head-shapes"]({"n": k * p.params["n"], "d_model": p.params["d_model"],
                                                      "num_heads": p.params["num_heads"]})
            assert p.part("growth").expected == longer["score_macs"] // ref["score_macs"] == k * k
