"""Issue 37 item 1, recurrent topics: an authored question (`solve = "<topic>"`) with a built-in
problem's own parameters gets the same known mistakes (ids, values, explanations) and ECF rules on
the parts both ask as the built-in problem does — one test per (generator, solve topic) pair, each
over every level and seeds 0–2, the generator's allow-listed slips (examprep.generators.slips) aside.

A generator's part that asks a piece of an answer (a row of rnn-bptt's `hidden`, one step of a
sequence) is compared with the question that asks that piece: the step's own cell, or the answer
whose row it is."""
from __future__ import annotations

import json
from typing import Any

import numpy as np

from examprep import generators, solve
from examprep.authoring import build_question, parse_question
from examprep.generators.slips import SLIPS


def authored(topic: str, params: dict, answers: list[str]):
    """The Problem of a question file fixing ``params`` (those that are ``topic``'s) and asking each of
    ``answers`` in a part ``a_<answer>`` (a part id may not be a parameter's name: rnn-bptt's ``cell``
    is both)."""
    names = {p.name for p in solve.get_topic(topic).params}
    lines = ["[question]", 'id = "pair"', f'solve = "{topic}"', 'text = "Same parameters."', "[question.params]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in params.items() if v is not None and k in names]
    for a in answers:
        lines += ["[[question.part]]", f'id = "a_{a}"', f'answer = "{a}"', f'prompt = "{a}?"']
    return build_question(parse_question("\n".join(lines) + "\n", "pair.toml"), 0)


def _numbers(v: Any) -> Any:
    """A value with every number array flattened to a list of floats (a one-unit problem shows a
    one-element vector as a number), other values (strings, references) as they are."""
    if isinstance(v, dict):
        return {k: _numbers(x) for k, x in v.items()}
    if v is None or isinstance(v, str):
        return v
    try:
        return np.asarray(v, dtype=float).ravel().tolist()
    except (TypeError, ValueError):
        return [_numbers(x) for x in v] if isinstance(v, list) else v


def feedback(part, generator: str = "", refs: dict[str, str] | None = None):
    """A part's mistakes as (id, explanation, value) less the generator's allow-listed slips, and its ECF
    rule (op, arguments, output): a solve topic's arguments with its defaults filled in (a generator may
    leave out a parameter at its default), references to ``a_<answer>`` written as ``refs[answer]``."""
    slips = SLIPS.get(generator, {})
    mistakes = [(m.id, m.explanation, _numbers(m.value)) for m in part.misconceptions if m.id not in slips]
    rule = part.ecf_rule
    if rule is None:
        return mistakes, None
    args = rule.args
    if rule.op.startswith("solve:"):
        args = solve.full_params(rule.op.removeprefix("solve:"), args)
    text = json.dumps(args, sort_keys=True)
    for answer, pid in (refs or {}).items():
        text = text.replace(f'{{"$ref": "a_{answer}"}}', f'{{"$ref": "{pid}"}}')
    return mistakes, (rule.op, _numbers(json.loads(text)), rule.output)


def same(got, want) -> bool:
    """Equal feedback: the same ids, explanations and ECF rules in the same order, values within 1e-12."""
    def close(a, b):
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
        if isinstance(a, list) and isinstance(b, list) and all(isinstance(x, float) for x in a + b):
            return len(a) == len(b) and np.allclose(a, b, rtol=1e-12, atol=1e-12)
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
        return a == b
    return close(list(got[0]), list(want[0])) and close(got[1], want[1])


def assert_same_feedback(generator: str, topic: str, parts: dict[str, str], levels=(1, 2, 3), seeds=range(3),
                         free=(False, True), given=lambda built: {}) -> int:
    """Each built-in part named in ``parts`` (part id → the answer of ``topic`` it asks) gets, in a question
    asking those answers with the problem's own parameters (and ``given(problem)``: a value its statement
    gives that its parameters do not hold), the same feedback. Returns how many mistakes were compared
    (not vacuous: the caller checks it)."""
    gen = generators.get(generator)
    mistakes = 0
    for level in levels:
        for cf in (free if gen.calculator_free else (False,)):
            for seed in seeds:
                built = generators.build(generator, seed, level, cf)
                asked = {pid: a for pid, a in parts.items() if any(p.id == pid for p in built.parts)}
                mine = authored(topic, built.params | given(built), list(asked.values()))
                refs = {a: pid for pid, a in asked.items()}
                for pid, a in asked.items():
                    want = feedback(built.part(pid), generator)
                    got = feedback(mine.part("a_" + a), generator, refs)
                    assert same(got, want), (generator, level, cf, seed, pid, got, want)
                    mistakes += len(want[0])
    return mistakes


def test_gru_step_and_the_gru_cell_topic_give_the_same_feedback():
    assert assert_same_feedback("gru-step", "gru-cell", {"r": "r", "z": "z", "n": "n", "h_new": "h_new"}) > 3 * 3 * 2


def test_gru_steps_pytorch_blend_is_the_gru_cell_topics_h_new_in_that_convention():
    # level 3's second blend: the topic at convention "pytorch", whose table's lecture-blend the part names
    for cf in (False, True):
        for seed in range(3):
            built = generators.build("gru-step", seed, 3, cf)
            mine = authored("gru-cell", built.params | {"convention": "pytorch"}, ["z", "n", "h_new"])
            want = feedback(built.part("h_new_pytorch"))
            got = feedback(mine.part("a_h_new"), refs={"z": "z", "n": "n"})
            assert got[1] == want[1] and got[1] is not None, (cf, seed)
            assert want[0] == [m for m in got[0] if m[0] == "lecture-blend"] != [], (cf, seed)


def test_lstm_step_and_the_lstm_cell_topic_give_the_same_feedback():
    def delta(built):      # level 3's ∂L/∂c', given in the statement: the grad_c part's ECF rule holds it
        return {"grad_c_new": built.part("grad_c").ecf_rule.args["b"]} if built.difficulty == 3 else {}

    answers = ("i", "f", "g", "o", "c_new", "h_new", "cell_gradient", "grad_c")
    assert assert_same_feedback("lstm-step", "lstm-cell", {a: a for a in answers}, given=delta) > 3 * 3 * 2 * 6


def test_rnn_step_and_the_rnn_cell_topic_give_the_same_feedback():
    # levels 1 and 2: one step. An author cannot ask pre_activation (a worked step's value, not an answer
    # of rnn-cell), so h_new's ECF rule, which reads the student's pre-activation, has no part to refer to
    compared = 0
    for level in (1, 2):
        for cf in (False, True):
            for seed in range(3):
                built = generators.build("rnn-step", seed, level, cf)
                mine = authored("rnn-cell", built.params, ["h_new"])
                want, got = feedback(built.part("h_new"), "rnn-step"), feedback(mine.part("a_h_new"), "rnn-step")
                assert want[1][0] == "solve:activation" and got[1] is None
                assert same((got[0], None), (want[0], None)), (level, cf, seed)
                compared += len(want[0])
    assert compared > 2 * 2 * 3


def test_rnn_steps_two_steps_are_rnn_cell_steps_and_its_jacobian_rnn_unrolls():
    compared = 0
    for cf in (False, True):
        for seed in range(3):
            built = generators.build("rnn-step", seed, 3, cf)
            h1 = built.part("h_1").expected
            steps = {"h_1": built.part("h_1").ecf_rule.args, "h_2": built.part("h_2").ecf_rule.args | {"h": h1}}
            # each state is one rnn-cell step (the step before's state given); the generator leaves out no-tanh
            # (its parts ask no pre-activation) and adds to h₂ the sequence's reuse-h0, rnn-unroll's
            for pid, params in steps.items():
                got = feedback(authored("rnn-cell", params, ["h_new"]).part("a_h_new"))[0]
                want = feedback(built.part(pid))[0]
                reuse = [m for m in want if m[0] == "reuse-h0"]
                # a mistake with the value of an earlier one is dropped (the first explanation kept)
                own = [m for m in got if m[0] != "no-tanh" and not any(np.allclose(m[2], r[2]) for r in reuse)]
                assert same((reuse + own, None), (want, None)), (cf, seed, pid)
                compared += len(want)
            seq = authored("rnn-unroll", built.params, ["hidden"]).part("a_hidden")
            reuse = [(i, why, v[2:]) for i, why, v in feedback(seq)[0] if i == "reuse-h0"]       # its row h₂
            want = [m for m in feedback(built.part("h_2"))[0] if m[0] == "reuse-h0"]
            # (dropped from h₂ where it is h₂ itself or another mistake's value: seed 0 without a calculator)
            assert same((reuse, None), (want, None)) or not want and len(reuse) == 1, (cf, seed)
            # ∂h₂/∂h₁: rnn-unroll's Jacobian over the second step alone, from h₁
            last = authored("rnn-unroll", built.params | {"x": built.params["x"][1:], "h0": h1}, ["hidden", "jacobian"])
            want = feedback(built.part("jacobian"))
            assert same(feedback(last.part("a_jacobian"), refs={"hidden": "h_2"}), want), (cf, seed)
            compared += len(want[0])
    assert compared > 2 * 3 * 3


def _row(mistakes, k: int, right, first=()):
    """Row k of each mistake of a T×H answer, as a part asking that row shows them: after ``first`` (mistakes
    of other tables listed before them), less a row that is the right one and a row another kept mistake gives."""
    kept = list(first)
    for i, why, v in mistakes:
        row = np.asarray(v).reshape(-1, np.size(right))[k].tolist()
        if not np.allclose(row, right, rtol=1e-9, atol=1e-12) and not any(np.allclose(row, m[2]) for m in kept):
            kept.append((i, why, row))
    return kept


def _step_params(built, k: int) -> tuple[str, dict]:
    """The cell topic and parameters of step k + 1 of an rnn-bptt problem: its input row, the state before."""
    p = built.params
    ans = solve.answer_only("rnn-bptt", p)
    H = np.shape(p["weight_hh"])[1]
    step = {"x": p["x"][k], "h": p["h0"] if k == 0 else np.ravel(ans["hidden"][0]).tolist(),
            "weight_ih": p["weight_ih"], "weight_hh": p["weight_hh"], "bias_ih": p["bias_ih"]}
    if p["cell"] == "lstm":
        step["c"] = [0.0] * H if k == 0 else np.ravel(ans["cell"][0]).tolist()
    return {"rnn": "rnn-cell", "gru": "gru-cell", "lstm": "lstm-cell"}[p["cell"]], step


def test_rnn_bptt_and_its_topic_and_each_steps_cell_give_the_same_feedback():
    compared = 0
    for level in (1, 2, 3):
        for seed in range(3):
            built = generators.build("rnn-bptt", seed, level)
            whole = {"grad_weight_hh": "grad_weight_hh", "grad_weight_ih": "grad_weight_ih", "grad_bias": "grad_bias_ih"}
            whole = {pid: a for pid, a in whole.items() if any(p.id == pid for p in built.parts)}
            mine = authored("rnn-bptt", built.params, ["hidden", "grad_h", *whole.values()])
            for pid, a in whole.items():              # the answers asked whole
                want = feedback(built.part(pid))
                assert same(feedback(mine.part("a_" + a)), want), (level, seed, pid)
                compared += len(want[0])
            # ∂L/∂h₁: row 1 of grad_h
            want = feedback(built.part("grad_h1"))
            got = _row(feedback(mine.part("a_grad_h"))[0], 0, np.ravel(built.part("grad_h1").expected).tolist())
            assert same((got, None), want), (level, seed)
            # h_k: row k of hidden (h₂'s reuse-h0 after its step's own mistakes), then its step's cell topic's
            hidden = feedback(mine.part("a_hidden"))[0]
            for k, pid in enumerate(("h_1", "h_2")):
                topic, params = _step_params(built, k)
                cell = feedback(authored(topic, params, ["h_new"]).part("a_h_new"))[0]
                right = np.ravel(built.part(pid).expected).tolist()
                rows = _row([m for m in hidden if k == 0 or m[0] != "reuse-h0"], k, right)
                expect = _row([m for m in hidden if k == 1 and m[0] == "reuse-h0"], k, right, _row(cell, 0, right, rows))
                assert same((expect, None), (feedback(built.part(pid))[0], None)), (level, seed, pid)
                compared += len(expect)
    assert compared > 3 * 3 * 4


def test_vanishing_gradient_and_its_topic_give_the_same_feedback():
    answers = {a: a for a in ("hidden", "local_derivatives", "gradient", "bound")}
    assert assert_same_feedback("vanishing-gradient", "vanishing-gradient", answers) > 3 * 3 * 3


def test_vanishing_gradients_twenty_steps_are_its_topic_over_twenty_inputs_clipped():
    # level 2: the same network over the four inputs and sixteen 1s, clipped to norm 5 — every ReLU active,
    # so ∂h_20/∂h_0 is also the topic's bound w^20, and the part has the bound's mistake and ECF rule
    for seed in range(3):
        built = generators.build("vanishing-gradient", seed, 2)
        long = built.params | {"x": built.params["x"] + [1.0] * 16, "max_norm": 5.0}
        mine = authored("vanishing-gradient", long, ["gradient", "bound", "clipped"])
        assert mine.part("a_gradient").expected == mine.part("a_bound").expected == built.part("gradient_20").expected
        assert same(feedback(mine.part("a_bound")), feedback(built.part("gradient_20"))), seed
        assert same(feedback(mine.part("a_clipped"), refs={"gradient": "gradient_20"}), feedback(built.part("clipped")))
        assert [m.id for m in built.part("clipped").misconceptions] == ["unclipped"]


def test_an_authored_question_of_either_nonlinearity_gets_the_slope_mistakes_that_apply():
    relu = authored("vanishing-gradient", {"w": 1.5, "x": [1.0, 2.0], "nonlinearity": "relu"}, ["local_derivatives"])
    tanh = authored("vanishing-gradient", {"w": 0.5, "x": [1.0, 2.0], "nonlinearity": "tanh"}, ["local_derivatives"])
    assert [m.id for m in relu.part("a_local_derivatives").misconceptions] == ["slope-only"]      # ReLU': every factor w
    assert [m.id for m in tanh.part("a_local_derivatives").misconceptions] == ["weights-only", "slope-only"]
    np.testing.assert_allclose(tanh.part("a_local_derivatives").misconceptions[1].value,
                               [1 - np.tanh(1.0) ** 2, 1 - np.tanh(0.5 * np.tanh(1.0) + 2.0) ** 2], rtol=1e-12)


def test_topics_no_generator_asks_give_an_authored_question_their_mistakes():
    # teacher-forcing and rnn-unroll (asked whole by no generator): their tables' mistakes reach a question file
    tf = authored("teacher-forcing", {"tokens": [5, 7, 9], "bos": 1, "eos": 2}, ["decoder_input", "labels"])
    assert tf.part("a_decoder_input").expected == [1, 5, 7, 9]
    assert {m.id: m.value for m in tf.part("a_decoder_input").misconceptions} == {"no-shift": [5, 7, 9],
                                                                                 "left-shift": [7, 9, 2]}
    assert {m.id: m.value for m in tf.part("a_labels").misconceptions} == {"input-as-labels": [1, 5, 7, 9],
                                                                          "no-eos": [5, 7, 9]}
    seq = authored("rnn-unroll", {"x": [[1.0], [-0.5]], "h0": [0.5, -1.0], "weight_ih": [[0.5], [-1.0]],
                                  "weight_hh": [[1.0, -0.5], [0.5, 0.5]], "grad_output": [1.0, -2.0]},
                   ["hidden", "jacobian", "grad_h0"])
    assert [m.id for m in seq.part("a_jacobian").misconceptions] == ["weights-only", "columns-scaled", "transposed",
                                                                      "reversed-order"]
    assert [m.id for m in seq.part("a_grad_h0").misconceptions] == ["not-transposed"]
    assert (seq.part("a_jacobian").ecf_rule.op, seq.part("a_jacobian").ecf_rule.args["h_new"]) == \
        ("rnn-jacobian", {"$ref": "a_hidden"})
