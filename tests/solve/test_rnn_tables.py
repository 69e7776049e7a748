"""The recurrent topics' known mistakes are the formulas they name, recomputed here in numpy from the
equations (never through the engine): rnn-unroll's, lstm-cell's backward step along the cell state."""
import numpy as np

from examprep import solve

UNROLL = {"x": [[1.0], [-0.5], [0.5]], "h0": [0.5, -1.0], "weight_ih": [[0.5], [-1.0]],
          "weight_hh": [[1.0, -0.5], [0.5, 0.5]], "bias_ih": [0.5, -0.5], "grad_output": [1.0, -2.0]}


def _unrolled(p, h0=None):
    W, U, b = np.array(p["weight_ih"]), np.array(p["weight_hh"]), np.array(p["bias_ih"])
    h = np.array(p["h0"] if h0 is None else h0)
    hs = []
    for x in np.array(p["x"]):
        h = np.tanh(W @ x + b + U @ h)
        hs.append(h)
    return np.array(hs)


def test_rnn_unroll_mistakes_are_the_formulas_they_name():
    U, delta = np.array(UNROLL["weight_hh"]), np.array(UNROLL["grad_output"])
    hs = _unrolled(UNROLL)
    J = [np.diag(1 - h**2) @ U for h in hs]                       # ∂h_t/∂h_{t−1}
    right = J[2] @ J[1] @ J[0]
    known = solve.mistakes("rnn-unroll", UNROLL)
    np.testing.assert_allclose(known.trace().jacobian, right, rtol=1e-12)
    got = {m.id: np.asarray(m.value) for m in known.of("jacobian")}
    assert list(got) == ["weights-only", "columns-scaled", "transposed", "reversed-order"]
    np.testing.assert_allclose(got["weights-only"], U @ U @ U, rtol=1e-12)
    cols = [U @ np.diag(1 - h**2) for h in hs]                     # φ' on the columns
    np.testing.assert_allclose(got["columns-scaled"], cols[2] @ cols[1] @ cols[0], rtol=1e-12)
    np.testing.assert_allclose(got["transposed"], right.T, rtol=1e-12)
    np.testing.assert_allclose(got["reversed-order"], J[0] @ J[1] @ J[2], rtol=1e-12)
    [m] = known.of("grad_h0")
    assert m.id == "not-transposed"
    np.testing.assert_allclose(m.value, right @ delta, rtol=1e-12)
    hidden = {m.id: np.asarray(m.value) for m in known.of("hidden")}
    x, W, b, h0 = np.array(UNROLL["x"]), np.array(UNROLL["weight_ih"]), np.array(UNROLL["bias_ih"]), np.array(UNROLL["h0"])
    np.testing.assert_allclose(hidden["reuse-h0"], [np.tanh(W @ xt + b + U @ h0) for xt in x], rtol=1e-12)
    np.testing.assert_allclose(hidden["no-recurrence"], [np.tanh(W @ xt + b) for xt in x], rtol=1e-12)


def test_one_step_of_rnn_unroll_has_no_order_to_reverse():
    one = UNROLL | {"x": [[1.0]]}
    assert [m.id for m in solve.mistakes("rnn-unroll", one).of("jacobian")] == ["weights-only", "columns-scaled",
                                                                                "transposed"]


def test_lstm_backward_mistakes_are_the_formulas_they_name():
    p = {"x": [1.0], "h": [0.5, -1.0], "c": [1.0, -0.5], "grad_c_new": [1.0, -2.0],
         "weight_ih": [[0.5], [-1.0], [1.0], [0.5], [-0.5], [1.0], [0.5], [-1.0]], "weight_hh": [[0.0, 0.0]] * 8}
    pre = np.array(p["weight_ih"])[:, 0]
    sig = 1 / (1 + np.exp(-pre))
    i, f, g = sig[0:2], sig[2:4], np.tanh(pre[4:6])
    c_new = f * np.array(p["c"]) + i * g
    known = solve.mistakes("lstm-cell", p)
    got = {m.id: m.value for m in known.of("cell_gradient")}
    np.testing.assert_allclose(known.trace().cell_gradient, f, rtol=1e-12)
    np.testing.assert_allclose(got["one"], [1.0, 1.0])
    np.testing.assert_allclose(got["tanh-slope"], f * (1 - np.tanh(c_new) ** 2), rtol=1e-12)
    [m] = known.of("grad_c")
    assert m.id == "unchanged" and np.allclose(m.value, p["grad_c_new"])
    assert "grad_c" not in solve.answer_only("lstm-cell", {k: v for k, v in p.items() if k != "grad_c_new"})


BPTT = {"cell": "rnn", "x": [[1.0], [-0.5], [0.5]], "weight_ih": [[0.5], [-1.0]], "weight_hh": [[1.0, -0.5], [0.5, 0.5]],
        "bias_ih": [0.5, -0.5], "h0": [0.5, -1.0], "grad_hidden": [[1.0, 0.0], [-0.5, 1.0], [1.0, 2.0]]}


def test_rnn_bptt_mistakes_are_the_formulas_they_name():
    U, delta = np.array(BPTT["weight_hh"]), np.array(BPTT["grad_hidden"])
    hs = _unrolled(BPTT)
    prev = np.vstack([BPTT["h0"], hs[:-1]])
    # backwards by hand: ∂L/∂h_t = δ_t + W_hhᵀ (∂L/∂h_{t+1} ⊙ (1 − h_{t+1}²))
    gh = np.zeros_like(hs)
    gh[2] = delta[2]
    for t in (1, 0):
        gh[t] = delta[t] + U.T @ (gh[t + 1] * (1 - hs[t + 1] ** 2))
    d = gh * (1 - hs**2)                                           # ∂L/∂a_t
    known = solve.mistakes("rnn-bptt", BPTT)
    np.testing.assert_allclose(known.trace().grad_h, gh, rtol=1e-12)
    got = {m.id: np.asarray(m.value) for m in known.of("grad_h")}
    np.testing.assert_allclose(got["no-recurrence"], delta, rtol=1e-12)
    np.testing.assert_allclose(got["no-tanh-derivative"], [delta[0] + U.T @ gh[1], delta[1] + U.T @ gh[2], gh[2]],
                               rtol=1e-12)
    hh = {m.id: np.asarray(m.value) for m in known.of("grad_weight_hh")}
    np.testing.assert_allclose(sum(np.outer(d[t], prev[t]) for t in range(3)), known.trace().grad_weight_hh, rtol=1e-12)
    np.testing.assert_allclose(hh["current-state"], sum(np.outer(d[t], hs[t]) for t in range(3)), rtol=1e-12)
    np.testing.assert_allclose(hh["last-step-only"], np.outer(d[2], prev[2]), rtol=1e-12)
    bias = {m.id: np.asarray(m.value) for m in known.of("grad_bias_ih")}
    np.testing.assert_allclose(bias["last-step-only"], d[2], rtol=1e-12)
    np.testing.assert_allclose(bias["no-recurrence"], (delta * (1 - hs**2)).sum(axis=0), rtol=1e-12)
    x, W, b, h0 = np.array(BPTT["x"]), np.array(BPTT["weight_ih"]), np.array(BPTT["bias_ih"]), np.array(BPTT["h0"])
    [reuse] = [m.value for m in known.of("hidden") if m.id == "reuse-h0"]
    np.testing.assert_allclose(reuse, [np.tanh(W @ xt + b + U @ h0) for xt in x], rtol=1e-12)


def test_rnn_bptt_reuse_h0_restarts_an_lstms_cell_state_too():
    p = {"cell": "lstm", "x": [[1.0], [-1.0]], "weight_ih": [[0.5], [-1.0], [1.0], [0.5]], "weight_hh": [[1.0], [0.5],
                                                                                                          [-0.5], [1.0]],
         "h0": [0.5], "c0": [-1.0], "grad_hidden": [1.0]}
    [reuse] = [m.value for m in solve.mistakes("rnn-bptt", p).of("hidden") if m.id == "reuse-h0"]
    pre = np.array(p["weight_ih"])[:, 0] * -1.0 + np.array(p["weight_hh"])[:, 0] * 0.5    # step 2 from h₀
    i, f, g, o = 1 / (1 + np.exp(-pre[0])), 1 / (1 + np.exp(-pre[1])), np.tanh(pre[2]), 1 / (1 + np.exp(-pre[3]))
    np.testing.assert_allclose(reuse[1], [o * np.tanh(f * -1.0 + i * g)], rtol=1e-12)


def test_teacher_forcing_mistakes_are_the_sequences_they_name():
    # y = [5, 7, 9], bos 1, eos 2: the input [1, 5, 7, 9] and the labels [5, 7, 9, 2] (Vaswani et al. 2017, §3.1)
    known = solve.mistakes("teacher-forcing", {"tokens": [5, 7, 9], "bos": 1, "eos": 2})
    assert {m.id: m.value for m in known.of("decoder_input")} == {"no-shift": [5, 7, 9], "left-shift": [7, 9, 2]}
    assert {m.id: m.value for m in known.of("labels")} == {"input-as-labels": [1, 5, 7, 9], "no-eos": [5, 7, 9]}
    # without an end token: the input [1, 5, 7] and the labels [5, 7, 9]
    known = solve.mistakes("teacher-forcing", {"tokens": [5, 7, 9], "bos": 1})
    assert {m.id: m.value for m in known.of("decoder_input")} == {"no-shift": [5, 7, 9]}      # ids: no "[EOS]" word
    assert {m.id: m.value for m in known.of("labels")} == {"input-as-labels": [1, 5, 7]}
