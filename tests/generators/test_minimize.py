"""minimize: every answer from torch.optim stepping the same objective evaluated in torch (autograd for the
gradient), and the look-ahead Nesterov form written in torch; the worked solution shows the gradient."""
import pytest

pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances  # noqa: E402


def test_answers_match_torch_optim_on_the_objective():
    for p in instances(["minimize"], range(8)):
        a = answers(p)
        if p.difficulty == 1:
            agree(a["trajectory"], REFERENCES["minimize"](p.params)["params_per_step"][:, 0])
        elif p.difficulty == 2:
            ref = REFERENCES["minimize"](p.params)
            agree(a["params_1"], ref["params_per_step"][0])
            agree(a["params_2"], ref["params_new"])
        else:
            agree(a["pytorch_params"], REFERENCES["minimize"](p.params["pytorch"])["params_new"])
            agree(a["look_ahead_params"], REFERENCES["minimize"](p.params["look-ahead"])["params_new"])


def test_the_mistakes_a_trajectory_invites_are_named():
    ids = {m.id for p in instances(["minimize"], range(8)) for q in p.parts for m in q.misconceptions}
    assert {"gradient-at-start", "plain-momentum", "other-nesterov-form"} <= ids
