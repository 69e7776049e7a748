"""Every torch-checkable engine topic against its independent torch reference (examprep.verify,
shared with `examprep verify`): torch modules, torch.nn.functional and autograd."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES, random_params  # noqa: E402
from tests.verify.helpers import assert_agrees  # noqa: E402

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


@pytest.mark.parametrize("topic", sorted(REFERENCES))
@given(seed=SEEDS)
def test_engine_matches_torch_on_random_instances(topic, seed):
    assert_agrees(topic, random_params(topic, np.random.default_rng(seed)))
