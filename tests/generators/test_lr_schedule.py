"""lr-schedule: every answer from torch.optim.lr_scheduler itself (StepLR, MultiStepLR, ExponentialLR,
CosineAnnealingLR; LambdaLR with Hugging Face's warm-up + cosine factor) stepping torch.optim.SGD."""
import pytest

pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances  # noqa: E402


def test_answers_match_torchs_schedulers():
    for p in instances(["lr-schedule"], range(8)):
        a, ref = answers(p), REFERENCES["lr-schedule"](p.params)
        agree(a["lrs"], ref["lrs"])
        if "last_lr" in a:
            agree(a["last_lr"], ref["last_lr"])
        if "params_new" in a:
            agree(a["params_new"], ref["params_new"])


def test_the_schedulers_own_mistakes_are_named():
    ids = {m.id for p in instances(["lr-schedule"], range(8)) for q in p.parts for m in q.misconceptions}
    assert {"scheduler-before-step", "milestone-late", "decay-every-step", "last-step-rate", "constant-lr"} <= ids
