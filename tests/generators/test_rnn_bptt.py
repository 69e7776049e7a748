"""rnn-bptt: the states and every gradient against torch autograd (the cells unrolled; verify's reference,
and for the RNN torch.nn.RNN itself), and the summed-over-time structure of the weight gradients."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep import generators  # noqa: E402
from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances, t64  # noqa: E402


def test_answers_match_the_torch_reference_of_bptt():
    for p in instances(["rnn-bptt"], range(12)):
        a = answers(p)
        ref = REFERENCES["rnn-bptt"](p.params)
        hidden = np.asarray(ref["hidden"])
        agree(np.atleast_1d(a["h_1"]), hidden[0])
        agree(np.atleast_1d(a["h_2"]), hidden[1])
        agree(np.ravel(a["grad_weight_hh"]), np.ravel(ref["grad_weight_hh"]))
        if "grad_weight_ih" in a:
            agree(np.ravel(a["grad_weight_ih"]), np.ravel(ref["grad_weight_ih"]))
        if "grad_bias" in a:
            agree(a["grad_bias"], ref["grad_bias_ih"])


def test_an_elman_rnn_matches_torch_nn_rnn_and_a_hand_unrolled_autograd():
    for p in instances(["rnn-bptt"], range(6)):
        if p.params["cell"] != "rnn":
            continue
        pr = p.params
        H = len(pr["h0"])
        b = t64(pr["bias_ih"]) if pr["bias_ih"] is not None else torch.zeros(H, dtype=torch.float64)
        rnn = torch.nn.RNN(1, H, dtype=torch.float64)
        with torch.no_grad():
            rnn.weight_ih_l0.copy_(t64(pr["weight_ih"]))
            rnn.weight_hh_l0.copy_(t64(pr["weight_hh"]))
            rnn.bias_ih_l0.copy_(b)
            rnn.bias_hh_l0.zero_()
        out, _ = rnn(t64(pr["x"]), t64(pr["h0"])[None])
        gh = np.asarray(pr["grad_hidden"], dtype=float)
        gh = gh if gh.ndim == 2 else np.vstack([np.zeros((1, H)), gh[None]])
        (out * t64(gh)).sum().backward()
        agree(np.ravel(p.part("grad_weight_hh").expected), np.ravel(rnn.weight_hh_l0.grad))
        # ∂L/∂h₁ as the total gradient reaching h₁: unrolled by hand so h₁ is a tensor of its own
        w_ih, w_hh = t64(pr["weight_ih"]), t64(pr["weight_hh"], grad=True)
        x = t64(pr["x"])
        h1 = torch.tanh(w_ih @ x[0] + w_hh @ t64(pr["h0"]) + b)
        h1.retain_grad()
        h2 = torch.tanh(w_ih @ x[1] + w_hh @ h1 + b)
        (h1 @ t64(gh[0]) + h2 @ t64(gh[1])).backward()
        agree(np.atleast_1d(p.part("grad_h1").expected), h1.grad)


def test_the_weight_gradient_is_the_sum_of_both_steps_shares():
    one_loss = generators.build("rnn-bptt", 3, 1)
    assert "last-step-only" in {m.id for m in one_loss.part("grad_weight_hh").misconceptions}
    # with a loss at each step, step 1's share without what step 2 sends back is a mistake of its own
    two_losses = generators.build("rnn-bptt", 3, 2)
    assert {"last-step-only", "no-recurrence"} <= {m.id for m in two_losses.part("grad_weight_hh").misconceptions}
