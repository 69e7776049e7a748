"""residual: blocks against torch autograd; a dead ReLU still passes the gradient."""
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances  # noqa: E402


def test_residual_blocks_match_torch_autograd():
    for p in instances(["residual"]):
        a = answers(p)
        if p.difficulty < 3:
            ref = REFERENCES["residual"](p.params)
            for name in ("branch", "output", "jacobian", "grad_input") + (("grad_branch",) if "grad_branch" in a else ()):
                agree(a[name], ref[name])
        else:
            for skip, suffix in ((False, "plain"), (True, "residual")):
                ref = REFERENCES["residual-stack"](p.params | {"skip": skip})
                agree(a[f"local_{suffix}"], ref["local_derivatives"])
                agree(a[f"gradient_{suffix}"], ref["gradient"])


def test_residual_dead_relu_still_passes_the_gradient():
    dead = [p for p in instances(["residual"]) if p.difficulty == 1 and p.params["w1"] * p.params["x"] + p.params["b1"][0] < 0]
    assert dead, "level 1 should sometimes draw a dead branch"
    for p in dead:
        assert p.part("grad_input").expected == p.params["grad_output"]
