"""logistic-regression: against torch's binary_cross_entropy_with_logits and autograd (both reductions), the
step, and the calculator-free exact forms (σ(k ln 2) = 2^k/(1 + 2^k))."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep import generators  # noqa: E402
from examprep.answers import check_part  # noqa: E402
from tests.generators.helpers import agree, answers, eval_exact, instances, t64  # noqa: E402

F = torch.nn.functional


def _torch(p, reduction):
    X = t64(p.params["X"])
    X = X[:, None] if X.ndim == 1 else X
    w = t64(np.atleast_1d(p.params["w"]), grad=True)
    b = t64(p.params["b"], grad=True)
    z = X @ w + b
    loss = F.binary_cross_entropy_with_logits(z, t64(p.params["y"]), reduction=reduction)
    loss.backward()
    return torch.sigmoid(z).detach().numpy(), float(loss.detach()), w.grad.numpy(), float(b.grad)


def test_answers_match_torch_bce_with_logits_and_autograd():
    for p in instances(["logistic-regression"], range(10)):
        a = answers(p)
        probs, loss, gw, gb = _torch(p, "mean")
        agree(a["probs"], probs)
        agree(a["loss"], loss)
        agree(np.atleast_1d(a["grad_w"]), gw)
        agree(a["grad_b"], gb)
        if "w_new" in a:
            lr = p.params["lr"]
            agree(np.atleast_1d(a["w_new"]), np.atleast_1d(p.params["w"]) - lr * gw)
            agree(a["b_new"], p.params["b"] - lr * gb)
        if "loss_sum" in a:
            _, loss_s, gw_s, _ = _torch(p, "sum")
            agree(a["loss_sum"], loss_s)
            agree(np.atleast_1d(a["grad_w_sum"]), gw_s)


def test_calculator_free_answers_are_exact_forms_of_ln_2():
    p = generators.build("logistic-regression", 2, 2, calculator_free=True)
    assert all("ln" in v for v in p.statement[2].values)            # w shown as multiples of ln 2
    assert eval_exact(p.part("loss").exact) == pytest.approx(p.part("loss").expected, rel=1e-12)
    res = check_part(p.part("loss"), p.part("loss").exact)
    assert res.status == "correct"


def test_the_loss_carries_forward_from_a_students_own_probabilities():
    p = generators.build("logistic-regression", 4, 1)
    wrong = [0.4, 0.3]
    y = np.asarray(p.params["y"])
    loss = float(F.binary_cross_entropy(t64(wrong), t64(y)))
    res = check_part(p.part("loss"), f"{loss:.6f}", {"probs": wrong})
    assert res.status == "ecf"
