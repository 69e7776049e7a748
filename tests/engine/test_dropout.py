"""Inverted dropout: torch's own F.dropout (seeded) decides the mask, the engine reproduces the output
and the gradient; evaluation mode is the identity; p = 1 drops everything."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from examprep import engine
from examprep.errors import ParamError, ShapeError


@given(seed=st.integers(0, 2**31 - 1), p=st.sampled_from([0.1, 0.25, 0.5, 0.8]))
def test_dropout_reproduces_torch_dropout_given_its_mask(seed, p):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 2, (3, 4)) * rng.choice([-1, 1], (3, 4))          # no zeros: the mask is readable
    torch.manual_seed(seed)
    tx = torch.tensor(x, requires_grad=True)
    y = torch.nn.functional.dropout(tx, p, training=True)
    d = rng.standard_normal(x.shape)
    (y * torch.tensor(d)).sum().backward()
    mask = (y.detach().numpy() != 0).astype(int)
    t = engine.dropout(x, mask, p=p, grad_output=d)
    np.testing.assert_allclose(t.output, y.detach().numpy(), rtol=1e-15)
    np.testing.assert_allclose(t.grad_input, tx.grad.numpy(), rtol=1e-15)
    # the scale (a dropout topic's answer): what torch multiplied each kept value by
    kept = mask == 1
    np.testing.assert_allclose(y.detach().numpy()[kept] / x[kept], t.scale, rtol=1e-14)


def test_inverted_dropout_keeps_the_expected_value():
    x = np.ones(100000)
    mask = (np.random.default_rng(0).random(x.shape) > 0.3).astype(int)
    assert abs(engine.dropout(x, mask, p=0.3).output.mean() - 1) < 0.01


def test_evaluation_mode_is_the_identity_and_p_one_drops_everything():
    x = [1.0, -2.0, 3.0]
    assert engine.dropout(x, [0, 1, 0], p=0.5, training=False).output.tolist() == x
    assert engine.dropout(x, [0, 0, 0], p=1.0).output.tolist() == [0.0, 0.0, 0.0]
    # the original (non-inverted) dropout scales at evaluation instead
    assert engine.dropout(x, [1, 1, 1], p=0.5, training=False, inverted=False).output.tolist() == [0.5, -1.0, 1.5]


def test_dropout_bad_input_names_the_argument():
    with pytest.raises(ParamError, match="p: .*probability"):
        engine.dropout([1.0], [1], p=1.5)
    with pytest.raises(ShapeError, match="mask"):
        engine.dropout([1.0, 2.0], [1], p=0.5)
    with pytest.raises(ParamError, match="mask: expected 0"):
        engine.dropout([1.0], [2], p=0.5)
