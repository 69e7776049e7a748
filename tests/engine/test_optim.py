"""Optimisation: gradient clipping by norm against torch."""
import numpy as np
import pytest

from examprep.engine import optim


def test_clip_by_norm_matches_torch_clip_grad_norm():
    torch = pytest.importorskip("torch")
    for g, c in (([3.0, 4.0], 1.0), ([0.3, -0.4], 1.0), ([1e4], 5.0), ([-2.0, 0.0, 1.0], 0.5)):
        p = torch.zeros(len(g), dtype=torch.float64, requires_grad=True)
        p.grad = torch.tensor(g, dtype=torch.float64)
        torch.nn.utils.clip_grad_norm_([p], c)
        np.testing.assert_allclose(optim.clip_by_norm(g, c), p.grad.numpy(), rtol=1e-5)   # torch adds 1e-6 to ‖g‖
    assert optim.clip_by_norm(-3.0, 2.0) == -2.0 and optim.clip_by_norm(0.5, 2.0) == 0.5
