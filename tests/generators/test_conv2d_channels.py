"""conv2d-channels: the answers against torch's conv2d (groups, 1×1) and autograd, and the mistakes
that are specific to channels."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep import generators  # noqa: E402
from tests.generators.helpers import agree, answers, instances, t64  # noqa: E402

F = torch.nn.functional


def _torch_conv(p):
    x = t64(p.params["input"], grad=True)
    k = t64(p.params["kernel"], grad=True)
    bias = p.params.get("bias")
    b = t64(bias, grad=True) if bias is not None else None
    y = F.conv2d(x[None], k, b, groups=p.params.get("groups", 1))[0]
    (y * t64(p.params["grad_output"])).sum().backward()
    return y.detach().numpy(), x.grad.numpy(), k.grad.numpy(), None if b is None else b.grad.numpy()


def test_answers_match_torch_conv2d_and_autograd():
    for p in instances(["conv2d-channels"], range(10)):
        a = answers(p)
        y, gx, gk, gb = _torch_conv(p)
        if p.difficulty == 1:
            agree(a["output"], y[0])
            agree(a["grad_kernel_0"], gk[0, 0])
            agree(a["grad_kernel_1"], gk[0, 1])
            agree(a["grad_bias"], gb[0])
        elif p.difficulty == 2:
            agree([a["output_0"], a["output_1"]], y)
            agree(a["grad_weight"], gk[:, :, 0, 0])
            agree(a["grad_bias"], gb)
            conv = torch.nn.Conv2d(3, 2, 1)
            assert a["params"] == sum(q.numel() for q in conv.parameters())
        else:
            agree([a["output_0"], a["output_1"]], y)
            agree([a["grad_input_0"], a["grad_input_1"]], gx)
            c = p.part("standard_params").prompt.split(" from ")[1].split(" ")[0]
            c_in = int(c)
            sep = torch.nn.Sequential(torch.nn.Conv2d(c_in, c_in, 3, padding=1, groups=c_in),
                                      torch.nn.Conv2d(c_in, 2 * c_in, 1))
            assert a["separable_params"] == sum(q.numel() for q in sep.parameters())
            assert a["standard_params"] == sum(q.numel() for q in torch.nn.Conv2d(c_in, 2 * c_in, 3).parameters())


def test_a_one_by_one_convolution_is_a_linear_map_at_every_position():
    p = generators.build("conv2d-channels", 4, 2)
    x = np.asarray(p.params["input"])
    w = np.asarray(p.params["kernel"])[:, :, 0, 0]
    y = np.stack([p.part("output_0").expected, p.part("output_1").expected])
    for i in range(2):
        for j in range(2):
            agree(y[:, i, j], w @ x[:, i, j] + np.asarray(p.params["bias"]))


def test_the_depthwise_mistake_is_the_full_convolution():
    p = generators.build("conv2d-channels", 2, 3)
    k = t64(p.params["kernel"])
    full = F.conv2d(t64(p.params["input"])[None], k.repeat(1, 2, 1, 1))[0].numpy()
    for c in range(2):
        mis = {m.id: m.value for m in p.part(f"output_{c}").misconceptions}
        agree(mis["summed-over-channels"], full[c])


def test_every_value_with_channels_is_shown_one_matrix_per_channel():
    from examprep.document import Matrix

    for p in instances(["conv2d-channels"], range(3)):
        for b in p.statement + [blk for s in p.solution for blk in s.blocks]:
            if isinstance(b, Matrix) and isinstance(b.values, list) and b.values and isinstance(b.values[0], list):
                assert not isinstance(b.values[0][0], list), (p.difficulty, b.name)
