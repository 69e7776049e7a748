"""Error carried forward must not depend on today's engine (issue 14, item 6). A key stores, per
part with a carried-forward rule, that rule's value on the key's own answers; grading recomputes
them first (relative 1e-12) and grades a part whose rule now differs without carried-forward
credit, warning once with the key's examprep_version. Keys written before grade as they did.

The engine change is simulated by scaling one elementary op by 1.01 (monkeypatch); the values a
key stores are checked against numpy formulas written here, not against our own ECF rules."""
import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from examprep import ecf, generators
from examprep.cli import app
from examprep.grading import Settings, grade_batch, self_test
from examprep.keys import Key, read_key, write_key

runner = CliRunner()
FIXTURE = Path(__file__).parent / "fixtures" / "before-ecf-check"


def softmax_rows(s):
    s = np.asarray(s, dtype=float)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def verdicts(batch):
    return {r.student_id: {a: [pr.status, round(pr.score, 6)] for a, _, pr in r.parts()} for r in batch.results}


def test_a_key_written_before_grades_exactly_as_it_did():
    raw = json.loads((FIXTURE / "key.json").read_text())
    assert "ecf_check" not in raw and raw["format_version"] == 1
    key = read_key(FIXTURE / "key.json")
    batch = grade_batch(key, [str(FIXTURE / "class")], Settings())
    assert verdicts(batch) == json.loads((FIXTURE / "verdicts.json").read_text())
    assert batch.warnings == [] and batch.key_info["ecf_check"] == "absent"
    assert sum(s == "ecf" for v in verdicts(batch).values() for s, _ in v.values()) >= 20


@pytest.fixture(scope="module")
def attention():
    p = generators.build("attention", 8, 1)
    assert p.params["variant"] == "qkv" and not p.params["causal"]
    return p


@pytest.fixture(scope="module")
def softmax_ce():
    return generators.build("softmax-cross-entropy", 7, 1)


def test_a_new_key_stores_each_rules_value_on_the_keys_own_answers(tmp_path, attention, softmax_ce):
    write_key(tmp_path / "key.json", Key("k", [attention, softmax_ce], variants={"s1": [softmax_ce]}))
    raw = json.loads((tmp_path / "key.json").read_text())
    # Problem JSON (and so tests/golden/problems.json) is unchanged: the values live beside it
    assert raw["problems"] == json.loads(json.dumps([attention.to_dict(), softmax_ce.to_dict()]))
    assert raw["format_version"] == 1
    att, ce = raw["ecf_check"]["problems"]
    assert set(att) == {p.id for p in attention.parts if p.ecf_rule} == {"weights", "output"}
    scores = np.array(attention.part("scaled_scores").expected)
    weights = np.array(attention.part("weights").expected)
    value = np.array(attention.params["value"])
    np.testing.assert_allclose(att["weights"], softmax_rows(scores), rtol=1e-12)
    np.testing.assert_allclose(att["output"], weights @ value, rtol=1e-12)
    probs = np.array(softmax_ce.part("probs").expected)
    target = softmax_ce.params["target"]
    assert math.isclose(ce["loss"], -math.log(probs[target]), rel_tol=1e-12)          # one row, one-hot target
    np.testing.assert_allclose(ce["grad_logits"], probs - np.eye(probs.size)[target], rtol=1e-12, atol=1e-15)
    assert raw["ecf_check"]["variants"]["s1"] == [ce]
    assert read_key(tmp_path / "key.json").ecf_check == raw["ecf_check"]


def consistent_class(folder, attention):
    """Students whose weights and output follow from their own (unscaled) scores: carried forward."""
    q, k, v = (np.array(attention.params[n]) for n in ("query", "key", "value"))
    folder.mkdir()
    for i, factor in enumerate((1.0, 1.7, -0.6)):           # 1.0: forgot 1/√d_k, a named mistake
        scores = factor * q @ k.T
        weights = softmax_rows(scores)
        answers = {"student_id": f"s{i}", "q1": {"scaled_scores": scores.tolist(), "weights": np.round(weights, 4).tolist(),
                                                  "output": np.round(weights @ v, 4).tolist()}}
        (folder / f"s{i}.json").write_text(json.dumps(answers))


@pytest.fixture()
def attention_key(tmp_path, attention):
    write_key(tmp_path / "key.json", Key("k", [attention]))
    raw = json.loads((tmp_path / "key.json").read_text())
    raw["examprep_version"] = "0.0.9"                  # written by an older examprep
    (tmp_path / "key.json").write_text(json.dumps(raw))
    del raw["ecf_check"]                                # the same key, written before the check existed
    (tmp_path / "old.json").write_text(json.dumps(raw))
    consistent_class(tmp_path / "class", attention)
    return tmp_path


def statuses(data):
    return [[p["status"] for q in s["problems"] for p in q["parts"]] for s in data["submissions"]]


def scale_op(monkeypatch, name, factor):
    real = ecf.OPS[name]
    monkeypatch.setitem(ecf.OPS, name, lambda **kw: np.asarray(real(**kw)) * factor)


def grade_json(folder, key="key.json", *extra):
    res = runner.invoke(app, ["grade", str(folder / key), str(folder / "class"), "--json", "-", *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), res.stderr


def test_with_the_same_engine_new_and_old_keys_grade_alike(attention_key):
    new, err = grade_json(attention_key)
    old, _ = grade_json(attention_key, "old.json")
    assert statuses(new) == statuses(old) == [["misconception", "ecf", "ecf"]] + [["wrong", "ecf", "ecf"]] * 2
    assert new["key"] == {"title": "k", "examprep_version": "0.0.9", "format_version": 1, "ecf_check": "passed",
                          "ecf_without_credit": []}
    assert new["warnings"] == [] and "carried-forward rule" not in err


def test_an_engine_change_turns_off_carried_forward_credit_for_that_part_and_warns_once(attention_key, monkeypatch):
    scale_op(monkeypatch, "scaled-masked-softmax", 1.01)           # a 1% change to one rule
    data, err = grade_json(attention_key)
    # weights (whose rule changed) get no carried-forward credit; output (matmul, unchanged) still does
    assert [s[1] for s in statuses(data)] == ["misconception", "wrong", "wrong"]      # s0: the no-scale weights
    assert [s[2] for s in statuses(data)] == ["ecf"] * 3
    assert data["key"]["ecf_check"] == "differs" and data["key"]["ecf_without_credit"] == ["q1.weights"]
    assert len(data["warnings"]) == 1
    warning = data["warnings"][0]
    assert "q1.weights" in warning and "examprep 0.0.9" in warning and "without carried-forward credit" in warning
    lines = [ln for ln in err.splitlines() if "carried-forward rule" in ln]
    assert len(lines) == 1 and "q1.weights" in lines[0] and "0.0.9" in lines[0]


def test_an_old_key_under_the_same_change_grades_as_today(attention_key, monkeypatch):
    # as before issue 14: the live engine decides, no warning; the students' weights (from the
    # unchanged formula) no longer match the changed rule
    scale_op(monkeypatch, "scaled-masked-softmax", 1.01)
    data, err = grade_json(attention_key, "old.json")
    assert data["key"]["ecf_check"] == "absent" and data["warnings"] == []
    assert [s[1] for s in statuses(data)] == ["misconception", "wrong", "wrong"]
    scale_op(monkeypatch, "scaled-masked-softmax", 1 / 1.01)       # back to the engine the students used
    data, _ = grade_json(attention_key, "old.json")
    assert [s[1] for s in statuses(data)] == ["ecf"] * 3


@pytest.mark.parametrize("factor,differs", [(1 + 1e-14, False), (1 + 2e-13, False), (1 + 1e-10, True), (1.01, True)])
def test_the_comparison_is_relative_1e_12_not_bit_for_bit(attention_key, monkeypatch, factor, differs):
    scale_op(monkeypatch, "matmul", factor)
    key = read_key(attention_key / "key.json")
    batch = grade_batch(key, [str(attention_key / "class")], Settings())
    assert (batch.key_info["ecf_without_credit"] == ["q1.output"]) == differs
    assert len(batch.warnings) == differs


def test_variants_are_checked_and_warned_once_per_part(tmp_path, monkeypatch, attention):
    other = generators.build("attention", 8, 1)
    write_key(tmp_path / "key.json", Key("v", [], variants={"a": [attention], "b": [other], "c": [attention]}))
    scale_op(monkeypatch, "matmul", 1.01)
    from examprep.grading import ecf_drift

    drift = ecf_drift(read_key(tmp_path / "key.json"))
    assert len(drift.warnings) == 1 and "q1.output" in drift.warnings[0] and "3 of 3 variants" in drift.warnings[0]
    assert drift.addresses == ["q1.output"] and len(drift.parts) == 3          # the part in each variant


def test_the_self_test_names_a_rule_that_changed(attention_key, monkeypatch):
    key = read_key(attention_key / "key.json")
    assert self_test(key)[1] == []
    scale_op(monkeypatch, "matmul", 1.01)
    issues = [i for i in self_test(key)[1] if "carried-forward rule gives another value" in i]
    assert len(issues) == 1 and "q1.output" in issues[0] and "0.0.9" in issues[0]


def test_a_damaged_check_never_refuses_the_key(attention_key):
    raw = json.loads((attention_key / "key.json").read_text())
    raw["ecf_check"]["problems"][0]["weights"] = "garbage"
    (attention_key / "damaged.json").write_text(json.dumps(raw))
    data, err = grade_json(attention_key, "damaged.json")
    assert data["key"]["ecf_without_credit"] == ["q1.weights"] and len(data["submissions"]) == 3
