"""Beam search (examprep.train.beam) for every architecture: K = 1 is greedy decoding, and a beam as
wide as the number of candidates finds the exhaustive search's most probable sequence."""
from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

from examprep.train.beam import (DecoderOnlyStepper, EncoderDecoderStepper, RNNStepper, beam_search,
                                 greedy_rnn)
from examprep.train.data import BOS, EOS, SEP, _pad
from examprep.train.decode import greedy_decoder_only, greedy_encoder_decoder
from examprep.train.model import build_model

from .helpers import small_config

ARCHS = ("rnn-seq2seq", "encoder-decoder", "decoder-only")


def _model(arch: str, vocab: int, seed: int = 0):
    torch.manual_seed(seed)
    extra = dict(cell="gru", attention="additive", n_encoder_layers=1, n_decoder_layers=1) \
        if arch == "rnn-seq2seq" else {}
    return build_model(small_config(arch=arch, src_vocab_size=vocab, tgt_vocab_size=vocab, **extra)).eval()


def _sources(vocab: int, n: int = 4) -> list[list[int]]:
    g = torch.Generator().manual_seed(1)
    return [torch.randint(5, vocab, (int(k),), generator=g).tolist() for k in torch.randint(2, 7, (n,), generator=g)]


def _stepper(model, sources, max_new_tokens):
    arch = model.cfg.arch
    if arch == "decoder-only":
        return DecoderOnlyStepper(model, [[BOS, *s, SEP] for s in sources], max_new_tokens)
    src = _pad([s + [EOS] for s in sources])
    return RNNStepper(model, src) if arch == "rnn-seq2seq" else EncoderDecoderStepper(model, src, max_new_tokens)


def _greedy(model, sources, max_new_tokens):
    arch = model.cfg.arch
    if arch == "decoder-only":
        gen = greedy_decoder_only(model, [[BOS, *s, SEP] for s in sources], max_new_tokens=max_new_tokens, eos=EOS)
    else:
        src = _pad([s + [EOS] for s in sources])
        decode = greedy_rnn if arch == "rnn-seq2seq" else greedy_encoder_decoder
        gen = decode(model, src, max_new_tokens=max_new_tokens, bos=BOS, eos=EOS)
    rows = []
    for row in gen.tolist():                  # up to EOS; a PAD the model chose stays (strip would drop it)
        rows.append(row[:row.index(EOS)] if EOS in row else row)
    return rows


def _log_probs(model, source: list[int], seqs: list[list[int]]) -> list[float]:
    """Teacher-forced log-probabilities of outputs `seqs` (EOS included where they end with one),
    in one right-padded batch (every model is causal on its output: padding after a position
    leaves it alone)."""
    n = len(seqs)
    with torch.no_grad():
        if model.cfg.arch == "decoder-only":
            prompt = [BOS, *source, SEP]
            logits = model(_pad([prompt + seq[:-1] for seq in seqs]))[:, len(prompt) - 1:]
        else:
            logits = model(torch.tensor([source + [EOS]] * n), _pad([[BOS] + seq[:-1] for seq in seqs]))
    log_p = F.log_softmax(logits.double(), -1)
    return [float(log_p[i, torch.arange(len(seq)), torch.tensor(seq)].sum()) for i, seq in enumerate(seqs)]


@pytest.mark.parametrize("arch", ARCHS)
def test_a_beam_of_one_is_greedy_decoding(arch):
    vocab = 12
    for seed in range(3):
        model, sources = _model(arch, vocab, seed), _sources(vocab)
        best = beam_search(_stepper(model, sources, 10), len(sources), beam=1, max_new_tokens=10, bos=BOS, eos=EOS)
        assert [h.tokens for h in best] == _greedy(model, sources, 10)


@pytest.mark.parametrize("arch", ARCHS)
def test_a_beam_as_wide_as_every_candidate_finds_the_exhaustive_searchs_best_sequence(arch):
    vocab, length = 7, 3                     # 5 special tokens and 2 letters; outputs of up to 3 tokens
    words = [t for t in range(vocab) if t != EOS]
    everything = [list(p) + [EOS] for n in range(length) for p in itertools.product(words, repeat=n)]
    everything += [list(p) for p in itertools.product(words, repeat=length)]       # cut without EOS
    width = len(words) ** (length - 1) * vocab                                    # candidates at the last step
    differs = 0
    for seed in range(4):
        model, sources = _model(arch, vocab, seed), _sources(vocab, 2)
        best = beam_search(_stepper(model, sources, length), len(sources), beam=width, max_new_tokens=length,
                           bos=BOS, eos=EOS)
        greedy = _greedy(model, sources, length)
        for source, hyp, g in zip(sources, best, greedy):
            scored = dict(zip(map(tuple, everything), _log_probs(model, source, everything)))
            want = max(scored, key=scored.get)
            got = tuple(hyp.tokens + [EOS] if hyp.finished else hyp.tokens)
            assert got == want, (scored[got] if got in scored else None, scored[want])
            assert hyp.score == pytest.approx(scored[want], abs=1e-4)
            differs += list(want[:-1] if want[-1] == EOS else want) != g
    assert differs > 0                       # the search found something greedy decoding missed


def test_beam_search_refuses_a_beam_below_one():
    model = _model("rnn-seq2seq", 9)
    with pytest.raises(ValueError, match="at least 1"):
        beam_search(_stepper(model, [[5, 6]], 4), 1, beam=0, max_new_tokens=4, bos=BOS, eos=EOS)


@pytest.mark.parametrize("arch", ARCHS)
def test_translate_with_a_beam_of_one_gives_the_greedy_translations(arch):
    from examprep.train.data import TASKS, task_vocab
    from examprep.train.evaluate import _beam, translate

    vocab = task_vocab(TASKS["reverse"])
    model = _model(arch, len(vocab), 3)
    texts = ["abc", "hello", "zz", "qwertyuiop"]
    greedy = translate(model, texts, vocab, vocab, max_new_tokens=9)
    rows = [vocab.encode(t) for t in texts]
    beamed = [vocab.decode(row) for row in _rows_to_eos(_beam(model, rows, 1, 9).tolist())]
    assert beamed == greedy
    assert len(translate(model, texts, vocab, vocab, max_new_tokens=9, beam=3)) == 4


def _rows_to_eos(rows):
    return [row[:row.index(EOS)] if EOS in row else row for row in rows]
