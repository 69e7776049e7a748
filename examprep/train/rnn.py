"""The RNN encoder–decoder of the course: Sutskever et al. 2014 and Cho et al. 2014, with Bahdanau
et al. 2015's additive attention or Luong et al. 2015's dot attention, or without attention (the
"information bottleneck in one vector" that attention was invented to remove).

Shapes use B batch, S source length, T target length, D d_model, V vocabulary, L layers.

Conventions
- The cells are torch.nn.GRU / torch.nn.LSTM (cuDNN on a GPU), in PyTorch's convention: GRU rows
  [r; z; n], h' = (1 − z) ⊙ n + z ⊙ h with the reset gate applied after W_hn (reset="after");
  LSTM rows [i; f; g; o]. examprep.engine.rnn's gru_cell(convention="pytorch") and lstm_cell
  compute the same step (examprep verify --checkpoint checks it on a trained model).
- Encoder: embedding, then an L-layer GRU/LSTM, bidirectional by default with D/2 units each way,
  so that an annotation h_j (B, S, D) is [→h_j; ←h_j] as in Bahdanau et al. §3.2. Padding is packed
  away (pack_padded_sequence): each direction's last state is the one at the sentence's own end.
- Bridge: the decoder's initial state is tanh(W_b [→h_S; ←h_1]) of the top encoder layer (Bahdanau
  et al. appendix A.2.2 uses ←h_1 alone), copied to every decoder layer; an LSTM's cell state is
  bridged by its own matrix. Without attention this one vector is all the decoder knows.
- Decoder, additive attention ("Bahdanau"): at step t the previous top-layer state s_{t−1} scores
  every annotation, e_tj = vᵀ tanh(W_1 h_j + W_2 s_{t−1}) (the lecture's form, no biases, the
  engine's attention(score="additive") with w_key = W_1, w_query = W_2), α_t = softmax over the
  real source tokens, c_t = Σ_j α_tj h_j; the cell reads [y_{t−1}; c_t]. Step by step, so the
  decoder is called once per target position.
- Decoder, dot attention ("Luong"): the cell runs over the whole target at once; then
  e_tj = s_t · h_j, α_t = softmax, c_t = Σ_j α_tj h_j.
- Output: o_t = tanh(W_c [s_t; c_t]) (no c_t without attention), logits = o_t Eᵀ with the output
  matrix tied to the target embedding as the Transformer's `share_embeddings` says. Embeddings are
  scaled by √D as the Transformer's, so that tying gives logits of the same size.
- Teacher forcing: forward(src, tgt_in) feeds the reference target shifted right (BOS first).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Union

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from examprep.checkpoints.config import TransformerConfig
from examprep.checkpoints.errors import ConfigError
from examprep.train.layers import Dropout

State = Union[Tensor, tuple[Tensor, Tensor]]     # GRU: h (L, B, D); LSTM: (h, c)


@dataclass
class Memory:
    """What the decoder reads of a source: annotations (B, S, D), their keys W_1 h_j (B, S, D)
    for additive attention (computed once per source), the mask (B, S) of real tokens, and the
    decoder's initial state."""

    annotations: Tensor
    keys: Optional[Tensor]
    mask: Tensor
    state: State

    def select(self, index: Tensor) -> "Memory":
        """The rows `index` (beam search reorders and repeats sources)."""
        return Memory(self.annotations[index], None if self.keys is None else self.keys[index],
                      self.mask[index], select_state(self.state, index))


def select_state(state: State, index: Tensor) -> State:
    """Rows `index` of a decoder state (batch is dimension 1)."""
    if isinstance(state, tuple):
        return tuple(s[:, index] for s in state)
    return state[:, index]


def top_hidden(state: State) -> Tensor:
    """The top layer's hidden state (B, D): the attention query s."""
    return (state[0] if isinstance(state, tuple) else state)[-1]


def masked_softmax(scores: Tensor, mask: Tensor) -> Tensor:
    """softmax over the last dimension where mask is True (every row has a real token: EOS)."""
    return F.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


class AdditiveAttention(nn.Module):
    """Bahdanau attention: e_j = vᵀ tanh(W_1 h_j + W_2 s) (key_proj = W_1, query_proj = W_2)."""

    def __init__(self, d: int):
        super().__init__()
        self.key_proj = nn.Linear(d, d, bias=False)      # W_1, applied once per source
        self.query_proj = nn.Linear(d, d, bias=False)    # W_2
        self.v = nn.Linear(d, 1, bias=False)

    def forward(self, s: Tensor, annotations: Tensor, keys: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        """s (B, D), annotations and keys (B, S, D), mask (B, S) -> context (B, D), weights (B, S)."""
        scores = self.v(torch.tanh(keys + self.query_proj(s)[:, None, :])).squeeze(-1)
        weights = masked_softmax(scores, mask)
        return torch.bmm(weights[:, None, :], annotations)[:, 0], weights


class RNNSeq2Seq(nn.Module):
    """forward(src (B, S), tgt_in (B, T)) -> logits (B, T, V_tgt); tgt_in starts with BOS."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        if cfg.arch != "rnn-seq2seq":
            raise ConfigError(f"RNNSeq2Seq needs arch='rnn-seq2seq', got {cfg.arch!r}")
        self.cfg = cfg
        d = cfg.d_model
        cell = nn.GRU if cfg.cell == "gru" else nn.LSTM
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab_size, d)
        self.src_embed = self.tgt_embed if cfg.share_embeddings == "all" else nn.Embedding(cfg.src_vocab_size, d)
        self.dropout = Dropout(cfg.dropout)
        between = cfg.dropout if cfg.n_encoder_layers > 1 else 0.0
        self.encoder = cell(d, d // 2 if cfg.bidirectional else d, num_layers=cfg.n_encoder_layers,
                            batch_first=True, bidirectional=cfg.bidirectional, dropout=between)
        self.bridge = nn.Linear(d, d)
        if cfg.cell == "lstm":
            self.bridge_cell = nn.Linear(d, d)
        feeds_context = cfg.attention == "additive"
        self.decoder = cell(2 * d if feeds_context else d, d, num_layers=cfg.n_decoder_layers, batch_first=True,
                            dropout=cfg.dropout if cfg.n_decoder_layers > 1 else 0.0)
        if cfg.attention == "additive":
            self.attention = AdditiveAttention(d)
        self.out_proj = nn.Linear(d if cfg.attention == "none" else 2 * d, d)
        self.lm_head = nn.Linear(d, cfg.tgt_vocab_size, bias=False)
        for emb in {id(m): m for m in self.modules() if isinstance(m, nn.Embedding)}.values():
            nn.init.normal_(emb.weight, std=d ** -0.5)
        if cfg.share_embeddings != "none":
            self.lm_head.weight = self.tgt_embed.weight
        self.keep_weights = False                        # set by model.keep_attention
        self.weights: Optional[Tensor] = None            # (B, 1, T, S) of the last decode, when kept

    def num_params(self, count_position_tables: bool = False) -> int:
        return sum(p.numel() for p in {id(p): p for p in self.parameters()}.values())

    def source_mask(self, src: Tensor) -> Tensor:
        """(B, S) -> (B, S): True at real source tokens, False at padding."""
        return src != self.cfg.pad_id

    def encode(self, src: Tensor, src_mask: Optional[Tensor] = None) -> Memory:
        """Annotations and the decoder's initial state for src (B, S). src_mask None: no padding."""
        x = self.dropout(self.src_embed(src) * math.sqrt(self.cfg.d_model))
        if src_mask is None:
            annotations, final = self.encoder(x)
            src_mask = torch.ones_like(src, dtype=torch.bool)
        else:
            lengths = src_mask.sum(1).cpu()
            packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
            out, final = self.encoder(packed)
            annotations, _ = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
        annotations = self.dropout(annotations)
        state = self._bridge(final)
        keys = self.attention.key_proj(annotations) if self.cfg.attention == "additive" else None
        return Memory(annotations, keys, src_mask, state)

    def _summary(self, final: Tensor) -> Tensor:
        """(layers · directions, B, H) -> the top layer's last states, directions side by side (B, D)."""
        directions = 2 if self.cfg.bidirectional else 1
        top = final.view(self.cfg.n_encoder_layers, directions, *final.shape[1:])[-1]
        return torch.cat(list(top), dim=-1)

    def _bridge(self, final: State) -> State:
        layers = self.cfg.n_decoder_layers
        if isinstance(final, tuple):                     # LSTM: (h, c)
            h = torch.tanh(self.bridge(self._summary(final[0])))
            c = self.bridge_cell(self._summary(final[1]))
            return h.expand(layers, *h.shape).contiguous(), c.expand(layers, *c.shape).contiguous()
        h = torch.tanh(self.bridge(self._summary(final)))
        return h.expand(layers, *h.shape).contiguous()

    def decode(self, tgt_in: Tensor, memory: Memory, state: Optional[State] = None) -> tuple[Tensor, State]:
        """Output vectors o_t (B, T, D) for tgt_in (B, T) and the state after them; start from
        memory.state unless a state is given (decoding one token at a time)."""
        state = memory.state if state is None else state
        y = self.dropout(self.tgt_embed(tgt_in) * math.sqrt(self.cfg.d_model))
        kind = self.cfg.attention
        weights = None
        if kind == "additive":
            outputs, kept = [], []
            for t in range(y.shape[1]):
                context, w = self.attention(top_hidden(state), memory.annotations, memory.keys, memory.mask)
                s, state = self.decoder(torch.cat([y[:, t], context], dim=-1)[:, None], state)
                outputs.append(torch.cat([s[:, 0], context], dim=-1))
                kept.append(w)
            features = torch.stack(outputs, dim=1)
            weights = torch.stack(kept, dim=1) if self.keep_weights else None
        else:
            s, state = self.decoder(y, state)
            features = s
            if kind == "dot":
                scores = torch.bmm(s, memory.annotations.transpose(1, 2))          # (B, T, S)
                w = masked_softmax(scores, memory.mask[:, None, :])
                features = torch.cat([s, torch.bmm(w, memory.annotations)], dim=-1)
                weights = w if self.keep_weights else None
        if weights is not None:
            self.weights = weights[:, None]
        return self.dropout(torch.tanh(self.out_proj(features))), state

    def logits(self, hidden: Tensor) -> Tensor:
        return self.lm_head(hidden)

    def forward(self, src: Tensor, tgt_in: Tensor, src_padded: bool = True) -> Tensor:
        """Teacher-forced logits (B, T, V). src_padded=False promises no padding in src."""
        memory = self.encode(src, self.source_mask(src) if src_padded else None)
        return self.logits(self.decode(tgt_in, memory)[0])

    def attention_maps(self) -> dict[str, Tensor]:
        """The attention weights kept under `keep_attention`: {"decoder.attention": (B, 1, T, S)}."""
        return {} if self.weights is None else {"decoder.attention": self.weights}
