"""cross-attention: against torch's SDPA and multi-head shapes."""
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import close, instances  # noqa: E402

SEEDS = range(10)


def test_cross_attention_answers_match_torch_sdpa_and_multihead_shapes():
    for p in instances(["cross-attention"], SEEDS):
        if p.difficulty == 1:
            ref = REFERENCES["multi-head-shapes"](p.params)
            close(p.part("scores_shape").expected, ref["scores_shape"])
            close(p.part("output_shape").expected, ref["output_shape"])
            assert p.part("queries_from").expected == "the decoder"
            continue
        ref = REFERENCES["cross-attention"](p.params)
        for name in ("query", "key", "value", "scores", "weights", "output"):
            close(p.part(name).expected, ref[name])
        if p.difficulty == 3:
            assert all(row[-1] == 0 for row in p.part("weights").expected)       # the padding position
