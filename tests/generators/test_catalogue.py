"""The generators as a set: registered with their levels, listed by `examprep topics`, shown by
`examprep generate` at every level, calculator-free statements and exact strings."""
import math
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tests.generators.helpers import eval_exact, instances  # noqa: E402


def test_calculator_free_variants_use_no_decimals_in_statements():
    """Calculator-free problems state integers or ln/exact strings only (no 0.5-style decimals)."""
    from examprep.document import Matrix

    for name in ("dense-backward", "residual", "conv2d", "max-pool", "rnn-step"):
        for p in instances([name], range(5)):
            if not p.calculator_free:
                continue
            for b in p.statement:
                if isinstance(b, Matrix):
                    # integers; the residual stack's weights are quarters and halves (exact products)
                    unit = 4 if (name == "residual" and p.difficulty == 3) else 1
                    for v in np.ravel(np.array(b.values, dtype=object)):
                        assert isinstance(v, str) or float(v) * unit == math.floor(float(v) * unit), (name, b.name, v)


BACKPROP_AND_RNN = ["activation", "dense-backward", "mlp-backprop", "linear-regression", "residual", "conv2d", "max-pool",
        "rnn-step", "vanishing-gradient", "lstm-step"]


@pytest.mark.parametrize("topic", BACKPROP_AND_RNN)
def test_generate_shows_a_problem_and_its_worked_solution_at_every_level(topic):
    from typer.testing import CliRunner

    from examprep.cli import app

    runner = CliRunner()
    for level in (1, 2, 3):
        res = runner.invoke(app, ["generate", topic, "--seed", "7", "-d", str(level), "--solution", "--no-color"])
        assert res.exit_code == 0, res.output
        assert f"{topic} · level {level} · seed 7" in res.output
        assert "worked solution" in res.output and "answers" in res.output and "(a)" in res.output
        assert "Traceback" not in res.output and "\\frac" not in res.output     # LaTeX rendered for the terminal
    md = runner.invoke(app, ["generate", topic, "--seed", "7", "--markdown", "--solution"])
    assert md.exit_code == 0 and "### Worked solution" in md.output and "$$" in md.output


def test_topics_lists_the_backprop_and_rnn_generators():
    from typer.testing import CliRunner

    from examprep.cli import app

    out = CliRunner().invoke(app, ["topics", "--json"]).output
    import json

    listed = {d["topic"]: d for d in json.loads(out)}
    assert set(BACKPROP_AND_RNN) <= set(listed)
    assert not listed["mlp-backprop"]["calculator_free"] and listed["conv2d"]["calculator_free"]


def test_calculator_free_request_on_a_topic_without_one_is_a_usage_error():
    from typer.testing import CliRunner

    from examprep.cli import app

    res = CliRunner().invoke(app, ["generate", "vanishing-gradient", "--calculator-free"])
    assert res.exit_code == 2 and "no calculator-free variant" in res.output


TRANSFORMER_GENERATORS = ["param-count", "layer-norm", "positional-encoding", "rope", "attention-scores", "multi-head",
                    "cross-attention", "causal-mask", "lora", "scaling-law"]


SEEDS = range(10)


def test_all_ten_generators_are_registered_with_three_levels():
    from examprep import generators

    gens = generators.load_all()
    for name in TRANSFORMER_GENERATORS:
        assert gens[name].levels == (1, 2, 3), name
    assert not gens["rope"].calculator_free and not gens["positional-encoding"].calculator_free


def test_calculator_free_exact_strings_of_the_transformer_generators_parse_to_the_numbers():
    checked = 0
    for p in instances([g for g in TRANSFORMER_GENERATORS if g not in ("rope", "positional-encoding")], range(5)):
        if not p.calculator_free:
            continue
        for part in p.parts:
            if isinstance(part.exact, str):
                assert eval_exact(part.exact) == pytest.approx(float(part.expected), rel=1e-12)
                checked += 1
    assert checked > 20
