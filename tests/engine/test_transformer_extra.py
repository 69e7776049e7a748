"""The Transformer-bookkeeping engine (engine/transformer.py, its solve topics and recipe ops) against
independent references: torch (MultiheadAttention and its FLOP counter, scaled_dot_product_attention
with CausalBias, a real Adam step) where it has the operation, sympy's exact arithmetic where it does
not, and hypothesis invariants; bad input gives one clear ParamError naming the parameter."""
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from examprep import engine, solve
from examprep.engine import norm, ops
from examprep.errors import ParamError

NEW_TOPICS = ("multi-head-shapes", "cross-attention", "causal-mask", "teacher-forcing", "rope-score",
              "positional-encoding-relative", "lora-memory", "training-time")
small = st.integers(-3, 3)


def test_new_topics_are_listed_by_solve():
    listed = {t["topic"] for t in __import__("json").loads(solve.topics_json())}
    assert set(NEW_TOPICS) <= listed


# ------------------------------------------------------------------------------------ torch

torch = pytest.importorskip("torch")


def test_multi_head_shapes_of_a_real_cross_attention_module():
    from examprep.verify import REFERENCES

    p = {"n": 7, "m": 11, "d_model": 512, "num_heads": 8, "batch": 2, "bytes_per_value": 2}
    ours, theirs = solve.answer_only("multi-head-shapes", p), REFERENCES["multi-head-shapes"](p)
    for name, want in theirs.items():
        np.testing.assert_array_equal(np.asarray(ours[name]), np.asarray(want), err_msg=name)
    assert ours["scores_shape"] == [7, 11] and ours["score_macs"] == 2 * 7 * 11 * 512


def test_causal_mask_bottom_right_is_torch_causal_lower_right():
    from torch.nn.attention.bias import causal_lower_right, causal_upper_left

    for n, m in ((2, 5), (3, 3), (1, 4), (4, 6)):
        np.testing.assert_array_equal(engine.causal_mask(n, m, alignment="bottom-right"),
                                      causal_lower_right(n, m)._materialize().numpy())
        np.testing.assert_array_equal(engine.causal_mask(n, m), causal_upper_left(n, m)._materialize().numpy())


def test_cross_attention_equals_torch_multihead_attention_with_one_head():
    """nn.MultiheadAttention(d, 1, kdim, vdim) with zero biases and an identity output projection is exactly
    single-head cross-attention with the 'linear' layout (weights as nn.Linear stores them)."""
    rng = np.random.default_rng(5)
    d, de = 3, 2
    x, z = rng.standard_normal((2, d)), rng.standard_normal((4, de))
    mha = torch.nn.MultiheadAttention(d, 1, kdim=de, vdim=de, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_bias.zero_()
        mha.out_proj.weight.copy_(torch.eye(d, dtype=torch.float64))
        mha.out_proj.bias.zero_()
    out, w = mha(torch.tensor(x)[None], torch.tensor(z)[None], torch.tensor(z)[None])
    ours = engine.cross_attention(x, z, mha.q_proj_weight.detach().numpy(), mha.k_proj_weight.detach().numpy(),
                                  mha.v_proj_weight.detach().numpy(), layout="linear")
    np.testing.assert_allclose(ours.output, out[0].detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.weights, w[0].detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("optimizer,values", [("adam", 3), ("sgd-momentum", 2), ("sgd", 1)])
def test_lora_memory_bytes_are_what_a_real_optimizer_step_keeps(optimizer, values):
    from examprep.verify import REFERENCES

    p = {"d": 24, "k": 40, "r": 4, "num_matrices": 2, "bytes_per_value": 4, "optimizer": optimizer}
    ours, theirs = solve.answer_only("lora-memory", p), REFERENCES["lora-memory"](p)
    for name, want in theirs.items():
        assert ours[name] == pytest.approx(want, rel=1e-12), name
    assert ours["full_training_bytes"] == 2 * 24 * 40 * values * 4


# ------------------------------------------------------------------------- sympy, exact values

def test_training_time_and_scaling_law_in_exact_arithmetic():
    N, D = sp.Integer(7) * 10 ** 9, sp.Rational(14, 10) * 10 ** 12
    C = 6 * N * D
    thr = 1024 * sp.Rational(312, 1) * 10 ** 12 * sp.Rational(2, 5)
    tt = engine.training_time(params=7e9, tokens=1.4e12, num_gpus=1024, peak_flops=3.12e14, utilization=0.4)
    assert tt.compute == pytest.approx(float(C), rel=1e-15)
    assert tt.seconds == pytest.approx(float(C / thr), rel=1e-14)
    assert tt.days == pytest.approx(float(C / thr / 86400), rel=1e-14)
    assert engine.training_time(compute=float(C), num_gpus=1024, peak_flops=3.12e14, utilization=0.4).seconds == \
        pytest.approx(tt.seconds, rel=1e-15)


def test_positional_encoding_relative_dot_is_sum_of_cosines_exactly():
    p, k, d = 3, 2, 6
    pos = sp.Integer(p)
    omegas = [sp.Integer(10000) ** sp.Rational(-2 * i, d) for i in range(d // 2)]
    pe = lambda q: [f(q * w) for w in omegas for f in (sp.sin, sp.cos)]  # noqa: E731
    dot = sum(a * b for a, b in zip(pe(pos), pe(pos + k)))
    tr = engine.positional_encoding_relative(p, k, d)
    assert tr.dot == pytest.approx(float(dot), abs=1e-14)
    assert float(sp.simplify(dot - sum(sp.cos(k * w) for w in omegas))) == pytest.approx(0, abs=1e-14)
    np.testing.assert_allclose(tr.wavelengths, [float(2 * sp.pi / w) for w in omegas], rtol=1e-14)


def test_rope_score_exact_for_quarter_turns():
    """With base = 1 every θ_j = 1; sympy rotates exactly and the score matches."""
    q, k = [1, 2, -1, 0], [0, 1, 3, -2]
    m, n = 3, 1
    R = lambda a: sp.Matrix([[sp.cos(a), -sp.sin(a)], [sp.sin(a), sp.cos(a)]])  # noqa: E731
    rot = lambda v, a: [c for j in range(2) for c in R(a) * sp.Matrix(v[2 * j: 2 * j + 2])]  # noqa: E731
    want = sum(a * b for a, b in zip(rot(q, m), rot(k, n)))
    assert engine.rope_score(q, k, m, n, base=1).score == pytest.approx(float(want), abs=1e-13)


# ------------------------------------------------------------------------- hypothesis invariants

@given(n=st.integers(1, 8), m=st.integers(1, 8), heads=st.integers(1, 4), dk=st.integers(1, 8), batch=st.integers(1, 3))
def test_multi_head_cost_is_n_m_d_model_and_quadratic_in_self_attention(n, m, heads, dk, batch):
    d = heads * dk
    t = engine.multi_head_shapes(n, d, heads, m=m, batch=batch)
    assert t.score_macs == batch * n * m * d == t.weighted_sum_macs
    assert t.score_macs_per_head * heads * batch == t.score_macs
    assert engine.multi_head_shapes(2 * n, d, heads).score_macs == 4 * engine.multi_head_shapes(n, d, heads).score_macs
    assert engine.multi_head_shapes(2 * n, d, heads).projection_macs == 2 * engine.multi_head_shapes(n, d, heads).projection_macs
    assert t.score_bytes == 4 * t.score_entries and t.score_mib == t.score_bytes / 2 ** 20


@given(data=st.data(), n=st.integers(1, 5), extra=st.integers(0, 3), alignment=st.sampled_from(["top-left", "bottom-right"]))
def test_causal_softmax_rows_sum_to_one_and_never_look_ahead(data, n, extra, alignment):
    m = n + extra
    scores = data.draw(st.lists(st.lists(small, min_size=m, max_size=m), min_size=n, max_size=n))
    t = engine.causal_softmax(scores, alignment=alignment)
    w = t.weights
    assert np.all(w[t.allowed == 0] == 0)
    np.testing.assert_allclose(w.sum(axis=1), np.where(t.allowed.sum(axis=1) > 0, 1.0, 0.0), rtol=1e-12)
    if alignment == "bottom-right":
        assert t.allowed[-1].all()              # the newest query sees every key
    assert t.masked_count + t.allowed_count == n * m


@given(tokens=st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=6), eos=st.booleans())
def test_teacher_forcing_shifts_right_by_one(tokens, eos):
    t = engine.teacher_forcing(tokens, bos="<s>", eos="</s>" if eos else None)
    assert t.decoder_input[0] == "<s>" and len(t.decoder_input) == len(t.labels)
    assert t.decoder_input[1:] == t.labels[:-1]          # position t reads y_{t−1} and predicts y_t
    assert t.labels == tokens + (["</s>"] if eos else [])


@given(q=st.lists(small, min_size=4, max_size=4), k=st.lists(small, min_size=4, max_size=4),
       m=st.integers(0, 20), n=st.integers(0, 20), s=st.integers(0, 20), style=st.sampled_from(["interleaved", "rotate-half"]))
def test_rope_score_depends_only_on_the_offset(q, k, m, n, s, style):
    a = engine.rope_score(q, k, m, n, style=style)
    b = engine.rope_score(q, k, m + s, n + s, style=style)
    assert a.score == pytest.approx(b.score, abs=1e-9)
    if m == n:
        assert a.score == pytest.approx(a.unrotated_score, abs=1e-9)


@given(p=st.integers(0, 200), q=st.integers(0, 200), k=st.integers(0, 50), half=st.integers(1, 8))
def test_sinusoidal_dot_product_does_not_depend_on_the_position(p, q, k, half):
    a = engine.positional_encoding_relative(p, k, 2 * half)
    b = engine.positional_encoding_relative(q, k, 2 * half)
    assert a.dot == pytest.approx(b.dot, abs=1e-9)
    assert a.dot == pytest.approx(float(np.sum(a.pair_terms)), abs=1e-9)


@given(data=st.data())
def test_cross_attention_layouts_agree_and_roles_matter(data):
    mat = lambda r, c: np.array(data.draw(st.lists(st.lists(small, min_size=c, max_size=c), min_size=r, max_size=r)), float)  # noqa: E731
    x, z = mat(2, 3), mat(4, 2)
    wq, wk, wv = mat(3, 2), mat(2, 2), mat(2, 3)
    a = engine.cross_attention(x, z, wq, wk, wv)
    b = engine.cross_attention(x, z, wq.T, wk.T, wv.T, layout="linear")
    np.testing.assert_allclose(a.output, b.output, rtol=1e-12, atol=1e-12)
    assert a.output.shape == (2, 3) and a.weights.shape == (2, 4)      # one row per decoder position


@given(d=st.integers(1, 300), k=st.integers(1, 300), r=st.integers(1, 16), num=st.integers(1, 4), nbytes=st.sampled_from([2, 4]),
       opt=st.sampled_from(["adam", "sgd-momentum", "sgd"]))
def test_lora_memory_saved_is_untrained_parameters_times_bytes(d, k, r, num, nbytes, opt):
    t = engine.lora_memory(d, k, r, num_matrices=num, bytes_per_value=nbytes, optimizer=opt)
    per = nbytes * {"adam": 3, "sgd-momentum": 2, "sgd": 1}[opt]
    assert t.saved_bytes == (num * d * k - num * r * (d + k)) * per
    assert t.saved_mib == t.saved_bytes / 2 ** 20


# ------------------------------------------------------------------------------- recipe ops

def test_recipe_ops_against_direct_formulas():
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


# ------------------------------------------------------------------------------- bad input

BAD = [
    ("multi-head-shapes", {"n": 4, "d_model": 10, "num_heads": 3}, ["num_heads", "divide"]),
    ("multi-head-shapes", {"n": 0, "d_model": 8, "num_heads": 2}, ["n", "≥ 1"]),
    ("multi-head-shapes", {"d_model": 8, "num_heads": 2}, ["n", "missing"]),
    ("cross-attention", {"decoder_states": [[1, 0]], "encoder_output": [[1, 0]], "w_query": [[1], [0], [0]],
                         "w_key": [[1], [0]], "w_value": [[1], [0]]}, ["w_query", "2×?", "3×1"]),
    ("cross-attention", {"decoder_states": [[1, 0]], "encoder_output": [[1, 0]], "w_query": [[1, 0], [0, 1]],
                         "w_key": [[1], [0]], "w_value": [[1], [0]]}, ["w_key", "d_k"]),
    ("cross-attention", {"decoder_states": [[1]], "encoder_output": [[1]], "w_query": [[1]], "w_key": [[1]],
                         "w_value": [[1]], "layout": "keras"}, ["layout", "x-w", "linear"]),
    ("causal-mask", {"scores": [[1, 2], [3]]}, ["scores", "rectangular"]),
    ("causal-mask", {"scores": [[1, 2]], "alignment": "left"}, ["alignment", "top-left", "bottom-right"]),
    ("teacher-forcing", {"tokens": []}, ["tokens", "non-empty"]),
    ("teacher-forcing", {"tokens": ["a", 1.5]}, ["tokens[1]", "token"]),
    ("rope-score", {"query": [1, 2, 3], "key": [1, 2, 3], "position_query": 1, "position_key": 0}, ["even"]),
    ("rope-score", {"query": [1, 2], "key": [1, 2, 3, 4], "position_query": 1, "position_key": 0}, ["key", "length 2"]),
    ("positional-encoding-relative", {"position": 2, "offset": 1, "d_model": 5}, ["d_model", "even"]),
    ("positional-encoding-relative", {"position": 2, "offset": -3, "d_model": 4}, ["offset", "≥ 0"]),
    ("lora-memory", {"d": 8, "k": 8, "r": 2, "optimizer": "adagrad"}, ["optimizer", "adam"]),
    ("lora-memory", {"d": 8, "k": 8, "r": 0}, ["r", "≥ 1"]),
    ("training-time", {"compute": 1e20}, ["peak_flops", "missing"]),
    ("training-time", {"compute": 1e20, "params": 1e9, "peak_flops": 1e15}, ["compute", "not both"]),
    ("training-time", {"params": 1e9, "peak_flops": 1e15}, ["params, tokens", "both"]),
    ("training-time", {"compute": 1e20, "peak_flops": 1e15, "utilization": 1.5}, ["utilization", "(0, 1]"]),
]


@pytest.mark.parametrize("topic,params,words", BAD, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(BAD)])
def test_bad_parameters_give_one_line_param_errors(topic, params, words):
    with pytest.raises(ParamError) as err:
        solve.solve(topic, params)
    msg = str(err.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, (w, msg)


def test_recipe_ops_reject_bad_student_values():
    with pytest.raises(ParamError):
        ops.divide(1, 0)
    with pytest.raises(ParamError):
        ops.dot([1, 2], [1, 2, 3])
    with pytest.raises(ParamError):
        ops.int_product([2, 2.5])
