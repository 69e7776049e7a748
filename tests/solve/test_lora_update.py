"""lora's update ΔW = (α/r)·B A (Hu et al. 2021, §4.1; PEFT's lora_B, lora_A and lora_alpha): worked by
hand, against a PEFT-style torch module's output, its known mistakes, and bad input refused in one line."""
from __future__ import annotations

import numpy as np
import pytest

from examprep import solve
from examprep.errors import ParamError

B, A = [[1.0], [2.0]], [[3.0, -1.0]]           # B = u as a column, A = wᵀ: the outer product u wᵀ


def test_a_rank_one_update_is_the_outer_product_worked_by_hand():
    s = solve.solve("lora", {"d": 2, "k": 2, "r": 1, "lora_B": B, "lora_A": A})
    np.testing.assert_array_equal(s.answer["delta_weight"], [[3.0, -1.0], [6.0, -2.0]])
    assert "delta_weight" not in solve.solve("lora", {"d": 2, "k": 2, "r": 1}).answer     # asked only with factors


def test_lora_alpha_scales_the_update_by_alpha_over_r_as_a_peft_module_does():
    torch = pytest.importorskip("torch", reason="the PEFT-style reference module needs torch")
    rng = np.random.default_rng(3)
    b, a = rng.integers(-3, 4, (3, 2)).astype(float), rng.integers(-3, 4, (2, 4)).astype(float)
    s = solve.solve("lora", {"d": 3, "k": 4, "r": 2, "lora_B": b.tolist(), "lora_A": a.tolist(), "lora_alpha": 8})
    # y = x W₀ᵀ + (α/r)·(x Aᵀ) Bᵀ on the identity's rows: the update is the difference, transposed
    base = torch.nn.Linear(4, 3, bias=False, dtype=torch.float64)
    x = torch.eye(4, dtype=torch.float64)
    with torch.no_grad():
        y = base(x) + (8 / 2) * ((x @ torch.tensor(a).T) @ torch.tensor(b).T)
        want = (y - base(x)).T.numpy()
    np.testing.assert_allclose(s.answer["delta_weight"], want, rtol=1e-12, atol=1e-12)


def test_the_updates_known_mistakes_are_the_matrices_they_name():
    known = solve.mistakes("lora", {"d": 2, "k": 2, "r": 1, "lora_B": B, "lora_A": A, "lora_alpha": 2})
    got = {m.id: m.value for m in known.of("delta_weight")}
    assert got.keys() == {"inner-product", "transposed", "no-scaling"}
    assert got["inner-product"] == pytest.approx(2 * (3 * 1 + -1 * 2))          # (α/r)·aᵀb, a number
    np.testing.assert_array_equal(got["transposed"], [[6.0, 12.0], [-2.0, -4.0]])
    np.testing.assert_array_equal(got["no-scaling"], [[3.0, -1.0], [6.0, -2.0]])
    wide = solve.mistakes("lora", {"d": 2, "k": 3, "r": 1, "lora_B": B, "lora_A": [[1.0, 0.0, 2.0]]})
    assert [m.id for m in wide.of("delta_weight")] == []           # not square: neither slip makes a d×k matrix


@pytest.mark.parametrize("params, words", [
    ({"lora_B": B}, ["lora_A", "both"]),
    ({"lora_B": [[1.0, 2.0]], "lora_A": A}, ["lora_B", "2×1"]),
    ({"lora_B": B, "lora_A": [[3.0], [-1.0]]}, ["lora_A", "1×2"]),
])
def test_a_missing_or_misshapen_factor_is_refused_in_one_line(params, words):
    with pytest.raises(ParamError) as err:
        solve.solve("lora", {"d": 2, "k": 2, "r": 1} | params)
    assert "\n" not in str(err.value) and all(w in str(err.value) for w in words)
