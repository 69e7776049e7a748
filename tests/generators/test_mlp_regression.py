"""mlp-regression: every answer against torch (nn.Linear weights, sigmoid, ½·SSE, autograd, one SGD step with
torch.optim.SGD), and the classic mistake of backpropagating with the already-updated W₂."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep import generators  # noqa: E402
from tests.generators.helpers import agree, answers, instances, t64  # noqa: E402


def _torch(p):
    pr = p.params
    w1, b1, w2, b2 = (t64(pr[k], grad=True) for k in ("w1", "b1", "w2", "b2"))
    x, t = t64(pr["x"]), t64(np.atleast_1d(pr["target"]))
    a = w1 @ x + b1
    a.retain_grad()
    h = torch.sigmoid(a)
    h.retain_grad()
    z = w2 @ h + b2
    z.retain_grad()
    o = torch.sigmoid(z)
    loss = 0.5 * ((t - o) ** 2).sum()
    loss.backward()
    opt = torch.optim.SGD([w1, b1, w2, b2], lr=pr["lr"])
    grads = {"a": a.grad.clone(), "h": h.grad.clone(), "z": z.grad.clone(), "w1": w1.grad.clone(), "w2": w2.grad.clone()}
    opt.step()
    return h.detach(), o.detach(), float(loss.detach()), grads, w1.detach(), w2.detach()


def test_answers_match_torch_autograd_and_an_sgd_step():
    for p in instances(["mlp-regression"], range(10)):
        a = answers(p)
        h, o, loss, g, w1_new, w2_new = _torch(p)
        agree(a["hidden"], h)
        agree(np.atleast_1d(a["output"]), o)
        agree(a["loss"], loss)
        agree(np.atleast_1d(a["grad_output_pre"]), g["z"])
        agree(a["grad_w2"], g["w2"])
        agree(a["w2_new"], w2_new)
        if p.difficulty >= 2:
            agree(a["grad_hidden_pre"], g["a"])
            agree(a["grad_w1"], g["w1"])
            agree(a["w1_new"], w1_new)
        if p.difficulty == 3:
            agree(a["grad_hidden"], g["h"])


def test_backprop_with_the_updated_weights_is_a_named_mistake():
    p = generators.build("mlp-regression", 2, 3)
    mis = {m.id: m.value for m in p.part("grad_hidden").misconceptions}
    stale = np.asarray(p.part("w2_new").expected).T @ np.asarray(p.part("grad_output_pre").expected)
    agree(mis["updated-w2"], stale)


def test_the_singular_weight_check_is_numpys_rank_on_every_matrix_of_halves():
    """mlp-regression refuses a singular W by its exact determinant (issue 26: matrix_rank's SVD on every
    draw): on all 256 matrices of the generator's halves, exactly where np.linalg.matrix_rank < 2."""
    import itertools

    from examprep.generators.mlp_regression import _singular

    halves = (-1.0, -0.5, 0.5, 1.0)
    decisions = set()
    for a, b, c, d in itertools.product(halves, repeat=4):
        rank_deficient = bool(np.linalg.matrix_rank(np.array([[a, b], [c, d]])) < 2)
        assert _singular([[a, b], [c, d]]) is rank_deficient
        decisions.add(rank_deficient)
    assert decisions == {True, False}
