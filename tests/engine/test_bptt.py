"""Backpropagation through time: finite differences for every gradient of every cell and convention,
one step equals the cell's own backward, and truncation as torch's detach."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from examprep import engine
from examprep.errors import ParamError, ShapeError
from tests.engine.fd import close, numeric_grad

G = {"rnn": 1, "lstm": 4, "gru": 3}


def _instance(rng, cell, T=3, n_in=2, H=2):
    g = G[cell]
    return dict(x=rng.standard_normal((T, n_in)), weight_ih=rng.standard_normal((g * H, n_in)) * 0.8,
                weight_hh=rng.standard_normal((g * H, H)) * 0.8, bias_ih=rng.standard_normal(g * H) * 0.5,
                bias_hh=rng.standard_normal(g * H) * 0.5, h0=rng.standard_normal(H),
                c0=rng.standard_normal(H) if cell == "lstm" else None, grad_hidden=rng.standard_normal((T, H)))


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), cell=st.sampled_from(["rnn", "lstm", "gru"]),
       convention=st.sampled_from(["lecture", "pytorch"]), reset=st.sampled_from(["after", "before"]))
def test_every_bptt_gradient_by_finite_differences(seed, cell, convention, reset):
    p = _instance(np.random.default_rng(seed), cell)
    kw = dict(convention=convention, reset=reset) if cell == "gru" else {}
    t = engine.rnn_bptt(cell, **p, **kw)
    gh = p["grad_hidden"]

    def loss(**changed):
        q = {**p, **changed}
        return float(np.sum(engine.rnn_bptt(cell, **q, **kw).hidden * gh))
    for name, arg in (("grad_weight_ih", "weight_ih"), ("grad_weight_hh", "weight_hh"), ("grad_bias_ih", "bias_ih"),
                      ("grad_bias_hh", "bias_hh"), ("grad_h0", "h0"), ("grad_x", "x")):
        close(t[name], numeric_grad(lambda v, a=arg: loss(**{a: v}), p[arg]))
    if cell == "lstm":
        close(t.grad_c0, numeric_grad(lambda v: loss(c0=v), p["c0"]))


@given(seed=st.integers(0, 2**32 - 1))
def test_bptt_over_one_step_is_the_rnn_cells_backward(seed):
    rng = np.random.default_rng(seed)
    p = _instance(rng, "rnn", T=1)
    t = engine.rnn_bptt("rnn", **{k: v for k, v in p.items() if k != "c0"})
    cell = engine.rnn_cell(p["x"][0], p["h0"], p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"])
    delta = p["grad_hidden"][0] * (1 - cell.h_new**2)
    close(t.grad_weight_ih, np.outer(delta, p["x"][0]), rtol=1e-12, atol=1e-14)
    close(t.grad_weight_hh, np.outer(delta, p["h0"]), rtol=1e-12, atol=1e-14)
    close(t.grad_h0, p["weight_hh"].T @ delta, rtol=1e-12, atol=1e-14)


@given(seed=st.integers(0, 2**32 - 1))
def test_weight_gradients_are_the_sum_of_each_steps_share(seed):
    p = _instance(np.random.default_rng(seed), "gru")
    t = engine.rnn_bptt("gru", **{k: v for k, v in p.items() if k != "c0"})
    close(t.grad_weight_hh_steps.sum(axis=0), t.grad_weight_hh, rtol=1e-12, atol=1e-14)
    close(t.grad_weight_ih_steps.sum(axis=0), t.grad_weight_ih, rtol=1e-12, atol=1e-14)


@settings(max_examples=10)
@given(seed=st.integers(0, 2**32 - 1), cell=st.sampled_from(["rnn", "lstm", "gru"]))
def test_each_steps_share_is_the_gradient_of_that_steps_own_copy_of_the_weights(seed, cell):
    """torch: the unrolled cell with a separate copy of every weight and bias at each step (equal values);
    autograd's gradient of step t's copy is step t's share (GRU in PyTorch's convention, its own kernel)."""
    torch = pytest.importorskip("torch")
    p = _instance(np.random.default_rng(seed), cell)
    kw = {"convention": "pytorch"} if cell == "gru" else {}
    t = engine.rnn_bptt(cell, **{k: v for k, v in p.items() if not (k == "c0" and cell != "lstm")}, **kw)
    names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    copies = [[torch.tensor(p[n], requires_grad=True) for n in names] for _ in range(len(p["x"]))]
    h = torch.tensor(p["h0"])
    c = torch.tensor(p["c0"]) if cell == "lstm" else None
    loss = 0
    for step, W in enumerate(copies):
        xt = torch.tensor(p["x"][step])[None]
        if cell == "rnn":
            h = torch._VF.rnn_tanh_cell(xt, h[None], *W)[0]
        elif cell == "lstm":
            h, c = (v[0] for v in torch._VF.lstm_cell(xt, (h[None], c[None]), *W))
        else:
            h = torch._VF.gru_cell(xt, h[None], *W)[0]
        loss = loss + (h * torch.tensor(p["grad_hidden"][step])).sum()
    loss.backward()
    for k, n in enumerate(names):
        close(t[f"grad_{n}_steps"], np.stack([W[k].grad.numpy() for W in copies]), rtol=1e-10, atol=1e-12)


@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 3), cell=st.sampled_from(["rnn", "lstm"]))
def test_truncated_bptt_equals_torch_detaching_the_state(seed, k, cell):
    torch = pytest.importorskip("torch")
    p = _instance(np.random.default_rng(seed), cell, T=4)
    q = {n: v for n, v in p.items() if not (n == "c0" and cell != "lstm")}
    t = engine.rnn_bptt(cell, **q, truncation=k)
    W = [torch.tensor(p[n], requires_grad=True) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    loss = 0
    for s in range(4):                                 # the loss at step s sees steps s − k + 1 … s
        h, c = torch.tensor(p["h0"]), torch.tensor(p["c0"]) if cell == "lstm" else None
        for step in range(s + 1):
            if step == s - k + 1:
                h = h.detach()
                c = c.detach() if c is not None else None
            xt = torch.tensor(p["x"][step])
            if cell == "rnn":
                h = torch.tanh(W[0] @ xt + W[2] + W[1] @ h + W[3])
            else:
                h, c = (v[0] for v in torch._VF.lstm_cell(xt[None], (h[None], c[None]), *W))
            if step < s - k + 1:
                h = h.detach()
                c = c.detach() if c is not None else None
        loss = loss + (h * torch.tensor(p["grad_hidden"][s])).sum()
    loss.backward()
    close(t.grad_weight_hh, W[1].grad.numpy(), rtol=1e-10, atol=1e-12)
    close(t.grad_weight_ih, W[0].grad.numpy(), rtol=1e-10, atol=1e-12)


def test_bptt_bad_input_names_the_argument():
    p = _instance(np.random.default_rng(0), "gru")
    with pytest.raises(ShapeError, match="weight_hh"):
        engine.rnn_bptt("lstm", p["x"], p["weight_ih"], p["weight_hh"])
    with pytest.raises(ParamError, match="c0"):
        engine.rnn_bptt("gru", p["x"], p["weight_ih"], p["weight_hh"], c0=[0.0, 0.0])
    with pytest.raises(ShapeError, match="grad_hidden"):
        engine.rnn_bptt("gru", p["x"], p["weight_ih"], p["weight_hh"], grad_hidden=[[1.0, 2.0]])
