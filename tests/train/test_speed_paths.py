"""Issue 40 item 8: the CPU training fast paths compute what the plain composition computes.

The feed-forward block's relu and dropout are one mask over linear1's output, overwritten in place,
and the residual dropouts overwrite the sublayers' outputs: checked here against relu, the mask and
the product written out with torch's own functions from the same random draws (the documented
scheme: four 16-bit numbers per 64-bit Mersenne-Twister draw, p rounded to a multiple of 1/65536),
values and gradients bit for bit, in float32 and float64.
"""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from examprep.train.layers import FeedForward, relu_dropout
from examprep.train.model import build_model
from tests.train.helpers import small_config

P = 0.1


def documented_mask(shape, p: float, dtype) -> torch.Tensor:
    """keep / (1 - p') drawn as docs/trainer.md describes, without examprep's code."""
    n = torch.Size(shape).numel()
    words = torch.empty((n + 3) // 4, dtype=torch.int64).random_(-2 ** 63, 2 ** 63 - 1)
    bits = words.view(torch.int16)[:n].view(shape)
    dropped = round(p * 65536)
    keep = (bits.to(torch.int32) >= dropped - 32768).to(dtype)
    return keep * (65536 / (65536 - dropped))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("inplace", [False, True])
def test_relu_dropout_is_relu_then_the_documented_mask_values_and_gradients(dtype, inplace):
    x = torch.randn(3, 5, 64, dtype=dtype, generator=torch.Generator().manual_seed(1))
    x[0, 0, :4] = 0.0                                         # relu'(0) = 0, as torch's
    grad = torch.randn(x.shape, dtype=dtype, generator=torch.Generator().manual_seed(2))
    a = x.clone().requires_grad_()
    torch.manual_seed(7)
    out = relu_dropout(a * 1 if inplace else a, P, training=True, inplace=inplace)
    out.backward(grad)
    b = x.clone().requires_grad_()
    torch.manual_seed(7)
    expected = F.relu(b) * documented_mask(x.shape, P, dtype)
    expected.backward(grad)
    assert torch.equal(out, expected) and torch.equal(a.grad, b.grad)
    assert 0 < int((out == 0).sum()) < out.numel()
    assert torch.equal(relu_dropout(x, P, training=False), F.relu(x))


def test_feed_forward_in_training_is_linear2_of_relu_and_the_mask():
    cfg = small_config(dropout=P)
    torch.manual_seed(0)
    ff = FeedForward(cfg).train()
    x = torch.randn(2, 6, cfg.d_model, requires_grad=True)
    torch.manual_seed(3)
    ff(x).square().sum().backward()
    mine = [x.grad.clone()] + [p.grad.clone() for p in ff.parameters()]
    x.grad = None
    params = [p.detach().clone().requires_grad_() for p in ff.parameters()]
    w1, b1, w2, b2 = params
    torch.manual_seed(3)
    h = F.relu(F.linear(x, w1, b1))
    F.linear(h * documented_mask(h.shape, P, h.dtype), w2, b2).square().sum().backward()
    theirs = [x.grad] + [p.grad for p in params]
    assert all(torch.equal(m, t) for m, t in zip(mine, theirs))


@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only"])
def test_in_place_dropouts_change_no_gradient_of_a_training_step(arch):
    cfg = small_config(arch=arch, dropout=P)
    src, tgt = torch.randint(5, cfg.src_vocab_size, (3, 7)), torch.randint(5, cfg.tgt_vocab_size, (3, 6))
    grads = []
    for inplace in (True, False):
        torch.manual_seed(0)
        model = build_model(cfg).train()
        for m in model.modules():
            if hasattr(m, "inplace"):
                m.inplace = inplace
        if not inplace:                                  # and the feed-forward blocks the plain way
            for m in model.modules():
                if isinstance(m, FeedForward):
                    m.act = lambda h: F.relu(h)
        torch.manual_seed(5)
        out = model(src, tgt) if arch == "encoder-decoder" else model(torch.cat([src, tgt], 1))
        out.square().mean().backward()
        grads.append([p.grad for p in model.parameters()])
    assert all(torch.equal(a, b) for a, b in zip(*grads))
