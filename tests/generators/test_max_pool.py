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


def test_ties_counted_before_the_engine_are_the_engines():
    """max-pool checks a level-1/2 draw's tied windows before its engine call (issue 26): the plain
    count per 2×2 window is the engine's ties_count, on the generator's draws (distinct integers, or
    their halves, at level 1; integers 0–3 at level 2)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from examprep import engine
    from examprep.generators.max_pool import _maxima_per_window

    seen = set()

    @settings(max_examples=300, deadline=None)
    @given(st.one_of(st.lists(st.integers(0, 3).map(float), min_size=16, max_size=16),
                     st.permutations(range(-5, 12)).map(lambda v: [x / 2 for x in v[:16]])))
    def check(flat):
        x = [flat[i:i + 4] for i in range(0, 16, 4)]
        want = engine.max_pool_backward(x, 2, np.ones((2, 2)), stride=2).ties_count.ravel().tolist()
        assert _maxima_per_window(x) == want
        seen.add(max(want) > 1)

    check()
    assert seen == {True, False}


def test_level_three_draws_refused_before_the_engine_are_the_ones_its_indices_refuse():
    """max-pool refuses a level-3 draw (3×3 windows, stride 2, "same" padding) before its engine call
    where no input is the maximum of two windows or their δ cancel there (issue 26): on the generator's
    draws (distinct integers or halves, n = 4 or 5, δ nonzero in [−3, 3]), exactly the engine's refusals."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from examprep import engine
    from examprep.generators.framework import Degenerate
    from examprep.generators.max_pool import _check_shared_maxima

    seen = set()

    @settings(max_examples=300, deadline=None)
    @given(st.sampled_from([4, 5]), st.booleans(), st.data())
    def check(n, halve, data):
        flat = data.draw(st.permutations(range(-9, 16)))[:n * n]
        x = [[v / 2 if halve else float(v) for v in flat[i:i + n]] for i in range(0, n * n, n)]
        o = -(-n // 2)
        delta = data.draw(st.lists(st.lists(st.sampled_from([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0]), min_size=o, max_size=o),
                                   min_size=o, max_size=o))
        t = engine.max_pool(x, 3, stride=2, padding="same", grad_output=delta)
        idx = t.indices.ravel().tolist()
        shared = [i for i in set(idx) if idx.count(i) > 1]
        refused = not shared or any(np.ravel(t.grad_input)[i] == 0 for i in shared)
        try:
            _check_shared_maxima(x, delta)
            early = False
        except Degenerate:
            early = True
        assert early is refused
        seen.add(refused)

    check()
    assert seen == {True, False}
