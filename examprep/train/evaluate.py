"""Text in, text out: translate with a trained model, and score it on held-out pairs.

Metrics
- token accuracy: teacher-forced argmax against the target tokens (EOS included);
- held-out loss: teacher-forced cross-entropy per target token (EOS included, padding left out,
  never label-smoothed), from the same forward pass; perplexity = exp(held-out loss);
- exact match: the greedy output equals the target text;
- BLEU: sacrebleu's corpus BLEU (13a tokenization) of the greedy outputs, for corpora;
- chrF: sacrebleu's corpus chrF (character 6-grams, β = 2) of the same outputs, for corpora.
"""
from __future__ import annotations

import contextlib
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from examprep.train.beam import (DecoderOnlyStepper, EncoderDecoderStepper, RNNStepper, beam_search,
                                 greedy_rnn)
from examprep.checkpoints.config import SEQ2SEQ
from examprep.train.data import BOS, EOS, PAD, Vocab, _pad, make_example, normalize, prompt
from examprep.train.decode import greedy_decoder_only, greedy_encoder_decoder, strip
from examprep.train.runlog import perplexity


def _chunks(n: int, size: int):
    for start in range(0, n, size):
        yield range(start, min(n, start + size))


@torch.no_grad()
def translate(model: nn.Module, texts: Sequence[str], source_vocab: Vocab, target_vocab: Vocab, *,
              max_new_tokens: int, batch_size: int = 500, use_cache: bool = True,
              autocast: contextlib.AbstractContextManager | None = None, beam: int = 1) -> list[str]:
    """Greedy outputs for `texts` (beam > 1: beam search's, examprep.train.beam), in order.
    Sources are batched by length."""
    was_training = model.training
    model.eval()
    device = model.lm_head.weight.device
    ids = [source_vocab.encode(t) for t in texts]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    room = model.cfg.max_len
    out: list[str] = [""] * len(texts)
    try:
        for chunk in _chunks(len(order), batch_size):
            rows = [ids[order[i]] for i in chunk]
            with autocast or contextlib.nullcontext():
                if beam > 1:
                    gen = _beam(model, rows, beam, max_new_tokens)
                elif model.cfg.arch == "rnn-seq2seq":
                    gen = greedy_rnn(model, _pad([r + [EOS] for r in rows]).to(device),
                                     max_new_tokens=max_new_tokens, bos=BOS, eos=EOS)
                elif model.cfg.arch == "encoder-decoder":
                    src = _pad([r + [EOS] for r in rows]).to(device)
                    gen = greedy_encoder_decoder(model, src, max_new_tokens=min(max_new_tokens, room - 1),
                                                 bos=BOS, eos=EOS, use_cache=use_cache)
                else:
                    prompts = [prompt(r) for r in rows]
                    budget = min(max_new_tokens, room - max(len(p) for p in prompts))
                    gen = greedy_decoder_only(model, prompts, max_new_tokens=max(budget, 1), eos=EOS,
                                              use_cache=use_cache)
            for i, row in zip(chunk, strip(gen, EOS, PAD)):
                out[order[i]] = target_vocab.decode(row)
    finally:
        model.train(was_training)
    return out


def _beam(model: nn.Module, rows: list[list[int]], beam: int, max_new_tokens: int) -> torch.Tensor:
    """Beam search's best outputs (B, ≤ max_new_tokens) for source ids `rows`, EOS-ended, padded."""
    device = model.lm_head.weight.device
    arch, room = model.cfg.arch, model.cfg.max_len
    if arch == "decoder-only":
        prompts = [prompt(r) for r in rows]
        budget = max(min(max_new_tokens, room - max(len(p) for p in prompts)), 1)
        stepper = DecoderOnlyStepper(model, prompts, budget)
    else:
        src = _pad([r + [EOS] for r in rows]).to(device)
        budget = min(max_new_tokens, room - 1) if arch == "encoder-decoder" else max_new_tokens
        stepper = RNNStepper(model, src) if arch == "rnn-seq2seq" else EncoderDecoderStepper(model, src, budget)
    best = beam_search(stepper, len(rows), beam=beam, max_new_tokens=budget, bos=BOS, eos=EOS)
    return _pad([h.tokens + [EOS] for h in best])


@torch.no_grad()
def teacher_forced(model: nn.Module, pairs: Sequence[tuple[str, str]], source_vocab: Vocab,
                   target_vocab: Vocab, *, batch_size: int = 500,
                   autocast: contextlib.AbstractContextManager | None = None) -> dict:
    """{"token_accuracy", "heldout_loss"} of one teacher-forced pass: the share of target tokens (EOS
    included) whose argmax is right, and the mean cross-entropy (nats) per target token, padding
    left out, no label smoothing."""
    was_training = model.training
    model.eval()
    device = model.lm_head.weight.device
    arch = model.cfg.arch
    examples = [make_example(source_vocab.encode(s), target_vocab.encode(t), arch) for s, t in pairs]
    right = total = 0
    loss = 0.0
    try:
        for chunk in _chunks(len(examples), batch_size):
            batch = [examples[i] for i in chunk]
            inp, target = _pad([e.inp for e in batch]).to(device), _pad([e.out for e in batch]).to(device)
            with autocast or contextlib.nullcontext():
                if arch in SEQ2SEQ:
                    logits = model(_pad([e.src for e in batch]).to(device), inp)
                else:
                    logits = model(inp)
            taught = target != PAD
            right += int(((logits.argmax(-1) == target) & taught).sum())
            total += int(taught.sum())
            loss += float(F.cross_entropy(logits.flatten(0, 1).float(), target.flatten(), ignore_index=PAD,
                                          reduction="sum"))
    finally:
        model.train(was_training)
    return {"token_accuracy": right / max(total, 1), "heldout_loss": loss / max(total, 1)}


def evaluate(model: nn.Module, pairs: Sequence[tuple[str, str]], source_vocab: Vocab,
             target_vocab: Vocab, *, max_new_tokens: int, bleu: bool = False,
             autocast: contextlib.AbstractContextManager | None = None) -> dict:
    """{"pairs", "sources", "token_accuracy", "heldout_loss", "perplexity", "exact_match"[, "bleu",
    "chrf"]} on (source, target) pairs.

    A source with several targets (Tatoeba has several translations of many sentences) is
    translated once and scored against all of them: exact match if the output is any of them, and
    BLEU with all of them as references. Token accuracy is over every pair.
    """
    references: dict[str, list[str]] = {}
    for source, target in pairs:
        references.setdefault(source, []).append(normalize(target))
    hyps = translate(model, list(references), source_vocab, target_vocab,
                     max_new_tokens=max_new_tokens, autocast=autocast)
    refs = list(references.values())
    metrics = {
        "pairs": len(pairs),
        "sources": len(refs),
        **teacher_forced(model, pairs, source_vocab, target_vocab, autocast=autocast),
        "exact_match": sum(h in r for h, r in zip(hyps, refs)) / max(len(refs), 1),
    }
    metrics["perplexity"] = perplexity(metrics["heldout_loss"])
    if bleu:
        metrics["bleu"] = corpus_bleu(hyps, refs)
        metrics["chrf"] = corpus_chrf(hyps, refs)
    return metrics


def _streams(references: Sequence[str | Sequence[str]]) -> list[list]:
    refs = [[r] if isinstance(r, str) else list(r) for r in references]
    width = max((len(r) for r in refs), default=1)
    return [[r[i] if i < len(r) else None for r in refs] for i in range(width)]


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[str | Sequence[str]]) -> float:
    """sacrebleu corpus chrF (0–100); each reference is a string or a list of them."""
    import sacrebleu

    return float(sacrebleu.corpus_chrf(list(hypotheses), _streams(references)).score)


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str | Sequence[str]]) -> float:
    """sacrebleu corpus BLEU (0–100, 13a tokenization); each reference is a string or a list of them."""
    import sacrebleu

    refs = [[r] if isinstance(r, str) else list(r) for r in references]
    width = max((len(r) for r in refs), default=1)
    streams = [[r[i] if i < len(r) else None for r in refs] for i in range(width)]
    return float(sacrebleu.corpus_bleu(list(hypotheses), streams).score)
