"""The second `?` hint shows the formula of the part's worked step, never the answer: a
derivation's result, a value such as "= 1/4", or a numeric expression that equals the answer.
"Gives the answer" is what the grader accepts as the answer (examprep.answers, through quiz.check)."""
import re

import pytest

from examprep import generators
from examprep.quiz import check, hint_text

UNSUB = {c: "_" + b for b, c in zip("0123456789aeijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉ₐₑᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ")}


def _accepted(part, text: str) -> bool:
    for candidate in {text, "".join(UNSUB.get(c, c) for c in text).replace("·", "*")}:
        try:
            if getattr(check(part, candidate.strip(), {}), "status", "") == "correct":
                return True
        except Exception:
            pass
    return False


def test_the_derivation_hint_stops_before_the_result():
    p = generators.build("softmax-cross-entropy", 3, 1)
    part = p.part("derivation")
    hint = hint_text(p, part, 2)
    assert hint.startswith("Formula: ") and "∂L/∂zᵢ = " in hint           # still a hint: the first step
    assert "pᵢ - yᵢ" not in hint and "-yᵢ + pᵢ" not in hint, hint


@pytest.mark.parametrize("name", sorted(n for n, g in generators.load_all().items() if not g.requires))
def test_no_second_hint_holds_a_side_the_grader_accepts_as_the_answer(name):
    g = generators.load_all()[name]
    for level in g.levels:
        for cf in ((False, True) if g.calculator_free else (False,)):
            for seed in (0, 1, 2):
                p = generators.build(name, seed, level, cf)
                for part in p.parts:
                    hint = hint_text(p, part, 2)
                    if not hint.startswith("Formula: "):
                        continue
                    for formula in hint[len("Formula: "):].split("   "):
                        for side in re.split(r"\s*(?:=|≤|≥|≈|<|>)\s*", formula):
                            assert not _accepted(part, side), (name, level, cf, seed, part.id, formula)
