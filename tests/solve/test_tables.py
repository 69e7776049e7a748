"""The per-answer tables of solve/<area>.py: known mistakes (computed through the engine, once per
convention, skipped where they are the problem's own convention) and ECF rules (which recompute
every answer from the right earlier answers, through examprep.ecf as a grader does)."""
import json
import math

import numpy as np
import pytest

from examprep import engine, solve
from examprep.errors import ParamError
from examprep.ecf import evaluate
from examprep.solve import Mistake, Ref

GRU = {"x": [0.5, -1.0], "h": [1.0, -0.5], "weight_ih": [[0.5, 1.0], [-1.0, 0.5], [0.5, 0.5], [1.0, -0.5], [-0.5, 1.0],
                                                        [1.0, 1.0]],
       "weight_hh": [[0.5, -0.5], [1.0, 0.5], [-1.0, 0.5], [0.5, 1.0], [1.0, -1.0], [0.5, 0.5]],
       "bias_ih": [0.5, -0.5, 0.0, 0.5, 1.0, -1.0], "bias_hh": [0.0, 0.5, -0.5, 1.0, 0.5, 0.5]}

# one instance of every topic with a table (some in two conventions)
INSTANCES = [
    ("gru-cell", GRU),
    ("gru-cell", GRU | {"convention": "pytorch", "reset": "before"}),
    ("lstm-cell", {"x": [1.0], "h": [0.5, -1.0], "c": [1.0, -0.5], "grad_c_new": [1.0, -2.0],
                   "bias_ih": [0.5, 0, -0.5, 0, 0.5, 1, -1, 0],
                   "weight_ih": [[0.5], [-1.0], [1.0], [0.5], [-0.5], [1.0], [0.5], [-1.0]],
                   "weight_hh": [[0.5, 1.0], [-1.0, 0.5], [0.5, 0.5], [1.0, -0.5], [-0.5, 1.0], [1.0, 1.0], [0.5, 0.0],
                                 [0.0, -0.5]]}),
    ("rnn-cell", {"x": [1.0, -0.5], "h": [0.5, 1.0], "weight_ih": [[0.5, 1.0], [-1.0, 0.5]],
                  "weight_hh": [[1.0, -0.5], [0.5, 0.5]], "bias_ih": [0.5, -1.0], "bias_hh": [1.0, 0.5]}),
    ("rnn-cell", {"x": [1.0], "h": [0.5], "weight_ih": [[2.0]], "weight_hh": [[-1.0]], "nonlinearity": "relu"}),
    ("teacher-forcing", {"tokens": [5, 7, 9], "bos": 1, "eos": 2}),
    ("teacher-forcing", {"tokens": [5, 7, 9], "bos": 1}),
    ("vanishing-gradient", {"w": 1.5, "x": [1.0, 0.5, 2.0], "nonlinearity": "relu", "max_norm": 1.0}),
    ("rnn-unroll", {"x": [[1.0], [-0.5], [0.5]], "h0": [0.5, -1.0], "weight_ih": [[0.5], [-1.0]],
                    "weight_hh": [[1.0, -0.5], [0.5, 0.5]], "bias_ih": [0.5, -0.5], "grad_output": [1.0, -2.0]}),
    ("attention", {"query": [[1.0, 0.0, 2.0, 1.0], [0.0, 1.0, -1.0, 2.0], [1.0, 1.0, 0.0, -1.0]],
                   "key": [[1.0, 2.0, 0.0, -1.0], [0.0, 1.0, 1.0, 1.0], [2.0, 0.0, -1.0, 0.0]],
                   "value": [[1.0, 0.0], [0.0, 2.0], [-1.0, 1.0]], "causal": True}),
    ("attention", {"query": [[1.0, 2.0], [0.0, 1.0]], "key": [[1.0, 2.0], [0.0, 1.0]],
                   "value": [[1.0, 2.0], [0.0, 1.0]], "scale": 1.0}),
    ("causal-mask", {"scores": [[1.0, 2.0, 0.0], [0.0, -1.0, 2.0], [1.0, 1.0, -2.0]]}),
    ("causal-mask", {"scores": [[1.0, 2.0, 0.0, -1.0], [0.0, -1.0, 2.0, 1.0]], "alignment": "bottom-right"}),
    ("cross-attention", {"decoder_states": [[1.0, 0.0], [0.0, 1.0]], "encoder_output": [[1.0, 1.0], [-1.0, 0.0], [0.0, 1.0]],
                         "w_query": [[1, 0, 1, 0], [0, 1, 0, 1]], "w_key": [[1, 1, 0, 0], [0, 1, 1, 0]],
                         "w_value": [[1, 0], [0, 1]], "mask": [[1, 1, 0], [1, 1, 0]]}),
    ("dense", {"x": [1.0, -2.0], "weight": [[1.0, 2.0], [-1.0, 0.5]], "bias": [0.5, -0.5], "grad_output": [1.0, -1.0]}),
    ("dense", {"x": [[1.0, -2.0], [0.5, 1.0]], "weight": [[1.0, 2.0], [-1.0, 0.5], [0.0, 1.0]],
               "target": [[1, 0, 2], [0, 1, 1]]}),
    ("layer-norm", {"x": [[1.0, 2.0, 4.0, 5.0], [0.0, 1.0, 3.0, 4.0]], "gamma": [1.0, 0.5, 2.0, 1.5],
                    "beta": [0.0, 0.5, -0.5, 1.0], "eps": 0.01}),
    ("conv2d", {"input": [[1, 2, 0, -1], [0, 1, 3, 1], [2, -1, 0, 1], [1, 0, 1, 2]], "kernel": [[1, -1], [0, 2]],
                "padding": 1, "stride": 2, "bias": 1.0, "grad_output": [[1, -1, 0], [2, 0, 1], [0, 1, -1]]}),
    ("cross-entropy", {"logits": [[1.0, -1.0, 0.5], [0.0, 2.0, -0.5]], "target": [0, 1], "label_smoothing": 0.1}),
    ("cross-entropy", {"logits": [[1.0, -1.0, 0.5], [0.0, 2.0, -0.5]], "target": [2, 1], "reduction": "sum"}),
    # the topics real exams ask (issue 18)
    ("avg-pool", {"input": [[1, 2, 0, 3], [4, 1, 2, 2], [0, 3, 1, 1], [2, 2, 4, 0]], "kernel_size": 2, "stride": 1,
                  "padding": 1, "grad_output": [[1, 0, -1, 2, 1], [0, 2, 1, -1, 1], [1, 1, 0, 2, -2], [2, -1, 1, 0, 1],
                                                [1, 0, 2, 1, 0]]}),
    ("batch-norm", {"x": [[1.0, 2.0], [3.0, 6.0], [5.0, 1.0]], "gamma": [2.0, 0.5], "beta": [0.5, -1.0], "momentum": 0.1,
                    "running_mean": [1.0, 0.0], "running_var": [2.0, 1.0], "grad_output": [[1, -1], [0, 2], [-1, 1]]}),
    ("batch-norm", {"x": [[1.0, 2.0], [3.0, 6.0]], "training": False, "running_mean": [1.0, 0.0],
                    "running_var": [2.0, 1.0], "grad_output": [[1, -1], [0, 2]]}),
    ("dropout", {"x": [[1.0, -2.0], [3.0, 0.5]], "mask": [[1, 0], [1, 1]], "p": 0.25, "grad_output": [[1, 1], [-1, 2]]}),
    ("dropout", {"x": [1.0, -2.0], "mask": [1, 0], "p": 0.25, "training": False, "grad_output": [1.0, 2.0]}),
    ("mlp-regression", {"x": [0.05, 0.10], "target": [0.01, 0.99], "w1": [[0.15, 0.20], [0.25, 0.30]], "b1": [0.35, 0.35],
                        "w2": [[0.40, 0.45], [0.50, 0.55]], "b2": [0.60, 0.60], "lr": 0.5}),
    ("logistic-regression", {"X": [[1, 2], [3, -1], [0, 1]], "y": [1, 0, 1], "w": [0.5, -0.5], "b": 0.25, "lr": 0.1}),
    ("rnn-bptt", {"cell": "gru", "x": [[1.0], [-0.5]], "weight_ih": [[0.5], [1.0], [-1.0]], "weight_hh": [[1.0], [0.5], [0.5]],
                  "h0": [0.5], "grad_hidden": [[1.0], [-0.5]]}),
    ("rnn-bptt", {"cell": "rnn", "x": [[1.0], [-0.5], [0.5]], "weight_ih": [[0.5], [-1.0]], "weight_hh": [[1.0, -0.5],
                                                                                                   [0.5, 0.5]],
                  "bias_ih": [0.5, -0.5], "h0": [0.5, -1.0], "grad_hidden": [[1.0, 0.0], [-0.5, 1.0], [1.0, 2.0]]}),
    ("rnn-bptt-output", {"cell": "rnn", "x": [[1.0], [2.0]], "weight_ih": [[0.5]], "weight_hh": [[0.1]],
                         "weight_y": [[2.0]], "target": [[1.0], [2.0]], "output_activation": "sigmoid"}),
    ("rnn-bptt-output", {"cell": "lstm", "x": [[1.0], [-0.5], [0.5]], "weight_ih": [[0.5], [1.0], [-1.0], [0.5]],
                         "weight_hh": [[1.0], [0.5], [0.5], [-1.0]], "weight_y": [[1.0], [-1.0]], "bias_y": [0.5, 0.0],
                         "loss": "cross-entropy", "target": [0, 1, 1]}),
    ("self-attention", {"x": [[1, 0, 1, 0], [0, 1, 1, 1], [1, 1, 0, -1]], "w_query": [[1, 0, 1, 0], [0, 1, 0, 1],
                                                                                    [1, 1, 0, 0], [0, 0, 1, 1]],
                        "w_key": [[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 1]],
                        "w_value": [[1, 0], [0, 1], [1, 1], [0, -1]], "num_heads": 2, "w_output": [[1, 0], [1, 1]]}),
    ("optimizer-step", {"optimizer": "adamw", "params": [1.0, -2.0], "grads": [[0.5, 1.0], [1.0, -0.5]], "lr": 0.1}),
    ("optimizer-step", {"optimizer": "momentum", "params": [1.0, -2.0], "grads": [[0.5, 1.0], [1.0, -0.5]], "lr": 0.1}),
    ("optimizer-step", {"optimizer": "nesterov", "params": [1.0, -2.0], "grads": [[0.5, 1.0], [1.0, -0.5]], "lr": 0.1}),
    ("network-shapes", {"input_shape": [3, 32, 32], "layers": [
        {"type": "conv2d", "out_channels": 8, "kernel_size": 3, "padding": 1}, {"type": "batch-norm"}, {"type": "relu"},
        {"type": "max-pool", "kernel_size": 2}, {"type": "flatten"}, {"type": "linear", "out_features": 10}]}),
    ("network-shapes", {"input_shape": [4, 9, 9], "layers": [
        {"type": "conv2d", "out_channels": 4, "kernel_size": 3, "groups": 4}, {"type": "conv2d", "out_channels": 8,
                                                                              "kernel_size": 1},
        {"type": "max-pool", "kernel_size": 3, "stride": 2, "padding": "same"}, {"type": "global-avg-pool"},
        {"type": "flatten"}, {"type": "linear", "out_features": 10}]}),
]
IDS = [f"{t}-{i}" for i, (t, _) in enumerate(INSTANCES)]


def _flat(value) -> np.ndarray:
    """Every number of a value, ragged lists of lists (a network's shapes) included."""
    if isinstance(value, (list, tuple)):
        return np.concatenate([_flat(v) for v in value]) if value else np.zeros(0)
    return np.ravel(np.asarray(value, dtype=float))


def _differs(value, right) -> bool:
    if isinstance(right, list) and len({np.shape(v) for v in right}) > 1:     # a network's shapes: lists of lists
        return json.dumps(value) != json.dumps(right)
    a, b = np.asarray(value, dtype=float), np.asarray(right, dtype=float)
    return a.shape != b.shape or not np.allclose(a, b)


@pytest.mark.parametrize("topic,params", INSTANCES, ids=IDS)
def test_every_declared_mistake_computes_a_wrong_value(topic, params):
    known = solve.mistakes(topic, params)
    right = known.trace()
    for answer, declared in solve.get_topic(topic).mistakes.items():
        if answer not in right:      # a state this optimizer has not (velocity of Adam): nothing applies
            assert not any(m.applies(known.params) for m in declared), f"{topic}: {answer} is not a value of its trace"
            continue
        # one id may be declared once per kind of problem (mlp-backprop's no-activation, per activation,
        # its explanation naming it): those that apply to one problem are distinct
        applying = [m.id for m in declared if m.applies(known.params)]
        assert len(set(applying)) == len(applying), f"{topic}.{answer}: a mistake declared twice"
        found = known.of(answer)
        for m in found:
            assert np.all(np.isfinite(_flat(m.value))), (topic, answer, m.id)
            assert m.explanation and "\n" not in m.explanation
        if found:        # (none may apply: the scale mistakes of an explicitly unscaled attention)
            assert any(_differs(m.value, right[answer]) for m in found), \
                f"{topic}.{answer}: no mistake differs from the answer on this instance"


def test_network_shapes_mistakes_are_the_counts_they_name():
    """Pooling given a k×k filter per channel, the flatten reading the shape before the pooling, a
    grouped conv counted as a full one — each the count a student who makes it writes."""
    p = {"input_shape": [3, 12, 12], "layers": [
        {"type": "conv2d", "out_channels": 4, "kernel_size": 3, "padding": 1}, {"type": "relu"},
        {"type": "conv2d", "out_channels": 4, "kernel_size": 3, "groups": 4}, {"type": "max-pool", "kernel_size": 2},
        {"type": "flatten"}, {"type": "linear", "out_features": 10}]}
    known = solve.mistakes("network-shapes", p)
    ids = {a: {m.id: m.value for m in known.of(a)} for a in ("output_shapes", "params", "total_params")}
    assert known.trace().params == [112, 0, 40, 0, 0, 1010]
    assert ids["params"]["pool-params"][3] == 2 * 2 * 4                    # k²·C for a 2×2 pool on 4 channels
    assert ids["output_shapes"]["flatten-before-pool"][4] == [4 * 10 * 10]  # C·H·W of the conv's 4×10×10
    assert ids["params"]["flatten-before-pool"][5] == 400 * 10 + 10
    assert ids["params"]["groups-ignored"][2] == 4 * 4 * 9 + 4
    assert ids["total_params"]["pool-params"] == 112 + 40 + 16 + 1010


def test_a_mistake_that_is_the_problems_own_convention_is_skipped():
    lecture = solve.mistakes("gru-cell", GRU)
    assert [m.id for m in lecture.of("h_new")] == ["swapped-blend", "reset-before", "no-reset"]
    pytorch = solve.mistakes("gru-cell", GRU | {"convention": "pytorch", "reset": "before"})
    assert [m.id for m in pytorch.of("h_new")] == ["lecture-blend", "reset-after", "no-reset"]
    with pytest.raises(KeyError, match="own convention"):
        lecture.get("h_new", "lecture-blend")
    with pytest.raises(KeyError, match="no mistake"):
        lecture.get("h_new", "not-a-mistake")
    # a mistake limited by `when`: the sigmoid in place of tanh is no mistake of a ReLU cell
    relu = solve.mistakes("rnn-cell", INSTANCES[4][1])
    assert "sigmoid" not in [m.id for m in relu.of("h_new")] and "tanh" in [m.id for m in relu.of("h_new")]


def _sigmoid(a):
    return 1 / (1 + np.exp(-np.asarray(a, dtype=float)))


def test_gru_mistakes_are_the_formulas_they_name():
    """Recomputed here from the GRU equations in numpy, independently of the engine."""
    x, h = np.array(GRU["x"]), np.array(GRU["h"])
    W, U = np.array(GRU["weight_ih"]), np.array(GRU["weight_hh"])
    b, c = np.array(GRU["bias_ih"]), np.array(GRU["bias_hh"])
    r = _sigmoid(W[0:2] @ x + b[0:2] + U[0:2] @ h + c[0:2])
    z = _sigmoid(W[2:4] @ x + b[2:4] + U[2:4] @ h + c[2:4])
    n_after = np.tanh(W[4:] @ x + b[4:] + r * (U[4:] @ h + c[4:]))
    n_before = np.tanh(W[4:] @ x + b[4:] + U[4:] @ (r * h) + c[4:])
    n_none = np.tanh(W[4:] @ x + b[4:] + U[4:] @ h + c[4:])
    known = solve.mistakes("gru-cell", GRU)
    got = {m.id: m.value for m in known.of("h_new")}
    np.testing.assert_allclose(got["swapped-blend"], (1 - z) * n_after + z * h, rtol=1e-12)
    np.testing.assert_allclose(got["reset-before"], (1 - z) * h + z * n_before, rtol=1e-12)
    np.testing.assert_allclose(got["no-reset"], (1 - z) * h + z * n_none, rtol=1e-12)
    got_n = {m.id: m.value for m in known.of("n")}
    np.testing.assert_allclose(got_n["no-reset"], n_none, rtol=1e-12)
    np.testing.assert_allclose(got_n["sigmoid-candidate"],
                               _sigmoid(W[4:] @ x + b[4:] + r * (U[4:] @ h + c[4:])), rtol=1e-12)
    np.testing.assert_allclose(known.get("r", "tanh-gate").value, np.tanh(W[0:2] @ x + b[0:2] + U[0:2] @ h + c[0:2]),
                               rtol=1e-12)
    # swapped-gates: the r and z row blocks read the other way round
    np.testing.assert_allclose(known.get("r", "swapped-gates").value, _sigmoid(W[2:4] @ x + b[2:4] + U[2:4] @ h + c[2:4]),
                               rtol=1e-12)
    np.testing.assert_allclose(known.get("z", "swapped-gates").value, r, rtol=1e-12)


def test_each_convention_is_computed_once(monkeypatch):
    calls = []
    right = engine.gru_cell

    def counting(*args, **kwargs):
        calls.append((kwargs["convention"], kwargs["reset"], args[2] == GRU["weight_ih"]))
        return right(*args, **kwargs)

    monkeypatch.setattr(engine, "gru_cell", counting)
    known = solve.mistakes("gru-cell", GRU)
    known.trace()
    for answer in ("r", "z", "n", "h_new"):
        known.of(answer)
    known.trace(convention="pytorch")
    known.at(convention="pytorch").get("h_new", "lecture-blend")
    # each convention once, and once the r and z row blocks swapped (swapped-gates, for r and z alike)
    assert sorted(calls) == sorted({("lecture", "after", True), ("lecture", "before", True), ("lecture", "none", True),
                                    ("pytorch", "after", True), ("lecture", "after", False)})


def _answers(trace, names):
    return {n: (trace[n].tolist() if isinstance(trace[n], np.ndarray) else trace[n]) for n in names}


WITH_ECF = [(t, p) for t, p in INSTANCES if solve.get_topic(t).ecf]


@pytest.mark.parametrize("topic,params", WITH_ECF, ids=[f"{t}-{i}" for i, (t, _) in enumerate(WITH_ECF)])
def test_ecf_rules_recompute_each_answer_from_the_right_earlier_answers(topic, params):
    known = solve.mistakes(topic, params)
    t = known.trace()
    rules = solve.get_topic(topic).ecf
    names = [k for k in t if isinstance(t[k], (np.ndarray, float, int))]
    for answer in rules:
        if answer not in t:             # an answer this problem has not (dense's grad_output without a target)
            assert solve.ecf(topic, answer, known.params, t, names) is None, (topic, answer)
            continue
        recipe = solve.ecf(topic, answer, known.params, t, names)
        if all(r.when is not None and not r.when(known.params) for r in rules[answer]):
            assert recipe is None, (topic, answer)          # no rule holds for this instance (Ecf.when)
            continue
        assert recipe is not None, (topic, answer)
        assert set(recipe.refs()) <= set(names)
        got = evaluate(recipe, _answers(t, names))
        np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(t[answer], dtype=float), rtol=1e-12,
                                   atol=1e-14, err_msg=f"{topic}.{answer}")


def test_an_ecf_rule_needs_its_earlier_answers_asked_and_names_their_parts():
    t = solve.mistakes("gru-cell", GRU).trace()
    assert solve.ecf("gru-cell", "h_new", solve.full_params("gru-cell", GRU), t, ["n", "h_new"]) is None
    recipe = solve.ecf("gru-cell", "h_new", solve.full_params("gru-cell", GRU), t, {"z": "b", "n": "c"})
    assert recipe.op == "gru-blend" and recipe.args["z"] == {"$ref": "b"} and recipe.args["n"] == {"$ref": "c"}
    assert recipe.args["convention"] == "lecture"
    assert solve.ecf("gru-cell", "r", solve.full_params("gru-cell", GRU), t, ["r"]) is None     # none declared


def test_an_ecf_rule_writes_arrays_in_the_answers_form():
    p = {"x": [1.0], "h": [0.5], "c": [-1.0], "weight_ih": [[0.5], [1.0], [-1.0], [0.5]], "weight_hh": [[0], [0], [0], [0]]}
    known = solve.mistakes("lstm-cell", p)
    t = known.trace()
    as_vector = solve.ecf("lstm-cell", "c_new", known.params, t, ["i", "f", "g", "c_new"])
    as_number = solve.ecf("lstm-cell", "c_new", known.params, t, ["i", "f", "g", "c_new"], lambda v: float(np.ravel(v)[0]))
    assert as_vector.args["c"] == [-1.0] and as_number.args["c"] == -1.0
    values = {k: float(np.ravel(t[k])[0]) for k in ("i", "f", "g")}
    assert math.isclose(evaluate(as_number, values), float(t.c_new[0]), rel_tol=1e-12)


def test_a_mistake_declares_conventions_or_a_computation():
    with pytest.raises(ValueError, match="one of the two"):
        Mistake("nothing", why="…")
    with pytest.raises(ValueError, match="one of the two"):
        Mistake("both", why="…", compute=lambda p, t: 0, scale=1.0)
    m = Mistake("divide-by-dk", scale=lambda p: 1 / 4, why="…")
    assert m.params({"scale": None}) == {"scale": 0.25} and m.params({"scale": 0.25}) is None
    assert isinstance(Ref("z"), Ref) and "divide-by-dk" in repr(m)


def test_solve_keeps_the_contracts_resets_though_the_engine_has_none():
    with pytest.raises(ParamError, match="reset: expected one of 'after', 'before', got 'none'"):
        solve.solve("gru-cell", GRU | {"reset": "none"})
    assert solve.mistakes("gru-cell", GRU).trace(reset="none").n.shape == (2,)


def test_a_mistakes_engine_call_is_made_once_whichever_way_it_is_asked_for():
    """trace(**changes), a declared mistake's value and call(params) share one cache key (issue 26: a
    mistake is keyed from the problem's own key and its changes, without building its parameters)."""
    from examprep.solve import contract

    params = {"x": [1.0, -1.0], "h": [0.5, 0.0], "weight_ih": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5],
                                                                 [1.0, -1.0], [0.0, 0.5]],
              "weight_hh": [[0.5, 0.0], [0.0, 0.5], [1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [-0.5, 0.5]]}
    topic = contract.get_topic("gru-cell")
    calls = []
    table = contract.Mistakes(topic, contract.resolve_params(topic, params))
    real = topic.compute
    object.__setattr__(topic, "compute", lambda p: calls.append(dict(p)) or real(p))
    try:
        via_trace = table.trace(convention="pytorch")
        via_call = table.call({**params, "convention": "pytorch"})
        swapped = next(m for m in table.declared("h_new") if m.conventions.get("convention") == "pytorch")
        via_value = table.value(swapped, "h_new")
    finally:
        object.__setattr__(topic, "compute", real)
    assert via_trace is via_call
    assert via_value is via_trace["h_new"]
    assert len(calls) == 1 and calls[0]["convention"] == "pytorch"
    assert table.trace()["h_new"].tolist() != via_trace["h_new"].tolist()


def test_a_mistakes_value_is_worked_out_once_per_table_refusals_included():
    """network-shapes reads each mistake's per-layer value once per layer: the value (a compute
    function's too) and an engine refusal are worked out once per table and given again (issue 26);
    another table of the same problem works them out afresh."""
    from examprep.errors import ExamprepError
    from examprep.solve import contract

    params = {"input_shape": [1, 6, 6], "layers": [
        {"type": "conv2d", "out_channels": 2, "kernel_size": 3, "padding": 1}, {"type": "max-pool", "kernel_size": 2},
        {"type": "flatten"}, {"type": "linear", "out_features": 3}]}
    topic = contract.get_topic("network-shapes")
    declared = {m.id: m for m in topic.mistakes["params"]}
    pool = declared["pool-params"]                       # a compute mistake: the pooling counted as a filter
    computes = []
    real = pool.compute
    pool.compute = lambda p, t: computes.append(1) or real(p, t)
    try:
        table = contract.mistakes("network-shapes", params)
        first = [table.value(pool, "params")[i] for i in range(4)]
        assert [table.value(pool, "params")[i] for i in range(4)] == first == [20, 8, 0, 2 * 9 * 3 + 3]
        assert len(computes) == 1
        assert table.value(pool, "params") is table.value(pool, "params")
        contract.mistakes("network-shapes", params).value(pool, "params")
        assert len(computes) == 2                                                        # another table: afresh
        total = next(m for m in topic.mistakes["total_params"] if m.id == "pool-params")
        assert table.value(total, "total_params") == sum(first)                         # another mistake: its own
    finally:
        pool.compute = real

    calls = []
    real_compute = topic.compute
    refusing = contract.Mistakes(topic, contract.resolve_params(topic, params))
    object.__setattr__(topic, "compute", lambda p: calls.append(1) or (_ for _ in ()).throw(ParamError("layers[0]: refused")))
    try:
        for _ in range(3):
            with pytest.raises(ExamprepError, match=r"layers\[0\]: refused"):
                refusing.value(declared["no-bias"], "params")
    finally:
        object.__setattr__(topic, "compute", real_compute)
    assert len(calls) == 1
