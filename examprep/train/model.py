"""The Transformer of "Attention Is All You Need" (Vaswani et al. 2017), and its decoder-only cousin.

The two models, read with examprep.checkpoints.config (the configuration) and examprep.train.layers
(positions, attention, the feed-forward block, the encoder and decoder layers). Shapes use B batch,
S source length, T target length, H heads, D d_model, Dh = D / H per head, V vocabulary.

Conventions
- Post-norm by default, as in the paper: x = LayerNorm(x + Dropout(Sublayer(x))). `norm="pre"`
  gives x = x + Dropout(Sublayer(LayerNorm(x))) (Xiong et al. 2020).
- `final_norm` adds one LayerNorm after the encoder stack and one after the decoder stack, which
  `torch.nn.Transformer` always has; with it, weights copied from `nn.Transformer` give the same
  outputs (see `baseline.py`). It defaults to on for pre-norm (where it is needed) and off for
  post-norm (the paper).
- Token embeddings are multiplied by √D (paper §3.4). With `share_embeddings="all"` source
  embedding, target embedding and output layer are one matrix (one vocabulary); "output" ties only
  the target embedding and the output layer; "none" ties nothing.
- Padding id `pad_id`; sequences are right-padded. A boolean mask is True where a query *may*
  attend a key. Every query row always has at least one key it may attend.
- Attention has two paths with the same result: the fast one calls
  `F.scaled_dot_product_attention` (fused kernels), the explicit one computes
  softmax(QKᵀ/√Dh)V step by step and keeps the weights (`keep_attention`). The key projection has
  no bias (softmax ignores one); positions are sinusoidal (the paper), learned, or rotary (RoPE,
  applied to q and k of self-attention).
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Iterator, Optional

import torch
from torch import Tensor, nn

from examprep.train.bert import EncoderOnly
from examprep.checkpoints.config import TransformerConfig
from examprep.checkpoints.errors import ConfigError
from examprep.train.layers import (CountsParams, Decoder, DecoderLayer, Dropout, Encoder, EncoderLayer, KVCache,
                                   MultiHeadAttention, Positions)
from examprep.train.rnn import RNNSeq2Seq

__all__ = ["DecoderOnly", "EncoderDecoder", "TransformerConfig", "build_model", "compile_layers", "keep_attention"]

# --------------------------------------------------------------------------- models

class _Base(CountsParams, nn.Module):
    cfg: TransformerConfig

    def _init_weights(self) -> None:
        # Glorot-uniform for every matrix, as tensor2tensor and nn.Transformer; embeddings N(0, 1/D)
        # so that the √D scaling gives unit-variance inputs; biases zero.
        for name, p in self.named_parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
            elif name.endswith("bias"):
                nn.init.zeros_(p)
        for emb in {id(m): m for m in self.modules() if isinstance(m, nn.Embedding)}.values():
            nn.init.normal_(emb.weight, std=self.cfg.d_model ** -0.5)

    def embed(self, emb: nn.Embedding, tokens: Tensor, positions: Tensor) -> Tensor:
        x = emb(tokens) * math.sqrt(self.cfg.d_model)
        return self.dropout(self.positions.add(x, positions))

    def attention_maps(self) -> dict[str, Tensor]:
        """The weights kept under `keep_attention`, by module name: (B, H, Tq, Tk) each."""
        return {name: m.weights for name, m in self.named_modules()
                if isinstance(m, MultiHeadAttention) and m.weights is not None}


class EncoderDecoder(_Base):
    """The paper's model: encoder over the source, decoder over the shifted target.

    forward(src (B, S), tgt_in (B, T)) -> logits (B, T, V_tgt). tgt_in starts with BOS.
    """

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        if cfg.arch != "encoder-decoder":
            raise ConfigError(f"EncoderDecoder needs arch='encoder-decoder', got {cfg.arch!r}")
        self.cfg = cfg
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab_size, cfg.d_model)
        self.src_embed = self.tgt_embed if cfg.share_embeddings == "all" \
            else nn.Embedding(cfg.src_vocab_size, cfg.d_model)
        self.positions = Positions(cfg)
        self.dropout = Dropout(cfg.dropout)
        self.encoder = Encoder(cfg)
        self.decoder = Decoder(cfg, cross=True)
        self.lm_head = nn.Linear(cfg.d_model, cfg.tgt_vocab_size, bias=False)
        self._init_weights()
        if cfg.share_embeddings != "none":
            self.lm_head.weight = self.tgt_embed.weight

    def source_mask(self, src: Tensor) -> Tensor:
        """(B, S) -> (B, 1, 1, S): True at real source tokens, False at padding."""
        return (src != self.cfg.pad_id)[:, None, None, :]

    def encode(self, src: Tensor, src_mask: Optional[Tensor] = None) -> Tensor:
        """src (B, S) -> memory (B, S, D). src_mask from `source_mask`, or None if there is no padding."""
        self.positions.check(src.shape[1])
        pos = torch.arange(src.shape[1], device=src.device)
        x = self.embed(self.src_embed, src, pos)
        return self.encoder(x, src_mask, self.positions.rotation(pos))

    def decode(self, tgt_in: Tensor, memory: Tensor, src_mask: Optional[Tensor] = None,
               caches: Optional[list[tuple[KVCache, KVCache]]] = None) -> Tensor:
        """Decoder hidden states (B, T, D) for tgt_in (B, T). With caches, tgt_in holds only the new
        tokens and their positions continue from what the caches hold."""
        start = caches[0][0].length if caches else 0
        self.positions.check(start + tgt_in.shape[1])
        pos = torch.arange(start, start + tgt_in.shape[1], device=tgt_in.device)
        x = self.embed(self.tgt_embed, tgt_in, pos)
        # Right padding: a causal mask alone keeps every real position away from later padding.
        causal = start == 0 and tgt_in.shape[1] > 1
        return self.decoder(x, memory, causal=causal, memory_mask=src_mask,
                            rotation=self.positions.rotation(pos), caches=caches)

    def logits(self, hidden: Tensor) -> Tensor:
        return self.lm_head(hidden)

    def forward(self, src: Tensor, tgt_in: Tensor, src_padded: bool = True) -> Tensor:
        """Teacher-forced logits (B, T, V). src_padded=False promises no padding in src (no mask)."""
        src_mask = self.source_mask(src) if src_padded else None
        return self.logits(self.decode(tgt_in, self.encode(src, src_mask), src_mask))

    def new_caches(self, capacity: int) -> list[tuple[KVCache, KVCache]]:
        """Empty (self-attention, cross-attention) caches for decoding up to `capacity` tokens."""
        return [(KVCache(capacity), KVCache(0)) for _ in range(self.cfg.n_decoder_layers)]


class DecoderOnly(_Base):
    """A GPT-style stack of masked self-attention layers over [BOS] source [SEP] target [EOS].

    forward(tokens (B, T)) -> logits (B, T, V). Training sequences are right-padded, so the causal
    mask is the only mask; generation left-pads prompts and passes `mask` and `positions`.
    """

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        if cfg.arch != "decoder-only":
            raise ConfigError(f"DecoderOnly needs arch='decoder-only', got {cfg.arch!r}")
        self.cfg = cfg
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab_size, cfg.d_model)
        self.positions = Positions(cfg)
        self.dropout = Dropout(cfg.dropout)
        self.decoder = Decoder(cfg, cross=False)
        self.lm_head = nn.Linear(cfg.d_model, cfg.tgt_vocab_size, bias=False)
        self._init_weights()
        if cfg.share_embeddings != "none":
            self.lm_head.weight = self.tgt_embed.weight

    def hidden(self, tokens: Tensor, *, positions: Optional[Tensor] = None, mask: Optional[Tensor] = None,
               caches: Optional[list[tuple[KVCache, KVCache]]] = None) -> Tensor:
        """Hidden states (B, T, D). positions (B, T) default 0…T-1 (after what the caches hold);
        mask (B, 1, T, T_total) replaces the plain causal mask (used with left padding)."""
        start = caches[0][0].length if caches else 0
        if positions is None:
            self.positions.check(start + tokens.shape[1])
            positions = torch.arange(start, start + tokens.shape[1], device=tokens.device)
        else:
            self.positions.check(int(positions.max()) + 1)
        x = self.embed(self.tgt_embed, tokens, positions)
        causal = mask is None and start == 0 and tokens.shape[1] > 1
        return self.decoder(x, self_mask=mask, causal=causal,
                            rotation=self.positions.rotation(positions), caches=caches)

    def logits(self, hidden: Tensor) -> Tensor:
        return self.lm_head(hidden)

    def forward(self, tokens: Tensor) -> Tensor:
        return self.logits(self.hidden(tokens))

    def new_caches(self, capacity: int) -> list[tuple[KVCache, None]]:
        """Empty self-attention caches for sequences of up to `capacity` tokens (prompt included)."""
        return [(KVCache(capacity), None) for _ in range(self.cfg.n_decoder_layers)]


def build_model(cfg: TransformerConfig) -> nn.Module:
    """The model `cfg.arch` names, freshly initialised (seed with torch.manual_seed first). A model
    that does not fit in memory is a ConfigError naming its size."""
    try:
        if cfg.arch == "rnn-seq2seq":
            return RNNSeq2Seq(cfg)
        if cfg.arch == "encoder-only":
            return EncoderOnly(cfg)
        return EncoderDecoder(cfg) if cfg.arch == "encoder-decoder" else DecoderOnly(cfg)
    except (RuntimeError, MemoryError) as err:
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise ConfigError(f"cannot build a model with d_model={cfg.d_model}, d_ff={cfg.d_ff}, "
                          f"{cfg.n_encoder_layers}+{cfg.n_decoder_layers} layers (about "
                          f"{cfg.parameter_estimate():.2g} parameters): {first}") from None


@contextmanager
def keep_attention(model: nn.Module) -> Iterator[nn.Module]:
    """Within the block every attention layer takes the explicit path and keeps its weights;
    read them with `model.attention_maps()`."""
    layers = [m for m in model.modules() if isinstance(m, MultiHeadAttention) or hasattr(m, "keep_weights")]
    for m in layers:
        m.keep_weights, m.weights = True, None
    try:
        yield model
    finally:
        for m in layers:
            m.keep_weights = False


def compile_layers(model: nn.Module, **options) -> nn.Module:
    """torch.compile every encoder and decoder layer in place ("regional" compilation).

    Layers of one kind run the same code, so they share one compiled graph: compiling costs about
    one layer's time instead of the whole stack's, and the model stays an ordinary module (its
    state_dict names do not change). options go to torch.compile.
    """
    for m in model.modules():
        if isinstance(m, (EncoderLayer, DecoderLayer)):
            m.compile(**options)
    return model
