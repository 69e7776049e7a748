"""The full sweep: several hundred seeds per generator and level (slow; `pytest -m slow`)."""
import pytest

from examprep.ecf import evaluate
from tests.generators.helpers import close_to, instances


@pytest.mark.slow
def test_full_sweep_builds_and_recipes_recompute():
    n = 0
    for p in instances(seeds=range(300)):
        answers = {q.id: q.expected for q in p.parts}
        for part in p.parts:
            for m in part.misconceptions:
                assert part.kind == "expression" or not close_to(part, m.value)
            if part.ecf_rule:
                assert close_to(part, evaluate(part.ecf_rule, answers))
        n += 1
    assert n >= 300 * 4 * 3
