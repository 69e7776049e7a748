"""rnn-bptt-output: every part's answer against torch autograd (verify's reference: torch.nn.functional's
losses on the unrolled RNN, one graph from the loss to every weight), at every level."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances  # noqa: E402


def test_answers_match_the_torch_reference():
    seen = set()
    for p in instances(["rnn-bptt-output"], range(4)):
        a = answers(p)
        ref = REFERENCES["rnn-bptt-output"](p.params)
        agree(a["loss"], ref["loss"])
        agree(np.ravel(a["grad_w_y"]), np.ravel(ref["grad_w_y"]))
        agree(a["grad_h1"], np.ravel(ref["grad_h"])[0])
        agree(a["grad_weight_hh"], np.ravel(ref["grad_weight_hh"])[0])
        seen.add(p.params["loss"])
    assert seen == {"half-sse", "cross-entropy"}
