"""mlp-backprop: every part against torch."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, instances  # noqa: E402


def test_mlp_backprop_every_part_matches_torch():
    for p in instances(["mlp-backprop"]):
        ref = REFERENCES["mlp-backprop"](p.params)
        for part in p.parts:
            agree(part.expected, ref[part.id], rtol=1e-11, atol=1e-13)


HALVES = st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0])


@given(st.sampled_from([(2, 2), (3, 3)]), st.data())
def test_pre_activations_checked_before_the_engine_are_the_engines_to_the_bit(sizes, data):
    """mlp-backprop refuses draws on W1 x + b1 summed in plain Python before its engine call (issue 26):
    on the generator's values (x integers in [−2, 2], W1 and b1 halves) that sum is exact, the engine's."""
    from examprep import engine

    H, C = sizes
    x = data.draw(st.lists(st.integers(-2, 2).map(float), min_size=2, max_size=2))
    w1 = data.draw(st.lists(st.lists(HALVES, min_size=2, max_size=2), min_size=H, max_size=H))
    b1 = data.draw(st.lists(HALVES.map(lambda v: v / 2), min_size=H, max_size=H))
    pre = [sum(w * v for w, v in zip(row, x)) + b for row, b in zip(w1, b1)]
    t = engine.mlp_backprop(x, 0, w1, b1, [[0.5] * H] * C, [0.0] * C)
    assert pre == t.hidden_pre.tolist()
