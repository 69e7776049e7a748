"""Issue 40 item 6: float64 stays float64 — the explicit attention path and the position tables
promote (bf16 -> fp32 for the softmax), never downcast (they went through float32: 1e-7, not 1e-15).

Every reference is numpy in float64, written here from the formulas."""
from __future__ import annotations

import numpy as np
import torch

from examprep.train.layers import Positions, apply_rope, attend
from tests.train.helpers import small_config


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_explicit_attention_keeps_float64():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, 5, 8, generator=g, dtype=torch.float64) * 3 for _ in range(3))
    mask = torch.rand(2, 1, 5, 5, generator=g) > 0.3
    mask[..., 0] = True                                   # every query sees a key
    out, weights = attend(q, k, v, mask=mask, need_weights=True)
    assert out.dtype == weights.dtype == torch.float64
    scores = np.where(mask.numpy(), q.numpy() @ k.numpy().swapaxes(-1, -2) / np.sqrt(8), -np.inf)
    expected = _softmax(scores)
    np.testing.assert_allclose(weights.numpy(), expected, rtol=0, atol=1e-14)
    np.testing.assert_allclose(out.numpy(), expected @ v.numpy(), rtol=0, atol=1e-13)


def test_explicit_attention_still_softmaxes_bf16_in_float32():
    q = k = v = torch.randn(1, 1, 4, 8).bfloat16()
    out, weights = attend(q, k, v, need_weights=True)
    assert out.dtype == weights.dtype == torch.bfloat16
    scores = (q @ k.transpose(-2, -1)) * (1.0 / np.sqrt(8))             # bf16, as the layer computes them
    reference = torch.softmax(scores.float(), -1).bfloat16()           # softmax in float32, not in bf16
    assert torch.equal(weights, reference)


def _sinusoids(max_len: int, d: int) -> np.ndarray:
    pos, i = np.arange(max_len)[:, None], np.arange(0, d, 2)
    table = np.zeros((max_len, d))
    table[:, 0::2] = np.sin(pos / 10000.0 ** (i / d))
    table[:, 1::2] = np.cos(pos / 10000.0 ** (i / d))
    return table


def test_sinusoidal_positions_in_float64_are_exact_and_float32_stays_float32():
    positions = Positions(small_config(positions="sinusoidal", max_len=512))
    x = torch.zeros(1, 512, 32)
    assert positions.add(x, torch.arange(512)).dtype == torch.float32
    positions.double()                                    # what model.double() does to it
    added = positions.add(x.double(), torch.arange(512))
    assert added.dtype == torch.float64
    np.testing.assert_allclose(added[0].numpy(), _sinusoids(512, 32), rtol=0, atol=1e-12)


def test_rope_in_float64_is_exact_and_float32_stays_float32():
    cfg = small_config(positions="rope", max_len=512)           # d_head 8
    positions = Positions(cfg)
    x = torch.randn(1, 2, 512, 8, dtype=torch.float64)
    assert apply_rope(x.float(), *positions.rotation(torch.arange(512))).dtype == torch.float32
    positions.double()
    rotated = apply_rope(x, *positions.rotation(torch.arange(512)))
    assert rotated.dtype == torch.float64
    theta = 10000.0 ** (-np.arange(0, 8, 2) / 8)
    angle = np.arange(512)[:, None] * theta                     # (T, 4)
    x1, x2 = x.numpy()[..., :4], x.numpy()[..., 4:]
    expected = np.concatenate([x1 * np.cos(angle) - x2 * np.sin(angle), x1 * np.sin(angle) + x2 * np.cos(angle)], -1)
    np.testing.assert_allclose(rotated.numpy(), expected, rtol=0, atol=1e-12)
