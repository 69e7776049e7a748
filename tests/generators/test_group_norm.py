"""group-norm: the answers against torch.nn.GroupNorm and torch.nn.InstanceNorm2d modules (autograd for ∂L/∂γ and
∂L/∂β, the parameters of InstanceNorm2d(2) as torch builds it), and the axis and parameter mistakes named."""
import pytest

torch = pytest.importorskip("torch")

from tests.generators.helpers import agree, answers, instances, t64  # noqa: E402


def test_answers_match_torchs_group_and_instance_norm_modules():
    for p in instances(["group-norm"], range(6)):
        a, params = answers(p), p.params
        x = t64(params["x"])[None]
        c = x.shape[1]
        eps = params["eps"]
        if p.difficulty < 3:
            module = torch.nn.GroupNorm(params["num_groups"], c, eps=eps, dtype=torch.float64)
        else:
            module = torch.nn.InstanceNorm2d(c, eps=eps, affine=True, dtype=torch.float64)
        with torch.no_grad():
            module.weight.copy_(t64(params.get("weight", 1.0)) * torch.ones(c, dtype=torch.float64))
            module.bias.copy_(t64(params.get("bias", 0.0)) * torch.ones(c, dtype=torch.float64))
        y = module(x)[0]
        for ch in range(c):
            agree(a[f"output_{ch}"], y[ch].detach(), rtol=1e-9, atol=1e-9)
        groups = x.reshape(1, params.get("num_groups", c), -1)
        agree(a["mean"], groups.mean(-1)[0])
        agree(a["var"], groups.var(-1, unbiased=False)[0], rtol=1e-12)
        if p.difficulty == 2:
            assert a["num_params"] == sum(q.numel() for q in module.parameters())
        if p.difficulty == 3:
            (y * t64(params["grad_output"])).sum().backward()
            agree(a["grad_weight"], module.weight.grad, rtol=1e-9, atol=1e-9)
            agree(a["grad_bias"], module.bias.grad)
            assert a["num_params_default"] == sum(q.numel() for q in torch.nn.InstanceNorm2d(c).parameters()) == 0


def test_the_axis_and_parameter_mistakes_are_named():
    ids = {(p.difficulty, m.id) for p in instances(["group-norm"], range(4)) for q in p.parts for m in q.misconceptions}
    assert {(1, "layer-norm-axis"), (1, "instance-norm-axis"), (1, "strided-groups"), (2, "per-group"),
            (3, "affine-by-default"), (3, "without-x-hat"), (3, "layer-norm-axis")} <= ids
