"""The problem-source layer (examprep.sources): one build for a generator, a question file, a
concept question and a model problem, used by every command; each problem built once."""
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep import generators, sources
from examprep.authoring import load_question
from examprep.cli import app
from examprep.errors import ParamError
from examprep.sources.concepts import concept_problem, packaged_bank

runner = CliRunner()
QUESTION = str(Path(__file__).resolve().parents[2] / "examprep" / "bank" / "questions" / "softmax-by-hand.toml")


@pytest.fixture
def builds(monkeypatch):
    """Counts the problems built: generator name → builds, and "question" for a question file's
    draws (authoring's draft, which build_question calls once per problem)."""
    import examprep.authoring.build as authoring_build

    count: Counter = Counter()
    generator_build, draft = generators.build, authoring_build.draft

    def counted_build(name, *args, **kwargs):
        count[name] += 1
        return generator_build(name, *args, **kwargs)

    def counted_draft(*args, **kwargs):
        count["question"] += 1
        return draft(*args, **kwargs)

    monkeypatch.setattr(generators, "build", counted_build)
    monkeypatch.setattr(authoring_build, "draft", counted_draft)
    return count


def test_generate_builds_each_problem_once_for_generators_and_question_files_alike(builds):
    res = runner.invoke(app, ["generate", QUESTION, "softmax-cross-entropy", "--seed", "3", "--count", "2", "--json"])
    assert res.exit_code == 0, res.output
    problems = json.loads(res.output)
    assert [p["generator"] for p in problems] == ["question:softmax-by-hand"] * 2 + ["softmax-cross-entropy"] * 2
    assert [p["seed"] for p in problems] == [3, 4, 3, 4]
    assert builds == {"question": 2, "softmax-cross-entropy": 2}


def test_build_gives_each_kind_of_source_its_own_builders_problem():
    spec = load_question(QUESTION)
    bank = packaged_bank()
    concept = next(iter(bank.questions))
    assert sources.build(sources.Item(spec.generator, 1, question=spec), 5).to_dict() == \
        json.loads(runner.invoke(app, ["generate", QUESTION, "--seed", "5", "--json"]).output)[0]
    assert sources.build(sources.Item(f"concept:{concept}", 1, concept=concept), 5) == \
        concept_problem(bank.questions[concept], 5, bank.version)
    assert sources.build(sources.Item("conv2d", 2, calculator_free=True), 5) == \
        generators.mark_shapes(generators.build("conv2d", 5, 2, True))


def test_a_model_problem_without_its_checkpoint_is_refused_where_it_is_built():
    item = sources.reference("attention-from-model")
    assert sources.needs_model(item) and item.checkpoint is None
    with pytest.raises(ParamError, match="--checkpoint: attention-from-model needs one"):
        sources.build(item, 1)
    with pytest.raises(ParamError, match=r"needs a trained model \(--checkpoint\): the quiz cannot take one"):
        sources.require_models([item], "the quiz cannot take one")
    sources.require_models([sources.reference("conv2d")], "never raised: conv2d reads no model")


def test_a_recipe_with_a_model_problem_is_an_exam_the_quiz_refuses(tmp_path):
    from examprep.quiz.plan import exam_from_recipe

    recipe = tmp_path / "r.toml"
    recipe.write_text('[sheet]\ntitle = "T"\n[[problem]]\ntopic = "attention-from-model"\n', encoding="utf-8")
    with pytest.raises(ParamError, match="the quiz cannot take one; print the recipe with `examprep sheet --recipe "):
        exam_from_recipe(str(recipe), None, seed=1)
