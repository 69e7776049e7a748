"""network-graph: each level's block run as torch modules written here (torch.add / torch.cat for the
merge), its parameters counted by numel and its activation bytes by the tensors' sizes; every level,
standard and calculator-free."""
import pytest
import torch
from torch import nn

from examprep import generators


def _run(problem):
    """The block's layers as torch modules on one float32 example: the merged shape, the parameters and
    every tensor the forward pass makes (the input first)."""
    x = torch.zeros(problem.params["input_shape"])
    outs, prev, params, tensors = {"input": x}, x, 0, [x]
    for L in problem.params["layers"]:
        reads = [outs[n] for n in L.get("inputs", [])] or [prev]
        if L["type"] == "conv2d":
            m = nn.Conv2d(reads[0].shape[0], L["out_channels"], L["kernel_size"], L.get("stride", 1), L.get("padding", 0),
                          bias=L.get("bias", True))
            params += sum(q.numel() for q in m.parameters())
            y = m(reads[0][None])[0]
        elif L["type"] == "max-pool":
            y = nn.MaxPool2d(L["kernel_size"], L["stride"], L["padding"])(reads[0])
        elif L["type"] == "relu":
            y = torch.relu(reads[0])
        elif L["type"] == "add":
            y = torch.add(*reads)
        else:
            y = torch.cat(reads, dim=0)
        outs[L["name"]] = prev = y
        tensors.append(y)
        if L["type"] in ("add", "concat"):
            merged = list(y.shape)
    return merged, params, sum(t.numel() * t.element_size() for t in tensors)


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("calculator_free", [False, True])
def test_answers_match_torch_modules(level, calculator_free):
    for seed in range(3):
        p = generators.build("network-graph", seed, level, calculator_free)
        answers = {q.id: q.expected for q in p.parts}
        merged, params, forward = _run(p)
        assert answers["merge_shape"] == merged and answers["total_params"] == params
        memory = answers.get("total_activation_bytes") or answers["training_activation_bytes"] // 2
        assert memory == forward
