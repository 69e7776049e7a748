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


def test_draws_refused_before_the_engine_are_the_ones_its_values_refuse():
    """cross-attention refuses a draw before its engine call (issue 26): det X = 0 read exactly from the
    integers (every 2×2 matrix of −1, 0, 1 against numpy's det), and a zero projection or a row of equal
    allowed scores exactly where the engine's projections, scaled scores and mask show them."""
    import itertools

    import numpy as np
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from examprep import engine
    from examprep.generators.cross_attention import _refuse_zero_or_flat
    from examprep.generators.framework import Degenerate

    for a, b, c, d in itertools.product([-1, 0, 1], repeat=4):
        assert (a * d - b * c == 0) is bool(abs(np.linalg.det(np.array([[a, b], [c, d]], dtype=float))) < 0.5)

    def mat(rows, cols, entries):
        return st.lists(st.lists(entries, min_size=cols, max_size=cols), min_size=rows, max_size=rows)

    seen = set()

    @settings(max_examples=400, deadline=None)
    @given(st.booleans(), st.booleans(), st.data())
    def check(masked, doubled, data):
        small = st.integers(-1, 1).map(float)
        X, Z = data.draw(mat(2, 2, small)), data.draw(mat(3, 2, small))
        W_Q = [[v * (2 if doubled else 1) for v in row] for row in data.draw(mat(2, 4, small))]
        W_K, W_V = data.draw(mat(2, 4, small)), data.draw(mat(2, 2, st.integers(-1, 2).map(float)))
        mask = [[1, 1, 0], [1, 1, 0]] if masked else None
        t = engine.cross_attention(X, Z, W_Q, W_K, W_V, mask=mask, layout="x-w")
        refused = (not np.any(t.query) or not np.any(t.key) or not np.any(t.value)
                   or any(np.ptp(row[ok]) == 0 for row, ok in zip(t.scaled_scores, t.allowed.astype(bool))))
        try:
            _refuse_zero_or_flat(X, Z, W_Q, W_K, W_V, 2 if masked else 3)
            early = False
        except Degenerate:
            early = True
        assert early is bool(refused)
        seen.add(bool(refused))

    check()
    assert seen == {True, False}
