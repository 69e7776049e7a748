"""One name per exercise, by aliases: a generator's alias (its solve topic's name, or a name for what
it asks) builds the generator's own Problem, bit for bit, and a solve alias (the generator's name) is
the topic itself. No generator is renamed: its name keys the random stream, the golden files, keys,
recipes and review histories, so every path that takes a name maps an alias to it."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from examprep import generators, solve
from examprep.cli import app
from examprep.generators import ALIASES, all_generators, build
from examprep.solve.contract import ALIASES as SOLVE_ALIASES
from examprep.solve.contract import TOPICS

runner = CliRunner()
GRU = {"x": [1.0, -1.0], "h": [0.5, 0.0], "weight_ih": [[0.1, 0.2]] * 6, "weight_hh": [[0.3, -0.1]] * 6,
       "bias_ih": [0.0] * 6, "bias_hh": [0.1] * 6}


def test_every_alias_names_an_existing_generator_or_topic_and_shadows_none():
    assert set(ALIASES.values()) <= set(all_generators()) and not set(ALIASES) & set(all_generators())
    assert set(SOLVE_ALIASES.values()) <= set(TOPICS) and not set(SOLVE_ALIASES) & set(TOPICS)
    # the step/cell pairs are one exercise: the generator asks exactly its alias's solve topic
    for gen, topic in SOLVE_ALIASES.items():
        assert ALIASES[topic] == gen and generators.solve_topics_of(gen) == [topic]


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_an_alias_builds_its_generators_problem_bit_for_bit(alias):
    target = ALIASES[alias]
    level = all_generators()[target].levels[-1]
    p = build(alias, 5, level)
    assert p.generator == target and p.to_json() == build(target, 5, level).to_json()


def test_generate_takes_an_alias_and_prints_the_generators_name():
    ours, theirs = (runner.invoke(app, ["generate", name, "--seed", "3", "--json"]) for name in ("gru-cell", "gru-step"))
    assert ours.exit_code == 0 and ours.output == theirs.output
    assert json.loads(ours.output)[0]["generator"] == "gru-step"
    res = runner.invoke(app, ["generate", "GRU-Cell"])                      # in another case: the name meant
    assert res.exit_code == 2 and "did you mean gru-step?" in res.output


def test_solve_takes_the_generators_name_of_its_topic():
    a, b = solve.solve("gru-step", GRU), solve.solve("gru-cell", GRU)
    assert a.topic == "gru-cell" and solve.to_json(a) == solve.to_json(b)
    res = runner.invoke(app, ["solve", "--list", "multi-head"])
    assert res.exit_code == 0 and res.output.startswith("multi-head-shapes ")
    res = runner.invoke(app, ["solve", "receptive-feild"])                # a typo still says what is near
    assert res.exit_code == 2 and "did you mean receptive-field" in res.output


def test_a_recipe_and_the_quiz_store_the_generators_own_name():
    from examprep.quiz.plan import QuizOptions, drawable_topics
    from examprep.sources.recipes import parse_recipe

    recipe = parse_recipe('[sheet]\ntitle = "t"\n[[problem]]\ntopic = "cnn-sizes"\n[[problem]]\ntopic = "lstm-cell"\n',
                          "r.toml")
    assert [i.topic for i in recipe.items] == ["receptive-field", "lstm-step"]
    assert drawable_topics(QuizOptions(topics=["multi-head-shapes", "multi-head"]), all_generators()) == ["multi-head"]


def test_stats_and_review_find_a_generators_history_by_its_alias(tmp_path, monkeypatch):
    from examprep.history import Attempt, History
    from examprep.quiz import cards

    monkeypatch.setenv("EXAMPREP_HOME", str(tmp_path))
    with History() as h:
        h.record(Attempt(kind="problem", topic="gru-step", item="topic:gru-step", generator="gru-step", version=1,
                         part="h_new", answer="1", status="correct", score=1.0, max_score=1.0, seconds=5, seed=3,
                         difficulty=1))
    res = runner.invoke(app, ["stats", "--topic", "gru-cell", "--json"])
    assert res.exit_code == 0 and [t["topic"] for t in json.loads(res.output)["topics"]] == ["gru-step"]

    class Schedule:
        def cards(self):
            return [("topic:gru-step", "{}", 0.0, 1)]

    assert cards.resolve(Schedule(), "gru-cell", "--drop") == cards.resolve(Schedule(), "topic:gru-cell", "--drop") \
        == "topic:gru-step"
