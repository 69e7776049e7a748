"""layer-norm: against torch.nn.LayerNorm and The Annotated Transformer; exact values by sympy."""
import numpy as np
import pytest
import sympy as sp

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import close, instances  # noqa: E402

SEEDS = range(10)


def test_layer_norm_answers_match_torch_layer_norm_and_the_annotated_transformer():
    for p in instances(["layer-norm"], SEEDS):
        ref = REFERENCES["layer-norm"]({k: p.params[k] for k in ("x", "gamma", "beta", "eps", "eps_placement", "variance")})
        close(p.part("mean").expected, ref["mean"])
        close(p.part("var").expected, ref["var"])
        out = p.part("output" if p.difficulty < 3 else "output_lecture").expected
        close(out, ref["output"])
        if p.difficulty == 3:
            ln = torch.nn.LayerNorm(4, eps=p.params["eps"], dtype=torch.float64)
            want = ln(torch.tensor(p.params["x"], dtype=torch.float64)).detach().numpy()
            close(p.part("output_pytorch").expected, want)


def test_layer_norm_calculator_free_answers_equal_sympy_exact_values():
    for p in instances(["layer-norm"], SEEDS):
        if not p.calculator_free:
            continue
        rows = np.atleast_2d(p.params["x"])
        eps = sp.nsimplify(p.params["eps"])
        out_id = "output" if p.difficulty < 3 else "output_lecture"
        got = np.atleast_2d(p.part(out_id).expected)
        gamma = np.broadcast_to(p.params["gamma"], (4,))
        beta = np.broadcast_to(p.params["beta"], (4,))
        for row, got_row in zip(rows, got):
            xs = [sp.nsimplify(v) for v in row]
            mu = sum(xs) / 4
            sigma = sp.sqrt(sum((v - mu) ** 2 for v in xs) / 4)
            for v, g, b, y in zip(xs, gamma, beta, got_row):
                exact = sp.nsimplify(g) * (v - mu) / (sigma + eps) + sp.nsimplify(b)
                assert abs(float(exact) - y) < 1e-12
