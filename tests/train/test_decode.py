"""Greedy decoding: the KV cache changes the cost, never the tokens."""
from __future__ import annotations

import pytest
import torch

from examprep.train.decode import greedy_decoder_only, greedy_encoder_decoder, strip
from examprep.train.model import build_model
from examprep.train.baseline import matched_pair

from .helpers import small_config

EOS = 2


def _lively(model):
    """Sharpen a random model's output layer so that greedy decoding wanders over many tokens
    (an untrained model otherwise repeats one token, which would make the comparisons trivial)."""
    with torch.no_grad():
        model.lm_head.weight.mul_(8.0)
    return model.eval()


@pytest.mark.parametrize("positions", ["sinusoidal", "learned", "rope"])
@pytest.mark.parametrize("norm", ["post", "pre"])
def test_encoder_decoder_decodes_the_same_tokens_with_and_without_the_cache(positions, norm):
    model = _lively(build_model(small_config(positions=positions, norm=norm, share_embeddings="none",
                                             src_vocab_size=23)))
    src = torch.randint(5, 23, (6, 9))
    src[1, 4:] = 0
    src[4, 7:] = 0
    cached = greedy_encoder_decoder(model, src, max_new_tokens=20, bos=1, eos=EOS)
    plain = greedy_encoder_decoder(model, src, max_new_tokens=20, bos=1, eos=EOS, use_cache=False)
    assert len(torch.unique(cached)) > 4, "decoding should produce varied tokens"
    assert torch.equal(cached, plain)


@pytest.mark.parametrize("positions", ["sinusoidal", "learned", "rope"])
def test_decoder_only_decodes_the_same_tokens_with_and_without_the_cache(positions):
    model = _lively(build_model(small_config(arch="decoder-only", positions=positions, share_embeddings="none")))
    prompts = [[1, 5, 6, 7, 4], [1, 8, 4], [1, 9, 9, 9, 9, 9, 10, 4], [1, 11, 12, 4]]
    cached = greedy_decoder_only(model, prompts, max_new_tokens=15, eos=EOS)
    plain = greedy_decoder_only(model, prompts, max_new_tokens=15, eos=EOS, use_cache=False)
    assert len(torch.unique(cached)) > 4
    assert torch.equal(cached, plain)


@pytest.mark.parametrize("positions", ["sinusoidal", "learned", "rope"])
def test_decoder_only_left_padding_decodes_each_prompt_as_if_alone(positions):
    model = _lively(build_model(small_config(arch="decoder-only", positions=positions, share_embeddings="none")))
    prompts = [[1, 5, 6, 7, 4], [1, 8, 4], [1, 9, 9, 9, 9, 9, 10, 4]]
    together = strip(greedy_decoder_only(model, prompts, max_new_tokens=12, eos=EOS), EOS, 0)
    alone = [strip(greedy_decoder_only(model, [p], max_new_tokens=12, eos=EOS), EOS, 0)[0] for p in prompts]
    assert together == alone


def test_encoder_decoder_batch_decodes_each_source_as_if_alone():
    model = _lively(build_model(small_config(share_embeddings="none", src_vocab_size=23)))
    src = torch.randint(5, 23, (4, 8))
    src[0, 3:] = 0
    src[2, 6:] = 0
    together = strip(greedy_encoder_decoder(model, src, max_new_tokens=15, bos=1, eos=EOS), EOS, 0)
    alone = []
    for row in src:
        real = row[row != 0][None]
        alone += strip(greedy_encoder_decoder(model, real, max_new_tokens=15, bos=1, eos=EOS), EOS, 0)
    assert together == alone


def test_our_cached_decoding_matches_nn_transformer_rerunning_its_decoder():
    cfg = small_config(final_norm=True, share_embeddings="none", src_vocab_size=23)
    ours, ref = matched_pair(cfg, seed=5)
    _lively(ours)
    with torch.no_grad():
        ref.lm_head.weight.copy_(ours.lm_head.weight)
    ref.eval()
    src = torch.randint(5, 23, (5, 7))
    src[3, 4:] = 0
    never = -1                               # no EOS: both run all 16 steps
    theirs = ref.greedy(src, max_new_tokens=16, bos=1, eos=never)[:, 1:]
    mine = greedy_encoder_decoder(ours, src, max_new_tokens=16, bos=1, eos=never)
    assert len(torch.unique(mine)) > 3
    assert torch.equal(mine, theirs)


def test_decoding_stops_at_eos_and_pads_finished_rows():
    model = build_model(small_config()).eval()
    # a model whose every prediction is EOS
    model.logits = lambda hidden: torch.nn.functional.one_hot(
        torch.full(hidden.shape[:-1], EOS), model.cfg.tgt_vocab_size).float()
    src = torch.randint(5, 23, (3, 5))
    out = greedy_encoder_decoder(model, src, max_new_tokens=10, bos=1, eos=EOS)
    assert out.shape[1] == 1                                            # stopped after one step
    assert strip(out, EOS, 0) == [[], [], []]
    assert strip(torch.tensor([[7, 8, EOS, 9], [0, 5, 0, 0]]), EOS, 0) == [[7, 8], [5]]


def test_the_cache_refuses_to_overflow():
    from examprep.checkpoints.errors import ConfigError
    from examprep.train.layers import KVCache

    cache = KVCache(capacity=3)
    k = torch.zeros(1, 2, 2, 4)
    cache.append(k, k)
    with pytest.raises(ConfigError, match="holds 3 steps"):
        cache.append(k, k)
