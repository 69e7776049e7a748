"""attention-scores: against torch."""
import numpy as np
import pytest

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
