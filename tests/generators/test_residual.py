"""residual: blocks against torch autograd; a dead ReLU still passes the gradient."""
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances  # noqa: E402


def test_residual_blocks_match_torch_autograd():
    for p in instances(["residual"]):
        a = answers(p)
        if p.difficulty < 3:
            ref = REFERENCES["residual"](p.params)
            for name in ("branch", "output", "jacobian", "grad_input") + (("grad_branch",) if "grad_branch" in a else ()):
                agree(a[name], ref[name])
        else:
            for skip, suffix in ((False, "plain"), (True, "residual")):
                ref = REFERENCES["residual-stack"](p.params | {"skip": skip})
                agree(a[f"local_{suffix}"], ref["local_derivatives"])
                agree(a[f"gradient_{suffix}"], ref["gradient"])


def test_residual_dead_relu_still_passes_the_gradient():
    dead = [p for p in instances(["residual"]) if p.difficulty == 1 and p.params["w1"] * p.params["x"] + p.params["b1"][0] < 0]
    assert dead, "level 1 should sometimes draw a dead branch"
    for p in dead:
        assert p.part("grad_input").expected == p.params["grad_output"]


def test_level_two_draws_are_refused_before_the_engine_exactly_as_by_its_values():
    """residual refuses a level-2 draw in plain Python before its engine call (issue 26): over the
    generator's value ranges, exactly the draws whose engine branch_pre has a kink or no active unit, or
    whose grad_branch is 0 — checked here on the engine's own values."""
    import numpy as np
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from examprep import engine
    from examprep.generators.residual import _dead_or_kinked

    halves = st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0])
    ints = st.sampled_from([-1.0, 0.0, 1.0])

    def mat(entries):
        return st.lists(st.lists(entries, min_size=2, max_size=2), min_size=2, max_size=2)

    seen = set()

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.sampled_from([-2.0, -1.0, 1.0, 2.0]), min_size=2, max_size=2), st.booleans(), st.data())
    def check(x, calculator_free, data):
        w1 = data.draw(mat(ints if calculator_free else halves))
        b1 = data.draw(st.lists(ints, min_size=2, max_size=2))
        w2 = data.draw(mat(st.sampled_from([-1.0, 1.0]) if calculator_free else halves.filter(bool)))
        delta = data.draw(st.lists(st.sampled_from([-2.0, -1.0, 1.0, 2.0]), min_size=2, max_size=2))
        t = engine.residual_block(x, w1, b1, w2, activation="relu", grad_output=delta)
        refused = bool(np.any(t.branch_pre == 0) or not np.any(t.branch_pre > 0) or not np.any(t.grad_branch))
        assert _dead_or_kinked(x, w1, b1, w2, delta) is refused
        seen.add(refused)

    check()
    assert seen == {True, False}
    # every refusal reason on a hand-picked draw: kink, all dead, a zero branch gradient, and a kept one
    eye = [[1.0, 0.0], [0.0, 1.0]]
    assert _dead_or_kinked([1.0, -1.0], eye, [-1.0, 0.0], eye, [1.0, 1.0])                    # a = [0, -1]
    assert _dead_or_kinked([-1.0, -1.0], eye, [0.0, 0.0], eye, [1.0, 1.0])                    # a < 0
    assert _dead_or_kinked([1.0, -1.0], eye, [0.0, 0.0], [[1.0, 0.0], [1.0, 0.0]], [1.0, -1.0])   # W₂ᵀδ = 0 on the live unit
    assert not _dead_or_kinked([1.0, 1.0], eye, [0.0, 0.0], eye, [1.0, 1.0])
