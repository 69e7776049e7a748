"""The Problem framework on every registered generator: builds, solutions reproduce answers,
misconceptions are distinct, statements are hand-computable, JSON round-trips, recipes recompute.

Each check runs on every generator × level × calculator-free variant (one test each) and, inside
it, on every seed of a fixed set: SAMPLED (the first 5 of CI_SEEDS) by default, the other 15 of
CI_SEEDS under `-m slow` — one test per variant instead of one per seed, without pytest's own cost
per test repeated 23,000 times. A failure lists every seed that failed, not only the first."""
import functools
import json
import math

import numpy as np
import pytest

from examprep import generators
from examprep.document import Matrix
from examprep.problem import Problem
from examprep.ecf import evaluate
from tests.generators.helpers import (CI_SEEDS, close_to, eval_exact, instances, sig_digits_ok, solution_values,
                                      statement_numbers)


def _variants() -> list[tuple[str, int, bool]]:
    gens = generators.load_all()
    return [(name, level, cf) for name in sorted(gens) for level in gens[name].levels
            for cf in ((False, True) if gens[name].calculator_free else (False,))]


VARIANTS = _variants()
IDS = [f"{name}-L{level}-{'cf' if cf else 'std'}" for name, level, cf in VARIANTS]
SAMPLED = CI_SEEDS[:5]              # the default run: every variant on these seeds
MORE = CI_SEEDS[5:]                 # -m slow: the rest of CI_SEEDS


@functools.cache
def _problems(name: str, level: int, calculator_free: bool, seeds: range = SAMPLED) -> tuple[Problem, ...]:
    """The variant's problems on seeds, built once for all the checks below (built when a test
    first needs them, so that selecting other tests does not build them)."""
    return tuple(generators.build(name, seed, level, calculator_free) for seed in seeds)


def _params(calculator_free_only: bool = False) -> list:
    return [p for v, i in zip(VARIANTS, IDS) if v[2] or not calculator_free_only
            for p in (pytest.param((*v, SAMPLED), id=i),
                      pytest.param((*v, MORE), id=f"{i}-more-seeds", marks=pytest.mark.slow))]


def _on_every_seed(check, problems) -> None:
    """Run check on each problem; fail with every seed that failed and why."""
    failed = []
    for problem in problems:
        try:
            check(problem)
        except AssertionError as e:
            failed.append(f"seed {problem.seed}: {e}")
    assert not failed, f"{len(failed)} of {len(problems)} seeds failed:\n" + "\n".join(failed)


@pytest.fixture(params=_params())
def problems(request) -> tuple[Problem, ...]:
    return _problems(*request.param)


@pytest.fixture(params=_params(calculator_free_only=True))
def calculator_free_problems(request) -> tuple[Problem, ...]:
    return _problems(*request.param)


def test_the_default_and_the_slow_run_together_cover_every_variant_on_every_ci_seed():
    assert len(VARIANTS) == len(set(VARIANTS)) and len(CI_SEEDS) >= 20
    assert sorted([*SAMPLED, *MORE]) == list(CI_SEEDS) and len(SAMPLED) >= 5
    gens = generators.load_all()
    assert {n for n, _, _ in VARIANTS} == set(gens)
    assert {(n, lv) for n, lv, _ in VARIANTS} == {(n, lv) for n, g in gens.items() for lv in g.levels}
    assert [(p.generator, p.difficulty, p.calculator_free, p.seed) for v in VARIANTS[:2] for p in _problems(*v)] == \
        [(n, lv, cf, s) for n, lv, cf in VARIANTS[:2] for s in SAMPLED]


def test_at_least_the_first_four_generators_are_registered():
    assert {"softmax-cross-entropy", "receptive-field", "gru-step", "attention"} <= set(generators.load_all())


def test_problem_is_well_formed(problems):
    def check(problem):
        assert problem.parts and problem.statement and problem.solution
        ids = [p.id for p in problem.parts]
        assert len(ids) == len(set(ids))
        for part in problem.parts:
            assert part.kind in ("number", "integer", "vector", "matrix", "expression", "choice")
            assert part.points > 0 and part.minutes > 0
            if part.kind in ("vector", "matrix"):
                assert list(np.shape(part.expected)) == list(part.shape)
            if part.kind == "integer":
                assert isinstance(part.expected, int)
            for dep in part.depends_on:
                assert ids.index(dep) < ids.index(part.id), "a part depends only on earlier parts"

    _on_every_seed(check, problems)


def test_worked_solution_reproduces_every_answer(problems):
    def check(problem):
        for part in problem.parts:
            values = solution_values(problem, part.id)
            assert values, f"no solution step for part {part.id}"
            if part.kind in ("expression", "choice"):
                assert any(isinstance(v, str) and part.expected in v for v in values), \
                    f"{part.id}: {part.expected} not in {values}"
            else:
                assert any(close_to(part, v) for v in values), f"{part.id}: {part.expected} not in {values}"

    _on_every_seed(check, problems)


def test_misconceptions_differ_from_the_answer_beyond_tolerance(problems):
    def check(problem):
        for part in problem.parts:
            for m in part.misconceptions:
                assert m.explanation and m.id
                if part.kind == "expression":
                    assert m.value != part.expected
                else:
                    assert not close_to(part, m.value), f"{part.id}/{m.id} equals the answer"

    _on_every_seed(check, problems)


def test_each_generator_has_at_least_three_kinds_of_misconception():
    for name in generators.load_all():
        kinds = {m.id for p in instances([name], range(5)) for part in p.parts for m in part.misconceptions}
        assert len(kinds) >= 3, (name, kinds)


def test_statement_numbers_are_hand_computable(problems):
    def check(problem):
        for x in statement_numbers(problem):
            assert sig_digits_ok(x), f"{x} has more than 3 significant digits"
        for b in problem.statement:
            if isinstance(b, Matrix) and isinstance(b.values, list):
                texts = any(isinstance(v, str) for v in np.ravel(np.array(b.values, dtype=object)))
                flat = np.ravel(b.values) if not texts else []
                assert len(flat) <= 36

    _on_every_seed(check, problems)


def test_json_round_trip(problems):
    def check(problem):
        again = Problem.from_dict(json.loads(problem.to_json()))
        assert again == problem

    _on_every_seed(check, problems)


def test_dependency_recipes_recompute_the_stored_answers(problems):
    def check(problem):
        answers = {p.id: p.expected for p in problem.parts}
        for part in problem.parts:
            if part.ecf_rule is None:
                continue
            value = evaluate(part.ecf_rule, answers)
            assert close_to(part, value), f"{part.id}: recipe gives {value}, expected {part.expected}"

    _on_every_seed(check, problems)


def test_calculator_free_exact_answers_equal_the_numbers(calculator_free_problems):
    def check(problem):
        for part in problem.parts:
            if part.exact is None or part.kind == "expression" and part.variables:
                continue
            exact = part.exact
            flat_exact = list(np.ravel(np.array(exact, dtype=object))) if isinstance(exact, list) else [exact]
            flat_num = list(np.ravel(part.expected)) if isinstance(part.expected, list) else [part.expected]
            assert len(flat_exact) == len(flat_num)
            for e, v in zip(flat_exact, flat_num):
                assert math.isclose(eval_exact(e), v, rel_tol=1e-12, abs_tol=1e-12), (part.id, e, v)

    _on_every_seed(check, calculator_free_problems)


def test_determinism_within_a_process():
    for name in generators.load_all():
        assert generators.build(name, 123, 2) == generators.build(name, 123, 2)
        assert generators.build(name, 123, 2) != generators.build(name, 124, 2)


def test_a_problem_draws_the_figures_of_its_own_generator():
    rf = generators.build("receptive-field", 3, 2)
    figs = generators.figures(rf)
    assert len(figs) == 1 and figs[0].receptive_field == rf.part("receptive_field").expected
    assert generators.figures(generators.build("gru-step", 3, 2)) == []
    assert generators.figures(Problem.from_dict(rf.to_dict() | {"generator": "gone"})) == []


def test_one_part_label_rule_past_26_parts():
    """Problem.label is every output's part label (sheets, Markdown, Moodle, reports, the quiz)."""
    from examprep.problem import Problem

    assert [Problem.label(i) for i in (0, 1, 25, 26, 27, 51, 52, 701, 702)] == \
        ["a", "b", "z", "aa", "ab", "az", "ba", "zz", "aaa"]
    assert len({Problem.label(i) for i in range(1000)}) == 1000
    with pytest.raises(ValueError):
        Problem.label(-1)


def test_a_value_with_channels_becomes_one_matrix_per_leading_index():
    from examprep.generators.framework import value_blocks

    blocks = value_blocks("K", np.arange(16.0).reshape(2, 2, 2, 2))
    assert [b.name for b in blocks] == ["K[0, 0]", "K[0, 1]", "K[1, 0]", "K[1, 1]"]
    assert blocks[2].values == [[8.0, 9.0], [10.0, 11.0]]
    assert value_blocks("w", [[None, 1.0], [2.0, 3.0]])[0].values == [[None, 1.0], [2.0, 3.0]]   # −∞ stays None
    heads = value_blocks("weights", np.array([[[0.5, 0.5], [1.0, -np.inf]]]))
    assert [b.name for b in heads] == ["weights[0]"] and heads[0].values[1] == [1.0, None]
    assert len(value_blocks("shapes", [[1, 2, 3], [4]])) == 1       # ragged: shown as it is


def test_one_named_step_answers_several_parts():
    from examprep.generators.framework import step_per_part
    from examprep.solve.contract import Step

    st = Step("Layer", "f", {"output_shape": [2, 3, 3], "params": 10, "macs": 90})
    first, second = step_per_part(st, {"output_shape": "shape", "params": "count"})
    assert (first.part, second.part) == ("shape", "count") and second.title == "Layer: params"
    assert [b.name for b in first.blocks[1:]] == ["output_shape", "macs"] and first.blocks[0].latex == "f"
    per_channel = step_per_part(Step("Out", "g", {"output": np.ones((2, 2, 2))}), {"output[0]": "y0", "output[1]": "y1"},
                                titles={"output[1]": "Channel 1"})
    assert [(s.title, s.part, [b.name for b in s.blocks if hasattr(b, "name")]) for s in per_channel] == [
        ("Out", "y0", ["output[0]"]), ("Channel 1", "y1", ["output[1]"])]
