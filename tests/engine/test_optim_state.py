"""optimizer-step from a given state (issue 38 item 1): torch's state keys in and out, step = the steps
already taken (t = step + 1), AdaMax, AdaDelta, centered and momentum RMSprop, and the conventions sources
differ on. Each checked by hand, by sympy's exact arithmetic or against torch.optim with the state loaded
(the random sweep over every variant is tests/verify/test_references.py's, through verify/optim.py)."""
import json
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

from examprep import engine, solve
from examprep.errors import ParamError


def test_adam_from_a_given_state_uses_t_equal_step_plus_one_exactly():
    # gbasran.github.io "ADAM Machine Learning Deepdive" (MATH 3850), minimising θ² from θ₀ = 5, α = 0.1:
    # after step 1 θ₁ = 4.9, m₁ = 1, v₁ = 0.1; step 2 has g₂ = 2θ₁ = 9.8. ε = 0 here, so sympy is exact.
    state = {"step": 1, "exp_avg": [1.0], "exp_avg_sq": [0.1]}
    t = engine.optimizer_step("adam", [4.9], [9.8], lr=0.1, eps=0.0, state=state)
    b1, b2, g = sp.Rational(9, 10), sp.Rational(999, 1000), sp.Rational(98, 10)
    m = b1 * 1 + (1 - b1) * g
    v = b2 * sp.Rational(1, 10) + (1 - b2) * g**2
    want = sp.Rational(49, 10) - sp.Rational(1, 10) * (m / (1 - b1**2)) / sp.sqrt(v / (1 - b2**2))
    assert t.params_new[0] == pytest.approx(float(want), rel=1e-14)
    assert t.exp_avg[0] == pytest.approx(float(m)) and t.exp_avg_sq[0] == pytest.approx(float(v)) and t.step == 2
    fresh = engine.optimizer_step("adam", [5.0], [[10.0], [9.8]], lr=0.1, eps=0.0)       # the same two steps from zero
    assert fresh.params_per_step[0, 0] == pytest.approx(4.9) and fresh.params_new[0] == pytest.approx(float(want))


def test_the_t_of_a_source_is_torchs_step_plus_one():
    # graduateml.com problem 34 ("Adam Optimizer Update"): adam_update(weights [0], m [0], v [0], gradient [1],
    # lr 0.001, β 0.9/0.99, ε 1e-8, t = 1) gives weights [-0.001] and m [0.1]: its t = 1 is torch's step 0.
    t = engine.optimizer_step("adam", [0.0], [1.0], lr=0.001, betas=[0.9, 0.99],
                              state={"step": 0, "exp_avg": [0.0], "exp_avg_sq": [0.0]})
    assert t.params_new[0] == pytest.approx(-0.001, rel=1e-7) and t.exp_avg[0] == pytest.approx(0.1) and t.step == 1


def test_momentum_from_a_buffer_in_both_velocity_conventions():
    # torch: v = 0.9·2 + 0.5 = 2.3, p = 1 − 0.1·2.3; CS231n/Keras: v = 0.9·(−0.2) − 0.1·0.5 = −0.23, p = 1 + v
    t = engine.optimizer_step("momentum", [1.0], [0.5], lr=0.1, state={"momentum_buffer": [2.0]})
    assert t.velocity[0] == pytest.approx(2.3) and t.momentum_buffer[0] == pytest.approx(2.3)
    assert t.params_new[0] == pytest.approx(0.77)
    k = engine.optimizer_step("momentum", [1.0], [0.5], lr=0.1, velocity_convention="lr-inside",
                              state={"momentum_buffer": [-0.2]})
    assert k.velocity[0] == pytest.approx(-0.23) and k.params_new[0] == pytest.approx(0.77)


def test_adamax_and_adadelta_one_step_by_hand():
    # AdaMax (Kingma & Ba 2015, Alg. 2): m = 0.9·0.5 + 0.1·(−2) = 0.25, u = max(0.999·1, 2 + ε), t = 4
    t = engine.optimizer_step("adamax", [1.0], [-2.0], lr=0.1, eps=0.0,
                              state={"step": 3, "exp_avg": [0.5], "exp_inf": [1.0]})
    assert t.exp_inf[0] == 2.0 and t.exp_avg[0] == pytest.approx(0.25)
    assert t.params_new[0] == pytest.approx(1 - 0.1 / (1 - 0.9**4) * 0.25 / 2.0)
    # AdaDelta (Zeiler 2012, Alg. 1), ρ = 0.5, ε = 0: s = 0.5·2 + 0.5·4 = 3, Δ = √1/√3·2, a = 0.5·1 + 0.5·Δ²
    d = engine.optimizer_step("adadelta", [0.0], [2.0], lr=1.0, rho=0.5, eps=0.0,
                              state={"square_avg": [2.0], "acc_delta": [1.0]})
    delta = 2 / np.sqrt(3)
    assert d.square_avg[0] == pytest.approx(3.0) and d.acc_delta[0] == pytest.approx(0.5 + 0.5 * delta**2)
    assert d.params_new[0] == pytest.approx(-delta)


def test_eps_inside_the_square_root_as_d2l_writes_rmsprop():
    # d2l §12.8: x ← x − η/√(s + ε) ⊙ g; with s₀ = 0, α = 0.5, g = 1, ε = 0.5: s = 0.5, x ← x − η·1/√1
    t = engine.optimizer_step("rmsprop", [0.0], [1.0], lr=0.1, alpha=0.5, eps=0.5, eps_placement="inside")
    assert t.params_new[0] == pytest.approx(-0.1)
    o = engine.optimizer_step("rmsprop", [0.0], [1.0], lr=0.1, alpha=0.5, eps=0.5)
    assert o.params_new[0] == pytest.approx(-0.1 / (np.sqrt(0.5) + 0.5))


@pytest.mark.parametrize("name, state, extra", [
    ("adagrad", {"step": 2, "sum": [0.5, 1.0]}, {}),
    ("adagrad", None, {"initial_accumulator_value": 0.3}),
    ("rmsprop", {"step": 1, "square_avg": [1.0, 2.0], "grad_avg": [0.5, -0.5], "momentum_buffer": [0.1, 0.2]},
     {"centered": True, "momentum": 0.5}),
    ("adamw", {"step": 4, "exp_avg": [0.1, -0.2], "exp_avg_sq": [0.3, 0.4]}, {"weight_decay": 0.1}),
    ("adamax", {"step": 2, "exp_avg": [0.1, -0.2], "exp_inf": [0.3, 0.4]}, {}),
    ("adadelta", {"step": 7, "square_avg": [0.1, 0.2], "acc_delta": [0.3, 0.4]}, {"rho": 0.8}),
    ("nesterov", {"momentum_buffer": [0.1, -0.2]}, {}),
])
def test_state_loaded_into_torch_optim_gives_the_same_step(name, state, extra):
    torch = pytest.importorskip("torch")
    p0, grads = [1.0, -2.0], [[0.5, 1.5], [-1.0, 0.25]]
    ours = engine.optimizer_step(name, p0, grads, lr=0.1, state=state, **extra)
    w = torch.tensor(p0, dtype=torch.float64, requires_grad=True)
    kw = {k: v for k, v in extra.items() if k != "initial_accumulator_value"}
    cls = {"adagrad": torch.optim.Adagrad, "rmsprop": torch.optim.RMSprop, "adamw": torch.optim.AdamW,
           "adamax": torch.optim.Adamax, "adadelta": torch.optim.Adadelta, "nesterov": torch.optim.SGD}[name]
    if name == "nesterov":
        kw = {"momentum": 0.9, "nesterov": True}
    if name == "adagrad" and "initial_accumulator_value" in extra:
        kw["initial_accumulator_value"] = extra["initial_accumulator_value"]
    opt = cls([w], lr=0.1, **kw)
    if state:
        opt.state[w] = {k: torch.tensor(float(v), dtype=torch.float64) if k == "step" else
                        torch.tensor(v, dtype=torch.float64) for k, v in state.items()}
    for g in grads:
        w.grad = torch.tensor(g, dtype=torch.float64)
        opt.step()
    np.testing.assert_allclose(ours.params_new, w.detach().numpy(), rtol=1e-12)
    for key, value in opt.state[w].items():
        np.testing.assert_allclose(np.asarray(ours[key], dtype=float), value.numpy(), rtol=1e-12, err_msg=key)


def test_the_state_continues_where_it_stopped():
    grads = [[0.5, -1.0], [1.5, 0.25]]
    for name in ("momentum", "rmsprop", "adagrad", "adadelta", "adam", "adamax"):
        both = engine.optimizer_step(name, [1.0, 2.0], grads, lr=0.1)
        first = engine.optimizer_step(name, [1.0, 2.0], grads[0], lr=0.1)
        keys = [k for k in ("momentum_buffer", "sum", "square_avg", "exp_avg", "exp_avg_sq", "exp_inf", "acc_delta",
                            "step") if k in first]
        then = engine.optimizer_step(name, first.params_new, grads[1], lr=0.1, state={k: first[k] for k in keys})
        np.testing.assert_allclose(then.params_new, both.params_new, rtol=1e-13, err_msg=name)


@pytest.mark.parametrize("kw, words", [
    ({"optimizer": "adam", "state": {"exp_inf": [1.0]}}, "keeps no 'exp_inf'"),
    ({"optimizer": "adam", "state": {"step": -1}}, "state.step"),
    ({"optimizer": "adam", "state": {"exp_avg_sq": [-1.0]}}, "state.exp_avg_sq"),
    ({"optimizer": "rmsprop", "state": {"momentum_buffer": [1.0]}}, "momentum is 0"),
    ({"optimizer": "rmsprop", "state": {"grad_avg": [1.0]}}, "not centered"),
    ({"optimizer": "adam", "velocity_convention": "lr-inside"}, "velocity_convention"),
    ({"optimizer": "adamax", "eps_placement": "inside"}, "eps_placement"),
    ({"optimizer": "adam", "initial_accumulator_value": 0.1}, "initial_accumulator_value"),
    ({"optimizer": "adadelta", "rho": 1.5}, "rho"),
    ({"optimizer": "momentum", "velocity_convention": "keras"}, "velocity_convention"),
])
def test_bad_state_and_conventions_are_refused_naming_them(kw, words):
    name = kw.pop("optimizer")
    with pytest.raises(ParamError, match=words):
        engine.optimizer_step(name, [1.0], [0.5], lr=0.1, **kw)


def test_the_cli_refuses_a_bad_state_in_one_line_and_leaves_the_input_alone():
    params = {"optimizer": "adamax", "params": [1.0], "grads": [0.5], "lr": 0.1, "state": {"exp_avg_sq": [1.0]}}
    run = subprocess.run([sys.executable, "-m", "examprep", "solve", "optimizer-step", "-p", json.dumps(params)],
                         capture_output=True, text=True)
    assert run.returncode == 2 and run.stderr.strip().count("\n") == 0 and "exp_avg_sq" in run.stderr
    assert "Traceback" not in run.stderr


def test_the_known_mistakes_of_a_step_from_a_state():
    params = {"optimizer": "adam", "params": [4.9], "grads": [9.8], "lr": 0.1,
              "state": {"step": 1, "exp_avg": [1.0], "exp_avg_sq": [0.1]}}
    known = solve.mistakes("optimizer-step", params)
    got = {m.id: m for m in known.of("params_new", lambda v: v)}
    assert {"t-is-step", "fresh-state", "no-bias-correction"} <= set(got)
    t_is_step = engine.optimizer_step("adam", [4.9], [9.8], lr=0.1, state={**params["state"], "step": 0})
    assert np.allclose(got["t-is-step"].value, t_is_step.params_new)
