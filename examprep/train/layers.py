"""The blocks of the Transformer (Vaswani et al. 2017), read top to bottom: positions, dropout,
attention (with its KV cache), the feed-forward block, the encoder and decoder layers and stacks.
The two models that assemble them are in examprep.train.model; the conventions are described there.
Shapes use B batch, S source length, T target length, H heads, D d_model, Dh = D / H per head.
"""
from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from examprep.checkpoints.config import TransformerConfig
from examprep.checkpoints.errors import ConfigError

# --------------------------------------------------------------------------- positions

def sinusoidal_table(max_len: int, d_model: int) -> Tensor:
    """PE[pos, 2i] = sin(pos / 10000^(2i/D)), PE[pos, 2i+1] = cos(pos / 10000^(2i/D)). (max_len, D)"""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    inv_freq = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(pos * inv_freq)
    table[:, 1::2] = torch.cos(pos * inv_freq)[:, : d_model // 2]
    return table                                  # float64: used at the input's precision (promoted)


def rope_tables(max_len: int, d_head: int, base: float) -> tuple[Tensor, Tensor]:
    """cos and sin of pos·θ_j with θ_j = base^(-2j/Dh), j < Dh/2 (Su et al. 2021). Each (max_len, Dh/2),
    float64: used at the input's precision (promoted)."""
    inv_freq = torch.pow(base, -torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)
    angles = torch.arange(max_len, dtype=torch.float64)[:, None] * inv_freq
    return torch.cos(angles), torch.sin(angles)


def promoted(dtype: torch.dtype) -> torch.dtype:
    """The precision a table or a softmax is used at for inputs of ``dtype``: at least float32 (bf16
    and fp16 inputs are promoted), float64 kept; never a downcast (issue 40: float64 models went
    through float32 here)."""
    return torch.promote_types(dtype, torch.float32)


def apply_rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate the pairs (x_j, x_{j+Dh/2}) of x (B, H, T, Dh) by the angles whose cos, sin are (…, T, Dh/2).

    The "rotate-half" pairing of GPT-NeoX and LLaMA; q·k then depends on positions only through
    their difference.
    """
    x1, x2 = x.chunk(2, dim=-1)
    cos, sin = cos.to(promoted(x.dtype)), sin.to(promoted(x.dtype))
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
            return x + self.table[positions].to(promoted(x.dtype))
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


class CountsParams:
    """num_params() of a model whose position vectors are ``self.positions`` (the Transformers and
    the encoder-only masked LM)."""

    positions: Positions

    def num_params(self, count_position_tables: bool = False) -> int:
        """Distinct parameters (tied matrices once); learned position tables only if asked."""
        seen = {id(p): p for p in self.parameters()}
        if not count_position_tables and self.positions.kind == "learned":
            seen.pop(id(self.positions.table.weight))
        return sum(p.numel() for p in seen.values())


# --------------------------------------------------------------------------- dropout

def _keep(x: Tensor, p: float) -> tuple[Tensor, float]:
    """The kept elements of a CPU dropout of x: a boolean tensor of x's shape, True with probability
    1 - p' where p' is p rounded to a multiple of 1/65536, and the scale 1/(1 - p')."""
    n = x.numel()
    words = torch.empty((n + 3) // 4, dtype=torch.int64).random_(-2 ** 63, 2 ** 63 - 1)
    bits = words.view(torch.int16)[:n].view(x.shape)
    dropped = round(p * 65536)
    return bits >= dropped - 32768, 65536 / (65536 - dropped)    # P(keep) = (65536 - dropped) / 65536


def _scaled(keep: Tensor, scale: float, dtype: torch.dtype) -> Tensor:
    """The mask {0, scale} of `keep` in `dtype`, built in place. Read as bytes, the conversion takes
    torch's vectorized uint8 path: bool -> float is about ten times slower on CPU."""
    return keep.view(torch.uint8).to(dtype).mul_(scale)


def dropout(x: Tensor, p: float, training: bool = True, inplace: bool = False) -> Tensor:
    """Inverted dropout: zero each element with probability p, scale the rest by 1/(1-p).

    On CUDA this is F.dropout. On CPU, F.dropout draws one Mersenne-Twister number per element
    (bernoulli_), which costs more than the layer's matmuls on a small model; here each 64-bit draw
    gives four 16-bit numbers, so p is rounded to a multiple of 1/65536 (0.1 -> 0.100006) and the
    scale uses that rounded p, keeping E[dropout(x)] = x. `inplace` overwrites x (a fresh result no
    backward needs, such as a linear layer's output): one large allocation fewer.
    """
    if not training or p == 0.0:
        return x
    if x.device.type != "cpu":
        return F.dropout(x, p, True, inplace)
    keep, scale = _keep(x, p)
    mask = _scaled(keep, scale, x.dtype)
    return x.mul_(mask) if inplace else x * mask


def relu_dropout(x: Tensor, p: float, training: bool = True, inplace: bool = False) -> Tensor:
    """dropout(relu(x), p), the same numbers from the same random draws, in fewer passes on CPU: one
    mask {0, scale} that is zero where x ≤ 0 or the element is dropped, so that the forward is one
    product and the backward (relu's and dropout's together, relu'(0) = 0 as torch's) another.
    `inplace` as in `dropout`."""
    if not training or p == 0.0 or x.device.type != "cpu":
        return dropout(F.relu(x), p, training, inplace)
    keep, scale = _keep(x, p)
    keep &= x.detach() > 0
    mask = _scaled(keep, scale, x.dtype)
    return x.mul_(mask) if inplace else x * mask


class Dropout(nn.Module):
    """`dropout` as a module (drop-in for nn.Dropout, `inplace` included)."""

    def __init__(self, p: float, inplace: bool = False):
        super().__init__()
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return dropout(x, self.p, self.training, self.inplace)

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
    # in place: the product's backward needs q and k, not the scores, and masked_fill's only the mask
    scores = (q @ k.transpose(-2, -1)).mul_(1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        scores = scores.masked_fill_(~mask, float("-inf"))
    weights = torch.softmax(scores.to(promoted(scores.dtype)), dim=-1).type_as(q)
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
        h = self.linear1(x)
        if self.act is F.relu:              # relu and dropout as one mask (same numbers), over h itself
            return self.linear2(relu_dropout(h, self.dropout.p, self.training, inplace=True))
        return self.linear2(self.dropout(self.act(h)))


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
        self.dropout1 = Dropout(cfg.dropout, inplace=True)     # over the sublayers' fresh outputs
        self.dropout2 = Dropout(cfg.dropout, inplace=True)

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
        self.dropout1 = Dropout(cfg.dropout, inplace=True)     # over the sublayers' fresh outputs
        self.cross_attn = MultiHeadAttention(cfg, cross=True) if cross else None
        self.norm2 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps) if cross else None
        self.dropout2 = Dropout(cfg.dropout, inplace=True) if cross else None
        self.ff = FeedForward(cfg)
        self.norm3 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.dropout3 = Dropout(cfg.dropout, inplace=True)

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
