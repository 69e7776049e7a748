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
