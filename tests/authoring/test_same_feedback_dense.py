"""An authored question gets the feedback of a built-in problem (issue 37 item 1), for the dense,
regression, residual and activation topics: a question file naming the built-in problem's own
parameters (fixed values, `solve = "<topic>"`) gives each part the same known mistakes (ids and explanations) and
the same ECF rule as the generator's part for that answer, the generator's statement-only slips (its
``SLIPS`` allow-list) aside. One test per (generator, solve topic) pair."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from examprep import generators, solve
from examprep.authoring import build_question, parse_question


def toml_value(v) -> str:
    """A parameter's value as TOML: JSON for numbers, strings and lists of them; inline tables for
    dicts (keys quoted: a state key or a layer's field may hold any character)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return json.dumps(v)


def question_text(topic: str, params: dict, answers: list[str]) -> str:
    """A question file fixing ``params`` (JSON values are TOML values here: numbers, strings, lists; None
    leaves a parameter at its default) and asking ``answers`` of ``topic``, each in a part ``a_<answer>``
    (a part id may not be a parameter's name: linear-regression's ``loss`` is both)."""
    lines = ["[question]", 'id = "pair"', 'title = "Pair"', f'solve = "{topic}"', 'text = "Solve it."', "",
             "[question.params]"]
    # a table is a draw: a fixed table (an optimizer's state, minimize's start) is written { value = … }
    lines += [f"{json.dumps(k)} = {toml_value({'value': v} if isinstance(v, dict) else v)}"
              for k, v in params.items() if v is not None]
    for a in answers:
        lines += ["", "[[question.part]]", f'id = "a_{a}"', f'answer = "{a}"', f'prompt = "{a}"']
    return "\n".join(lines) + "\n"


def value_text(value) -> object:
    """A mistake's value to 12 significant figures, flattened (a one-output network's number and an
    authored part's one-element vector read the same); text (a choice, an expression) as it is."""
    try:
        flat = np.ravel(np.asarray(value, dtype=float))
    except (TypeError, ValueError):
        return value
    return tuple(float(f"{v:.12g}") + 0.0 for v in flat)


def feedback(part, prefix: str = "", rename: dict | None = None) -> tuple[list[tuple[str, str, object]], dict | None]:
    """The part's mistakes (id, explanation, value) and its ECF rule, with its references to parts ``<prefix><answer>``
    written as references to ``<answer>`` (the built-in problem's part ids), and those ``rename`` names
    as the names it gives."""
    rule = part.ecf_rule.to_dict() if part.ecf_rule else None
    if rule is not None and prefix:
        rule = json.loads(json.dumps(rule).replace(f'{{"$ref": "{prefix}', '{"$ref": "'))
    for old, new in (rename or {}).items():
        rule = json.loads(json.dumps(rule).replace(f'{{"$ref": "{old}"}}', f'{{"$ref": "{new}"}}'))
    return [(m.id, m.explanation, value_text(m.value)) for m in part.misconceptions], rule


def assert_same_feedback(name: str, topic: str, slips: dict, levels=(1, 2, 3), seeds=range(3), free=(False,)) -> int:
    """Every part of generator ``name`` that asks an answer of ``topic`` gets, in an authored question
    with the problem's own parameters, the generator's mistakes (less its slips) and ECF rule.
    Returns how many parts were compared."""
    answers = solve.get_topic(topic).answers
    compared = mistakes = 0
    for level, seed, cf in ((lv, sd, cf) for lv in levels for sd in seeds for cf in free):
        built = generators.build(name, seed, level, cf)
        asked = [p.id for p in built.parts if p.id in answers]
        assert asked, f"{name} L{level} s{seed}: no part asks an answer of {topic}"
        authored = build_question(parse_question(question_text(topic, built.params, asked), "pair.toml"), 0)
        for pid in asked:
            ids, rule = feedback(built.part(pid))
            ids = [(i, why, v) for i, why, v in ids if (pid, i) not in slips]
            assert feedback(authored.part("a_" + pid), "a_") == (ids, rule), f"{name} L{level} cf={cf} s{seed} part {pid}"
            compared, mistakes = compared + 1, mistakes + len(ids)
    assert mistakes >= compared          # not vacuous: the parts have mistakes to compare
    return compared


def test_linear_regression_pair_gets_the_built_in_feedback():
    # level 3 asks the ½·MSE gradient and learning rate of an MSE problem: the topic's *_other_loss answers
    own = lambda b: b.params  # noqa: E731
    parts = {a: (a, own) for a in ("predictions", "loss", "grad_w", "grad_b", "w_new", "b_new")}
    parts |= {"grad_w_half": ("grad_w_other_loss", own), "lr_half": ("lr_other_loss", own)}
    assert not _slips("linear-regression")
    assert assert_parts_get_the_built_in_feedback("linear-regression", "linear-regression", parts,
                                                  free=(False, True)) == 2 * 3 * (6 + 6 + 8)


def test_a_question_with_other_parameters_does_not_pass_for_the_built_in_one():
    # the comparison is not vacuous: another bias changes the no-bias mistake away
    built = generators.build("linear-regression", 0, 1)
    params = dict(built.params, b=0.0)
    authored = build_question(parse_question(question_text("linear-regression", params, ["predictions"]), "p.toml"), 0)
    assert feedback(authored.part("a_predictions"), "a_") != feedback(built.part("predictions"))


def test_mlp_backprop_pair_gets_the_built_in_feedback():
    assert assert_same_feedback("mlp-backprop", "mlp-backprop", {}) == 3 * 3 * 13


def test_mlp_backprop_explains_with_the_problems_own_activation():
    # the no-activation and skip-activation explanations name the activation, one table entry each
    built = generators.build("mlp-backprop", 0, 3)
    act = built.params["activation"]
    authored = build_question(parse_question(question_text("mlp-backprop", built.params, ["hidden", "grad_hidden_pre"]),
                                             "m.toml"), 0)
    [why] = [m.explanation for m in authored.part("a_hidden").misconceptions if m.id == "no-activation"]
    assert why == f"The hidden layer applies {act} to the pre-activations."
    skip = [m.explanation for m in authored.part("a_grad_hidden_pre").misconceptions if m.id == "skip-activation"]
    assert skip == [f"Backwards through {act} multiply by its slope φ'(a) element-wise."]


def _activation(name: str):
    """The activation topic's parameters of one function at the problem's points x."""
    def params(built):
        return {"name": name, "x": built.params["x"]} | (
            {"negative_slope": built.params["negative_slope"]} if name == "leaky-relu" else {})
    return params


# the activation generator's parts: (answer of the activation topic, its parameters); the largest slopes
# (level 2) are the max_derivative of sigmoid and tanh
ACTIVATION_PARTS = {"sigmoid": ("output", _activation("sigmoid")), "sigmoid_derivative": ("derivative", _activation("sigmoid")),
                    "tanh": ("output", _activation("tanh")), "tanh_derivative": ("derivative", _activation("tanh")),
                    "relu": ("output", _activation("relu")), "relu_derivative": ("derivative", _activation("relu")),
                    "leaky_relu": ("output", _activation("leaky-relu")),
                    "leaky_relu_derivative": ("derivative", _activation("leaky-relu")),
                    "max_sigmoid_derivative": ("max_derivative", _activation("sigmoid")),
                    "max_tanh_derivative": ("max_derivative", _activation("tanh"))}


def test_activation_pair_gets_the_built_in_feedback():
    # level 3's chain rule through σ(σ(x₀)) keeps its two mistakes as slips; its stack bound is residual-stack's
    assert _slips("activation") == {"outer-only", "both-at-x0"}
    for level in (1, 2, 3):
        built = generators.build("activation", 0, level)
        assert {p.id for p in built.parts} <= set(ACTIVATION_PARTS) | {"chain_derivative", "stack_bound"}
    assert assert_parts_get_the_built_in_feedback("activation", "activation", ACTIVATION_PARTS,
                                                  free=(False, True)) == 2 * 3 * (4 + 6 + 2)


def test_activation_stack_bound_pair_gets_residual_stacks_feedback():
    # n sigmoid layers of weight 1 without skips: residual-stack's bound (1/4)^n, at the statement's x₀
    stack = lambda b: {"x": b.params["x0"], "weights": [1.0] * b.params["layers"], "activation": "sigmoid",  # noqa: E731
                       "skip": False}
    assert assert_parts_get_the_built_in_feedback("activation", "residual-stack", {"stack_bound": ("bound", stack)},
                                                  levels=(3,), free=(False, True)) == 2 * 3


def test_residual_pair_gets_the_built_in_feedback():
    # levels 1 and 2 ask the residual topic: branch, output, jacobian, grad_input (and grad_branch at level 2)
    assert assert_same_feedback("residual", "residual", {}, levels=(1, 2), free=(False, True)) == 2 * 3 * (4 + 5)


# residual level 3's parts: (skip, answer of the residual-stack topic)
STACK_PARTS = {"local_plain": (False, "local_derivatives"), "gradient_plain": (False, "gradient"),
               "local_residual": (True, "local_derivatives"), "gradient_residual": (True, "gradient")}


def test_residual_stack_pair_gets_the_built_in_feedback():
    # and the choice between the two stacks, whose wrong option is the generator's one slip
    assert _slips("residual") == {"wrong-stack"}
    compared = mistakes = 0
    for free in (False, True):
        for seed in range(3):
            built = generators.build("residual", seed, 3, free)
            assert {p.id for p in built.parts} == set(STACK_PARTS) | {"larger"}
            for skip in (False, True):
                asked = {answer: pid for pid, (sk, answer) in STACK_PARTS.items() if sk is skip}
                params = {k: built.params[k] for k in ("x", "weights", "activation")} | {"skip": skip}
                authored = build_question(parse_question(question_text("residual-stack", params, list(asked)), "s.toml"), 0)
                for answer, pid in asked.items():
                    want = feedback(built.part(pid), rename={v: k for k, v in asked.items()})
                    assert feedback(authored.part("a_" + answer), "a_") == want, f"free={free} s{seed} {pid}"
                    compared, mistakes = compared + 1, mistakes + len(want[0])
    assert compared == 2 * 3 * 4 and mistakes >= compared


def test_softmax_without_a_generator_declares_two_mistakes_an_authored_question_gets():
    # no generator asks the softmax topic: its table has mistakes of its own (issue 37: at least two)
    logits = [2.0, 0.0, -1.0]
    authored = build_question(parse_question(question_text("softmax", {"logits": logits}, ["probs"]), "s.toml"), 0)
    got = {m.id: m.value for m in authored.part("a_probs").misconceptions}
    e = [math.exp(z) for z in logits]
    assert set(got) == {"exp-only", "sigmoid-each"}
    assert got["exp-only"] == pytest.approx(e, rel=1e-12)
    assert got["sigmoid-each"] == pytest.approx([1 / (1 + math.exp(-z)) for z in logits], rel=1e-12)
    assert authored.part("a_probs").expected == pytest.approx([v / sum(e) for v in e], rel=1e-12)


def test_softmax_mistakes_are_not_offered_where_they_give_the_answer():
    # a single class: σ(z) is not 1 but e^z / e^z is, and exp-only gives e^z ≠ 1 unless z = 0
    authored = build_question(parse_question(question_text("softmax", {"logits": [0.0]}, ["probs"]), "s.toml"), 0)
    assert [m.id for m in authored.part("a_probs").misconceptions] == ["sigmoid-each"]


def test_mlp_regression_pair_gets_the_built_in_feedback():
    # level 1: hidden, output, loss, grad_output_pre, grad_w2, w2_new; level 2 adds grad_hidden_pre, grad_w1, w1_new;
    # level 3 grad_hidden too
    assert assert_same_feedback("mlp-regression", "mlp-regression", {}) == 3 * (6 + 9 + 10)


def _refs(value) -> list[str]:
    """The part ids an ECF rule's arguments refer to."""
    if isinstance(value, dict):
        return [value["$ref"]] if set(value) == {"$ref"} else [r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


def assert_parts_get_the_built_in_feedback(name: str, topic: str, parts: dict, levels=(1, 2, 3), free=(False,),
                                           slips=frozenset()) -> int:
    """As assert_same_feedback, for a generator whose parts ask ``topic``'s answers with other parameters
    than its own: ``parts`` maps a part id to (answer, params), ``params(built)`` the topic's parameters
    that part's answer is computed with (the built-in problem's own, some changed). Parts asking the
    same parameters share one authored question; an ECF rule's references to its other parts are
    compared as references to their answers. Returns how many parts were compared."""
    compared = mistakes = 0
    for level, seed, cf in ((lv, sd, cf) for lv in levels for sd in range(3) for cf in free):
        built = generators.build(name, seed, level, cf)
        groups: dict[str, tuple[dict, dict[str, str]]] = {}
        for pid, (answer, params) in parts.items():
            if any(p.id == pid for p in built.parts):
                args = params(built)
                groups.setdefault(json.dumps(args, sort_keys=True), (args, {}))[1][answer] = pid
        assert groups, f"{name} L{level} s{seed}: no part asks an answer of {topic}"
        for args, asked in groups.values():
            authored = build_question(parse_question(question_text(topic, args, list(asked)), "q.toml"), 0)
            for answer, pid in asked.items():
                ids, rule = feedback(built.part(pid), rename={v: k for k, v in asked.items()})
                if rule is not None and any(ref not in asked for ref in _refs(rule)):
                    rule = None     # it chains parts asked with other parameters: one question has none
                want = ([m for m in ids if m[0] not in slips], rule)
                assert feedback(authored.part("a_" + answer), "a_") == want, f"{name} L{level} cf={cf} s{seed} part {pid}"
                compared, mistakes = compared + 1, mistakes + len(want[0])
    assert mistakes >= compared          # not vacuous: the parts have mistakes to compare
    return compared


def test_dropout_pair_gets_the_built_in_feedback():
    # the evaluation parts ask the output in evaluation mode, of inverted and of the original dropout
    parts = {"scale": ("scale", lambda b: b.params), "output": ("output", lambda b: b.params),
             "grad_input": ("grad_input", lambda b: b.params),
             "output_eval": ("output", lambda b: b.params | {"training": False}),
             "output_original_eval": ("output", lambda b: b.params | {"training": False, "inverted": False})}
    assert assert_parts_get_the_built_in_feedback("dropout", "dropout", parts, free=(False, True)) == 2 * 3 * (2 + 3 + 5)


def _slips(name: str) -> frozenset[str]:
    from examprep.generators.slips import SLIPS

    return frozenset(SLIPS.get(name, ()))


def _optimizer(key: str | None, first: bool = False):
    """The optimizer-step parameters of one optimizer of a problem (its params hold one, or several by
    name), stopped after the first step where ``first``."""
    def params(built):
        p = built.params if key is None else built.params[key]
        return p | {"grads": p["grads"][0]} if first else p
    return params


def test_optimizer_step_pair_gets_the_built_in_feedback():
    parts = {"params_1": ("params_new", _optimizer(None, first=True)), "velocity": ("velocity", _optimizer(None)),
             "params_2": ("params_new", _optimizer(None)),
             "rmsprop_params": ("params_new", _optimizer("rmsprop")),
             "adam_params_1": ("params_new", _optimizer("adam", first=True)),
             "adam_exp_avg": ("exp_avg", _optimizer("adam")), "adam_params_2": ("params_new", _optimizer("adam")),
             "adamw_params": ("params_new", _optimizer("adamw")), "adam_l2_params": ("params_new", _optimizer("adam"))}
    slips = _slips("optimizer-step")
    assert slips == {"l2-is-decoupled"}            # on the choice part, no answer of the topic
    assert assert_parts_get_the_built_in_feedback("optimizer-step", "optimizer-step", parts, slips=slips) == 3 * (3 + 4 + 2)


def test_softmax_cross_entropy_pair_gets_the_built_in_feedback():
    # the cross-entropy topic's parameters (a calculator-free problem also keeps the logits as typed, ln a);
    # the level-1 derivation is answered as an expression: its three mistakes are the generator's slips
    own = lambda b: {k: b.params[k] for k in ("logits", "target", "reduction", "label_smoothing")}  # noqa: E731
    parts = {a: (a, own) for a in ("probs", "target_dist", "loss", "grad_logits")}
    assert _slips("softmax-cross-entropy") == {"y-minus-p", "p-only", "sigmoid-derivative"}
    assert assert_parts_get_the_built_in_feedback("softmax-cross-entropy", "cross-entropy", parts,
                                                  free=(False, True)) == 2 * 3 * (3 + 3 + 4)


def _dense_params(built) -> dict:
    """The dense topic's parameters of a dense-backward problem: at level 2 the target of L = ½‖y − t‖²
    (δ = y − t is a part), otherwise the given δ."""
    p = built.params
    return {k: p[k] for k in ("x", "weight", "bias")} | ({"target": p["target"]} if "target" in p
                                                         else {"grad_output": p["grad_output"]})


def test_dense_backward_pair_gets_the_built_in_feedback():
    parts = {pid: (answer, _dense_params) for pid, answer in (
        ("output", "output"), ("delta", "grad_output"), ("grad_weight", "grad_weight"), ("grad_bias", "grad_bias"),
        ("grad_input", "grad_input"))}
    assert assert_parts_get_the_built_in_feedback("dense-backward", "dense", parts, free=(False, True)) == 2 * 3 * (4 + 5 + 4)


def _stated_lr(built) -> float:
    """The learning rate level 3 of logistic-regression states in its lr_sum part (its params have none)."""
    import re

    return float(re.search(r"\\eta = ([0-9.]+)", built.part("lr_sum").prompt).group(1))


def test_logistic_regression_pair_gets_the_built_in_feedback():
    own = lambda b: b.params  # noqa: E731
    parts = {a: (a, own) for a in ("probs", "loss", "grad_w", "grad_b", "w_new", "b_new")}
    parts |= {"loss_sum": ("loss", lambda b: b.params | {"reduction": "sum"}),
              "grad_w_sum": ("grad_w", lambda b: b.params | {"reduction": "sum"}),
              "lr_sum": ("lr_other_reduction", lambda b: b.params | {"lr": _stated_lr(b)})}
    assert assert_parts_get_the_built_in_feedback("logistic-regression", "logistic-regression", parts,
                                                  free=(False, True)) == 2 * 3 * (4 + 6 + 7)
