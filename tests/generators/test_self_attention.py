"""self-attention: the projections, per-head weights and outputs against torch (softmax of the masked, scaled
scores; scaled_dot_product_attention for each head's output), and the exact forms of the calculator-free
variant."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from examprep import generators  # noqa: E402
from tests.generators.helpers import agree, answers, eval_exact, instances, t64  # noqa: E402

F = torch.nn.functional


def _torch(p):
    pr = p.params
    X = t64(pr["x"])
    Q, K, V = X @ t64(pr["w_query"]), X @ t64(pr["w_key"]), X @ t64(pr["w_value"])
    h = pr["num_heads"]
    n = X.shape[0]
    split = lambda M: M.reshape(n, h, -1).transpose(0, 1)  # noqa: E731   (h, n, d/h)
    q, k, v = split(Q), split(K), split(V)
    mask = torch.tril(torch.ones(n, n, dtype=torch.bool)) if pr["causal"] else torch.ones(n, n, dtype=torch.bool)
    scores = q @ k.transpose(1, 2) / (q.shape[-1] ** 0.5)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    heads = F.scaled_dot_product_attention(q, k, v, is_causal=pr["causal"])
    concat = heads.transpose(0, 1).reshape(n, -1)
    out = concat @ t64(pr["w_output"]) if pr["w_output"] is not None else concat
    return Q, K, V, scores, weights, concat, out


def test_answers_match_torch_attention_per_head():
    for p in instances(["self-attention"], range(10)):
        a = answers(p)
        Q, K, V, scores, weights, concat, out = _torch(p)
        agree(a["query"], Q)
        agree(a["key"], K)
        agree(a["value"], V)
        if p.difficulty == 1:
            agree(a["scaled_scores"], scores[0])
            agree(a["weights"], weights[0])
            agree(a["output"], out, rtol=1e-11)
        else:
            agree(a["weights_0"], weights[0])
            agree(a["weights_1"], weights[1])
            agree(a["concat"], concat, rtol=1e-11)
            if "output" in a:
                agree(a["output"], out, rtol=1e-11)


def test_a_head_scaled_by_the_full_key_size_is_a_named_mistake():
    p = generators.build("self-attention", 1, 2)
    pr = p.params
    X = t64(pr["x"])
    q, k = (X @ t64(pr["w_query"]))[:, :1], (X @ t64(pr["w_key"]))[:, :1]
    wrong = torch.softmax(q @ k.T / 2 ** 0.5, dim=-1)              # √d_k with d_k = 2, not √(d_k/h) = 1
    agree(next(m.value for m in p.part("weights_0").misconceptions if m.id == "full-d-k"), wrong)


def test_calculator_free_weights_are_exact():
    for p in instances(["self-attention"], range(4)):
        if not p.calculator_free:
            continue
        for part in p.parts:
            if part.exact and part.id.startswith("weights"):
                got = np.vectorize(eval_exact)(np.array(part.exact, dtype=object)).astype(float)
                agree(got, part.expected, rtol=1e-12)


INTS = st.integers(-2, 2).map(float)


@given(st.sampled_from([(1, False, 2), (2, False, 2), (2, True, 3)]), st.data())
def test_refusal_before_the_engine_is_the_engines_own_check(case, data):
    """The draws refused before the engine call (issue 26: plain Python on the drawn integers) are
    exactly those whose engine scaled scores have a row (of allowed keys) flat or spread beyond 4 —
    the check the generator applies again to the engine's trace."""
    import numpy as np

    from examprep import engine
    from examprep.generators.framework import Degenerate
    from examprep.generators.framework import exact_matmul
    from examprep.generators.self_attention import _refuse_flat_or_spread_scores

    heads, causal, n = case
    d_k = 4 if heads == 1 else 2
    x = data.draw(st.lists(st.lists(INTS, min_size=2, max_size=2), min_size=n, max_size=n))
    w_q = data.draw(st.lists(st.lists(INTS, min_size=d_k, max_size=d_k), min_size=2, max_size=2))
    w_k = data.draw(st.lists(st.lists(INTS, min_size=d_k, max_size=d_k), min_size=2, max_size=2))
    t = engine.self_attention(x, w_q, w_k, [[1.0, 0.0], [0.0, 1.0]], num_heads=heads, causal=causal)
    scaled = t.scaled_scores if heads > 1 else t.scaled_scores[None]
    engine_refuses = any(ok.sum() > 1 and not 0 < np.ptp(row[ok]) <= 4
                         for h_scores in scaled for row, ok in zip(h_scores, t.allowed))
    try:
        _refuse_flat_or_spread_scores(exact_matmul(x, w_q), exact_matmul(x, w_k), heads, causal)
        refused = False
    except Degenerate:
        refused = True
    assert refused == engine_refuses
