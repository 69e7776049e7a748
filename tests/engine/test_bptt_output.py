"""BPTT with an output layer and a stated loss (rnn-bptt-output, issue 38 item 5): a textbook problem
exactly by sympy, every answer against torch.nn modules (nn.RNN/LSTM/GRU, nn.Linear, nn.MSELoss,
nn.CrossEntropyLoss) and autograd, the declared mistakes as the values they name, and bad input refused
in one line."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from examprep import engine, solve
from examprep.cli import app
from examprep.errors import ParamError, ShapeError
from tests.engine.fd import close

# prachub.com "Detailed backpropagation walkthrough" (BPTT, complete walkthrough): x = (1, 2), h0 = 0,
# W_x = 0.5, W_h = 0.1, b = 0, W_y = 2, targets (1, 2), L = ½(y1 − 1)² + ½(y2 − 2)². The page rounds
# tanh(1.04621) to 0.7790 (it is 0.78033) and so prints L ≈ 0.1007; the exact loss is 0.09938.
WALKTHROUGH = {"cell": "rnn", "x": [[1.0], [2.0]], "weight_ih": [[0.5]], "weight_hh": [[0.1]], "weight_y": [[2.0]],
               "target": [[1.0], [2.0]]}


def test_the_walkthrough_exactly_by_sympy():
    wx, wh, wy = sp.symbols("w_x w_h w_y")
    h1 = sp.tanh(wx * 1)
    h2 = sp.tanh(wx * 2 + wh * h1)
    L = (wy * h1 - 1) ** 2 / 2 + (wy * h2 - 2) ** 2 / 2
    at = {wx: sp.Rational(1, 2), wh: sp.Rational(1, 10), wy: 2}
    a = solve.answer_only("rnn-bptt-output", WALKTHROUGH)
    close(a["loss"], float(L.subs(at)), rtol=1e-12, atol=0)
    close(a["grad_w_y"], [[float(sp.diff(L, wy).subs(at))]], rtol=1e-12, atol=0)
    close(a["grad_weight_ih"], [[float(sp.diff(L, wx).subs(at))]], rtol=1e-12, atol=0)
    close(a["grad_weight_hh"], [[float(sp.diff(L, wh).subs(at))]], rtol=1e-12, atol=0)
    assert round(a["loss"], 4) == 0.0994
    # ∂L/∂h1 has two paths: its own loss and what h2 sends back through tanh'
    h = sp.symbols("h")
    L_h1 = (wy * h - 1) ** 2 / 2 + (wy * sp.tanh(wx * 2 + wh * h) - 2) ** 2 / 2
    close(a["grad_h"][0], [float(sp.diff(L_h1, h).subs(at | {h: h1.subs(at)}))], rtol=1e-12, atol=0)


def _instance(rng, cell, T, H, n_out, loss):
    g = {"rnn": 1, "lstm": 4, "gru": 3}[cell]
    p = {"cell": cell, "x": rng.standard_normal((T, 2)), "weight_ih": rng.standard_normal((g * H, 2)),
         "weight_hh": rng.standard_normal((g * H, H)), "bias_ih": rng.standard_normal(g * H),
         "bias_hh": rng.standard_normal(g * H), "h0": rng.standard_normal(H), "weight_y": rng.standard_normal((n_out, H)),
         "bias_y": rng.standard_normal(n_out), "loss": loss}
    p["target"] = rng.integers(0, n_out, T) if loss == "cross-entropy" else rng.standard_normal((T, n_out))
    return p


_CASES = dict(seed=st.integers(0, 2**32 - 1), cell=st.sampled_from(["rnn", "lstm", "gru"]), T=st.integers(1, 3),
              H=st.integers(1, 2), n_out=st.integers(1, 3), loss=st.sampled_from(["half-sse", "mse", "cross-entropy"]),
              reduction=st.sampled_from([None, "sum", "mean"]), psi=st.sampled_from(["identity", "sigmoid", "tanh"]))


@settings(max_examples=6, deadline=None)
@given(**_CASES)
def test_every_answer_against_torch_nn_modules(seed, cell, T, H, n_out, loss, reduction, psi):
    _against_torch(seed, cell, T, H, n_out, loss, reduction, psi)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(**_CASES)
def test_every_answer_against_torch_nn_modules_sweep(seed, cell, T, H, n_out, loss, reduction, psi):
    _against_torch(seed, cell, T, H, n_out, loss, reduction, psi)


def _against_torch(seed, cell, T, H, n_out, loss, reduction, psi):
    torch = pytest.importorskip("torch")
    if loss == "cross-entropy":
        psi = "identity"
    p = _instance(np.random.default_rng(seed), cell, T, H, n_out, loss)
    kw = {"convention": "pytorch"} if cell == "gru" else {}    # nn.GRU's blend
    t = engine.rnn_bptt_output(**p, output_activation=psi, reduction=reduction, **kw)
    rnn = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[cell](2, H, dtype=torch.float64)
    lin = torch.nn.Linear(H, n_out, dtype=torch.float64)
    with torch.no_grad():
        for mod, names in ((rnn, ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")), (lin, ("weight", "bias"))):
            for n, v in zip(names, (("weight_ih", "weight_hh", "bias_ih", "bias_hh") if mod is rnn else ("weight_y", "bias_y"))):
                getattr(mod, n).copy_(torch.tensor(p[v]))
    h0 = torch.tensor(p["h0"])[None, None]
    state = (h0, torch.zeros_like(h0)) if cell == "lstm" else h0
    hs, _ = rnn(torch.tensor(p["x"])[:, None], state)
    hs.retain_grad()
    y = {"identity": lambda v: v, "sigmoid": torch.sigmoid, "tanh": torch.tanh}[psi](lin(hs[:, 0]))
    red = reduction or ("sum" if loss == "half-sse" else "mean")
    if loss == "cross-entropy":
        L = torch.nn.CrossEntropyLoss(reduction=red)(y, torch.tensor(p["target"]))
    else:
        L = (0.5 if loss == "half-sse" else 1.0) * torch.nn.MSELoss(reduction=red)(y, torch.tensor(p["target"]))
    L.backward()
    close(t.loss, L.item(), rtol=1e-10, atol=1e-12)
    close(t.output, y.detach().numpy(), rtol=1e-10, atol=1e-12)
    close(t.grad_w_y, lin.weight.grad.numpy(), rtol=1e-9, atol=1e-12)
    close(t.grad_b_y, lin.bias.grad.numpy(), rtol=1e-9, atol=1e-12)
    # nn.RNN's output receives each step's own δ_t; the recurrence runs inside the module
    close(t.grad_hidden_own, hs.grad[:, 0].numpy(), rtol=1e-9, atol=1e-12)
    for ours, theirs in (("grad_weight_ih", "weight_ih_l0"), ("grad_weight_hh", "weight_hh_l0"),
                         ("grad_bias_ih", "bias_ih_l0"), ("grad_bias_hh", "bias_hh_l0")):
        close(t[ours], getattr(rnn, theirs).grad.numpy(), rtol=1e-9, atol=1e-12)


def test_the_mistakes_are_the_values_they_name():
    p = WALKTHROUGH | {"output_activation": "sigmoid", "x": [[1.0], [2.0], [-1.0]], "target": [[1.0], [0.0], [1.0]]}
    known = solve.mistakes("rnn-bptt-output", p)
    t = known.trace()
    # summing vs averaging over the steps: every gradient T times too large (or small)
    mean = known.get("loss", "sum-vs-mean").value
    close(mean, t.loss / 3, rtol=1e-12, atol=0)
    close(known.get("grad_w_y", "sum-vs-mean").value, t.grad_w_y / 3, rtol=1e-12, atol=0)
    # only the last step's share of W_y's gradient
    close(known.get("grad_w_y", "last-step-only").value, np.outer(t.grad_logits[-1], t.hidden[-1]), rtol=1e-12, atol=0)
    # ψ' forgotten: Σ (y − target) h_tᵀ
    y = np.asarray(t.output)
    close(known.get("grad_w_y", "no-output-derivative").value,
          np.sum((y - np.asarray(p["target"]))[:, :, None] * t.hidden[:, None, :], axis=0), rtol=1e-12, atol=0)
    # the gradient from later steps forgotten: ∂L/∂h_t is each step's own δ_t alone
    close(known.get("grad_h", "no-recurrence").value, t.grad_hidden_own, rtol=1e-12, atol=0)
    # tanh' forgotten on the way back: δ_t + W_hhᵀ ∂L/∂h_{t+1}
    nt = known.get("grad_h", "no-tanh-derivative").value
    close(nt[1], t.grad_hidden_own[1] + 0.1 * t.grad_h[2], rtol=1e-12, atol=0)


@pytest.mark.parametrize("change,error,words", [
    ({"target": [[1.0, 0.0], [2.0, 1.0]]}, ShapeError, "target: expected 2×1"),
    ({"weight_y": [[1.0, 2.0]]}, ShapeError, "weight_y"),
    ({"loss": "cross-entropy", "target": [0, 1]}, ParamError, "class indices in [0, 1)"),
    ({"loss": "cross-entropy", "target": [0], "weight_y": [[1.0], [2.0]]}, ShapeError, "2 class indices"),
    ({"loss": "cross-entropy", "target": [0, 1], "weight_y": [[1.0], [2.0]], "output_activation": "tanh"}, ParamError,
     "identity"),
    ({"reduction": "none"}, ParamError, "reduction"),
    ({"loss": "bce"}, ParamError, "loss"),
])
def test_bad_input_is_one_clear_error(change, error, words):
    with pytest.raises(error) as e:
        solve.answer_only("rnn-bptt-output", WALKTHROUGH | change)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_cli_refuses_grad_hidden_in_one_line_with_exit_2():
    import json
    res = CliRunner().invoke(app, ["solve", "rnn-bptt-output", "--params", json.dumps(WALKTHROUGH | {"grad_hidden": [1.0]})])
    assert res.exit_code == 2
    assert res.output.strip().count("\n") == 0 and "grad_hidden" in res.output and "Traceback" not in res.output


def test_without_an_output_layer_rnn_bptt_is_unchanged():
    """rnn-bptt-output's recurrence is rnn-bptt given δ_t = W_yᵀ ∂L/∂(W_y h_t + b_y)."""
    t = solve.answer_only("rnn-bptt-output", WALKTHROUGH)
    d = np.asarray(t["grad_output"]) * 2.0                      # W_y = 2, identity output
    plain = solve.answer_only("rnn-bptt", {k: v for k, v in WALKTHROUGH.items() if k not in ("weight_y", "target")}
                              | {"grad_hidden": d.tolist()})
    for k in ("grad_h", "grad_weight_ih", "grad_weight_hh", "grad_bias_ih", "grad_h0"):
        close(t[k], plain[k], rtol=1e-12, atol=0)
