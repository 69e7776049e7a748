"""Error carried forward: a later part earns credit when it is consistent with the student's own
earlier answers. Each carried-forward value here is recomputed in the test by hand (numpy
formulas written out, not the engine), then rounded as a student would."""
import math

import numpy as np
import pytest

from examprep import generators
from examprep.grading import Settings, grade_submission


def sig(x, k=3):
    """Round like a student: k significant figures, entry by entry."""
    if isinstance(x, (list, np.ndarray)):
        return [sig(v, k) for v in x]
    return float(f"{float(x):.{k}g}")


def statuses(res):
    return {r.part_id: r.status for _, _, r in res.parts()}


def scores(res):
    return {r.part_id: r.score for _, _, r in res.parts()}


def softmax_rows(s):
    s = np.asarray(s, dtype=float)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def attention():
    p = generators.build("attention", 8, 1)
    assert p.params["variant"] == "qkv" and not p.params["causal"]
    return p


def test_attention_chain_from_unscaled_scores(attention):
    Q, K, V = (np.array(attention.params[k]) for k in ("query", "key", "value"))
    scores = Q @ K.T                                # forgot 1/√d_k: a misconception
    weights = softmax_rows(scores)                  # consistent with the student's scores
    output = weights @ V                            # consistent with the student's weights
    answers = {"q1": {"scaled_scores": str(scores.tolist()), "weights": str(sig(weights.tolist())),
                      "output": str(sig(output.tolist()))}}
    res = grade_submission([attention], answers)
    assert statuses(res) == {"scaled_scores": "misconception", "weights": "ecf", "output": "ecf"}
    parts = {r.part_id: r for _, _, r in res.parts()}
    assert parts["scaled_scores"].misconception.id == "no-scale"
    assert parts["weights"].ecf_from == ("scaled_scores",) and "carried forward" in parts["weights"].feedback
    assert res.score == attention.part("weights").points + attention.part("output").points


def test_ecf_credit_is_configurable_and_can_be_turned_off(attention):
    Q, K = np.array(attention.params["query"]), np.array(attention.params["key"])
    weights = softmax_rows(Q @ K.T)
    answers = {"q1.scaled_scores": (Q @ K.T).tolist(), "q1.weights": sig(weights.tolist())}
    half = grade_submission([attention], answers, settings=Settings(ecf_credit=0.5))
    assert statuses(half)["weights"] == "ecf"
    assert scores(half)["weights"] == pytest.approx(0.5 * attention.part("weights").points)
    off = grade_submission([attention], answers, settings=Settings(ecf=False))
    # without carried-forward credit the same weights are the "no scale" misconception
    assert statuses(off)["weights"] == "misconception" and scores(off)["weights"] == 0


def test_inconsistent_later_part_gets_no_credit(attention):
    Q, K = np.array(attention.params["query"]), np.array(attention.params["key"])
    wrong_scores = (Q @ K.T + 1).tolist()
    res = grade_submission([attention], {"q1.scaled_scores": wrong_scores, "q1.weights": "[[0.9, 0.1], [0.1, 0.9]]"})
    assert statuses(res)["weights"] == "wrong"


def test_receptive_field_size_chain():
    p = generators.build("receptive-field", 7, 2)
    layers = p.params["layers"]

    def out(n, L):                                  # PyTorch's floor formula, written out
        return math.floor((n + 2 * L["padding"] - L["dilation"] * (L["kernel_size"] - 1) - 1) / L["stride"]) + 1

    s1 = p.part("size_1").expected + 3              # an arithmetic slip in the first layer
    s2 = out(s1, layers[1])
    s3 = out(s2, layers[2])
    res = grade_submission([p], {"q1": {"size_1": s1, "size_2": s2, "size_3": str(s3)}})
    st = statuses(res)
    assert (st["size_1"], st["size_2"], st["size_3"]) == ("wrong", "ecf", "ecf")
    assert st["receptive_field"] == "blank"


def test_gru_chain_from_a_wrong_reset_gate():
    p = generators.build("gru-step", 7, 1)
    prm = p.params
    x, h = prm["x"][0], prm["h"][0]
    w_in, w_hn = prm["weight_ih"][2][0], prm["weight_hh"][2][0]
    r = 0.7                                          # wrong reset gate
    n = math.tanh(w_in * x + r * (w_hn * h))         # candidate from the student's r (reset after)
    z = p.part("z").expected
    h_new = (1 - z) * h + z * n                      # lecture blend from the student's n
    res = grade_submission([p], {"q1": {"r": r, "z": sig(z), "n": sig(n), "h_new": sig(h_new)}})
    assert statuses(res) == {"r": "wrong", "z": "correct", "n": "ecf", "h_new": "ecf"}


def test_softmax_loss_and_gradient_from_wrong_probabilities():
    p = generators.build("softmax-cross-entropy", 7, 1)
    t = p.params["target"]
    probs = [0.2, 0.5, 0.3]
    loss = -math.log(probs[t])
    grad = [pi - (1.0 if i == t else 0.0) for i, pi in enumerate(probs)]
    res = grade_submission([p], {"q1.probs": probs, "q1.loss": sig(loss), "q1.grad_logits": sig(grad),
                                 "q1.derivation": "p_i - y_i"})
    assert statuses(res) == {"probs": "wrong", "loss": "ecf", "grad_logits": "ecf", "derivation": "correct"}


def test_partial_entries_count_against_the_carried_value():
    p = generators.build("softmax-cross-entropy", 7, 1)
    t = p.params["target"]
    probs = [0.2, 0.5, 0.3]
    grad = [pi - (1.0 if i == t else 0.0) for i, pi in enumerate(probs)]
    grad[1] += 0.3                                   # one entry wrong even from the student's own p
    res = grade_submission([p], {"q1.probs": probs, "q1.grad_logits": sig(grad)})
    r = next(r for _, _, r in res.parts() if r.part_id == "grad_logits")
    assert r.status == "wrong" and r.score == pytest.approx(p.part("grad_logits").points * 2 / 3)


def test_a_blank_or_unreadable_earlier_part_stands_in_with_the_key():
    p = generators.build("gru-step", 7, 1)
    res = grade_submission([p], {"q1.r": "0,7", "q1.n": sig(p.part("n").expected)})
    st = statuses(res)
    assert st["r"] == "unparseable" and st["n"] == "correct" and st["z"] == "blank"


def test_a_run_wide_tolerance_reaches_numeric_parts_only():
    from examprep.answers import parse_tolerance

    p = generators.build("receptive-field", 7, 2)
    settings = Settings(tolerances={"*": parse_tolerance("rtol:0.5")})
    res = grade_submission([p], {"q1.size_1": p.part("size_1").expected + 1}, settings=settings)
    assert statuses(res)["size_1"] == "wrong"          # integers stay exact
    g = generators.build("gru-step", 7, 1)
    res = grade_submission([g], {"q1.z": g.part("z").expected * 1.4}, settings=settings)
    assert statuses(res)["z"] == "correct"
