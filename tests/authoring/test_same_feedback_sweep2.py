"""An authored question gets the feedback of a built-in problem (issue 37 item 1) for the generators of
the second coverage sweep (issue 38): a question file naming the built-in problem's own parameters
(`solve = "<topic>"`, values written as TOML, tables inline) gives each part that asks an answer of the
topic the same known mistakes (ids, explanations, values) and the same ECF rule. One test per
(generator, solve topic) pair; a part that asks a slice or a sum of answers (a channel of group norm's
output, one step of a trajectory) is not an answer of the topic and is not compared."""
from __future__ import annotations


from examprep import generators, solve
from examprep.authoring import build_question, parse_question

from tests.authoring.test_same_feedback_dense import feedback, question_text


def authored(topic: str, params: dict, answers: list[str]):
    return build_question(parse_question(question_text(topic, params, answers), "pair.toml"), 0)


def compare(name: str, topic_of, params_of=lambda b: b.params, seeds=range(3)) -> int:
    """Every part of ``name`` asking an answer of its topic (``topic_of(level)``) gets the authored
    question's feedback; returns how many mistakes were compared (the caller checks it is not 0)."""
    gen = generators.get(name)
    mistakes = 0
    for level in gen.levels:
        topic = topic_of(level)
        answers = solve.get_topic(topic).answers
        for cf in ((False, True) if gen.calculator_free else (False,)):
            for seed in seeds:
                built = generators.build(name, seed, level, cf)
                asked = [p.id for p in built.parts if p.id in answers]
                if not asked:
                    continue
                mine = authored(topic, params_of(built), asked)
                for pid in asked:
                    want = feedback(built.part(pid))
                    assert feedback(mine.part("a_" + pid), "a_") == want, f"{name} L{level} cf={cf} s{seed} {pid}"
                    mistakes += len(want[0])
    return mistakes


def test_lr_schedule_pair_gets_the_built_in_feedback():
    assert compare("lr-schedule", lambda level: "lr-schedule") > 0


def test_rnn_bptt_output_pair_gets_the_built_in_feedback():
    assert compare("rnn-bptt-output", lambda level: "rnn-bptt-output") > 0


def test_optimizer_state_and_the_optimizer_step_topic_give_the_same_feedback():
    assert compare("optimizer-state", lambda level: "optimizer-step") > 0


def test_network_graph_and_the_network_shapes_topic_give_the_same_feedback():
    assert compare("network-graph", lambda level: "network-shapes") > 0


def test_group_norm_and_instance_norm_generators_parts_give_the_topics_feedback():
    # levels 1–2 ask GroupNorm, level 3 InstanceNorm2d (no num_groups)
    assert compare("group-norm", lambda level: "instance-norm" if level == 3 else "group-norm") > 0


def test_minimize_trajectory_part_and_the_minimize_topic_give_the_same_feedback():
    # level 1 asks the trajectory x₁…x_T, the topic's params_per_step of its one parameter; levels 2–3
    # ask single steps of it (a slice: not an answer) from the same table
    compared = 0
    for cf in (False, True) if generators.get("minimize").calculator_free else (False,):
        for seed in range(3):
            built = generators.build("minimize", seed, 1, cf)
            mine = authored("minimize", built.params, ["params_per_step"])
            want = feedback(built.part("trajectory"))
            assert feedback(mine.part("a_params_per_step"), "a_") == want, (cf, seed)
            compared += len(want[0])
    assert compared > 0
