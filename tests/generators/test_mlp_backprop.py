"""mlp-backprop: every part against torch."""
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import agree, instances  # noqa: E402


def test_mlp_backprop_every_part_matches_torch():
    for p in instances(["mlp-backprop"]):
        ref = REFERENCES["mlp-backprop"](p.params)
        for part in p.parts:
            agree(part.expected, ref[part.id], rtol=1e-11, atol=1e-13)
