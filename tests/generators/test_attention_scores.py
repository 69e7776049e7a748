"""attention-scores: against torch."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import close, instances  # noqa: E402

SEEDS = range(10)


def test_attention_scores_match_torch():
    for p in instances(["attention-scores"], SEEDS):
        s, H = torch.tensor(p.params["query"], dtype=torch.float64), torch.tensor(p.params["key"], dtype=torch.float64)
        close(p.part("dot_scores").expected, (H @ s).numpy())
        for part in p.parts:
            if part.id == "bilinear_scores":
                W = torch.tensor(np.asarray(p.params["weight"]), dtype=torch.float64)
                close(part.expected, (s @ W @ H.T).numpy())
            if part.id == "additive_scores":         # vᵀ tanh(W₁h + W₂s), written out in torch
                W1, W2 = (torch.tensor(p.params[k], dtype=torch.float64) for k in ("w_key", "w_query"))
                v = torch.tensor(p.params["v"], dtype=torch.float64)
                close(part.expected, (torch.tanh(H @ W1.T + W2 @ s) @ v).numpy())
        ref = REFERENCES["attention"]({k: p.params[k] for k in p.params if k != "score"} | {"score": p.params["score"]})
        close(p.part("weights").expected, ref["weights"])
        close(p.part("context").expected, ref["output"])


SMALL = st.integers(-2, 2).map(float)


@given(st.lists(SMALL, min_size=2, max_size=2), st.lists(st.lists(SMALL, min_size=2, max_size=2), min_size=3, max_size=3),
       st.lists(st.lists(SMALL, min_size=2, max_size=2), min_size=2, max_size=2))
def test_spread_checked_before_the_engine_is_the_engines(s, H, W):
    """attention-scores checks its integer scores' spread before the engine call (issue 26): the plain
    Python dot and bilinear scores are the engine's to the bit, so the same draws are refused."""
    from examprep import engine
    import numpy as np

    from examprep.generators.attention_scores import _check_spread, _scores
    from examprep.generators.framework import Degenerate

    def engine_rule(scores):               # the rule as the engine-side check stated it, with numpy
        if not 0.5 <= np.ptp(scores) <= 4:
            raise Degenerate("spread")

    for mine, theirs in ((_scores(s, None, H), engine.attention(s, H, H, score="dot").scores),
                         (_scores(s, W, H), engine.attention(s, H, H, score="bilinear", weight=W).scores)):
        assert mine == theirs.tolist()
        outcomes = []
        for check, scores in ((_check_spread, mine), (engine_rule, theirs)):
            try:
                check(scores)
                outcomes.append(True)
            except Degenerate:
                outcomes.append(False)
        assert outcomes[0] == outcomes[1]


def test_additive_scores_by_hand_follow_the_formula_for_each_nonlinearity():
    """The additive form's no-tanh and sigmoid mistakes (attention's table, solve/attention.py) are
    vᵀ φ(W₁h_j + W₂s) with another φ, written out here in numpy, beside the right tanh scores."""
    from examprep import solve

    s, H = np.array([1.0, -0.5]), np.array([[0.5, 1.0], [-1.0, 0.5], [1.0, 1.0]])
    W1, W2, v = np.array([[1.0, -0.5], [0.5, 0.5]]), np.array([[0.5, 1.0], [-1.0, 0.5]]), np.array([1.0, -2.0])
    known = solve.mistakes("attention", {"query": s.tolist(), "key": H.tolist(), "value": H.tolist(), "score": "additive",
                                         "w_query": W2.tolist(), "w_key": W1.tolist(), "v": v.tolist()})
    got = {"tanh": known.trace().scores, "identity": known.get("scores", "no-tanh").value,
           "sigmoid": known.get("scores", "sigmoid").value}
    phi = {"tanh": np.tanh, "identity": lambda a: a, "sigmoid": lambda a: 1 / (1 + np.exp(-a))}
    for act, f in phi.items():
        np.testing.assert_allclose(got[act], [v @ f(W1 @ h + W2 @ s) for h in H], rtol=1e-14)
    assert len({tuple(g.tolist()) for g in got.values()}) == 3
