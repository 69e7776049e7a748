"""lstm-step: against torch.nn.LSTMCell and the cell-state gradient; the gate count."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances, t64  # noqa: E402

T64 = torch.float64


def test_lstm_step_matches_torch_lstmcell_and_the_cell_gradient():
    for p in instances(["lstm-step"]):
        a = answers(p)
        ref = REFERENCES["lstm-cell"](p.params)
        for name in ("i", "f", "g", "o", "c_new", "h_new"):
            agree(np.ravel(a[name]), ref[name])
        if p.difficulty == 3:
            H = len(p.params["h"])
            cell = torch.nn.LSTMCell(1, H, dtype=T64)
            with torch.no_grad():
                for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    getattr(cell, name).copy_(t64(p.params[name]))
            c = t64(p.params["c"], grad=True)
            _, c_new = cell(t64(p.params["x"])[None], (t64(p.params["h"])[None], c[None]))
            x_in, h_in = t64(p.params["x"])[None], t64(p.params["h"])[None]
            jac = torch.autograd.functional.jacobian(
                lambda cc, cell=cell, x_in=x_in, h_in=h_in: cell(x_in, (h_in, cc[None]))[1][0], c.detach())
            agree(a["cell_gradient"], np.diag(jac.numpy()))
            assert np.allclose(jac.numpy() - np.diag(np.diag(jac.numpy())), 0)    # no cross-unit terms
            delta = np.asarray(a["grad_c"]) / np.asarray(a["cell_gradient"])
            (g,) = torch.autograd.grad(c_new[0], c, t64(delta))
            agree(a["grad_c"], g.numpy())


def test_lstm_gate_count_is_three_plus_candidate():
    p = next(iter(instances(["lstm-step"], range(1))))
    gates = [q.id for q in p.parts if q.id in ("i", "f", "o")]
    assert len(gates) == 3 and "g" in {q.id for q in p.parts}
    assert len(p.params["weight_ih"]) == 4 * len(p.params["h"])


def test_draws_refused_before_the_engine_are_the_ones_its_gates_refuse():
    """lstm-step refuses a draw whose gates i and f agree or whose candidate is 0 before its engine call
    (issue 26): over the generator's halves, exactly the draws the engine's pre_i, pre_f and g refuse."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from examprep import engine
    from examprep.generators.lstm_step import _gates_alike

    halves = st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0])
    seen = set()

    @settings(max_examples=400, deadline=None)
    @given(st.sampled_from([1, 2]), st.booleans(), st.data())
    def check(H, bias, data):
        x = data.draw(st.lists(halves.filter(bool), min_size=1, max_size=1))
        h = data.draw(st.lists(halves, min_size=H, max_size=H))
        c = data.draw(st.lists(halves.filter(bool), min_size=H, max_size=H))
        w_ih = data.draw(st.lists(st.lists(halves, min_size=1, max_size=1), min_size=4 * H, max_size=4 * H))
        w_hh = data.draw(st.lists(st.lists(halves, min_size=H, max_size=H), min_size=4 * H, max_size=4 * H))
        b_ih = data.draw(st.lists(st.sampled_from([-0.5, 0.0, 0.5]), min_size=4 * H, max_size=4 * H)) if bias else [0.0] * 4 * H
        t = engine.lstm_cell(x, h, c, w_ih, w_hh, b_ih, [0.0] * 4 * H)
        refused = bool(np.any(np.abs(t.pre_i - t.pre_f) < 1e-12) or np.any(t.g == 0))
        assert _gates_alike(x, h, w_ih, w_hh, b_ih) is refused
        seen.add(refused)

    check()
    assert seen == {True, False}
