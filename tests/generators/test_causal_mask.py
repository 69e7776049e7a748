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


def test_draws_refused_before_the_engine_are_the_ones_its_mask_refuses():
    """causal-mask refuses a row of equal allowed scores before its engine call (issue 26): over the
    generator's sizes and alignments, exactly the draws whose rows under the engine's mask are equal."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from examprep import engine
    from examprep.generators.causal_mask import _check_rows
    from examprep.generators.framework import Degenerate

    seen = set()

    @settings(max_examples=400, deadline=None)
    @given(st.sampled_from([(3, 3, "top-left"), (4, 4, "top-left"), (2, 3, "bottom-right"), (2, 4, "bottom-right"),
                            (2, 5, "bottom-right"), (3, 2, "bottom-right"), (2, 3, "top-left")]), st.data())
    def check(shape, data):
        n, m, alignment = shape
        S = data.draw(st.lists(st.lists(st.integers(-2, 2).map(float), min_size=m, max_size=m), min_size=n, max_size=n))
        allowed = engine.causal_softmax(S, alignment=alignment).allowed.astype(bool)
        refused = any(ok.sum() >= 2 and np.ptp(np.array(row)[ok]) == 0 for row, ok in zip(S, allowed))
        try:
            _check_rows(S, alignment)
            early = False
        except Degenerate:
            early = True
        assert early is refused
        seen.add(refused)

    check()
    assert seen == {True, False}
