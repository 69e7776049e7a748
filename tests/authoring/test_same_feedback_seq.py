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
    """A part's mistake ids (less the generator's allow-listed (part, mistake) slips) and its ECF rule (a
    solve topic's arguments with its defaults filled in: a generator may leave out a parameter at its default)."""
    rule = part.ecf_rule
    args = None if rule is None else rule.args
    if rule is not None and rule.op.startswith("solve:"):
        args = solve.full_params(rule.op.removeprefix("solve:"), args)
    return ([m.id for m in part.misconceptions if (part.id, m.id) not in slips],
            None if rule is None else (rule.op, json.dumps(args, sort_keys=True), rule.output))


def assert_same_feedback(generator: str, topic: str, answers: list[str], levels, seeds=range(3), slips=()):
    compared = 0
    for level in levels:
        for seed in seeds:
            built = generators.build(generator, seed, level)
            asked = [a for a in answers if any(p.id == a for p in built.parts)]
            mine = authored(topic, built.params, asked)
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
    from examprep.generators.lora import SLIPS

    assert_same_feedback("lora", "lora", ["trainable_params", "full_params", "fraction"], levels=(1, 2, 3), slips=SLIPS)


def test_scaling_law_generator_and_topic_give_the_same_mistakes_and_ecf():
    assert_same_feedback("scaling-law", "scaling-law", ["params", "tokens", "compute"], levels=(1, 2, 3))


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
    from examprep.generators.positional_encoding import SLIPS

    for seed in range(3):
        built = generators.build("positional-encoding", seed, 3)
        mine = authored("rope", built.params["rope"], ["output"])
        ids, rule = feedback(built.part("rope"), SLIPS)
        assert (ids, rule) == ([], feedback(mine.part("output"))[1]), seed
        # the table's clockwise, named in this statement's own words; its degrees: a mistake this statement does not list
        assert [m.id for m in mine.part("output").misconceptions] == ["clockwise", "degrees"]


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
