"""lr-schedule: textbook and documentation cases worked by hand or in sympy (exact), refusals in one line.
torch.optim.lr_scheduler itself checks every scheduler on random instances (tests/verify/test_references.py)."""
import numpy as np
import pytest
import sympy as sp

from examprep import engine, solve
from examprep.errors import ExamprepError, ParamError


def test_steplr_as_the_pytorch_docs_example_counts_epochs():
    # torch.optim.lr_scheduler.StepLR's docstring: lr = 0.05 if epoch < 30, 0.005 if 30 <= epoch < 60, 0.0005 below 90
    t = engine.lr_schedule("step-lr", 90, lr=0.05, step_size=30, gamma=0.1)
    assert np.allclose(t.lrs[:30], 0.05) and np.allclose(t.lrs[30:60], 0.005) and np.allclose(t.lrs[60:], 0.0005)
    assert t.last_lr == pytest.approx(0.00005)


def test_multisteplr_decays_at_the_milestone_itself():
    # MultiStepLR's docstring: milestones [30, 80], gamma 0.1: 0.05 below 30, 0.005 from 30, 0.0005 from 80
    t = engine.lr_schedule("multi-step-lr", 90, lr=0.05, milestones=[80, 30], gamma=0.1)
    assert t.lrs[29] == 0.05 and t.lrs[30] == pytest.approx(0.005) and t.lrs[80] == pytest.approx(0.0005)


def test_d2l_cosine_scheduler_with_warmup_exactly():
    # d2l 12.11: CosineScheduler(20, warmup_steps=5, base_lr=0.3, final_lr=0.01): 0.3·t/5 for t < 5, then
    # 0.01 + (0.3 − 0.01)(1 + cos(π (t − 5)/15))/2 up to t = 20
    t = engine.lr_schedule("linear-warmup-cosine", 20, lr=0.3, warmup_steps=5, total_steps=20, eta_min=0.01)
    base, final = sp.Rational(3, 10), sp.Rational(1, 100)
    want = [base * k / 5 if k < 5 else final + (base - final) * (1 + sp.cos(sp.pi * (k - 5) / 15)) / 2
            for k in range(21)]
    np.testing.assert_allclose(t.lrs, [float(w) for w in want[:20]], rtol=1e-14)
    assert t.last_lr == pytest.approx(0.01, rel=1e-14)


def test_cosine_annealing_at_quarter_periods_and_past_t_max():
    t = engine.lr_schedule("cosine-annealing-lr", 7, lr=1.0, T_max=4, eta_min=0.2)
    # 0.2 + 0.4(1 + cos(π t/4)): cos at 0, π/4, π/2, 3π/4, π, then rising again as torch's recursion does
    want = [0.2 + 0.4 * (1 + float(sp.cos(sp.pi * k / 4))) for k in range(8)]
    np.testing.assert_allclose(t.lrs, want[:7], rtol=1e-14)
    assert t.lrs[4] == pytest.approx(0.2) and t.lrs[5] > t.lrs[4]


def test_the_transformer_rate_peaks_at_the_warmup_step():
    # Vaswani et al. (2017) eq. 3 with d_model 512, warmup 4000: the peak (step_num 4000) is (512·4000)^(-1/2)
    t = engine.lr_schedule("inverse-sqrt-warmup", 8000, d_model=512, warmup_steps=4000)
    assert int(np.argmax(t.lrs)) == 3999
    assert t.lrs[3999] == pytest.approx(float(sp.sqrt(sp.Rational(1, 512 * 4000))), rel=1e-14)
    assert t.lrs[0] == pytest.approx(float(sp.Rational(1, 4000) ** sp.Rational(3, 2) / sp.sqrt(512)), rel=1e-14)
    clamped = engine.lr_schedule("inverse-sqrt-warmup", 3, d_model=512, warmup_steps=4000, step_num="max(t,1)")
    assert clamped.lrs[0] == clamped.lrs[1] == t.lrs[0]            # the Annotated Transformer's step 0 read as 1


def test_one_cycle_starts_at_max_over_div_peaks_and_ends_at_the_minimum():
    t = engine.lr_schedule("one-cycle-lr", 10, max_lr=1.0, total_steps=10)
    # pct_start 0.3: the rise ends at step 0.3·10 − 1 = 2; the fall ends at step 9 at 1/25/1e4
    assert t.lrs[0] == pytest.approx(1 / 25) and t.lrs[2] == pytest.approx(1.0) and t.lrs[9] == pytest.approx(4e-6)
    assert t.momentums[0] == pytest.approx(0.95) and t.momentums[2] == pytest.approx(0.85)
    assert t.momentums[9] == pytest.approx(0.95)


def test_sgd_under_a_schedule_subtracts_each_steps_own_rate_times_its_gradient():
    g = np.array([[1.0, -2.0], [0.5, 1.0], [-1.0, 0.25], [2.0, 2.0]])
    t = engine.lr_schedule("exponential-lr", 4, lr=0.5, gamma=0.5, params=[1.0, 1.0], grads=g)
    rates = [sp.Rational(1, 2) ** (k + 1) for k in range(4)]
    want = [1 - sum(r * sp.nsimplify(row[i]) for r, row in zip(rates, g)) for i in range(2)]
    assert t.params_new.tolist() == [float(w) for w in want]


REFUSED = [
    ({"scheduler": "exponential-lr", "steps": 3, "lr": 0.1, "gamma": 0.5, "step_size": 2}, "step_size"),
    ({"scheduler": "step-lr", "steps": 3, "lr": 0.1}, "step_size: missing"),
    ({"scheduler": "one-cycle-lr", "steps": 3, "lr": 0.1, "max_lr": 1, "total_steps": 5}, "one-cycle-lr starts"),
    ({"scheduler": "one-cycle-lr", "steps": 6, "max_lr": 1, "total_steps": 5}, "total_steps = 5"),
    ({"scheduler": "one-cycle-lr", "steps": 2, "max_lr": 1, "total_steps": 3}, "pct_start"),
    ({"scheduler": "one-cycle-lr", "steps": 1, "max_lr": 1, "total_steps": 10, "params": [1], "grads": [[1]]},
     "cycle_momentum"),
    ({"scheduler": "step-lr", "steps": 2, "lr": 0.1, "step_size": 1, "params": [1, 2]}, "grads"),
    ({"scheduler": "step-lr", "steps": 2, "lr": 0.1, "step_size": 1, "params": [1, 2], "grads": [[1, 2]]}, "2×2"),
    ({"scheduler": "step-lr", "steps": 2, "lr": 0.1, "step_size": 1, "momentum": 0.9}, "momentum"),
    ({"scheduler": "linear-warmup-cosine", "steps": 2, "lr": 0.1, "warmup_steps": 3, "total_steps": 3},
     "total_steps"),
    ({"scheduler": "cosine", "steps": 2, "lr": 0.1}, "scheduler"),
    ({"scheduler": "step-lr", "steps": 0, "lr": 0.1, "step_size": 1}, "steps"),
    ({"scheduler": "step-lr", "steps": 10**6, "lr": 0.1, "step_size": 1}, "at most"),
    ({"scheduler": "inverse-sqrt-warmup", "steps": 2, "d_model": 8, "warmup_steps": 2, "step_num": "t"}, "step_num"),
]


@pytest.mark.parametrize("params, words", REFUSED, ids=[str(i) for i in range(len(REFUSED))])
def test_bad_input_is_refused_in_one_line_naming_it(params, words):
    with pytest.raises(ExamprepError) as err:
        solve.solve("lr-schedule", params)
    assert words in str(err.value) and "\n" not in str(err.value)
    assert isinstance(err.value, ParamError)
