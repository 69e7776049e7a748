"""Beam search for every architecture, and the RNN's greedy decoding.

Beam search keeps the K most probable prefixes (score: the sum of the tokens' log-probabilities,
no length penalty) of each source. Each step extends every kept prefix by every token, ranks the
candidates, and:
- an EOS candidate ranked among the first K ends a hypothesis (it is set aside, finished);
- the best K candidates that are not EOS are kept (from the first 2K, where at least K are not EOS);
- a source is done when its best finished hypothesis scores at least its best kept prefix (scores
  only fall as a prefix grows, so no kept prefix can overtake it), or at max_new_tokens (the kept
  prefixes then count as finished).
With K = 1 this is greedy decoding. With K at least the number of candidates at every step, every
sequence is considered and the result is the exhaustive search's most probable sequence.

A stepper holds one architecture's decoding state for N rows: step(last tokens (N,)) gives the
next token's log-probabilities (N, V), and reorder(index) keeps (and repeats) rows `index`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from examprep.train.decode import _prefix_mask
from examprep.train.rnn import RNNSeq2Seq, select_state


class RNNStepper:
    def __init__(self, model: RNNSeq2Seq, src: Tensor):
        self.model = model
        self.memory = model.encode(src, model.source_mask(src))
        self.state = self.memory.state

    def step(self, last: Tensor) -> Tensor:
        hidden, self.state = self.model.decode(last[:, None], self.memory, self.state)
        return F.log_softmax(self.model.logits(hidden[:, 0]).float(), dim=-1)

    def reorder(self, index: Tensor) -> None:
        self.memory = self.memory.select(index)
        self.state = select_state(self.state, index)


class EncoderDecoderStepper:
    """The Transformer with its KV caches: reordering a row reorders its cached keys and values."""

    def __init__(self, model, src: Tensor, max_new_tokens: int):
        self.model = model
        self.src_mask = model.source_mask(src)
        self.memory = model.encode(src, self.src_mask)
        self.caches = model.new_caches(max_new_tokens)

    def step(self, last: Tensor) -> Tensor:
        hidden = self.model.decode(last[:, None], self.memory, self.src_mask, caches=self.caches)
        return F.log_softmax(self.model.logits(hidden[:, -1]).float(), dim=-1)

    def reorder(self, index: Tensor) -> None:
        self.memory, self.src_mask = self.memory[index], self.src_mask[index]
        for own, cross in self.caches:
            if own.k is not None:
                own.k, own.v = own.k[index], own.v[index]
            if cross.memory is not None:
                cross.memory = tuple(m[index] for m in cross.memory)


class DecoderOnlyStepper:
    """Left-padded prompts (as decode.greedy_decoder_only): the first step reads the prompts, each
    later step one token through the KV caches."""

    def __init__(self, model, prompts: Sequence[Sequence[int]], max_new_tokens: int):
        self.model = model
        pad, device = model.cfg.pad_id, model.lm_head.weight.device
        b, self.width = len(prompts), max(len(p) for p in prompts)
        self.tokens = torch.full((b, self.width), pad, dtype=torch.long, device=device)
        self.real = torch.zeros(b, self.width + max_new_tokens, dtype=torch.bool, device=device)
        for i, p in enumerate(prompts):
            self.tokens[i, self.width - len(p):] = torch.tensor(list(p), dtype=torch.long)
            self.real[i, self.width - len(p):] = True
        self.next_pos = self.real[:, :self.width].sum(1)
        self.caches = model.new_caches(self.width + max_new_tokens)
        self.end = self.width

    def step(self, last: Tensor) -> Tensor:
        if self.end > self.width:                           # the previous step's token, through the caches
            self.tokens = torch.cat([self.tokens, last[:, None]], dim=1)
            hidden = self.model.hidden(last[:, None], positions=(self.next_pos - 1)[:, None],
                                       mask=self.real[:, None, None, :self.end], caches=self.caches)
        else:                                               # the prompts
            positions = (self.real[:, :self.end].cumsum(1) - 1).clamp(min=0)
            hidden = self.model.hidden(self.tokens, positions=positions, mask=_prefix_mask(self.real[:, :self.end]),
                                       caches=self.caches)
        self.real[:, self.end] = True
        self.next_pos = self.next_pos + 1
        self.end += 1
        return F.log_softmax(self.model.logits(hidden[:, -1]).float(), dim=-1)

    def reorder(self, index: Tensor) -> None:
        self.tokens, self.real, self.next_pos = self.tokens[index], self.real[index], self.next_pos[index]
        for own, _ in self.caches:
            if own.k is not None:
                own.k, own.v = own.k[index], own.v[index]


@dataclass
class Hypothesis:
    tokens: list[int]          # without BOS and EOS
    score: float               # sum of log-probabilities, EOS's included when it ended with EOS
    finished: bool             # ended with EOS (False: cut at max_new_tokens)


@torch.no_grad()
def beam_search(stepper, n_sources: int, *, beam: int, max_new_tokens: int, bos: int, eos: int) -> list[Hypothesis]:
    """The most probable hypothesis of each of the stepper's n_sources rows (see the module's text)."""
    if beam < 1:
        raise ValueError(f"beam must be at least 1, got {beam}")
    k = beam
    device = next(iter(stepper.model.parameters())).device
    stepper.reorder(torch.arange(n_sources, device=device).repeat_interleave(k))
    scores = torch.full((n_sources, k), float("-inf"), device=device)
    scores[:, 0] = 0.0                                       # one live prefix per source: BOS
    prefixes: list[list[list[int]]] = [[[] for _ in range(k)] for _ in range(n_sources)]
    last = torch.full((n_sources * k,), bos, dtype=torch.long, device=device)
    finished: list[list[Hypothesis]] = [[] for _ in range(n_sources)]
    done = [False] * n_sources
    for _ in range(max_new_tokens):
        log_probs = stepper.step(last)                        # (N·K, V)
        vocab = log_probs.shape[-1]
        candidates = (scores.reshape(-1, 1) + log_probs).view(n_sources, k * vocab)
        top_scores, top_index = candidates.topk(min(2 * k, k * vocab), dim=-1)
        top_scores, top_index = top_scores.tolist(), top_index.tolist()
        rows, new_scores, new_last = [], [], []
        for s in range(n_sources):
            kept: list[tuple[float, int, int]] = []
            if not done[s]:
                for rank, (score, flat) in enumerate(zip(top_scores[s], top_index[s])):
                    if score == float("-inf"):
                        break
                    beam_row, token = divmod(flat, vocab)
                    if token == eos:
                        if rank < k:
                            finished[s].append(Hypothesis(list(prefixes[s][beam_row]), score, True))
                    elif len(kept) < k:
                        kept.append((score, beam_row, token))
                best_done = max((h.score for h in finished[s]), default=float("-inf"))
                if not kept or best_done >= kept[0][0]:
                    done[s] = True
                    kept = []
            next_prefixes = []
            for j in range(k):
                if j < len(kept):
                    score, beam_row, token = kept[j]
                    next_prefixes.append(prefixes[s][beam_row] + [token])
                else:
                    score, beam_row, token = float("-inf"), 0, eos
                    next_prefixes.append([])
                rows.append(s * k + beam_row)
                new_scores.append(score)
                new_last.append(token)
            prefixes[s] = next_prefixes
        if all(done):
            break
        stepper.reorder(torch.tensor(rows, device=device))
        scores = torch.tensor(new_scores, device=device).view(n_sources, k)
        last = torch.tensor(new_last, dtype=torch.long, device=device)
    best = []
    for s in range(n_sources):
        pool = list(finished[s])
        if not done[s]:                                      # cut at max_new_tokens
            pool += [Hypothesis(prefixes[s][j], float(scores[s, j]), False)
                     for j in range(k) if scores[s, j] > float("-inf")]
        best.append(max(pool, key=lambda h: h.score) if pool else Hypothesis([], float("-inf"), False))
    return best


@torch.no_grad()
def greedy_rnn(model: RNNSeq2Seq, src: Tensor, *, max_new_tokens: int, bos: int, eos: int) -> Tensor:
    """Greedy target tokens (B, ≤ max_new_tokens) for src (B, S); after a row's EOS: padding."""
    pad = model.cfg.pad_id
    stepper = RNNStepper(model, src)
    b = src.shape[0]
    last = torch.full((b,), bos, dtype=torch.long, device=src.device)
    done = torch.zeros(b, dtype=torch.bool, device=src.device)
    out = []
    for _ in range(max_new_tokens):
        nxt = stepper.step(last).argmax(-1).masked_fill(done, pad)
        out.append(nxt)
        done |= nxt == eos
        last = nxt
        if bool(done.all()):
            break
    return torch.stack(out, dim=1)
