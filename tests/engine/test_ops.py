"""The generic arithmetic of ECF rules (engine/ops.py) against direct formulas, and bad student values."""
import math
import numpy as np
import pytest

from examprep.engine import norm, ops
from examprep.errors import ParamError


def test_recipe_ops_against_direct_formulas():
    torch = pytest.importorskip("torch")
    assert ops.divide(3, 4) == 0.75 and ops.dot([1, 2], [3, -1]) == 1.0
    np.testing.assert_array_equal(ops.matmul_bt([[1, 2]], [[3, 4], [5, 6]]), [[11, 17]])
    assert ops.int_product([2, 3, 4]) == 24 and isinstance(ops.int_product([2, 3]), int)
    assert ops.total([1, 2, 3.5]) == 6.5 and ops.difference_times(10, 4, 3, 2) == 9.0
    x = np.array([[1.0, 2.0, 4.0, 5.0], [0.0, 1.0, 1.0, 2.0]])
    mean, var = x.mean(axis=1), x.var(axis=1)
    want = torch.nn.functional.layer_norm(torch.tensor(x), (4,), eps=0.1).numpy()
    np.testing.assert_allclose(norm.layer_norm_from_stats(x, mean, var, eps=0.1, eps_placement="inside-sqrt"), want, rtol=1e-12)
    np.testing.assert_allclose(norm.layer_norm_from_stats(x[0], mean[0], var[0], eps=0.0),
                               (x[0] - 3) / math.sqrt(2.5), rtol=1e-12)


def test_recipe_ops_reject_bad_student_values():
    with pytest.raises(ParamError):
        ops.divide(1, 0)
    with pytest.raises(ParamError):
        ops.dot([1, 2], [1, 2, 3])
    with pytest.raises(ParamError):
        ops.int_product([2, 2.5])
