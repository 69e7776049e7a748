"""The backprop/CNN/RNN generators' answers against independent references: torch modules and
autograd (examprep.train.engine_reference plus direct torch code here) and sympy's exact arithmetic.

The framework tests (test_framework.py) already check every generator's structure, worked
solutions, misconceptions, recipes and exact forms; these check that the numbers are right."""
import math

import numpy as np
import pytest
import sympy as sp

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import instances  # noqa: E402

F = torch.nn.functional
T64 = torch.float64


def t64(x, grad=False):
    return torch.tensor(np.asarray(x, dtype=float), dtype=T64, requires_grad=grad)


def agree(got, want, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=rtol, atol=atol)


def answers(p):
    return {q.id: q.expected for q in p.parts}


# ------------------------------------------------------------------------------------ activation

def test_activation_values_and_derivatives_match_torch_autograd():
    for p in instances(["activation"]):
        a = answers(p)
        if p.difficulty < 3:
            x = p.params["x"]
            for name in ("sigmoid", "tanh", "relu"):
                ref = REFERENCES["activation"]({"name": name, "x": x})
                if name in a:
                    agree(a[name], ref["output"])
                if f"{name}_derivative" in a:
                    agree(a[f"{name}_derivative"], ref["derivative"])
            if "max_sigmoid_derivative" in a:
                z = t64(np.linspace(-6, 6, 1201))
                assert a["max_sigmoid_derivative"] == pytest.approx(float((torch.sigmoid(z) * (1 - torch.sigmoid(z))).max()))
                assert a["max_tanh_derivative"] == pytest.approx(float((1 - torch.tanh(z) ** 2).max()))
        else:
            ref = REFERENCES["activation"]({"name": "leaky-relu", "x": p.params["x"],
                                            "negative_slope": p.params["negative_slope"]})
            agree(a["leaky_relu"], ref["output"])
            agree(a["leaky_relu_derivative"], ref["derivative"])
            x0 = t64(p.params["x0"], grad=True)
            (g,) = torch.autograd.grad(torch.sigmoid(torch.sigmoid(x0)), x0)
            agree(a["chain_derivative"], float(g))
            assert a["stack_bound"] == pytest.approx(0.25 ** p.params["layers"], rel=1e-15)


def test_activation_exact_forms_are_sympy_identities():
    """σ(ln a) = a/(1 + a), σ'(ln a) = a/(1 + a)², tanh(ln a) = (a² − 1)/(a² + 1), exactly."""
    a = sp.Symbol("a", positive=True)
    sig = 1 / (1 + sp.exp(-sp.log(a)))
    assert sp.simplify(sig - a / (1 + a)) == 0
    assert sp.simplify(sp.diff(1 / (1 + sp.exp(-sp.Symbol("x"))), "x").subs("x", sp.log(a)) - a / (1 + a) ** 2) == 0
    assert sp.simplify(sp.tanh(sp.log(a)).rewrite(sp.exp) - (a**2 - 1) / (a**2 + 1)) == 0


# --------------------------------------------------------------------------------- dense, MLP, LR

def test_dense_backward_matches_torch_linear_autograd():
    for p in instances(["dense-backward"]):
        a = answers(p)
        ref = REFERENCES["dense"]({k: p.params[k] for k in ("x", "weight", "bias", "grad_output")})
        for name in ("output", "grad_weight", "grad_bias", "grad_input"):
            agree(a[name], ref[name])
        if "delta" in a:                 # L = ½ Σ (y − t)²: autograd's ∂L/∂y
            y = t64(ref["output"], grad=True)
            (g,) = torch.autograd.grad(0.5 * ((y - t64(p.params["target"])) ** 2).sum(), y)
            agree(a["delta"], g.numpy())


def test_mlp_backprop_every_part_matches_torch():
    for p in instances(["mlp-backprop"]):
        ref = REFERENCES["mlp-backprop"](p.params)
        for part in p.parts:
            agree(part.expected, ref[part.id], rtol=1e-11, atol=1e-13)


def test_linear_regression_matches_torch_mse_loss():
    for p in instances(["linear-regression"]):
        a = answers(p)
        ref = REFERENCES["linear-regression"](p.params)
        for name in ("predictions", "loss", "grad_w", "grad_b", "w_new", "b_new"):
            agree(a[name], ref[name])
        if p.difficulty == 3:
            half = REFERENCES["linear-regression"](p.params | {"loss": "half-mse"})
            agree(a["grad_w_half"], half["grad_w"])
            # the ½·MSE step with the answered learning rate equals the MSE step
            agree(np.asarray(p.params["w"]) - a["lr_half"] * np.asarray(half["grad_w"]), ref["w_new"])


# ------------------------------------------------------------------------------------- residual

def test_residual_blocks_match_torch_autograd():
    for p in instances(["residual"]):
        a = answers(p)
        if p.difficulty < 3:
            ref = REFERENCES["residual"](p.params)
            for name in ("branch", "output", "jacobian", "grad_input") + (("grad_branch",) if "grad_branch" in a else ()):
                agree(a[name], ref[name])
        else:
            for skip, suffix in ((False, "plain"), (True, "residual")):
                ref = REFERENCES["residual-stack"](p.params | {"skip": skip})
                agree(a[f"local_{suffix}"], ref["local_derivatives"])
                agree(a[f"gradient_{suffix}"], ref["gradient"])


def test_residual_dead_relu_still_passes_the_gradient():
    dead = [p for p in instances(["residual"]) if p.difficulty == 1 and p.params["w1"] * p.params["x"] + p.params["b1"][0] < 0]
    assert dead, "level 1 should sometimes draw a dead branch"
    for p in dead:
        assert p.part("grad_input").expected == p.params["grad_output"]


# ----------------------------------------------------------------------------------- conv, pool

def test_conv2d_matches_torch_conv_autograd():
    for p in instances(["conv2d"]):
        a = answers(p)
        ref = REFERENCES["conv2d"](p.params)
        for name in ("output", "grad_kernel", "grad_input") + (("grad_bias",) if "grad_bias" in a else ()):
            agree(a[name], ref[name])


def test_conv2d_level1_delta_is_the_output_for_half_sum_of_squares():
    for p in instances(["conv2d"], range(5)):
        if p.difficulty == 1:
            assert p.params["grad_output"] == p.part("output").expected


def test_max_pool_matches_torch_max_pool2d_and_its_indices():
    for p in instances(["max-pool"]):
        a = answers(p)
        ref = REFERENCES["max-pool"](p.params)
        agree(a["output"], ref["output"])
        agree(a["grad_input"], ref["grad_input"])
        if "indices" in a:
            _, idx = F.max_pool2d(t64(p.params["input"])[None, None], 2, stride=p.params["stride"], return_indices=True)
            assert np.array_equal(np.asarray(a["indices"]), idx[0, 0].numpy())


# ------------------------------------------------------------------------------- recurrent nets

def test_rnn_step_matches_torch_rnncell_and_autograd_jacobian():
    for p in instances(["rnn-step"]):
        a = answers(p)
        if p.difficulty < 3:
            agree(np.ravel(a["h_new"]), REFERENCES["rnn-cell"](p.params)["h_new"])
            continue
        ref = REFERENCES["rnn-unroll"](p.params)
        agree(a["h_1"], ref["hidden"][0])
        agree(a["h_2"], ref["hidden"][1])
        cell = torch.nn.RNNCell(1, 2, nonlinearity=p.params["nonlinearity"], dtype=T64)
        with torch.no_grad():
            cell.weight_ih.copy_(t64(p.params["weight_ih"]))
            cell.weight_hh.copy_(t64(p.params["weight_hh"]))
            cell.bias_ih.copy_(t64(p.params["bias_ih"]))
            cell.bias_hh.zero_()
        x2 = t64(p.params["x"][1])[None]
        jac = torch.autograd.functional.jacobian(lambda h, cell=cell, x2=x2: cell(x2, h[None])[0], t64(ref["hidden"][0]))
        agree(a["jacobian"], jac.numpy())


def test_vanishing_gradient_matches_torch_rnn_autograd():
    for p in instances(["vanishing-gradient"]):
        a = answers(p)
        ref = REFERENCES["vanishing-gradient"](p.params)
        for name in ("hidden", "local_derivatives", "gradient"):
            agree(a[name], ref[name])
        if "bound" in a:
            assert a["bound"] == pytest.approx(ref["bound"], rel=1e-14)
            assert abs(a["gradient"]) <= a["bound"]
        if "clipped" in a:
            x20 = p.params["x"] + [1.0] * 16
            g20 = REFERENCES["vanishing-gradient"](p.params | {"x": x20})["gradient"]
            agree(a["gradient_20"], g20)
            w = torch.zeros(1, dtype=T64, requires_grad=True)
            w.grad = t64([g20])
            torch.nn.utils.clip_grad_norm_([w], 5.0)
            agree(a["clipped"], float(w.grad[0]), rtol=1e-6)      # torch divides by ‖g‖ + 1e-6
        if p.difficulty == 1:
            assert a["long_run"] == "vanishes" and abs(p.params["w"]) < 1
        if p.difficulty == 3:
            assert a["verdict"] == ("shrinks" if abs(a["gradient"]) < 1 else "grows")


def test_vanishing_gradient_level3_shows_saturation_beating_a_large_weight():
    """|w| > 1 everywhere at level 3, yet saturated tanh units make some gradients shrink."""
    level3 = [p for p in instances(["vanishing-gradient"]) if p.difficulty == 3]
    assert all(abs(p.params["w"]) > 1 for p in level3)
    assert any(p.part("verdict").expected == "shrinks" for p in level3)


def test_lstm_step_matches_torch_lstmcell_and_the_cell_gradient():
    for p in instances(["lstm-step"]):
        a = answers(p)
        ref = REFERENCES["lstm-cell"](p.params)
        for name in ("i", "f", "g", "o", "c_new", "h_new"):
            agree(np.ravel(a[name]), ref[name])
        if p.difficulty == 3:
            H = len(p.params["h"])
            cell = torch.nn.LSTMCell(1, H, dtype=T64)
            with torch.no_grad():
                for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    getattr(cell, name).copy_(t64(p.params[name]))
            c = t64(p.params["c"], grad=True)
            _, c_new = cell(t64(p.params["x"])[None], (t64(p.params["h"])[None], c[None]))
            x_in, h_in = t64(p.params["x"])[None], t64(p.params["h"])[None]
            jac = torch.autograd.functional.jacobian(
                lambda cc, cell=cell, x_in=x_in, h_in=h_in: cell(x_in, (h_in, cc[None]))[1][0], c.detach())
            agree(a["cell_gradient"], np.diag(jac.numpy()))
            assert np.allclose(jac.numpy() - np.diag(np.diag(jac.numpy())), 0)    # no cross-unit terms
            delta = np.asarray(a["grad_c"]) / np.asarray(a["cell_gradient"])
            (g,) = torch.autograd.grad(c_new[0], c, t64(delta))
            agree(a["grad_c"], g.numpy())


def test_lstm_gate_count_is_three_plus_candidate():
    p = next(iter(instances(["lstm-step"], range(1))))
    gates = [q.id for q in p.parts if q.id in ("i", "f", "o")]
    assert len(gates) == 3 and "g" in {q.id for q in p.parts}
    assert len(p.params["weight_ih"]) == 4 * len(p.params["h"])


def test_calculator_free_variants_use_no_decimals_in_statements():
    """Calculator-free problems state integers or ln/exact strings only (no 0.5-style decimals)."""
    from examprep.document import Matrix

    for name in ("dense-backward", "residual", "conv2d", "max-pool", "rnn-step"):
        for p in instances([name], range(5)):
            if not p.calculator_free:
                continue
            for b in p.statement:
                if isinstance(b, Matrix):
                    # integers; the residual stack's weights are quarters and halves (exact products)
                    unit = 4 if (name == "residual" and p.difficulty == 3) else 1
                    for v in np.ravel(np.array(b.values, dtype=object)):
                        assert isinstance(v, str) or float(v) * unit == math.floor(float(v) * unit), (name, b.name, v)


# ------------------------------------------------------------------------------ the command line

MINE = ["activation", "dense-backward", "mlp-backprop", "linear-regression", "residual", "conv2d", "max-pool",
        "rnn-step", "vanishing-gradient", "lstm-step"]


@pytest.mark.parametrize("topic", MINE)
def test_generate_shows_a_problem_and_its_worked_solution_at_every_level(topic):
    from typer.testing import CliRunner

    from examprep.cli import app

    runner = CliRunner()
    for level in (1, 2, 3):
        res = runner.invoke(app, ["generate", topic, "--seed", "7", "-d", str(level), "--solution", "--no-color"])
        assert res.exit_code == 0, res.output
        assert f"{topic} · level {level} · seed 7" in res.output
        assert "worked solution" in res.output and "answers" in res.output and "(a)" in res.output
        assert "Traceback" not in res.output and "\\frac" not in res.output     # LaTeX rendered for the terminal
    md = runner.invoke(app, ["generate", topic, "--seed", "7", "--markdown", "--solution"])
    assert md.exit_code == 0 and "### Worked solution" in md.output and "$$" in md.output


def test_topics_lists_the_backprop_half():
    from typer.testing import CliRunner

    from examprep.cli import app

    out = CliRunner().invoke(app, ["topics", "--json"]).output
    import json

    listed = {d["topic"]: d for d in json.loads(out)}
    assert set(MINE) <= set(listed)
    assert not listed["mlp-backprop"]["calculator_free"] and listed["conv2d"]["calculator_free"]


def test_calculator_free_request_on_a_topic_without_one_is_a_usage_error():
    from typer.testing import CliRunner

    from examprep.cli import app

    res = CliRunner().invoke(app, ["generate", "vanishing-gradient", "--calculator-free"])
    assert res.exit_code == 2 and "no calculator-free variant" in res.output
