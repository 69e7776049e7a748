"""An authored question with a built-in normalisation problem's own parameters gets the built-in parts'
known mistakes (ids and values) and ECF rules, one test per (generator, solve topic) pair (issue 37
item 1): layer-norm and batch-norm. Where a part asks the answer of another convention than the
problem's (PyTorch's ε placement, Keras's momentum), the authored question states that convention; such
a part and level 3's own output select the table's mistakes on their point, named in the generator."""
from __future__ import annotations

import pytest

from examprep import generators, solve
from tests.authoring.test_same_feedback_cnn import _authored, _close, _feedback, _renamed, _rule, _same

SEEDS = (0, 1, 2)


def _topic_params(topic: str, params: dict) -> dict:
    names = {p.name for p in solve.get_topic(topic).params}
    return {k: v for k, v in params.items() if k in names}


def _check(built, q, pairs: dict[str, str], asked: list[str], skip=()) -> int:
    """Each built-in part's feedback is the authored part's (less ``skip``) for the answer it asks; returns
    how many mistakes were compared."""
    n = 0
    for answer, pid in pairs.items():
        mine, own = q.part(f"p{asked.index(answer)}"), built.part(pid)
        assert _close(mine.expected, own.expected), pid
        got = [m for m in _feedback(mine) if m[0] not in skip]
        assert _same(got, _feedback(own)), (pid, got, _feedback(own))
        assert _renamed(_rule(mine), asked) == _rule(own), pid
        n += len(got)
    return n


@pytest.mark.parametrize("level", (1, 2, 3))
def test_layer_norm_generator_and_layer_norm(level):
    from examprep.generators.layer_norm import LECTURE_SKIPS, PYTORCH_SKIPS

    asked = ["mean", "var", "output"]
    for seed in SEEDS:
        for cf in (False, True):
            built = generators.build("layer-norm", seed, level, cf)
            params = _topic_params("layer-norm", built.params)
            q = _authored("layer-norm", params, asked)
            if level < 3:
                n = _check(built, q, {a: a for a in asked}, asked)
            else:
                n = _check(built, q, {"mean": "mean", "var": "var"}, asked)
                n += _check(built, q, {"output": "output_lecture"}, asked, skip=LECTURE_SKIPS)
                pt = _authored("layer-norm", params | {"eps_placement": "inside-sqrt"}, asked)
                n += _check(built, pt, {"output": "output_pytorch"}, asked, skip=PYTORCH_SKIPS)
            assert n, (seed, cf)


@pytest.mark.parametrize("level", (1, 2, 3))
def test_batch_norm_generator_and_batch_norm(level):
    from examprep.generators.batch_norm import KERAS_SKIPS

    for seed in SEEDS:
        for cf in (False, True):
            built = generators.build("batch-norm", seed, level, cf)
            params = _topic_params("batch-norm", built.params)
            if level < 3:
                asked = ["mean", "var", "output"] + (["running_mean_new", "running_var_new"] if level == 2 else [])
                n = _check(built, _authored("batch-norm", params, asked), {a: a for a in asked}, asked)
            else:
                # evaluation mode; then the same batch as a training step, in PyTorch and in Keras (momentum 0.99)
                n = _check(built, _authored("batch-norm", params, ["output"]), {"output": "output_eval"}, ["output"])
                train = params | {"training": True}
                n += _check(built, _authored("batch-norm", train, ["running_mean_new"]),
                            {"running_mean_new": "running_mean_new"}, ["running_mean_new"])
                keras = train | {"momentum": 0.99, "momentum_convention": "keras", "running_var_update": "biased"}
                asked = ["running_mean_new", "running_var_new"]
                n += _check(built, _authored("batch-norm", keras, asked),
                            {"running_mean_new": "running_mean_keras", "running_var_new": "running_var_keras"}, asked,
                            skip=KERAS_SKIPS)
            assert n, (seed, cf)
