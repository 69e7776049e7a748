"""Issue 37 item 1, sequence topics: an authored question (`solve = "<topic>"`) with a built-in
problem's own parameters gets the same known mistakes and ECF rules on the parts both ask as the
built-in problem does — one test per (generator, solve topic) pair, each over every level, the
generator's allow-listed SLIPS aside."""
import json
from dataclasses import replace

import numpy as np
import pytest

from examprep import generators, solve
from examprep.authoring import build_question, parse_question
from examprep.generators.slips import SLIPS


def authored(topic: str, params: dict, answers: list[str]):
    """The Problem of a question file asking ``answers`` of ``topic`` with ``params`` fixed (those of a
    built-in problem that are the topic's: a generator's Problem may hold others for its other parts).

    A question file's values lie within ±10⁹ (docs/authoring.md), and scaling-law's N, D and C do not:
    the file holds a stand-in 1 for such a value and the parsed question the value itself."""
    names = {p.name for p in solve.get_topic(topic).params}
    given = {k: v for k, v in params.items() if v is not None and k in names}
    big = {k for k, v in given.items() if isinstance(v, float) and abs(v) > 1e9}
    lines = ["[question]", 'id = "pair"', f'solve = "{topic}"', 'text = "Same parameters."', "[question.params]"]
    lines += [f"{k} = {json.dumps(1.0 if k in big else v)}" for k, v in given.items()]
    for a in answers:
        lines += ["[[question.part]]", f'answer = "{a}"', f'prompt = "{a}?"']
    spec = parse_question("\n".join(lines) + "\n", "pair.toml")
    if big:
        spec = replace(spec, params=spec.params | {k: replace(spec.params[k], value=given[k]) for k in big})
    return build_question(spec, 0)


def feedback(part, slips=()):
    """A part's mistake ids (less the generator's allow-listed slips: mistake ids, as generators/slips.py lists
    them, or (part, mistake) pairs) and its ECF rule (a solve topic's arguments with its defaults filled in: a
    generator may leave out a parameter at its default)."""
    rule = part.ecf_rule
    args = None if rule is None else rule.args
    if rule is not None and rule.op.startswith("solve:"):
        args = solve.full_params(rule.op.removeprefix("solve:"), args)
    return ([m.id for m in part.misconceptions if (part.id, m.id) not in slips and m.id not in slips],
            None if rule is None else (rule.op, json.dumps(args, sort_keys=True), rule.output))


def assert_same_feedback(generator: str, topic: str, answers: list[str], levels, seeds=range(3), slips=(), also=(),
                         free=(False,)):
    """``also``: answers the authored question asks too, as the built-in problem does (an ECF rule refers to
    them), without comparing them (the built-in problem asks them of another topic)."""
    compared = 0
    for level, seed, cf in ((lv, sd, cf) for lv in levels for sd in seeds for cf in free):
        built = generators.build(generator, seed, level, cf)
        asked = [a for a in answers if any(p.id == a for p in built.parts)]
        mine = authored(topic, built.params, asked + [a for a in also if any(p.id == a for p in built.parts)])
        for a in asked:           # a slip's id aside on both sides: the table may declare it in other words
            want, got = feedback(built.part(a), slips), feedback(mine.part(a), slips)
            if want[1] is None and a in solve.get_topic(topic).shapes:
                # a shape part without an ECF rule: an authored one links to its topic's answer by a recipe
                # (docs/authoring.md), as the generator's `answers` table links the built-in one
                assert got[1][0] == f"solve:{topic}" and got[1][2] == a, (generator, level, seed, a)
                assert generators.get(generator).answers(built)[a] == (topic, a)
                got = (got[0], None)
            assert got == want, (generator, level, seed, a)
            compared += bool(want[0])
    assert compared, "no part with a known mistake compared"


def test_lora_generator_and_topic_give_the_same_mistakes_and_ecf():
    assert_same_feedback("lora", "lora", ["trainable_params", "full_params", "fraction"], levels=(1, 2, 3),
                         slips=SLIPS["lora"], free=(False, True))


def test_lora_generators_memory_parts_and_the_lora_memory_topic_give_the_same_mistakes_and_ecf():
    assert_same_feedback("lora", "lora-memory", ["bytes_per_param", "saved_mib"], levels=(3,),
                         also=["trainable_params", "full_params"], free=(False, True))


def test_an_authored_lora_memory_question_gets_the_optimizers_own_mistakes():
    # d = k = 64, r = 4, two matrices in bf16: full 2·4096, LoRA 2·4·128 = 1024 parameters
    p = authored("lora-memory", {"d": 64, "k": 64, "r": 4, "num_matrices": 2, "bytes_per_value": 2,
                                 "optimizer": "sgd-momentum"}, ["bytes_per_param", "saved_mib"])
    assert p.part("bytes_per_param").expected == 2 * 2                             # gradient + momentum buffer
    assert {m.id: m.value for m in p.part("bytes_per_param").misconceptions} == {"no-optimizer-states": 2}
    saved = (2 * 4096 - 1024) * 4
    assert p.part("saved_mib").expected == pytest.approx(saved / 2 ** 20)
    got = {m.id: m.value for m in p.part("saved_mib").misconceptions}
    assert got == pytest.approx({"decimal-megabytes": saved / 1e6, "lora-memory-not-saving": 1024 * 4 / 2 ** 20})
    assert p.part("saved_mib").ecf_rule.op == "solve:lora-memory"      # its counts not asked: the topic's own rule


def test_scaling_law_generator_and_topic_give_the_same_mistakes_and_ecf():
    assert_same_feedback("scaling-law", "scaling-law", ["params", "tokens", "compute"], levels=(1, 2, 3),
                         free=(False, True))


def test_scaling_law_generators_training_time_and_the_training_time_topic_give_the_same_mistakes_and_ecf():
    compared = 0
    for cf in (False, True):
        unit = "seconds" if cf else "days"
        for seed in range(3):
            built = generators.build("scaling-law", seed, 3, cf)
            mine = authored("training-time", built.params, ["compute", "throughput", unit])
            assert feedback(mine.part("throughput")) == feedback(built.part("throughput")), (cf, seed)
            want = feedback(built.part("time"))             # the time part asks the topic's days (seconds)
            assert feedback(mine.part(unit)) == want, (cf, seed)
            compared += len(want[0])
    assert compared


def test_an_authored_training_time_question_gets_each_mistakes_value():
    # C = 6·1e9·2e10 = 1.2e20 FLOPs on 8 accelerators of 1e14 FLOP/s at 0.5: 3e5 s
    p = authored("training-time", {"params": 1e9, "tokens": 2e10, "num_gpus": 8, "peak_flops": 1e14,
                                   "utilization": 0.5}, ["seconds", "days"])
    assert p.part("seconds").expected == pytest.approx(3e5)
    assert {m.id: m.value for m in p.part("seconds").misconceptions} == pytest.approx(
        {"ignored-utilization": 1.5e5, "forward-only": 1e5, "one-accelerator": 2.4e6})
    assert {m.id: m.value for m in p.part("days").misconceptions}["hours-not-days"] == pytest.approx(3e5 / 3600)
    assert p.part("days").ecf_rule.op == "solve:training-time"


def test_rope_generator_and_topic_give_the_same_mistakes_and_ecf():
    assert_same_feedback("rope", "rope", ["output"], levels=(1, 2))         # level 3 asks rope-score


def test_positional_encoding_generator_and_its_encoding_topic_give_the_same_mistakes_and_ecf():
    assert_same_feedback("positional-encoding", "positional-encoding", ["encoding"], levels=(1, 2))
    for seed in range(3):                     # level 2's second encoding, PE(p + k): the same topic at p + k
        built = generators.build("positional-encoding", seed, 2)
        pk = built.params["position"] + built.params["offset"]
        mine = authored("positional-encoding", {"position": pk, "d_model": built.params["d_model"]}, ["encoding"])
        assert feedback(mine.part("encoding")) == feedback(built.part("shifted")), seed


def test_positional_encoding_generators_rope_part_and_the_rope_topic_share_their_ecf_the_statement_its_slips():
    for seed in range(3):
        built = generators.build("positional-encoding", seed, 3)
        mine = authored("rope", built.params["rope"], ["output"])
        ids, rule = feedback(built.part("rope"), SLIPS["positional-encoding"])
        assert (ids, rule) == (["clockwise"], feedback(mine.part("output"))[1]), seed
        assert built.part("rope").misconceptions[0] == mine.part("output").misconceptions[0]      # value and words
        # the table's degrees: a mistake this statement does not list
        assert [m.id for m in mine.part("output").misconceptions] == ["clockwise", "degrees"]


def test_rope_generators_score_parts_and_the_rope_score_topic_give_the_same_mistakes_and_ecf():
    assert_same_feedback("rope", "rope-score", ["query_rotated", "key_rotated", "score"], levels=(3,),
                         slips=SLIPS["rope"])
    for seed in range(3):     # the shifted score: the topic at m + shift, n + shift; the built-in lists unrotated only
        built = generators.build("rope", seed, 3)
        shift = built.params["shift"]
        at = built.params | {"position_query": built.params["position_query"] + shift,
                             "position_key": built.params["position_key"] + shift}
        mine = authored("rope-score", at, ["score"]).part("score")
        ids, rule = feedback(built.part("shifted_score"))
        assert ids == ["unrotated"] and feedback(mine) == (["unrotated", "only-query-rotated"], rule), seed
        assert mine.misconceptions[0] == built.part("shifted_score").misconceptions[0]


def test_an_authored_rope_score_question_gets_each_mistakes_value():
    # d = 2, θ = 1: q = e₁ at m = 1, k = e₂ at n = 2 (rotation by φ: (a, b) → (a cos φ − b sin φ, a sin φ + b cos φ))
    p = authored("rope-score", {"query": [1.0, 0.0], "key": [0.0, 1.0], "position_query": 1, "position_key": 2},
                 ["query_rotated", "key_rotated", "score"])
    one = {a: {m.id: np.asarray(m.value) for m in p.part(a).misconceptions} for a in ("query_rotated", "key_rotated", "score")}
    assert np.allclose(one["query_rotated"]["clockwise"], [np.cos(1), -np.sin(1)])
    assert np.allclose(one["key_rotated"]["query-position"], [-np.sin(1), np.cos(1)])
    assert np.allclose(one["score"]["unrotated"], 0.0) and np.allclose(one["score"]["only-query-rotated"], np.sin(1))
    assert p.part("score").ecf_rule.op == "dot"


def test_positional_encoding_generator_and_the_relative_topic_give_the_same_mistakes_and_ecf():
    # level 2: PE(p), PE(p + k) and their dot product; the built-in asks the encodings of positional-encoding
    # (its ECF rules that topic's), the same mistakes
    for seed in range(3):
        built = generators.build("positional-encoding", seed, 2)
        mine = authored("positional-encoding-relative", built.params, ["encoding", "shifted", "dot"])
        assert feedback(mine.part("dot")) == feedback(built.part("dot")), seed
        for a in ("encoding", "shifted"):
            assert mine.part(a).misconceptions == built.part(a).misconceptions, (seed, a)
    # level 3: the longest wavelength, the last of the topic's wavelengths (offset 0), the statement's slips aside
    for seed in range(3):
        built = generators.build("positional-encoding", seed, 3)
        mine = authored("positional-encoding-relative", {"position": built.params["position"], "offset": 0,
                                                         "d_model": built.params["d_model"]}, ["wavelengths"])
        ids, _ = feedback(built.part("longest_wavelength"), SLIPS["positional-encoding"])
        assert ids == feedback(mine.part("wavelengths"))[0] == ["no-2pi"], seed
        assert mine.part("wavelengths").misconceptions[0].value[-1] == built.part("longest_wavelength").misconceptions[0].value


def test_an_authored_relative_question_gets_each_mistakes_value():
    p = authored("positional-encoding-relative", {"position": 1, "offset": 2, "d_model": 4}, ["dot", "wavelengths"])
    w = np.array([1.0, 0.01])                             # ω_i = 10000^(−2i/4)
    got = {m.id: m.value for m in p.part("dot").misconceptions}
    assert p.part("dot").expected == pytest.approx(np.cos(2 * w).sum())
    assert got == pytest.approx({"cos-of-sum": np.cos(4 * w).sum(), "sines-only": (np.sin(w) * np.sin(3 * w)).sum()})
    assert {m.id: m.value for m in p.part("wavelengths").misconceptions} == {"no-2pi": pytest.approx(list(1 / w))}
    assert p.part("dot").ecf_rule.op == "solve:positional-encoding-relative"          # the encodings not asked


def test_an_authored_rope_question_of_rows_gets_each_rows_clockwise_and_degrees_values():
    p = authored("rope", {"x": [[1.0, 0.0], [0.0, 1.0]], "position": [1, 2]}, ["output"])
    got = {m.id: np.asarray(m.value) for m in p.part("output").misconceptions}
    # independent: rotating (a, b) by −m rad, and by m degrees
    want_cw = [[np.cos(1), -np.sin(1)], [np.sin(2), np.cos(2)]]
    want_deg = [[np.cos(np.pi / 180), np.sin(np.pi / 180)], [-np.sin(np.pi / 90), np.cos(np.pi / 90)]]
    assert np.allclose(got["clockwise"], want_cw) and np.allclose(got["degrees"], want_deg)
    assert "rotate-half" not in got                                            # d = 2: one pair either way


def test_an_authored_positional_encoding_of_several_positions_gets_each_rows_swapped_pairs():
    p = authored("positional-encoding", {"position": [1, 2], "d_model": 4}, ["encoding"])
    enc = np.asarray(p.part("encoding").expected)
    got = {m.id: np.asarray(m.value) for m in p.part("encoding").misconceptions}
    assert got["swapped-sin-cos"].shape == (2, 4) and np.allclose(got["swapped-sin-cos"], enc[:, [1, 0, 3, 2]])
    assert np.allclose(got["concatenated"], enc[:, [0, 2, 1, 3]])
    assert np.allclose(got["no-frequencies"], [[np.sin(1), np.cos(1)] * 2, [np.sin(2), np.cos(2)] * 2])




@pytest.mark.parametrize("line", ['nonlinearity = "sigmoid"', "w = [1, 2]"])
def test_a_bad_parameter_of_an_authored_question_is_refused_in_one_line_not_given_mistakes(line):
    from examprep.authoring import QuestionError

    params = {"w = 0.5": line} if line.startswith("w =") else {"w = 0.5": "w = 0.5\n" + line}
    text = '[question]\nid = "bad"\nsolve = "vanishing-gradient"\n[question.params]\nx = [1.0, 2.0]\nw = 0.5\n'
    text = text.replace("w = 0.5", params["w = 0.5"]) + '[[question.part]]\nanswer = "gradient"\nprompt = "g?"\n'
    with pytest.raises(QuestionError) as err:
        build_question(parse_question(text, "bad.toml"), 0)
    assert "bad.toml" in str(err.value) and "\n" not in str(err.value)


def test_scaling_law_mistakes_of_the_compute_optimal_split_only_where_the_budget_alone_is_given():
    budget = authored("scaling-law", {"compute": 1.2e20}, ["params", "tokens"])
    assert [m.id for m in budget.part("params").misconceptions] == ["forgot-tokens-per-param", "forward-only",
                                                                     "no-square-root"]
    forward = next(m for m in budget.part("params").misconceptions if m.id == "forward-only")
    assert forward.value == pytest.approx((1.2e20 / 40) ** 0.5)                  # C = 2N·20N
    assert [m.id for m in budget.part("tokens").misconceptions] == ["divided"]
    assert budget.part("tokens").ecf_rule.op == "scale"
    # N and C given: D = C/(6N), not 20N — no "divided"
    given = authored("scaling-law", {"params": 1000.0, "compute": 1.2e8}, ["tokens"])
    assert given.part("tokens").expected == pytest.approx(1.2e8 / 6000)
    assert [m.id for m in given.part("tokens").misconceptions] == []


def test_an_authored_scaling_law_question_giving_all_three_is_refused_in_one_line():
    from examprep.authoring import QuestionError

    text = ('[question]\nid = "bad"\nsolve = "scaling-law"\n[question.params]\nparams = 1e9\ntokens = 2e10\n'
            'compute = 1.2e20\n[[question.part]]\nanswer = "compute"\nprompt = "C?"\n')
    with pytest.raises(QuestionError) as err:
        build_question(parse_question(text, "bad.toml"), 0)
    assert "bad.toml" in str(err.value) and "\n" not in str(err.value)
