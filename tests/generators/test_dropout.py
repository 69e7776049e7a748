"""dropout: against torch.nn.Dropout with the problem's own mask (torch's kernel given the mask: the
inverted scale 1/(1 − p)), autograd for the gradient, and model.eval() for the evaluation output."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep import generators  # noqa: E402
from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, answers, instances, t64  # noqa: E402


def test_answers_match_torch_dropout_with_the_given_mask():
    for p in instances(["dropout"], range(10)):
        a = answers(p)
        ref = REFERENCES["dropout"](p.params)           # ATen's dropout kernel fed the problem's mask
        agree(a["output"], ref["output"])
        agree(a["grad_input"], ref["grad_input"])
        # and by autograd through x·m/(1 − p), the formula torch documents for nn.Dropout in training
        x = t64(p.params["x"], grad=True)
        y = x * t64(p.params["mask"]) / (1 - p.params["p"])
        (y * t64(p.params["grad_output"])).sum().backward()
        agree(a["grad_input"], x.grad)
        if "output_eval" in a:
            layer = torch.nn.Dropout(p.params["p"]).eval()
            agree(a["output_eval"], layer(t64(p.params["x"])))
        if "output_original_eval" in a:
            agree(a["output_original_eval"], np.asarray(p.params["x"]) * (1 - p.params["p"]))
            assert a["scale"] == pytest.approx(1 / (1 - p.params["p"]), rel=1e-15)


def test_the_notes_three_mistakes_are_named():
    ids = {m.id for p in instances(["dropout"], range(6)) for q in p.parts for m in q.misconceptions}
    assert {"no-scaling", "scaled-at-eval", "p-as-keep"} <= ids


def test_reading_p_as_the_keep_probability_divides_by_p():
    p = generators.build("dropout", 1, 3)
    q = p.params["p"]
    mis = {m.id: m.value for m in p.part("scale").misconceptions}
    assert mis["p-as-keep"] == pytest.approx(1 / q) and p.part("scale").expected == pytest.approx(1 / (1 - q))
