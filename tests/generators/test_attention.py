"""attention: answers against torch."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import instances  # noqa: E402


def test_attention_answers_match_torch():
    for p in instances(["attention"]):
        pr = {k: p.params[k] for k in ("query", "key", "value", "causal", "scale")}
        ref = REFERENCES["attention"](pr)
        np.testing.assert_allclose(p.part("weights").expected, ref["weights"], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(p.part("output").expected, ref["output"], rtol=1e-11, atol=1e-12)
