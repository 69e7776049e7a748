"""attention: answers against torch."""
from pathlib import Path

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


FIXTURE = Path(__file__).parent / "fixtures" / "attention-v1-key.json"


def test_a_key_written_before_the_rename_still_grades():
    """attention version 1 named its QKᵀ/√d_k part `scores` (version 2: `scaled_scores`, the contract's name). A key
    stores the whole Problem, so a version-1 key (written by examprep at 4415adb) grades as it did."""
    from examprep.grading import grade_submission, self_test
    from examprep.keys import read_key

    key = read_key(FIXTURE)
    (p,) = key.problems
    assert (p.generator, p.version, [q.id for q in p.parts]) == ("attention", 1, ["scores", "weights", "output"])
    checks, issues = self_test(key)
    assert checks > 10 and issues == []
    Q, K = (np.asarray(p.params[k]) for k in ("query", "key"))
    unscaled = (Q @ K.T).tolist()                     # forgot 1/√d_k
    res = grade_submission([p], {"q1.scores": unscaled, "q1.weights": p.part("weights").expected})
    verdicts = {r.part_id: r.status for _, _, r in res.parts()}
    assert verdicts == {"scores": "misconception", "weights": "correct", "output": "blank"}


def test_the_scaled_part_is_named_as_the_contract_names_it():
    for p in instances(["attention"], range(6)):
        ids = [q.id for q in p.parts]
        if p.params["variant"] == "qkv":          # QKᵀ/√d_k: the contract's scaled_scores
            Q, K = (torch.tensor(p.params[k], dtype=torch.float64) for k in ("query", "key"))
            np.testing.assert_allclose(p.part("scaled_scores").expected, (Q @ K.T / Q.shape[1] ** 0.5).numpy(),
                                       rtol=1e-12)
            assert "scores" not in ids
        else:                                      # the lecture's unprojected e_ij, unscaled: the contract's scores
            assert ids[0] == "scores"


def test_draws_refused_before_the_engine_are_the_ones_its_scores_refuse():
    """attention refuses a draw with a row of equal allowed scores, or no nonzero score, on the integer
    scores QKᵀ before its engine call (issue 26): over the generator's draws (self: Q = K, d = 2, scale 1;
    qkv and cross: d = 4, scale 1/√d_k), exactly the draws the engine's scaled scores and mask refuse."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from examprep import engine
    from examprep.generators.attention import _flat_scores

    seen = set()

    @settings(max_examples=500, deadline=None)
    @given(st.sampled_from(["self", "qkv", "cross"]), st.sampled_from([2, 3]), st.booleans(), st.sampled_from([1, 2]),
           st.booleans(), st.data())
    def check(variant, n, causal, hi, even, data):
        d = 2 if variant == "self" else 4
        m = 3 if variant == "cross" else n
        causal = causal and variant != "cross"
        entries = st.integers(-hi, hi).map(float)
        Q = data.draw(st.lists(st.lists(entries, min_size=d, max_size=d), min_size=n, max_size=n))
        if even:
            Q = [[2 * v for v in row] for row in Q]
        K = Q if variant == "self" else data.draw(st.lists(st.lists(entries, min_size=d, max_size=d), min_size=m, max_size=m))
        t = engine.attention(Q, K, [[1.0, 0.0]] * m, causal=causal, scale=1.0 if variant == "self" else None)
        flat = any(len(row[ok]) >= 2 and np.ptp(row[ok]) == 0 for row, ok in zip(t.scaled_scores, t.allowed.astype(bool)))
        refused = bool(flat or not np.any(t.scores))
        assert _flat_scores(Q, K, causal) is refused
        seen.add(refused)

    check()
    assert seen == {True, False}
