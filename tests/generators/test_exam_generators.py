"""The ten generators of the questions real exams ask (issue 19), as a set: registered with three levels,
shown by `examprep generate` at every level in the terminal and in Markdown with every formula rendered
(no raw LaTeX command left in the terminal), and no value with three axes reaching a renderer."""
import re

import pytest
from typer.testing import CliRunner

from examprep import generators
from examprep.cli import app
from examprep.document import Matrix

EXAM = ["network-shapes", "conv2d-channels", "avg-pool", "batch-norm", "mlp-regression", "logistic-regression",
        "self-attention", "rnn-bptt", "optimizer-step", "dropout"]
NO_CALCULATOR_FREE = {"mlp-regression", "rnn-bptt", "optimizer-step"}    # sigmoids, tanh and square roots


def test_the_ten_are_registered_with_three_levels():
    gens = generators.load_all()
    for name in EXAM:
        assert gens[name].levels == (1, 2, 3), name
        assert gens[name].calculator_free == (name not in NO_CALCULATOR_FREE), name


@pytest.mark.parametrize("topic", EXAM)
def test_generate_renders_every_level_with_its_solution(topic):
    runner = CliRunner()
    for level in (1, 2, 3):
        res = runner.invoke(app, ["generate", topic, "--seed", "11", "-d", str(level), "--solution", "--no-color"],
                            env={"COLUMNS": "80"})
        assert res.exit_code == 0, res.output
        assert f"{topic} · level {level} · seed 11" in res.output and "worked solution" in res.output
        assert not re.search(r"\\[A-Za-z]+", res.output), re.search(r".{30}\\[A-Za-z]+.{10}", res.output)
        md = runner.invoke(app, ["generate", topic, "--seed", "11", "-d", str(level), "--markdown", "--solution"])
        assert md.exit_code == 0 and "### Worked solution" in md.output, md.output


@pytest.mark.parametrize("topic", EXAM)
def test_no_value_with_three_axes_reaches_a_renderer(topic):
    gen = generators.load_all()[topic]
    for level in (1, 2, 3):
        for cf in (False, True) if gen.calculator_free else (False,):
            p = generators.build(topic, 3, level, cf)
            blocks = p.statement + [b for s in p.solution for b in s.blocks]
            for b in blocks:
                if isinstance(b, Matrix) and isinstance(b.values, list) and b.values and isinstance(b.values[0], list):
                    assert not any(isinstance(v, list) for v in b.values[0]), (topic, level, b.name)
            for part in p.parts:
                assert part.kind not in ("vector", "matrix") or len(part.shape) <= 2
