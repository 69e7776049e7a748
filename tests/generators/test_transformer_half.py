"""The Transformer/counting generators against independent references: real torch modules and
functional ops (engine_reference), torch's FLOP counter and a real optimizer step, sympy's exact
arithmetic; and the topic-specific facts each problem teaches (RoPE's relative scores, the
dot product of sinusoidal encodings, the √C growth of the compute-optimal model)."""
import math

import numpy as np
import pytest
import sympy as sp

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import eval_exact, instances  # noqa: E402

TRANSFORMER_HALF = ["param-count", "layer-norm", "positional-encoding", "rope", "attention-scores", "multi-head",
                    "cross-attention", "causal-mask", "lora", "scaling-law"]
SEEDS = range(10)


def close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol, atol=atol)


def test_all_ten_generators_are_registered_with_three_levels():
    from examprep import generators

    gens = generators.load_all()
    for name in TRANSFORMER_HALF:
        assert gens[name].levels == (1, 2, 3), name
    assert not gens["rope"].calculator_free and not gens["positional-encoding"].calculator_free


def test_param_count_answers_are_the_numel_of_real_torch_modules():
    for p in instances(["param-count"], SEEDS):
        for part in p.parts:
            if part.kind != "integer" or part.id == "gate_blocks":
                continue
            sub = part.recipe.args
            assert part.expected == REFERENCES["param-count"](sub)["count"], (p.difficulty, part.id, sub)
        if p.difficulty == 2:
            layer = p.params["pytorch"]["layer"]
            module = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[layer](1, 1)
            assert p.part("gate_blocks").expected == module.weight_ih_l0.shape[0]      # gate blocks of one unit
            one_bias = {m.id: m.value for m in p.part("count_pytorch").misconceptions}["one-bias"]
            assert one_bias == p.part("count_keras").expected or layer == "gru"


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


def test_positional_encoding_answers_match_the_annotated_transformer_table_and_llama_rope():
    for p in instances(["positional-encoding"], SEEDS):
        d = p.params["d_model"]
        if p.difficulty == 2:
            pos, k = p.params["position"], p.params["offset"]
            a = REFERENCES["positional-encoding"]({"position": pos, "d_model": d})["encoding"]
            b = REFERENCES["positional-encoding"]({"position": pos + k, "d_model": d})["encoding"]
            close(p.part("encoding").expected, a)
            close(p.part("shifted").expected, b)
            assert abs(p.part("dot").expected - float(torch.tensor(a) @ torch.tensor(b))) < 1e-12
            omegas = [10000 ** (-2 * i / d) for i in range(d // 2)]
            assert abs(p.part("dot").expected - sum(math.cos(k * w) for w in omegas)) < 1e-12
            continue
        enc = REFERENCES["positional-encoding"]({"position": p.params["position"], "d_model": d})["encoding"]
        if p.difficulty == 1:
            close(p.part("encoding").expected, enc)
            assert p.part("omega_1").expected == pytest.approx(0.01, rel=1e-12)
        else:
            i = p.params["pair"]
            close(p.part("pair").expected, enc[2 * i: 2 * i + 2])
            close(p.part("frequencies").expected, [1, 0.1, 0.01, 0.001])
            assert p.part("longest_wavelength").expected == pytest.approx(2 * math.pi * 1000, rel=1e-12)
            close(p.part("rope").expected, REFERENCES["rope"](p.params["rope"])["output"])


def test_positional_encoding_dot_product_does_not_depend_on_the_position():
    from examprep import engine

    for p in instances(["positional-encoding"], SEEDS):
        if p.difficulty != 2:
            continue
        k = p.params["offset"]
        for other in (0, 7, 123):
            assert abs(engine.positional_encoding_relative(other, k, 4).dot - p.part("dot").expected) < 1e-12


def test_rope_answers_match_llamas_complex_rotation_and_scores_are_relative():
    for p in instances(["rope"], SEEDS):
        if p.difficulty < 3:
            close(p.part("output").expected, REFERENCES["rope"](p.params)["output"])
            continue
        pr = {k: p.params[k] for k in ("query", "key", "position_query", "position_key", "style")}
        ref = REFERENCES["rope-score"](pr)
        close(p.part("query_rotated").expected, ref["query_rotated"])
        close(p.part("key_rotated").expected, ref["key_rotated"])
        assert abs(p.part("score").expected - ref["score"]) < 1e-12
        assert abs(p.part("shifted_score").expected - p.part("score").expected) < 1e-12     # m − n only


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


def test_multi_head_answers_match_torch_multihead_attention_and_its_flop_counter():
    for p in instances(["multi-head"], SEEDS):
        ref = REFERENCES["multi-head-shapes"](p.params if p.difficulty == 3 else
                                              {k: p.params[k] for k in ("n", "d_model", "num_heads")})
        for part in p.parts:
            if part.id in ref:
                close(part.expected, ref[part.id])
        if p.difficulty == 2:
            k = p.params["growth_factor"]
            longer = REFERENCES["multi-head-shapes"]({"n": k * p.params["n"], "d_model": p.params["d_model"],
                                                      "num_heads": p.params["num_heads"]})
            assert p.part("growth").expected == longer["score_macs"] // ref["score_macs"] == k * k


def test_cross_attention_answers_match_torch_sdpa_and_multihead_shapes():
    for p in instances(["cross-attention"], SEEDS):
        if p.difficulty == 1:
            ref = REFERENCES["multi-head-shapes"](p.params)
            close(p.part("scores_shape").expected, ref["scores_shape"])
            close(p.part("output_shape").expected, ref["output_shape"])
            assert p.part("queries_from").expected == "the decoder"
            continue
        ref = REFERENCES["cross-attention"](p.params)
        for name in ("query", "key", "value", "scores", "weights", "output"):
            close(p.part(name).expected, ref[name])
        if p.difficulty == 3:
            assert all(row[-1] == 0 for row in p.part("weights").expected)       # the padding position


def test_causal_mask_answers_match_torch_causal_bias():
    from torch.nn.attention.bias import causal_upper_left

    for p in instances(["causal-mask"], SEEDS):
        ref = REFERENCES["causal-mask"]({k: p.params[k] for k in ("scores", "alignment", "scale")})
        close(p.part("mask").expected, ref["allowed"])
        close(p.part("weights").expected, ref["weights"])
        if p.difficulty == 1:
            assert p.part("masked_count").expected == ref["masked_count"]
        if p.difficulty == 2:
            tokens = p.params["tokens"]
            assert p.part("decoder_input").expected == " ".join(["[GO]"] + tokens[:-1])
        if p.difficulty == 3:
            n, m = np.shape(p.params["scores"])
            assert p.part("top_left_visible").expected == int(causal_upper_left(n, m)._materialize()[-1].sum())


def test_lora_answers_match_peft_style_modules_and_a_real_adam_step():
    for p in instances(["lora"], SEEDS):
        with torch.device("meta"):          # the modules' sizes without allocating (or initialising) their weights
            ref = REFERENCES["lora"]({k: p.params[k] for k in ("d", "k", "r", "num_matrices")})
        for name in ("trainable_params", "full_params", "fraction"):
            close(p.part(name).expected, ref[name])
        if p.difficulty == 3:
            small = {"d": 16, "k": 16, "r": p.params["r"] // 4, "num_matrices": 1, "bytes_per_value": 4, "optimizer": "adam"}
            measured = REFERENCES["lora-memory"](small)          # bytes per parameter, measured on a small copy
            assert p.part("bytes_per_param").expected == measured["full_training_bytes"] // (16 * 16)
            saved = (p.part("full_params").expected - p.part("trainable_params").expected) * 12 / 2 ** 20
            assert p.part("saved_mib").expected == pytest.approx(saved, rel=1e-12)


def test_scaling_law_answers_equal_sympy_exact_arithmetic():
    for p in instances(["scaling-law"], SEEDS):
        if p.difficulty == 2:
            C = sp.Rational(repr(p.params["compute"]))          # the decimal as written: 1.2e+20 exactly
            N = sp.sqrt(C / 120)
            assert N.is_Integer and p.part("params").expected == pytest.approx(float(N), rel=1e-14)
            assert p.part("tokens").expected == pytest.approx(float(20 * N), rel=1e-14)
            g = sp.Integer(p.params["growth"])
            assert float(sp.sqrt(C * g / 120) / N) == pytest.approx(p.part("growth").expected, rel=1e-12)
            continue
        N, D = sp.Rational(repr(p.params["params"])), sp.Rational(repr(p.params["tokens"]))
        assert float(6 * N * D) == pytest.approx(p.part("compute").expected, rel=1e-14)
        if p.difficulty == 3:
            thr = p.params["num_gpus"] * sp.Rational(repr(p.params["peak_flops"])) * sp.Rational(repr(p.params["utilization"]))
            seconds = 6 * N * D / thr
            want = seconds if p.calculator_free else seconds / 86400
            assert float(want) == pytest.approx(p.part("time").expected, rel=1e-12)


def test_calculator_free_exact_strings_of_this_half_parse_to_the_numbers():
    checked = 0
    for p in instances([g for g in TRANSFORMER_HALF if g not in ("rope", "positional-encoding")], range(5)):
        if not p.calculator_free:
            continue
        for part in p.parts:
            if isinstance(part.exact, str):
                assert eval_exact(part.exact) == pytest.approx(float(part.expected), rel=1e-12)
                checked += 1
    assert checked > 20
