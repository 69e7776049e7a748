"""A BERT-style encoder (Devlin et al. 2019): the Transformer's encoder stack with a masked-LM head,
and BERT's masking of the training tokens.

    EncoderOnly(cfg)(tokens (B, T)) -> logits (B, T, V)

The sentence is read as ``<bos> tokens <eos>`` (BERT's [CLS] … [SEP]) with padding masked out of
attention; every position sees every other (no causal mask). The head is BERT's: a dense layer,
GELU, LayerNorm, then the output layer, tied to the token embedding (as BERT's) with its own bias.

Masking (BERT §3.1, "Task #1: Masked LM", and its create_pretraining_data.py): in each sentence
max(1, round(15% of its word tokens)) positions are chosen at random; a chosen token becomes
``[MASK]`` with probability 0.8, a random word token with 0.1, and stays itself with 0.1. The loss
is taken at the chosen positions only. Specials (<bos>, <eos>, <pad>, <unk>) are never chosen.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from examprep.checkpoints.config import TransformerConfig
from examprep.checkpoints.errors import ConfigError
from examprep.train.layers import CountsParams, Dropout, Encoder, Positions
from examprep.checkpoints.vocab import BOS, EOS, PAD, SPECIALS, UNK, Vocab

MASK = "[MASK]"
MASK_ID = len(SPECIALS)                 # 5: the first id after the specials in a masked-LM vocabulary
FIRST_WORD = MASK_ID + 1                # the first id a random replacement may take
MASK_PROB, MASK_SHARE, RANDOM_SHARE = 0.15, 0.8, 0.1
_PLACEHOLDER = "\ue000"                  # one token at any level: what "[MASK]" in user text becomes


def mlm_vocab(texts: Sequence[str], level: str, min_count: int = 1) -> Vocab:
    """The specials, [MASK], then every token seen at least min_count times (most frequent first)."""
    built = Vocab.build(texts, level, min_count)
    return Vocab(list(SPECIALS) + [MASK] + [t for t in built.tokens[len(SPECIALS):] if t != MASK], level)


def is_mlm_vocab(vocab: Vocab) -> bool:
    return len(vocab) > MASK_ID and vocab.tokens[MASK_ID] == MASK


def encode_with_masks(vocab: Vocab, text: str) -> list[int]:
    """Token ids of text in which each "[MASK]" is one [MASK] token (the tokenizer alone would split
    it into "[", "MASK", "]")."""
    tokens = vocab.tokenize(text.replace(MASK, _PLACEHOLDER))
    return [MASK_ID if t.strip() == _PLACEHOLDER else _lookup(vocab, t) for t in tokens]


def _lookup(vocab: Vocab, token: str) -> int:
    """A token's id; at word level a word the vocabulary holds only with (or only without) its
    leading space is that word (the gap in "Je suis [MASK] ." puts a space before the "." that the
    corpus writes "fatigué.")."""
    for t in (token, token.strip(), " " + token.strip()):
        if t in vocab.index:
            return vocab.index[t]
    return UNK


def unknown_words(vocab: Vocab, text: str) -> list[str]:
    """The tokens of text (its [MASK]s aside) that the vocabulary lacks, each once, in order."""
    tokens = vocab.tokenize(text.replace(MASK, _PLACEHOLDER))
    return list(dict.fromkeys(t.strip() for t in tokens if t.strip() != _PLACEHOLDER and _lookup(vocab, t) == UNK))


def mask_tokens(tokens: Tensor, vocab_size: int, generator: torch.Generator,
                prob: float = MASK_PROB) -> tuple[Tensor, Tensor]:
    """BERT's masking of a batch (B, T) of ids: (inputs, labels), labels PAD where not chosen."""
    maskable = tokens >= FIRST_WORD
    n = maskable.sum(dim=1)
    k = torch.where(n > 0, torch.clamp(torch.round(n * prob), min=1), torch.zeros_like(n))
    scores = torch.rand(tokens.shape, generator=generator)
    scores = scores.masked_fill(~maskable, 2.0)                 # never chosen: ranked after every word
    rank = scores.argsort(dim=1).argsort(dim=1)
    chosen = rank < k[:, None]
    u = torch.rand(tokens.shape, generator=generator)
    replacement = torch.randint(FIRST_WORD, max(vocab_size, FIRST_WORD + 1), tokens.shape, generator=generator)
    inputs = tokens.clone()
    inputs[chosen & (u < MASK_SHARE)] = MASK_ID
    swap = chosen & (u >= MASK_SHARE) & (u < MASK_SHARE + RANDOM_SHARE)
    inputs[swap] = replacement[swap]
    return inputs, torch.where(chosen, tokens, torch.full_like(tokens, PAD))


class EncoderOnly(CountsParams, nn.Module):
    """A BERT-style masked language model: forward(tokens (B, T)) -> logits (B, T, V)."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        if cfg.arch != "encoder-only":
            raise ConfigError(f"EncoderOnly needs arch='encoder-only', got {cfg.arch!r}")
        self.cfg = cfg
        d = cfg.d_model
        self.src_embed = nn.Embedding(cfg.src_vocab_size, d)
        self.positions = Positions(cfg)
        self.dropout = Dropout(cfg.dropout)
        self.encoder = Encoder(cfg)
        self.mlm_dense = nn.Linear(d, d)
        self.mlm_norm = nn.LayerNorm(d, eps=cfg.layer_norm_eps)
        self.lm_head = nn.Linear(d, cfg.src_vocab_size)
        for name, p in self.named_parameters():          # as examprep.train.model's models
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
            elif name.endswith("bias"):
                nn.init.zeros_(p)
        nn.init.normal_(self.src_embed.weight, std=d ** -0.5)
        if cfg.share_embeddings != "none":
            self.lm_head.weight = self.src_embed.weight

    def hidden(self, tokens: Tensor) -> Tensor:
        """The encoder's output (B, T, D); padding (PAD) is kept out of attention."""
        self.positions.check(tokens.shape[1])
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.dropout(self.positions.add(self.src_embed(tokens) * math.sqrt(self.cfg.d_model), pos))
        mask = (tokens != self.cfg.pad_id)[:, None, None, :] if bool((tokens == self.cfg.pad_id).any()) else None
        return self.encoder(x, mask, self.positions.rotation(pos))

    def forward(self, tokens: Tensor, where: Optional[Tensor] = None) -> Tensor:
        """Logits (B, T, V); with where (B, T) boolean, only at those positions: (N, V). Training
        asks only for the masked positions, as BERT's gather does: the output layer over a large
        vocabulary is most of the work, and 85% of it would be thrown away."""
        h = self.hidden(tokens)
        if where is not None:
            h = h[where]
        return self.lm_head(self.mlm_norm(F.gelu(self.mlm_dense(h))))


@torch.no_grad()
def masked_accuracy(model: EncoderOnly, batches: Sequence[tuple[Tensor, Tensor]]) -> dict:
    """Held-out masked-token accuracy over fixed (inputs, labels) batches: the share of chosen
    positions whose argmax is the original token, and the mean cross-entropy there."""
    was_training = model.training
    model.eval()
    right = total = 0
    loss = 0.0
    try:
        for inputs, labels in batches:
            chosen = labels != PAD
            logits = model(inputs, chosen)
            right += int((logits.argmax(-1) == labels[chosen]).sum())
            total += int(chosen.sum())
            loss += float(F.cross_entropy(logits.float(), labels[chosen], reduction="sum"))
    finally:
        model.train(was_training)
    return {"masked_accuracy": right / max(total, 1), "masked_tokens": total,
            "masked_loss": loss / max(total, 1)}


def fill_mask(model: EncoderOnly, vocab: Vocab, text: str, top_k: int = 5) -> list[list[tuple[str, float]]]:
    """For each [MASK] of text, in order, the top_k words with their probabilities (softmax over the
    word tokens: specials and [MASK] itself are never an answer). Word-level vocabularies hold a
    word with and without its leading space (" fatigué", "fatigué"); a word's probability is the
    sum of both."""
    if not is_mlm_vocab(vocab):
        raise ConfigError("this checkpoint is not a masked language model (train one with "
                          "`examprep train --arch encoder-only --objective mlm`)")
    ids = encode_with_masks(vocab, text)
    if MASK_ID not in ids:
        raise ConfigError(f"TEXT has no {MASK}: write {MASK} where the model should fill in a word")
    seq = [BOS, *ids, EOS]
    if len(seq) > model.cfg.max_len:
        raise ConfigError(f"TEXT is {len(seq)} tokens long; this model reads at most {model.cfg.max_len}")
    model.eval()
    with torch.no_grad():
        logits = model(torch.tensor([seq], device=model.lm_head.weight.device))[0].float()
    logits[:, :FIRST_WORD] = float("-inf")
    probs = torch.softmax(logits, dim=-1)
    answers = []
    words = sorted({t.strip() for t in vocab.tokens[FIRST_WORD:]})
    column = {w: i for i, w in enumerate(words)}
    owner = torch.tensor([column[t.strip()] for t in vocab.tokens[FIRST_WORD:]], device=probs.device)
    for pos in (i for i, t in enumerate(seq) if t == MASK_ID):
        by_word = torch.zeros(len(words), device=probs.device).index_add_(0, owner, probs[pos, FIRST_WORD:])
        p, idx = by_word.topk(min(top_k, len(words)))
        answers.append([(words[int(i)], float(q)) for q, i in zip(p, idx)])
    return answers
