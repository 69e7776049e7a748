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


# ------------------------------------------------------------------ optimizer-step (issue 18)

from hypothesis import given, strategies as st  # noqa: E402

from examprep import engine  # noqa: E402


@given(seed=st.integers(0, 2**32 - 1), lr=st.sampled_from([1e-3, 0.01, 0.1]), adamw=st.booleans())
def test_adams_first_step_moves_each_parameter_by_about_lr(seed, lr, adamw):
    # m̂ = g and v̂ = g² at step 1, so the step is lr·g/(|g| + ε) ≈ lr·sign(g) (Kingma & Ba 2015, §2.1)
    rng = np.random.default_rng(seed)
    p, g = rng.standard_normal(5), rng.uniform(0.1, 2, 5) * rng.choice([-1, 1], 5)      # |g| ≫ ε
    t = engine.optimizer_step("adamw" if adamw else "adam", p, g, lr=lr, weight_decay=0.0)
    np.testing.assert_allclose(np.abs(t.params_new - p), lr, rtol=1e-6)             # within ε/|g| ≤ 1e-7
    assert np.all(np.sign(p - t.params_new) == np.sign(g))


@given(seed=st.integers(0, 2**32 - 1), name=st.sampled_from(["sgd", "momentum", "nesterov", "rmsprop", "adagrad",
                                                               "adam", "adamw"]))
def test_several_steps_equal_the_steps_taken_one_after_the_other_with_the_state(seed, name):
    rng = np.random.default_rng(seed)
    p, grads = rng.standard_normal(3), rng.standard_normal((3, 3))
    t = engine.optimizer_step(name, p, grads, lr=0.1)
    assert t.params_per_step.shape == (3, 3)
    np.testing.assert_allclose(t.params_per_step[-1], t.params_new)
    first = engine.optimizer_step(name, p, grads[0], lr=0.1)
    np.testing.assert_allclose(t.params_per_step[0], first.params_new, rtol=1e-15)


def test_momentum_and_sgd_of_rationals_are_exact():
    import sympy as sp
    p, g1, g2 = [1, -2], [2, 1], [-1, 3]
    t = engine.optimizer_step("momentum", p, [g1, g2], lr=0.5, momentum=0.5)
    lr, mu = sp.Rational(1, 2), sp.Rational(1, 2)
    v1 = sp.Matrix(g1)
    p1 = sp.Matrix(p) - lr * v1
    v2 = mu * v1 + sp.Matrix(g2)
    p2 = p1 - lr * v2
    assert t.params_per_step.tolist() == [[float(v) for v in p1], [float(v) for v in p2]]
    assert t.velocity.tolist() == [float(v) for v in v2]


def test_an_option_the_optimizer_lacks_is_refused():
    from examprep.errors import ParamError
    with pytest.raises(ParamError, match="momentum: optimizer 'sgd' has no momentum"):
        engine.optimizer_step("sgd", [1.0], [1.0], lr=0.1, momentum=0.9)
    with pytest.raises(ParamError, match="betas"):
        engine.optimizer_step("rmsprop", [1.0], [1.0], lr=0.1, betas=[0.9, 0.99])
    with pytest.raises(ParamError, match="Nesterov"):
        engine.optimizer_step("nesterov", [1.0], [1.0], lr=0.1, dampening=0.1)
