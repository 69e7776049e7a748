"""gru-step: answers against torch.nn.GRUCell."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import instances  # noqa: E402


def test_gru_answers_match_torch_grucell():
    for p in instances(["gru-step"]):
        ref = REFERENCES["gru-cell"](p.params)
        np.testing.assert_allclose(np.ravel(p.part("h_new").expected), ref["h_new"], rtol=1e-12)
        if p.difficulty == 3:
            pt = REFERENCES["gru-cell"](p.params | {"convention": "pytorch"})
            np.testing.assert_allclose(np.ravel(p.part("h_new_pytorch").expected), pt["h_new"], rtol=1e-12)


def test_draws_refused_before_the_engine_are_the_ones_its_update_gate_refuses():
    """gru-step refuses a draw whose update gate is 1/2 before its engine call (issue 26): over the
    generator's halves, exactly the draws whose engine z is within 1e-12 of 1/2."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from examprep import engine
    from examprep.generators.gru_step import _update_half

    halves = st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0])
    seen = set()

    @settings(max_examples=400, deadline=None)
    @given(st.sampled_from([1, 2]), st.booleans(), st.data())
    def check(H, bias, data):
        x = data.draw(st.lists(halves.filter(bool), min_size=H, max_size=H))
        h = data.draw(st.lists(halves, min_size=H, max_size=H))
        w_ih = data.draw(st.lists(st.lists(halves, min_size=H, max_size=H), min_size=3 * H, max_size=3 * H))
        w_hh = data.draw(st.lists(st.lists(halves, min_size=H, max_size=H), min_size=3 * H, max_size=3 * H))
        small = st.lists(st.sampled_from([-0.5, 0.0, 0.5]), min_size=3 * H, max_size=3 * H)
        b_ih, b_hh = (data.draw(small), data.draw(small)) if bias else ([0.0] * 3 * H, [0.0] * 3 * H)
        t = engine.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh)
        refused = bool(np.any(np.abs(t.z - 0.5) < 1e-12))
        assert _update_half(x, h, w_ih, w_hh, b_ih, b_hh) is refused
        seen.add(refused)

    check()
    assert seen == {True, False}


def test_every_engine_call_of_a_gru_problem_goes_through_its_solve_table_once(monkeypatch):
    """gru_step's comment: every engine call goes through solve.mistakes("gru-cell"), once each (the
    swapped-gates slip too, once an engine call of its own)."""
    import sys

    from examprep import engine
    from examprep.generators import build

    real, calls = engine.gru_cell, []

    def counted(*args, **kw):
        frame, through = sys._getframe(1), False
        while frame is not None and not through:
            through, frame = frame.f_code.co_name in ("_trace_for", "_changed"), frame.f_back
        calls.append((through, repr((args, sorted(kw.items())))))
        return real(*args, **kw)

    monkeypatch.setattr(engine, "gru_cell", counted)
    for level in (1, 2, 3):
        calls.clear()
        build("gru-step", 11, level)
        assert calls and all(through for through, _ in calls), level
        assert len({args for _, args in calls}) == len(calls), level        # none computed twice
