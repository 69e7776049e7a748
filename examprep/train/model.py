"""The Transformer of "Attention Is All You Need" (Vaswani et al. 2017), and its decoder-only cousin.

One file, read top to bottom: configuration, positions, attention, the feed-forward block, the
encoder and decoder layers, the two models. Shapes use B batch, S source length, T target length,
H heads, D d_model, Dh = D / H per head, V vocabulary.

Conventions
- Post-norm by default, as in the paper: x = LayerNorm(x + Dropout(Sublayer(x))). `norm="pre"`
  gives x = x + Dropout(Sublayer(LayerNorm(x))) (Xiong et al. 2020).
- `final_norm` adds one LayerNorm after the encoder stack and one after the decoder stack, which
  `torch.nn.Transformer` always has; with it, weights copied from `nn.Transformer` give the same
  outputs (see `reference.py`). It defaults to on for pre-norm (where it is needed) and off for
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
from dataclasses import asdict, dataclass, fields
from typing import Iterator, Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from examprep.train.errors import ConfigError

ARCHS = ("encoder-decoder", "decoder-only")
NORMS = ("post", "pre")
POSITIONS = ("sinusoidal", "learned", "rope")
SHARING = ("none", "output", "all")
ACTIVATIONS = ("relu", "gelu")
MAX_PARAMETERS = 10**10          # 40 GB of fp32 weights, 160 GB with AdamW's state: beyond any one machine


@dataclass
class TransformerConfig:
    """Everything that fixes the shapes and the computation of a model (saved as config.json)."""

    arch: str = "encoder-decoder"
    src_vocab_size: int = 64          # decoder-only and share_embeddings="all": equal to tgt
    tgt_vocab_size: int = 64
    d_model: int = 128
    n_heads: int = 4
    d_ff: int = 512
    n_encoder_layers: int = 2         # unused by decoder-only
    n_decoder_layers: int = 2
    dropout: float = 0.1
    norm: str = "post"
    final_norm: Optional[bool] = None  # None: on for pre-norm, off for post-norm
    positions: str = "sinusoidal"
    max_len: int = 256                # longest sequence the position tables cover
    share_embeddings: str = "all"
    activation: str = "relu"
    layer_norm_eps: float = 1e-5
    rope_base: float = 10000.0
    pad_id: int = 0

    def __post_init__(self) -> None:
        self._check_types()
        if self.final_norm is None:
            self.final_norm = self.norm == "pre"
        choices = {"arch": ARCHS, "norm": NORMS, "positions": POSITIONS,
                   "share_embeddings": SHARING, "activation": ACTIVATIONS}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ConfigError(f"{name}={getattr(self, name)!r} is not one of {', '.join(allowed)}")
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "d_ff",
                     "n_decoder_layers", "max_len"):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.arch == "encoder-decoder" and self.n_encoder_layers < 1:
            raise ConfigError(f"n_encoder_layers must be at least 1, got {self.n_encoder_layers}")
        if self.d_model % self.n_heads:
            raise ConfigError(f"d_model={self.d_model} is not divisible by heads={self.n_heads}")
        if self.positions == "rope" and self.d_head % 2:
            raise ConfigError(f"RoPE needs an even head size; d_model/heads = {self.d_head}")
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"dropout must be in [0, 1), got {self.dropout}")
        if (self.arch == "decoder-only" or self.share_embeddings == "all") \
                and self.src_vocab_size != self.tgt_vocab_size:
            raise ConfigError(f"{self.arch} with share_embeddings={self.share_embeddings!r} needs one "
                              f"vocabulary, got {self.src_vocab_size} source and {self.tgt_vocab_size} "
                              f"target tokens")
        self.check_size()

    def _check_types(self) -> None:
        # config.json is read back into this class: a value of the wrong type must be named here,
        # not surface as a traceback from deep inside torch.
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type == "int":
                ok, expected = isinstance(value, int) and not isinstance(value, bool), "an integer"
            elif f.type == "float":
                ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                expected = "a finite number"
            elif f.type == "str":
                ok, expected = isinstance(value, str), "a string"
            else:                                   # Optional[bool]
                ok, expected = value is None or isinstance(value, bool), "true, false or null"
            if not ok:
                raise ConfigError(f"{f.name} must be {expected}, got {value!r}")
        for name in ("layer_norm_eps", "rope_base"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}")
        if self.n_encoder_layers < 0 or self.pad_id < 0:
            name = "n_encoder_layers" if self.n_encoder_layers < 0 else "pad_id"
            raise ConfigError(f"{name} must be at least 0, got {getattr(self, name)}")

    def parameter_estimate(self) -> int:
        """About how many numbers the model holds (an upper bound: no tying, position tables counted)."""
        d, ff = self.d_model, self.d_ff
        encoder = self.n_encoder_layers * (4 * d * d + 2 * d * ff) if self.arch == "encoder-decoder" else 0
        decoder = self.n_decoder_layers * (8 * d * d + 2 * d * ff)
        return encoder + decoder + (self.src_vocab_size + 2 * self.tgt_vocab_size + 2 * self.max_len) * d

    def check_size(self) -> None:
        """Refuse a model that cannot possibly fit in memory, naming its size."""
        n = self.parameter_estimate()
        if n > MAX_PARAMETERS:
            raise ConfigError(f"a model with d_model={self.d_model}, d_ff={self.d_ff}, {self.n_encoder_layers}+"
                              f"{self.n_decoder_layers} layers and max_len={self.max_len} would hold about "
                              f"{n:.2g} parameters, more than the {MAX_PARAMETERS:.0g} this trainer allows; "
                              f"choose a smaller --d-model, --d-ff, --layers or --max-len")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TransformerConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown model option(s) {', '.join(unknown)}")
        return cls(**data)


# --------------------------------------------------------------------------- positions

def sinusoidal_table(max_len: int, d_model: int) -> Tensor:
    """PE[pos, 2i] = sin(pos / 10000^(2i/D)), PE[pos, 2i+1] = cos(pos / 10000^(2i/D)). (max_len, D)"""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    inv_freq = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(pos * inv_freq)
    table[:, 1::2] = torch.cos(pos * inv_freq)[:, : d_model // 2]
    return table.float()


def rope_tables(max_len: int, d_head: int, base: float) -> tuple[Tensor, Tensor]:
    """cos and sin of pos·θ_j with θ_j = base^(-2j/Dh), j < Dh/2 (Su et al. 2021). Each (max_len, Dh/2)."""
    inv_freq = torch.pow(base, -torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)
    angles = torch.arange(max_len, dtype=torch.float64)[:, None] * inv_freq
    return torch.cos(angles).float(), torch.sin(angles).float()


def apply_rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate the pairs (x_j, x_{j+Dh/2}) of x (B, H, T, Dh) by the angles whose cos, sin are (…, T, Dh/2).

    The "rotate-half" pairing of GPT-NeoX and LLaMA; q·k then depends on positions only through
    their difference.
    """
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).type_as(x)


class Positions(nn.Module):
    """Adds sinusoidal or learned position vectors to token vectors, or (RoPE) hands q, k rotations."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.kind = cfg.positions
        self.max_len = cfg.max_len
        if self.kind == "sinusoidal":
            self.register_buffer("table", sinusoidal_table(cfg.max_len, cfg.d_model), persistent=False)
        elif self.kind == "learned":
            self.table = nn.Embedding(cfg.max_len, cfg.d_model)
        else:
            cos, sin = rope_tables(cfg.max_len, cfg.d_head, cfg.rope_base)
            self.register_buffer("cos", cos, persistent=False)
            self.register_buffer("sin", sin, persistent=False)

    def check(self, positions_end: int) -> None:
        if positions_end > self.max_len:
            raise ConfigError(f"a sequence of {positions_end} tokens is longer than this model's "
                              f"max_len={self.max_len}")

    def add(self, x: Tensor, positions: Tensor) -> Tensor:
        """x (B, T, D) plus the vectors of `positions` (T,) or (B, T); RoPE adds nothing here."""
        if self.kind == "sinusoidal":
            return x + self.table[positions]
        if self.kind == "learned":
            return x + self.table(positions)
        return x

    def rotation(self, positions: Tensor) -> Optional[tuple[Tensor, Tensor]]:
        """(cos, sin) shaped to broadcast against (B, H, T, Dh/2); None unless RoPE."""
        if self.kind != "rope":
            return None
        cos, sin = self.cos[positions], self.sin[positions]
        if positions.dim() == 2:                      # (B, T, Dh/2) -> (B, 1, T, Dh/2)
            cos, sin = cos[:, None], sin[:, None]
        return cos, sin


# --------------------------------------------------------------------------- dropout

def dropout(x: Tensor, p: float, training: bool = True) -> Tensor:
    """Inverted dropout: zero each element with probability p, scale the rest by 1/(1-p).

    On CUDA this is F.dropout. On CPU, F.dropout draws one Mersenne-Twister number per element
    (bernoulli_), which costs more than the layer's matmuls on a small model; here each 64-bit draw
    gives four 16-bit numbers, so p is rounded to a multiple of 1/65536 (0.1 -> 0.100006) and the
    scale uses that rounded p, keeping E[dropout(x)] = x.
    """
    if not training or p == 0.0:
        return x
    if x.device.type != "cpu":
        return F.dropout(x, p, True)
    n = x.numel()
    words = torch.empty((n + 3) // 4, dtype=torch.int64).random_(-2 ** 63, 2 ** 63 - 1)
    bits = words.view(torch.int16)[:n].view(x.shape)
    dropped = round(p * 65536)
    keep = bits >= dropped - 32768                    # P = (65536 - dropped) / 65536
    return x * (keep.to(x.dtype) * (65536 / (65536 - dropped)))


class Dropout(nn.Module):
    """`dropout` as a module (drop-in for nn.Dropout)."""

    def __init__(self, p: float):
        super().__init__()
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


# --------------------------------------------------------------------------- attention

def attend(q: Tensor, k: Tensor, v: Tensor, *, mask: Optional[Tensor] = None, causal: bool = False,
           dropout_p: float = 0.0, need_weights: bool = False) -> tuple[Tensor, Optional[Tensor]]:
    """softmax(q kᵀ / √Dh + mask) v.

    Shapes: q (B, H, Tq, Dh), k and v (B, H, Tk, Dh); mask boolean, broadcastable to
    (B, H, Tq, Tk), True where a query may attend a key. causal: query i may attend key j ≤ i
    (top-left aligned, as `F.scaled_dot_product_attention`'s is_causal). With need_weights the
    explicit path runs and also returns the weights (B, H, Tq, Tk) (after dropout, as used).
    """
    # On CPU, SDPA with dropout takes its unfused math path with the slow bernoulli_ dropout;
    # the explicit path with our `dropout` computes the same thing faster there.
    fast = not need_weights and (dropout_p == 0.0 or q.device.type != "cpu")
    if causal and (mask is not None or not fast):
        lower = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
        mask, causal = (lower if mask is None else mask & lower), False
    if fast:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p,
                                              is_causal=causal), None
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores.float(), dim=-1).type_as(q)
    weights = dropout(weights, dropout_p)
    return weights @ v, (weights if need_weights else None)


class KVCache:
    """Keys and values an attention layer has seen so far, in a buffer of `capacity` steps.

    Writing into a preallocated buffer keeps each decoding step O(length) instead of the O(length²)
    of concatenating; the buffer takes the dtype and device of the first keys written. `memory`
    holds the projected keys and values of the encoder output, which a cross-attention layer
    computes once per source.
    """

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.k: Optional[Tensor] = None
        self.v: Optional[Tensor] = None
        self.length = 0
        self.memory: Optional[tuple[Tensor, Tensor]] = None

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Store k, v (B, H, t, Dh) after what is held; return all keys and values held so far."""
        end = self.length + k.shape[-2]
        if end > self.capacity:
            raise ConfigError(f"the KV cache holds {self.capacity} steps; step {end} does not fit")
        if self.k is None:
            b, h, _, dh = k.shape
            self.k = k.new_empty(b, h, self.capacity, dh)
            self.v = v.new_empty(b, h, self.capacity, dh)
        self.k[:, :, self.length:end] = k
        self.v[:, :, self.length:end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]


class MultiHeadAttention(nn.Module):
    """Multi-head attention (paper §3.2.2). Self-attention projects q, k, v with one matmul;
    cross-attention projects q from x and k, v from the encoder output.

    The key projection has no bias (as in Whisper): a key bias adds q·b_k to every score of a row,
    which softmax ignores, so its gradient is zero up to rounding, and Adam would turn that
    rounding noise into full-size steps. q and v keep their biases.
    """

    def __init__(self, cfg: TransformerConfig, cross: bool = False):
        super().__init__()
        d = cfg.d_model
        self.n_heads, self.d_head, self.cross = cfg.n_heads, cfg.d_head, cross
        if cross:
            self.q_proj = nn.Linear(d, d)
            self.kv_proj = nn.Linear(d, 2 * d, bias=False)
        else:
            self.qkv_proj = nn.Linear(d, 3 * d, bias=False)
            self.q_bias = nn.Parameter(torch.zeros(d))
        self.v_bias = nn.Parameter(torch.zeros(d))
        self.out_proj = nn.Linear(d, d)
        self.dropout = cfg.dropout
        self.keep_weights = False            # set by `keep_attention`: explicit path, weights kept
        self.weights: Optional[Tensor] = None

    def _heads(self, x: Tensor, n: int) -> Tensor:
        """(B, T, n·D) -> n tensors (B, H, T, Dh), as views (no copy)."""
        b, t, _ = x.shape
        return x.view(b, t, n, self.n_heads, self.d_head).permute(2, 0, 3, 1, 4)

    def forward(self, x: Tensor, memory: Optional[Tensor] = None, *, mask: Optional[Tensor] = None,
                causal: bool = False, rotation: Optional[tuple[Tensor, Tensor]] = None,
                cache: Optional[KVCache] = None) -> Tensor:
        """x (B, T, D) -> (B, T, D). Cross-attention reads keys and values from memory (B, S, D)."""
        if self.cross:
            q = self._heads(self.q_proj(x), 1)[0]
            if cache is not None and cache.memory is not None:
                k, v = cache.memory
            else:
                bias = torch.cat((torch.zeros_like(self.v_bias), self.v_bias))
                k, v = self._heads(F.linear(memory, self.kv_proj.weight, bias), 2)
                if cache is not None:
                    cache.memory = (k, v)
        else:
            bias = torch.cat((self.q_bias, torch.zeros_like(self.q_bias), self.v_bias))
            q, k, v = self._heads(F.linear(x, self.qkv_proj.weight, bias), 3)
            if rotation is not None:
                q, k = apply_rope(q, *rotation), apply_rope(k, *rotation)
            if cache is not None:
                k, v = cache.append(k, v)
        out, weights = attend(q, k, v, mask=mask, causal=causal,
                              dropout_p=self.dropout if self.training else 0.0,
                              need_weights=self.keep_weights)
        if self.keep_weights:
            self.weights = weights.detach()
        b, _, t, _ = out.shape
        return self.out_proj(out.transpose(1, 2).reshape(b, t, self.n_heads * self.d_head))


class FeedForward(nn.Module):
    """FFN(x) = W2 · Dropout(act(W1 x + b1)) + b2 (paper §3.3; the inner dropout as nn.Transformer)."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.linear1 = nn.Linear(cfg.d_model, cfg.d_ff)
        self.linear2 = nn.Linear(cfg.d_ff, cfg.d_model)
        self.act = F.relu if cfg.activation == "relu" else F.gelu
        self.dropout = Dropout(cfg.dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.act(self.linear1(x))))


# --------------------------------------------------------------------------- layers

class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each wrapped in residual + LayerNorm."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.pre_norm = cfg.norm == "pre"
        self.self_attn = MultiHeadAttention(cfg)
        self.ff = FeedForward(cfg)
        self.norm1 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.norm2 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.dropout1 = Dropout(cfg.dropout)
        self.dropout2 = Dropout(cfg.dropout)

    def forward(self, x: Tensor, mask: Optional[Tensor], rotation=None) -> Tensor:
        if self.pre_norm:
            x = x + self.dropout1(self.self_attn(self.norm1(x), mask=mask, rotation=rotation))
            return x + self.dropout2(self.ff(self.norm2(x)))
        x = self.norm1(x + self.dropout1(self.self_attn(x, mask=mask, rotation=rotation)))
        return self.norm2(x + self.dropout2(self.ff(x)))


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the encoder output (unless decoder-only), then
    feed-forward; each wrapped in residual + LayerNorm."""

    def __init__(self, cfg: TransformerConfig, cross: bool = True):
        super().__init__()
        self.pre_norm = cfg.norm == "pre"
        self.self_attn = MultiHeadAttention(cfg)
        self.norm1 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.dropout1 = Dropout(cfg.dropout)
        self.cross_attn = MultiHeadAttention(cfg, cross=True) if cross else None
        self.norm2 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps) if cross else None
        self.dropout2 = Dropout(cfg.dropout) if cross else None
        self.ff = FeedForward(cfg)
        self.norm3 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.dropout3 = Dropout(cfg.dropout)

    def forward(self, x: Tensor, memory: Optional[Tensor] = None, *, self_mask: Optional[Tensor] = None,
                causal: bool = True, memory_mask: Optional[Tensor] = None, rotation=None,
                self_cache: Optional[KVCache] = None, cross_cache: Optional[KVCache] = None) -> Tensor:
        def sa(h):
            return self.self_attn(h, mask=self_mask, causal=causal, rotation=rotation, cache=self_cache)

        def ca(h):
            return self.cross_attn(h, memory, mask=memory_mask, cache=cross_cache)

        if self.pre_norm:
            x = x + self.dropout1(sa(self.norm1(x)))
            if self.cross_attn is not None:
                x = x + self.dropout2(ca(self.norm2(x)))
            return x + self.dropout3(self.ff(self.norm3(x)))
        x = self.norm1(x + self.dropout1(sa(x)))
        if self.cross_attn is not None:
            x = self.norm2(x + self.dropout2(ca(x)))
        return self.norm3(x + self.dropout3(self.ff(x)))


class Encoder(nn.Module):
    """N encoder layers over embedded tokens, plus the optional final LayerNorm."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.n_encoder_layers))
        self.norm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps) if cfg.final_norm else None

    def forward(self, x: Tensor, mask: Optional[Tensor] = None, rotation=None) -> Tensor:
        for layer in self.layers:
            x = layer(x, mask, rotation)
        return self.norm(x) if self.norm is not None else x


class Decoder(nn.Module):
    """N decoder layers (with or without cross-attention), plus the optional final LayerNorm."""

    def __init__(self, cfg: TransformerConfig, cross: bool = True):
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(cfg, cross) for _ in range(cfg.n_decoder_layers))
        self.norm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps) if cfg.final_norm else None

    def forward(self, x: Tensor, memory: Optional[Tensor] = None, *, self_mask: Optional[Tensor] = None,
                causal: bool = True, memory_mask: Optional[Tensor] = None, rotation=None,
                caches: Optional[list[tuple[KVCache, KVCache]]] = None) -> Tensor:
        for i, layer in enumerate(self.layers):
            self_cache, cross_cache = caches[i] if caches is not None else (None, None)
            x = layer(x, memory, self_mask=self_mask, causal=causal, memory_mask=memory_mask,
                      rotation=rotation, self_cache=self_cache, cross_cache=cross_cache)
        return self.norm(x) if self.norm is not None else x


# --------------------------------------------------------------------------- models

class _Base(nn.Module):
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

    def num_params(self, count_position_tables: bool = False) -> int:
        """Distinct parameters (tied matrices once); learned position tables only if asked."""
        seen = {id(p): p for p in self.parameters()}
        if not count_position_tables and self.cfg.positions == "learned":
            seen.pop(id(self.positions.table.weight))
        return sum(p.numel() for p in seen.values())

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


def build_model(cfg: TransformerConfig) -> EncoderDecoder | DecoderOnly:
    """The model `cfg.arch` names, freshly initialised (seed with torch.manual_seed first). A model
    that does not fit in memory is a ConfigError naming its size."""
    try:
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
    layers = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
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
