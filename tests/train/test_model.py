"""The model computes what the paper and torch.nn.Transformer compute: masks, padding, positions,
attention paths, dropout, loss and schedule."""
from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, strategies as st

from examprep.checkpoints.errors import ConfigError
from examprep.checkpoints.config import TransformerConfig
from examprep.train.layers import Dropout, apply_rope, attend, dropout, rope_tables, sinusoidal_table
from examprep.train.model import EncoderDecoder, build_model, keep_attention
from examprep.train.baseline import TorchTransformer, copy_into, matched_pair
from examprep.train.trainer import noam_lr, smoothed_cross_entropy

from .helpers import small_config

ARCH_POSITIONS = [(a, p, n) for a in ("encoder-decoder", "decoder-only")
                  for p in ("sinusoidal", "learned", "rope") for n in ("post", "pre")]


def _outputs(model, src, tgt):
    with torch.no_grad():
        return model(src, tgt) if model.cfg.arch == "encoder-decoder" else model(tgt)


@pytest.mark.parametrize("arch,positions,norm", ARCH_POSITIONS)
@given(data=st.data())
def test_changing_a_later_token_never_changes_earlier_outputs(arch, positions, norm, data):
    torch.manual_seed(1)
    model = build_model(small_config(arch=arch, positions=positions, norm=norm)).eval()
    t = data.draw(st.integers(2, 12), label="length")
    k = data.draw(st.integers(1, t - 1), label="changed position")
    src = torch.randint(5, 23, (2, 7))
    tgt = torch.randint(5, 23, (2, t))
    changed = tgt.clone()
    changed[:, k] = (tgt[:, k] - 5 + data.draw(st.integers(1, 17))) % 18 + 5     # a different token
    before, after = _outputs(model, src, tgt), _outputs(model, src, changed)
    assert torch.equal(before[:, :k], after[:, :k])
    assert not torch.allclose(before[:, k:], after[:, k:])          # the change does reach later outputs


@pytest.mark.parametrize("positions", ["sinusoidal", "learned", "rope"])
def test_source_padding_never_changes_the_outputs(positions):
    model = build_model(small_config(positions=positions)).eval()
    src = torch.randint(5, 23, (3, 6))
    tgt = torch.randint(5, 23, (3, 5))
    padded = torch.cat([src, torch.zeros(3, 4, dtype=torch.long)], dim=1)
    ragged = padded.clone()
    ragged[1, 6:] = torch.tensor([7, 8, 9, 10])   # another row is longer: the padded rows need the mask
    with torch.no_grad():
        alone = model(src, tgt)
        together = model(ragged, tgt)
        memory_alone = model.encode(src)
        memory_padded = model.encode(padded, model.source_mask(padded))
    torch.testing.assert_close(together[[0, 2]], alone[[0, 2]], rtol=0, atol=1e-5)
    torch.testing.assert_close(memory_padded[:, :6], memory_alone, rtol=0, atol=1e-5)


@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only"])
def test_target_padding_never_changes_the_real_positions(arch):
    model = build_model(small_config(arch=arch)).eval()
    src = torch.randint(5, 23, (2, 6))
    tgt = torch.randint(5, 23, (2, 5))
    padded = torch.cat([tgt, torch.zeros(2, 3, dtype=torch.long)], dim=1)
    torch.testing.assert_close(_outputs(model, src, padded)[:, :5], _outputs(model, src, tgt), rtol=0, atol=1e-5)


@pytest.mark.parametrize("norm,activation,share", [("post", "relu", "all"), ("pre", "relu", "none"),
                                                   ("post", "gelu", "output"), ("pre", "gelu", "all")])
def test_matches_torch_nn_transformer_with_copied_weights(norm, activation, share):
    vocab = dict(src_vocab_size=23, tgt_vocab_size=23) if share == "all" else dict(src_vocab_size=19, tgt_vocab_size=23)
    cfg = small_config(norm=norm, activation=activation, share_embeddings=share, final_norm=True, **vocab)
    ours, ref = matched_pair(cfg, seed=3, random_biases=True)     # key biases too: ours has none
    ours.eval()
    ref.eval()
    src = torch.randint(5, 19, (4, 9))
    src[1, 5:] = 0
    src[3, 2:] = 0
    tgt = torch.randint(5, 23, (4, 7))
    with torch.no_grad():
        expected, got = ref(src, tgt), ours(src, tgt)
        ref_memory, pad = ref.encode(src)
        our_memory = ours.encode(src, ours.source_mask(src))
    assert expected.abs().max() > 0.1                       # a real output, not all zeros
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)
    real = ~pad
    torch.testing.assert_close(our_memory[real], ref_memory[real], rtol=0, atol=1e-5)


def test_bare_nn_transformer_stacks_match_ours_in_training_mode_without_dropout():
    cfg = small_config(final_norm=True)
    torch.manual_seed(4)
    core = torch.nn.Transformer(d_model=32, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                                dim_feedforward=64, dropout=0.0, batch_first=True)
    with torch.no_grad():
        for name, p in core.named_parameters():
            if name.endswith("bias"):
                p.normal_(0.0, 0.1)
    ours = copy_into(EncoderDecoder(cfg), core)
    x, y = torch.randn(2, 6, 32), torch.randn(2, 5, 32)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(5)
    expected = core(x, y, tgt_mask=causal, tgt_is_causal=True)
    got = ours.decoder(y, ours.encoder(x))
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)


def test_copying_from_nn_transformer_needs_the_final_norm():
    cfg = small_config(final_norm=False)
    with pytest.raises(ConfigError, match="final_norm"):
        TorchTransformer(cfg)
    with pytest.raises(ConfigError, match="final_norm=True"):
        copy_into(EncoderDecoder(cfg), TorchTransformer(small_config(final_norm=True)))


@given(b=st.integers(1, 3), h=st.integers(1, 3), tq=st.integers(1, 9), tk=st.integers(1, 9),
       dh=st.sampled_from([2, 4, 8]), causal=st.booleans(), masked=st.booleans(), seed=st.integers(0, 99))
def test_fast_and_explicit_attention_agree(b, h, tq, tk, dh, causal, masked, seed):
    g = torch.Generator().manual_seed(seed)
    if causal:
        tk = tq                                  # square, as in a decoder's self-attention
    q, k, v = (torch.randn(b, h, n, dh, generator=g) for n in (tq, tk, tk))
    mask = None
    if masked:                                   # key padding; key 0 is always real, so no row is empty
        lengths = torch.randint(1, tk + 1, (b,), generator=g)
        mask = (torch.arange(tk)[None, :] < lengths[:, None])[:, None, None, :]
    fast, none = attend(q, k, v, mask=mask, causal=causal)
    explicit, weights = attend(q, k, v, mask=mask, causal=causal, need_weights=True)
    assert none is None
    torch.testing.assert_close(explicit, fast, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(weights.sum(-1), torch.ones(b, h, tq))
    allowed = torch.ones(tq, tk, dtype=torch.bool)
    if causal:
        allowed = allowed.tril()
    if mask is not None:
        allowed = allowed & mask
    assert torch.all(weights.masked_select(~allowed.expand_as(weights)) == 0)
    # the definition, written out once more
    scores = q @ k.transpose(-1, -2) / math.sqrt(dh)
    scores = scores.masked_fill(~allowed, float("-inf"))
    torch.testing.assert_close(weights, torch.softmax(scores, -1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only"])
def test_model_outputs_are_the_same_on_the_explicit_path_which_keeps_the_weights(arch):
    model = build_model(small_config(arch=arch, positions="rope")).eval()
    src, tgt = torch.randint(5, 23, (2, 6)), torch.randint(5, 23, (2, 5))
    src[0, 4:] = 0
    fast = _outputs(model, src, tgt)
    with keep_attention(model):
        explicit = _outputs(model, src, tgt)
    maps = model.attention_maps()
    torch.testing.assert_close(explicit, fast, rtol=1e-5, atol=1e-5)
    assert len(maps) == (6 if arch == "encoder-decoder" else 2)
    for name, w in maps.items():
        assert w.shape[:2] == (2, 4)
        if name.endswith("cross_attn"):
            assert torch.all(w[0, :, :, 4:] == 0)         # never on the padding of row 0
        if name.startswith("decoder") and name.endswith("self_attn"):
            assert torch.all(w.triu(1) == 0)               # never on a later position


def test_sinusoidal_table_is_the_papers_formula():
    table = sinusoidal_table(50, 16)
    for pos in (0, 1, 7, 49):
        for i in range(8):
            angle = pos / 10000 ** (2 * i / 16)
            assert table[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert table[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


@given(shift=st.integers(0, 40), seed=st.integers(0, 50))
def test_rope_scores_depend_only_on_the_distance_between_positions(shift, seed):
    g = torch.Generator().manual_seed(seed)
    cos, sin = rope_tables(64, 8, 10000.0)
    q, k = torch.randn(1, 1, 1, 8, generator=g), torch.randn(1, 1, 1, 8, generator=g)
    i, j = 5, 2

    def score(a, b):
        return (apply_rope(q, cos[a:a + 1], sin[a:a + 1]) * apply_rope(k, cos[b:b + 1], sin[b:b + 1])).sum()

    assert score(i + shift, j + shift).item() == pytest.approx(score(i, j).item(), abs=1e-4)
    assert apply_rope(q, cos[3:4], sin[3:4]).norm().item() == pytest.approx(q.norm().item(), rel=1e-5)


def test_shared_embeddings_are_one_matrix_and_none_means_three():
    tied = build_model(small_config(share_embeddings="all"))
    assert tied.src_embed.weight is tied.tgt_embed.weight is tied.lm_head.weight
    untied = build_model(small_config(share_embeddings="none", src_vocab_size=17))
    assert len({id(untied.src_embed.weight), id(untied.tgt_embed.weight), id(untied.lm_head.weight)}) == 3
    assert untied.num_params() - tied.num_params() == (17 + 23) * 32      # two more matrices


@pytest.mark.parametrize("bad,message", [
    (dict(d_model=30, n_heads=4), "divisible"),
    (dict(arch="bert"), "arch"),              # encoder-only is a model since issue 22
    (dict(positions="alibi"), "positions"),
    (dict(dropout=1.0), "dropout"),
    (dict(src_vocab_size=10), "one\\s+vocabulary"),
    (dict(positions="rope", d_model=12, n_heads=4), "even head size"),
])
def test_config_rejects_impossible_values(bad, message):
    with pytest.raises(ConfigError, match=message):
        small_config(**bad)


def test_a_sequence_longer_than_max_len_is_a_clear_error():
    model = build_model(small_config(max_len=8)).eval()
    with pytest.raises(ConfigError, match="longer than this model's max_len=8"):
        model(torch.randint(5, 23, (1, 9)), torch.randint(5, 23, (1, 3)))


def test_cpu_dropout_drops_at_rate_p_and_keeps_the_expectation():
    x = torch.ones(400, 1000)
    y = dropout(x, 0.1)
    dropped = (y == 0).float().mean().item()
    assert dropped == pytest.approx(0.1, abs=0.002)
    assert y.mean().item() == pytest.approx(1.0, abs=0.005)
    values = torch.unique(y).tolist()
    assert len(values) == 2 and values[0] == 0.0 and values[1] == pytest.approx(65536 / (65536 - 6554))
    assert not torch.equal(dropout(x, 0.1), dropout(x, 0.1))           # fresh masks each call
    layer = Dropout(0.3).eval()
    assert torch.equal(layer(x), x)


def test_cpu_dropout_gradient_is_the_same_mask():
    x = torch.randn(64, 64, requires_grad=True)
    y = dropout(x, 0.5)
    y.sum().backward()
    kept = y != 0
    torch.testing.assert_close(x.grad[kept], torch.full_like(x.grad[kept], 2.0))
    assert torch.all(x.grad[~kept] == 0)


@given(eps=st.sampled_from([0.0, 0.1, 0.3]), seed=st.integers(0, 99))
def test_label_smoothing_gives_eps_over_c_to_every_class(eps, seed):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(2, 5, 7, generator=g)
    targets = torch.randint(1, 7, (2, 5), generator=g)
    targets[1, 3:] = 0                                                   # padding is not taught
    logp = torch.log_softmax(logits, -1)
    taught = targets != 0
    nll = -logp.gather(-1, targets[..., None])[..., 0]
    expected = ((1 - eps) * nll + eps * (-logp.mean(-1)))[taught].sum()
    assert smoothed_cross_entropy(logits, targets, eps).item() == pytest.approx(expected.item(), rel=1e-5)


def test_noam_schedule_warms_up_linearly_then_decays_as_inverse_square_root():
    # Paper §5.3 with d_model 512 and 4,000 warm-up steps peaks at 512^-0.5 · 4000^-0.5 ≈ 7.0e-4.
    assert noam_lr(4000, 512, 4000, 1.0) == pytest.approx(512 ** -0.5 * 4000 ** -0.5)
    assert noam_lr(4000, 512, 4000, 1.0) == pytest.approx(6.99e-4, rel=1e-3)
    assert noam_lr(1000, 512, 4000, 1.0) == pytest.approx(noam_lr(4000, 512, 4000, 1.0) / 4)
    assert noam_lr(16000, 512, 4000, 1.0) == pytest.approx(noam_lr(4000, 512, 4000, 1.0) / 2)
    assert noam_lr(10, 64, 100, 3.0) == pytest.approx(3 * noam_lr(10, 64, 100, 1.0))


def test_flops_formula_matches_the_issue_for_equal_lengths():
    from examprep.train.flops import flops_per_step, matmul_params

    cfg = small_config(n_encoder_layers=3, n_decoder_layers=2)
    model = build_model(cfg)
    n = matmul_params(model)
    t, b = 10, 3
    expected = b * t * (6 * n + 12 * (3 + 2 * 2) * cfg.n_heads * cfg.d_head * t)
    assert flops_per_step(model, b, t, t) == expected
    dec = build_model(small_config(arch="decoder-only", n_decoder_layers=3))
    assert flops_per_step(dec, b, 0, t) == b * t * (6 * matmul_params(dec) + 12 * 3 * 4 * 8 * t)


def test_dropout_is_off_in_eval_mode_so_outputs_repeat():
    model = build_model(small_config(dropout=0.3))
    src, tgt = torch.randint(5, 23, (2, 6)), torch.randint(5, 23, (2, 5))
    assert not torch.equal(model(src, tgt), model(src, tgt))
    model.eval()
    assert torch.equal(model(src, tgt), model(src, tgt))


def test_config_round_trips_through_a_dict():
    cfg = small_config(norm="pre", positions="learned")
    assert TransformerConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ConfigError, match="unknown model option"):
        TransformerConfig.from_dict({**cfg.to_dict(), "n_layers": 3})
