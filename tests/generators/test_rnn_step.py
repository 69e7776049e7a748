"""rnn-step: against torch.nn.RNNCell and the autograd Jacobian."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances, t64  # noqa: E402

T64 = torch.float64


def test_rnn_step_matches_torch_rnncell_and_autograd_jacobian():
    for p in instances(["rnn-step"]):
        a = answers(p)
        if p.difficulty < 3:
            agree(np.ravel(a["h_new"]), REFERENCES["rnn-cell"](p.params)["h_new"])
            continue
        ref = REFERENCES["rnn-unroll"](p.params)
        agree(a["h_1"], ref["hidden"][0])
        agree(a["h_2"], ref["hidden"][1])
        cell = torch.nn.RNNCell(1, 2, nonlinearity=p.params["nonlinearity"], dtype=T64)
        with torch.no_grad():
            cell.weight_ih.copy_(t64(p.params["weight_ih"]))
            cell.weight_hh.copy_(t64(p.params["weight_hh"]))
            cell.bias_ih.copy_(t64(p.params["bias_ih"]))
            cell.bias_hh.zero_()
        x2 = t64(p.params["x"][1])[None]
        jac = torch.autograd.functional.jacobian(lambda h, cell=cell, x2=x2: cell(x2, h[None])[0], t64(ref["hidden"][0]))
        agree(a["jacobian"], jac.numpy())
