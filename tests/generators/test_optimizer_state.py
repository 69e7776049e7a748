"""optimizer-state: every level's answers equal torch.optim's, the printed state loaded into the optimizer
(examprep.verify's reference), and the statement prints what the update needs (step for the Adam family)."""
import numpy as np
import pytest

from examprep import generators

pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402


@pytest.mark.parametrize("level", [1, 2, 3])
def test_answers_are_torch_optims_from_the_printed_state(level):
    for seed in range(4):
        p = generators.build("optimizer-state", seed, level, False)
        want = REFERENCES["optimizer-step"](p.params)
        for part in p.parts:
            np.testing.assert_allclose(np.asarray(part.expected, dtype=float), want[part.id], rtol=1e-9,
                                       err_msg=f"L{level} s{seed} {part.id}")
        text = str(p.to_dict()["statement"])
        if "step" in p.params["state"]:
            assert f"step = {p.params['state']['step']}" in text
