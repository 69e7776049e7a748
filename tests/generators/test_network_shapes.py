"""network-shapes: every cell of the table against the real torch.nn layers run on one example, the
issue's mistakes named, and a wrong shape carried forward down the table."""
import pytest

torch = pytest.importorskip("torch")

from examprep import generators  # noqa: E402
from examprep.answers import check_part  # noqa: E402
from tests.generators.helpers import instances  # noqa: E402

nn = torch.nn
F = torch.nn.functional


def _tf_pads(n: int, k: int, s: int) -> tuple[int, int]:
    total = max((-(-n // s) - 1) * s + k - n, 0)
    return total // 2, total - total // 2


def torch_table(params: dict) -> list[tuple[list[int], int]]:
    """Each layer's output shape and parameter count from torch.nn modules (TensorFlow's "same" by explicit
    padding: zeros for a conv, −∞ for a max-pool, the extra at the end)."""
    x = torch.zeros([1, *params["input_shape"]], dtype=torch.float64)
    out = []
    for L in params["layers"]:
        kind = L["type"]
        if kind == "conv2d":
            pad = L.get("padding", 0)
            m = nn.Conv2d(x.shape[1], L["out_channels"], L["kernel_size"], L.get("stride", 1),
                          0 if pad == "same" else pad, groups=L.get("groups", 1), dtype=torch.float64)
            if pad == "same":
                ph = _tf_pads(x.shape[2], L["kernel_size"], L.get("stride", 1))
                pw = _tf_pads(x.shape[3], L["kernel_size"], L.get("stride", 1))
                x = F.pad(x, (*pw, *ph))
        elif kind == "max-pool":
            k, s = L["kernel_size"], L.get("stride", L["kernel_size"])
            if L.get("padding", 0) == "same":
                x = F.pad(x, (*_tf_pads(x.shape[3], k, s), *_tf_pads(x.shape[2], k, s)), value=float("-inf"))
            m = nn.MaxPool2d(k, s)
        elif kind == "global-avg-pool":
            m = nn.AdaptiveAvgPool2d(1)
        elif kind == "batch-norm":
            m = nn.BatchNorm2d(x.shape[1], dtype=torch.float64).eval()
        elif kind == "flatten":
            m = nn.Flatten()
        elif kind == "linear":
            m = nn.Linear(x.shape[1], L["out_features"], dtype=torch.float64)
        else:
            m = {"relu": nn.ReLU(), "dropout": nn.Dropout(L.get("p", 0.5)).eval()}[kind]
        x = m(x)
        out.append((list(x.shape[1:]), sum(p.numel() for p in m.parameters())))
    return out


def test_every_cell_and_the_total_match_torch_modules():
    for p in instances(["network-shapes"], range(8)):
        table = torch_table(p.params)
        names = [L["name"] for L in p.params["layers"]]
        for name, (shape, count) in zip(names, table):
            ident = name.replace(" ", "_").replace("-", "_")
            if f"{ident}_shape" in {q.id for q in p.parts}:
                assert p.part(f"{ident}_shape").expected == shape, (p.seed, name)
            if f"{ident}_params" in {q.id for q in p.parts}:
                assert p.part(f"{ident}_params").expected == count, (p.seed, name)
        assert p.part("total_params").expected == sum(c for _, c in table)


def test_the_issues_mistakes_are_named():
    ids = {m.id for p in instances(["network-shapes"], range(6)) for q in p.parts for m in q.misconceptions}
    assert {"no-bias", "no-input-channels", "padding-once", "flatten-before-pool", "pool-params",
            "keras-batch-norm"} <= ids


def test_keras_batch_norm_counts_four_per_channel():
    p = generators.build("network-shapes", 3, 2)
    part = p.part("batch_norm_params")
    keras = next(m for m in part.misconceptions if m.id == "keras-batch-norm")
    assert keras.value == 2 * part.expected and part.expected == 2 * p.part("conv2d_1_shape").expected[0]


def test_pooling_has_no_parameters_and_a_kernel_count_is_named():
    p = generators.build("network-shapes", 1, 1)
    part = p.part("max_pool_params")
    assert part.expected == 0
    res = check_part(part, str(next(m.value for m in part.misconceptions if m.id == "pool-params")))
    assert res.status == "misconception" and res.misconception.id == "pool-params"


def test_a_wrong_conv_shape_carries_forward_down_the_table():
    p = generators.build("network-shapes", 1, 1)
    conv = p.part("conv2d_shape").expected
    wrong = [conv[0], conv[1] - 1, conv[2] - 1]          # the student forgot the +1
    pooled = [wrong[0], wrong[1] // 2, wrong[2] // 2]
    earlier = {"conv2d_shape": wrong}
    res = check_part(p.part("max_pool_shape"), str(pooled), earlier)
    assert res.status == "ecf"
    flat = [pooled[0] * pooled[1] * pooled[2]]
    res = check_part(p.part("flatten_shape"), str(flat), earlier | {"max_pool_shape": pooled})
    assert res.status == "ecf"
    lin = p.part("linear_params")
    res = check_part(lin, str(flat[0] * 10 + 10), earlier | {"max_pool_shape": pooled, "flatten_shape": flat})
    assert res.status == "ecf"


def test_the_statement_is_a_table_with_a_letter_for_every_part():
    from examprep.document import Table

    for level in (1, 2, 3):
        p = generators.build("network-shapes", 5, level)
        table = next(b for b in p.statement if isinstance(b, Table))
        letters = [c for row in table.rows for c in row[2:] if c.startswith("(")]
        assert letters == [f"({chr(97 + i)})" for i in range(len(p.parts))]
