"""optimizer-step: every answer from torch.optim itself (SGD with momentum, RMSprop, Adam, AdamW, Adam with
weight_decay) stepping a tensor with the given gradients."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep import generators  # noqa: E402
from tests.generators.helpers import agree, answers, instances, t64  # noqa: E402


def _run(cls, p0, grads, **kw):
    w = t64(p0, grad=True)
    opt = cls([w], **kw)
    out = []
    for g in np.atleast_2d(grads):
        w.grad = t64(g)
        opt.step()
        out.append(w.detach().clone().numpy())
    return out, opt.state[w]


def test_answers_match_torch_optim():
    for p in instances(["optimizer-step"], range(10)):
        a, pr = answers(p), p.params
        if p.difficulty == 1:
            steps, state = _run(torch.optim.SGD, pr["params"], pr["grads"], lr=pr["lr"], momentum=0.9)
            agree(a["params_1"], steps[0])
            agree(a["params_2"], steps[1])
            agree(a["velocity"], state["momentum_buffer"])
        elif p.difficulty == 2:
            r, a_ = pr["rmsprop"], pr["adam"]
            steps, _ = _run(torch.optim.RMSprop, r["params"], r["grads"], lr=r["lr"])
            agree(a["rmsprop_params"], steps[0])
            steps, state = _run(torch.optim.Adam, a_["params"], a_["grads"], lr=a_["lr"])
            agree(a["adam_params_1"], steps[0])
            agree(a["adam_params_2"], steps[1])
            agree(a["adam_exp_avg"], state["exp_avg"])
        else:
            w, l2 = pr["adamw"], pr["adam"]
            steps, _ = _run(torch.optim.AdamW, w["params"], w["grads"], lr=w["lr"], weight_decay=w["weight_decay"])
            agree(a["adamw_params"], steps[0])
            steps, _ = _run(torch.optim.Adam, l2["params"], l2["grads"], lr=l2["lr"], weight_decay=l2["weight_decay"])
            agree(a["adam_l2_params"], steps[0])
            assert a["decoupled"] == "AdamW"


def test_adam_without_its_bias_correction_is_a_named_mistake():
    p = generators.build("optimizer-step", 2, 2)
    a_ = p.params["adam"]
    steps, _ = _run(torch.optim.Adam, a_["params"], a_["grads"][0], lr=a_["lr"])
    # Adam's first step moves each parameter by about lr; without 1/(1 − β₁), 1/(1 − β₂) it moves lr·0.1/√0.001
    mis = {m.id: m.value for m in p.part("adam_params_1").misconceptions}
    g = np.asarray(a_["grads"][0])
    agree(mis["no-bias-correction"], np.asarray(a_["params"]) - a_["lr"] * 0.1 * g / (np.sqrt(0.001 * g * g) + 1e-8))
    assert np.allclose(np.abs(steps[0] - np.asarray(a_["params"])), a_["lr"], rtol=1e-6)
