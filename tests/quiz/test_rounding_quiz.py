"""The quiz docks rounding too coarsely once per chain and per figures, as `examprep grade` does."""
from __future__ import annotations

from typer.testing import CliRunner

from examprep import generators
from examprep.cli import app
from examprep.history import History


def test_the_quiz_carries_a_rounded_chain_forward_after_docking_it_once_and_docks_a_coarser_rounding():
    p = generators.build("softmax-cross-entropy", 4, 1)                # what the quiz draws on an empty history
    assert round(p.part("probs").expected[0], 4) == 0.2447 and round(p.part("loss").expected, 4) == 0.4076
    # probs and loss at 2 figures (docked once, at probs), then the gradient at 1 figure: docked again
    typed = ["[0.24, 0.090, 0.67]", "0.41", "[0.2, 0.09, -0.3]", "p_i - y_i", ""]
    res = CliRunner().invoke(app, ["quiz", "--topic", "softmax-cross-entropy", "--seed", "4", "--count", "1"],
                             input="".join(f"{line}\n" for line in typed), env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "entries 1, 3 rounded to 2 significant figures; give 3" in said
    assert "entries 1, 3 rounded to 1 significant figure; give 3" in said
    with History() as h:
        assert [(a.part, a.status) for a in h.attempts()] == [("probs", "wrong"), ("loss", "ecf"), ("grad_logits", "wrong"),
                                                              ("derivation", "correct")]
