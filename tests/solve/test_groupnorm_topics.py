"""group-norm and instance-norm as solve topics (issue 38 item 4): listed, answered, each declared mistake a
wrong value of the answer's shape, the ECF rules recomputing output and x̂ from a student's statistics, and
bad input one line with exit status 2; batch-norm's grad_mean and grad_var beside its other gradients."""
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from examprep import solve
from examprep.cli import app
from examprep.ecf import evaluate
from tests.solve.test_tables import _differs, _flat

X = [[[[1.0, 3.0]], [[3.0, 1.0]], [[3.0, 3.0]], [[7.0, 7.0]]],
     [[[0.0, 2.0]], [[4.0, 2.0]], [[1.0, 5.0]], [[2.0, -1.0]]]]
DELTA = [[[[1.0, 0.0]], [[0.0, -1.0]], [[2.0, 1.0]], [[1.0, 1.0]]],
         [[[-1.0, 1.0]], [[0.5, 0.0]], [[0.0, 2.0]], [[1.0, -2.0]]]]
INSTANCES = [
    ("group-norm", {"x": X, "num_groups": 2, "weight": [1.0, 2.0, 0.5, 1.0], "bias": [0.0, 1.0, -1.0, 0.5],
                    "grad_output": DELTA}),
    ("group-norm", {"x": [[[1.0, 3.0, 2.0]], [[0.0, 4.0, 1.0]], [[2.0, 2.0, 5.0]], [[6.0, 1.0, 0.0]],
                          [[3.0, 3.0, 1.0]], [[0.0, 1.0, 2.0]]], "num_groups": 3, "affine": False}),
    ("instance-norm", {"x": X, "affine": True, "weight": [2.0, 1.0, 1.0, 0.5], "bias": 0.5, "grad_output": DELTA}),
    ("instance-norm", {"x": X[0]}),
]
IDS = [f"{t}-{i}" for i, (t, _) in enumerate(INSTANCES)]


def test_both_topics_are_listed_with_torchs_parameter_names():
    listed = {t["topic"]: t for t in json.loads(solve.topics_json())}
    assert [p["name"] for p in listed["group-norm"]["params"]][:3] == ["x", "num_groups", "num_channels"]
    assert {"num_features", "affine", "weight", "bias", "eps"} <= {p["name"] for p in listed["instance-norm"]["params"]}
    for topic in ("group-norm", "instance-norm"):
        assert {"output", "mean", "var", "num_params", "grad_input", "grad_weight", "grad_bias"} <= set(listed[topic]["answer"])
        assert all(len(listed[topic]["mistakes"][a]) >= 2 for a in listed[topic]["answer"]), topic
    batch = listed["batch-norm"]
    assert {"grad_mean", "grad_var"} <= set(batch["answer"])
    assert len(batch["mistakes"]["grad_mean"]) >= 2 and len(batch["mistakes"]["grad_var"]) >= 2


@pytest.mark.parametrize("topic,params", INSTANCES, ids=IDS)
def test_every_declared_mistake_is_a_wrong_value_of_the_answers_shape(topic, params):
    known = solve.mistakes(topic, params)
    right = known.trace()
    for answer in solve.get_topic(topic).mistakes:
        if answer not in right:           # grad_* without grad_output, grad_weight without affine
            assert not known.of(answer), (topic, answer)
            continue
        found = known.of(answer)
        for m in found:
            assert np.all(np.isfinite(_flat(m.value))), (topic, answer, m.id)
            assert np.shape(m.value) == np.shape(right[answer]), (topic, answer, m.id)
            assert _differs(m.value, right[answer]), (topic, answer, m.id)
        assert found, (topic, answer)


@pytest.mark.parametrize("topic,params", INSTANCES, ids=IDS)
def test_ecf_rules_recompute_output_and_x_hat_from_the_students_statistics(topic, params):
    known = solve.mistakes(topic, params)
    t = known.trace()
    for answer in ("output", "x_hat"):
        recipe = solve.ecf(topic, answer, known.params, t, ["mean", "var"])
        np.testing.assert_allclose(evaluate(recipe, {"mean": t.mean.tolist(), "var": t.var.tolist()}), t[answer],
                                   rtol=1e-12, atol=1e-14)
        wrong = evaluate(recipe, {"mean": (t.mean + 1).tolist(), "var": t.var.tolist()})     # carried forward
        assert not np.allclose(wrong, t[answer])


def test_the_named_mistakes_are_the_axes_they_name():
    from examprep import engine

    known = solve.mistakes("group-norm", INSTANCES[0][1])
    mis = {m.id: m.value for m in known.of("output")}
    np.testing.assert_allclose(mis["instance-norm-axis"], engine.instance_norm(X, [1.0, 2.0, 0.5, 1.0],
                                                                               [0.0, 1.0, -1.0, 0.5], affine=True).output)
    ln = engine.layer_norm(X, eps=1e-5, eps_placement="inside-sqrt", normalized_shape=[4, 1, 2]).normalized
    np.testing.assert_allclose(mis["layer-norm-axis"], ln * np.reshape([1.0, 2.0, 0.5, 1.0], (1, 4, 1, 1))
                               + np.reshape([0.0, 1.0, -1.0, 0.5], (1, 4, 1, 1)), rtol=1e-12)
    # strided: channels 0 and 2 form group 1 of example 1: 1, 3, 3, 3
    assert {m.id: m.value for m in known.of("mean")}["strided-groups"][0, 0] == pytest.approx(2.5)
    assert {m.id: m.value for m in known.of("num_params")} == {"per-group": 4, "no-bias": 4}
    inst = {m.id: m.value for m in solve.mistakes("instance-norm", {"x": X[0]}).of("num_params")}
    assert inst == {"affine-by-default": 8}


runner = CliRunner()


@pytest.mark.parametrize("topic,params,fragment", [
    ("group-norm", {"x": X, "num_groups": 3}, "num_groups: must divide the number of channels (4)"),
    ("group-norm", {"x": X, "num_groups": 2, "num_channels": 6}, "num_channels: 6 does not match x"),
    ("group-norm", {"x": X}, "num_groups: missing"),
    ("instance-norm", {"x": X, "weight": 2.0}, "affine is false"),
    ("instance-norm", {"x": [[[1.0]], [[2.0]]]}, "more than one position per channel"),
    ("group-norm", {"x": X, "num_groups": 2, "groups": 2}, "groups: unknown parameter"),
])
def test_bad_input_exits_two_with_one_line(topic, params, fragment):
    res = runner.invoke(app, ["solve", topic, "--params", json.dumps(params)])
    assert res.exit_code == 2
    assert fragment in res.output and "Traceback" not in res.output
    assert len([line for line in res.output.splitlines() if line.strip()]) == 1
