"""Greedy decoding, with a KV cache or by re-running the decoder over the whole prefix.

With the cache each step feeds only the newest token: its keys and values are appended to each
self-attention layer's cache and the encoder output's keys and values are projected once. Without
it each step recomputes every position, as `nn.Transformer` users do. Both give the same tokens.

Encoder–decoder: sources (B, S) right-padded, output starts from BOS.
Decoder-only: prompts [BOS] source [SEP] of different lengths are left-padded so that every row's
next token is in the last column; a mask keeps real tokens from attending the padding, and
positions count real tokens only, so a row decodes exactly as it would alone.
"""
from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor

from examprep.train.model import DecoderOnly, EncoderDecoder


@torch.no_grad()
def greedy_encoder_decoder(model: EncoderDecoder, src: Tensor, *, max_new_tokens: int, bos: int,
                           eos: int, use_cache: bool = True) -> Tensor:
    """Greedy target tokens (B, ≤ max_new_tokens) for src (B, S); after a row's EOS: padding."""
    pad = model.cfg.pad_id
    src_mask = model.source_mask(src)
    memory = model.encode(src, src_mask)
    b = src.shape[0]
    tokens = torch.full((b, 1), bos, dtype=torch.long, device=src.device)
    done = torch.zeros(b, dtype=torch.bool, device=src.device)
    caches = model.new_caches(max_new_tokens) if use_cache else None
    for _ in range(max_new_tokens):
        if use_cache:
            hidden = model.decode(tokens[:, -1:], memory, src_mask, caches=caches)
        else:
            hidden = model.decode(tokens, memory, src_mask)
        nxt = model.logits(hidden[:, -1]).argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos
        if bool(done.all()):
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_decoder_only(model: DecoderOnly, prompts: Sequence[Sequence[int]], *, max_new_tokens: int,
                        eos: int, use_cache: bool = True) -> Tensor:
    """Greedy continuations (B, ≤ max_new_tokens) of token-id prompts; after a row's EOS: padding."""
    pad = model.cfg.pad_id
    device = model.lm_head.weight.device
    b, width = len(prompts), max(len(p) for p in prompts)
    tokens = torch.full((b, width), pad, dtype=torch.long, device=device)
    real = torch.zeros(b, width + max_new_tokens, dtype=torch.bool, device=device)
    for i, p in enumerate(prompts):
        tokens[i, width - len(p):] = torch.tensor(list(p), dtype=torch.long)
        real[i, width - len(p):] = True
    next_pos = real[:, :width].sum(1)                       # (B,) position of the next token
    done = torch.zeros(b, dtype=torch.bool, device=device)
    caches = model.new_caches(width + max_new_tokens) if use_cache else None
    for step in range(max_new_tokens):
        end = width + step
        if use_cache and step > 0:
            hidden = model.hidden(tokens[:, -1:], positions=(next_pos - 1)[:, None],
                                  mask=real[:, None, None, :end], caches=caches)
        else:
            positions = (real[:, :end].cumsum(1) - 1).clamp(min=0)
            hidden = model.hidden(tokens, positions=positions, mask=_prefix_mask(real[:, :end]),
                                  caches=caches)
        nxt = model.logits(hidden[:, -1]).argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        real[:, end] = True
        next_pos += 1
        done |= nxt == eos
        if bool(done.all()):
            break
    return tokens[:, width:]


def _prefix_mask(real: Tensor) -> Tensor:
    """(B, T) real-token flags -> (B, 1, T, T) mask: causal, never onto padding; a padding query
    attends itself only, so that no softmax row is empty."""
    t = real.shape[1]
    causal = torch.ones(t, t, dtype=torch.bool, device=real.device).tril()
    itself = torch.eye(t, dtype=torch.bool, device=real.device)
    return (causal & (real[:, None, :] | itself))[:, None]


def strip(tokens: Tensor, eos: int, pad: int) -> list[list[int]]:
    """Rows of generated ids up to (not including) EOS, padding dropped."""
    rows = []
    for row in tokens.tolist():
        out = []
        for t in row:
            if t == eos:
                break
            if t != pad:
                out.append(t)
        rows.append(out)
    return rows
