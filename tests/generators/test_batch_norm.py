"""batch-norm: against torch.nn.BatchNorm1d in training and evaluation mode (its running buffers after the
step), and Keras's moving averages written from its documentation's formula."""
import pytest

torch = pytest.importorskip("torch")

from examprep import generators  # noqa: E402
from tests.generators.helpers import agree, answers, instances, t64  # noqa: E402


def _layer(p):
    # torch refuses ε = 0 in training; 1e-300 added to a variance of order 1 changes no float64 bit
    bn = torch.nn.BatchNorm1d(2, eps=p.params["eps"] or 1e-300, momentum=0.1, dtype=torch.float64)
    with torch.no_grad():
        bn.weight.copy_(t64(p.params["gamma"]))
        bn.bias.copy_(t64(p.params["beta"]))
        bn.running_mean.copy_(t64(p.params["running_mean"]))
        bn.running_var.copy_(t64(p.params["running_var"]))
    return bn


def test_answers_match_torch_batchnorm1d():
    for p in instances(["batch-norm"], range(10)):
        a = answers(p)
        x = t64(p.params["x"])
        if p.difficulty < 3:
            bn = _layer(p).train()
            y = bn(x)
            agree(a["output"], y.detach().numpy(), rtol=1e-11)
            agree(a["mean"], x.mean(0))
            agree(a["var"], x.var(0, unbiased=False))
            if p.difficulty == 2:
                agree(a["running_mean_new"], bn.running_mean)
                agree(a["running_var_new"], bn.running_var)
        else:
            agree(a["output_eval"], _layer(p).eval()(x).detach().numpy(), rtol=1e-11)
            bn = _layer(p).train()
            bn(x)
            agree(a["running_mean_new"], bn.running_mean)
            # Keras: moving = moving·momentum + batch·(1 − momentum), with tf.nn.moments' biased variance
            rm, rv = t64(p.params["running_mean"]), t64(p.params["running_var"])
            agree(a["running_mean_keras"], rm * 0.99 + x.mean(0) * 0.01)
            agree(a["running_var_keras"], rv * 0.99 + x.var(0, unbiased=False) * 0.01)


def test_eval_mode_ignores_the_batch_and_names_the_mistake():
    p = generators.build("batch-norm", 4, 3)
    part = p.part("output_eval")
    train = _layer(p).train()(t64(p.params["x"])).detach().numpy()
    agree(next(m.value for m in part.misconceptions if m.id == "batch-statistics-in-eval"), train, rtol=1e-11)


def test_layer_norms_axis_is_a_named_mistake():
    p = generators.build("batch-norm", 1, 1)
    ln = torch.nn.functional.layer_norm(t64(p.params["x"]), (2,), eps=p.params["eps"]).numpy()
    agree(next(m.value for m in p.part("output").misconceptions if m.id == "over-channels"), ln, rtol=1e-11)
