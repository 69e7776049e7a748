"""avg-pool: against torch's avg_pool2d (both divisors), max_pool2d and adaptive_avg_pool2d, with autograd
for every gradient."""
import pytest

torch = pytest.importorskip("torch")

from examprep import generators  # noqa: E402
from tests.generators.helpers import agree, answers, instances, t64  # noqa: E402

F = torch.nn.functional


def _pool(fn, p, delta, **kw):
    x = t64(p.params["input"], grad=True)
    y = fn(x[None, None], **kw)[0, 0]
    (y * t64(delta)).sum().backward()
    return y.detach().numpy(), x.grad.numpy()


def test_answers_match_torch_pooling_and_autograd():
    for p in instances(["avg-pool"], range(10)):
        a, pr = answers(p), p.params
        kw = {"kernel_size": pr["kernel_size"], "stride": pr["stride"], "padding": pr["padding"]}
        y, gx = _pool(F.avg_pool2d, p, pr["grad_output"], **kw)
        agree(a["output"], y)
        agree(a["grad_input"], gx)
        if "output_exclude_pad" in a:
            y2, _ = _pool(F.avg_pool2d, p, pr["grad_output"], count_include_pad=False, **kw)
            agree(a["output_exclude_pad"], y2)
        if "max_grad_input" in a:
            _, gm = _pool(F.max_pool2d, p, pr["grad_output"], kernel_size=pr["kernel_size"], stride=pr["stride"])
            agree(a["max_grad_input"], gm)
        if "gap" in a:
            delta = float(p.part("gap_grad").prompt.split("= ")[-1].rstrip("$."))
            g, gg = _pool(F.adaptive_avg_pool2d, p, [[delta]], output_size=1)
            agree(a["gap"], g[0, 0])
            agree(a["gap_grad"], gg)


def test_the_two_divisors_differ_only_where_a_window_covers_padding():
    p = generators.build("avg-pool", 3, 3)
    inc, exc = p.part("output").expected, p.part("output_exclude_pad").expected
    agree(inc[1][1], exc[1][1])                  # the window inside the input: 9 cells either way
    assert inc[0][0] != exc[0][0]                 # the corner window: 9 against 4
    assert {m.id for m in p.part("output_exclude_pad").misconceptions} >= {"padding-counted"}


def test_max_pooling_routes_all_of_delta_to_one_cell_per_window():
    p = generators.build("avg-pool", 5, 1)
    g = t64(p.part("max_grad_input").expected)
    assert int((g != 0).sum()) <= 4 and float(g.sum()) == pytest.approx(float(t64(p.params["grad_output"]).sum()))
