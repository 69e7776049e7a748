"""`torch.nn.Transformer` dressed as our encoder–decoder: the baseline of the benchmarks, and the
independent implementation the model's tests compare against (the engine's torch references are
examprep.verify).

`TorchTransformer` wraps `nn.Transformer` with the same embeddings (×√D), sinusoidal positions and
output layer as `EncoderDecoder`; `copy_into` copies its weights into one of ours, after which both
compute the same function (ours needs `final_norm=True`, since `nn.Transformer` always has the two
final LayerNorms). `nn.MultiheadAttention` packs q, k, v projections in one `in_proj_weight`
(rows q, k, v), which we split the same way for cross-attention.
"""
from __future__ import annotations

import math
import warnings
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from examprep.checkpoints.config import TransformerConfig
from examprep.checkpoints.errors import ConfigError
from examprep.train.layers import promoted, sinusoidal_table
from examprep.train.model import EncoderDecoder
from examprep.train.rnn import top_hidden


class TorchTransformer(nn.Module):
    """Embeddings + `nn.Transformer` (batch_first) + output layer, configured from our config."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        if cfg.arch != "encoder-decoder" or cfg.positions != "sinusoidal" or not cfg.final_norm:
            raise ConfigError("nn.Transformer matches an encoder-decoder with sinusoidal positions "
                              "and final_norm=True")
        self.cfg = cfg
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab_size, cfg.d_model)
        self.src_embed = self.tgt_embed if cfg.share_embeddings == "all" \
            else nn.Embedding(cfg.src_vocab_size, cfg.d_model)
        self.register_buffer("pe", sinusoidal_table(cfg.max_len, cfg.d_model), persistent=False)
        self.dropout = nn.Dropout(cfg.dropout)
        with warnings.catch_warnings():     # "enable_nested_tensor is True, but ..." for pre-norm
            warnings.simplefilter("ignore", UserWarning)
            self.transformer = nn.Transformer(
                d_model=cfg.d_model, nhead=cfg.n_heads, num_encoder_layers=cfg.n_encoder_layers,
                num_decoder_layers=cfg.n_decoder_layers, dim_feedforward=cfg.d_ff, dropout=cfg.dropout,
                activation=cfg.activation, layer_norm_eps=cfg.layer_norm_eps, batch_first=True,
                norm_first=cfg.norm == "pre")
        self.lm_head = nn.Linear(cfg.d_model, cfg.tgt_vocab_size, bias=False)
        for emb in {id(self.src_embed): self.src_embed, id(self.tgt_embed): self.tgt_embed}.values():
            nn.init.normal_(emb.weight, std=cfg.d_model ** -0.5)   # as ours: unit variance after ×√D
        if cfg.share_embeddings != "none":
            self.lm_head.weight = self.tgt_embed.weight

    def _embed(self, emb: nn.Embedding, tokens: Tensor) -> Tensor:
        x = emb(tokens) * math.sqrt(self.cfg.d_model)
        return self.dropout(x + self.pe[: tokens.shape[1]].to(promoted(x.dtype)))

    def encode(self, src: Tensor) -> tuple[Tensor, Tensor]:
        pad = src == self.cfg.pad_id
        with warnings.catch_warnings():     # "The PyTorch API of nested tensors is in prototype stage"
            warnings.simplefilter("ignore", UserWarning)
            memory = self.transformer.encoder(self._embed(self.src_embed, src), src_key_padding_mask=pad)
        return memory, pad

    def decode(self, tgt_in: Tensor, memory: Tensor, src_pad: Tensor) -> Tensor:
        t = tgt_in.shape[1]
        causal = nn.Transformer.generate_square_subsequent_mask(t, device=tgt_in.device)
        return self.transformer.decoder(self._embed(self.tgt_embed, tgt_in), memory, tgt_mask=causal,
                                        tgt_is_causal=True, memory_key_padding_mask=src_pad)

    def forward(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        memory, pad = self.encode(src)
        return self.lm_head(self.decode(tgt_in, memory, pad))

    @torch.no_grad()
    def greedy(self, src: Tensor, max_new_tokens: int, bos: int, eos: int) -> Tensor:
        """Greedy decoding the way `nn.Transformer` offers it: re-run the decoder over the whole
        prefix at every step (logits of the last position only). Returns (B, ≤ 1 + max_new_tokens)."""
        memory, pad = self.encode(src)
        out = torch.full((src.shape[0], 1), bos, dtype=torch.long, device=src.device)
        done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
        for _ in range(max_new_tokens):
            nxt = self.lm_head(self.decode(out, memory, pad)[:, -1]).argmax(-1)
            nxt = nxt.masked_fill(done, self.cfg.pad_id)
            out = torch.cat([out, nxt[:, None]], dim=1)
            done |= nxt == eos
            if bool(done.all()):
                break
        return out


def _copy(dst: Tensor, src: Tensor) -> None:
    if dst.shape != src.shape:
        raise ConfigError(f"shape mismatch copying weights: {tuple(src.shape)} into {tuple(dst.shape)}")
    dst.copy_(src)


@torch.no_grad()
def copy_into(ours: EncoderDecoder, ref: TorchTransformer | nn.Transformer) -> EncoderDecoder:
    """Copy the weights of `ref` (a TorchTransformer, or a bare nn.Transformer for the stacks only)
    into `ours`. Returns `ours`."""
    if not ours.cfg.final_norm:
        raise ConfigError("nn.Transformer has final LayerNorms: build ours with final_norm=True")
    core = ref.transformer if isinstance(ref, TorchTransformer) else ref
    d = ours.cfg.d_model
    # in_proj_bias rows are [q; k; v]: ours has no key bias, which changes no output (see
    # MultiHeadAttention), so its k part is not copied.
    for mine, theirs in zip(ours.encoder.layers, core.encoder.layers):
        _copy(mine.self_attn.qkv_proj.weight, theirs.self_attn.in_proj_weight)
        _copy(mine.self_attn.q_bias, theirs.self_attn.in_proj_bias[:d])
        _copy(mine.self_attn.v_bias, theirs.self_attn.in_proj_bias[2 * d:])
        _copy_common(mine, theirs, norms=("norm1", "norm2"))
    for mine, theirs in zip(ours.decoder.layers, core.decoder.layers):
        _copy(mine.self_attn.qkv_proj.weight, theirs.self_attn.in_proj_weight)
        _copy(mine.self_attn.q_bias, theirs.self_attn.in_proj_bias[:d])
        _copy(mine.self_attn.v_bias, theirs.self_attn.in_proj_bias[2 * d:])
        w, b = theirs.multihead_attn.in_proj_weight, theirs.multihead_attn.in_proj_bias
        _copy(mine.cross_attn.q_proj.weight, w[:d])
        _copy(mine.cross_attn.q_proj.bias, b[:d])
        _copy(mine.cross_attn.kv_proj.weight, w[d:])
        _copy(mine.cross_attn.v_bias, b[2 * d:])
        _copy(mine.cross_attn.out_proj.weight, theirs.multihead_attn.out_proj.weight)
        _copy(mine.cross_attn.out_proj.bias, theirs.multihead_attn.out_proj.bias)
        _copy_common(mine, theirs, norms=("norm1", "norm2", "norm3"))
    for mine, theirs in ((ours.encoder.norm, core.encoder.norm), (ours.decoder.norm, core.decoder.norm)):
        _copy(mine.weight, theirs.weight)
        _copy(mine.bias, theirs.bias)
    if isinstance(ref, TorchTransformer):
        _copy(ours.tgt_embed.weight, ref.tgt_embed.weight)
        _copy(ours.src_embed.weight, ref.src_embed.weight)
        _copy(ours.lm_head.weight, ref.lm_head.weight)
    return ours


def _copy_common(mine: nn.Module, theirs: nn.Module, norms: tuple[str, ...]) -> None:
    _copy(mine.self_attn.out_proj.weight, theirs.self_attn.out_proj.weight)
    _copy(mine.self_attn.out_proj.bias, theirs.self_attn.out_proj.bias)
    _copy(mine.ff.linear1.weight, theirs.linear1.weight)
    _copy(mine.ff.linear1.bias, theirs.linear1.bias)
    _copy(mine.ff.linear2.weight, theirs.linear2.weight)
    _copy(mine.ff.linear2.bias, theirs.linear2.bias)
    for name in norms:
        _copy(getattr(mine, name).weight, getattr(theirs, name).weight)
        _copy(getattr(mine, name).bias, getattr(theirs, name).bias)


def matched_pair(cfg: TransformerConfig, seed: int = 0, device: Optional[torch.device] = None,
                 random_biases: bool = False) -> tuple[EncoderDecoder, TorchTransformer]:
    """Ours and the nn.Transformer baseline with identical configuration and weights.

    nn.Transformer starts its biases at zero; `random_biases` draws them (key biases included) so
    that a comparison also covers them."""
    torch.manual_seed(seed)
    ref = TorchTransformer(cfg).to(device)
    if random_biases:
        with torch.no_grad():
            for name, p in ref.named_parameters():
                if name.endswith("bias"):
                    p.normal_(0.0, 0.1)
    ours = EncoderDecoder(cfg).to(device)
    return copy_into(ours, ref), ref


def plain_rnn_loop(model, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
    """Teacher-forced logits of an examprep.train.rnn model computed the plain way, as the PyTorch
    seq2seq tutorial writes it, over the model's own modules (so with its weights): the encoder
    nn.GRU/LSTM over the (unpadded) source, then the decoder called once per target token for every
    attention kind, and additive attention's W_1 h_j recomputed at every step. The reference that
    bench/train_cpu.py times the model against; equal logits (tests/train/test_rnn.py)."""
    cfg = model.cfg
    scale = math.sqrt(cfg.d_model)
    annotations, final = model.encoder(model.dropout(model.src_embed(src) * scale))
    annotations = model.dropout(annotations)
    state = model._bridge(final)
    y = model.dropout(model.tgt_embed(tgt_in) * scale)
    features = []
    for t in range(tgt_in.shape[1]):
        if cfg.attention == "additive":
            a = model.attention
            scores = a.v(torch.tanh(a.key_proj(annotations) + a.query_proj(top_hidden(state))[:, None])).squeeze(-1)
            context = torch.bmm(F.softmax(scores, dim=-1)[:, None], annotations)[:, 0]
            out, state = model.decoder(torch.cat([y[:, t], context], dim=-1)[:, None], state)
            features.append(torch.cat([out[:, 0], context], dim=-1))
        else:
            out, state = model.decoder(y[:, t:t + 1], state)
            s = out[:, 0]
            if cfg.attention == "dot":
                weights = F.softmax(torch.bmm(annotations, s[:, :, None])[:, :, 0], dim=-1)
                s = torch.cat([s, torch.bmm(weights[:, None], annotations)[:, 0]], dim=-1)
            features.append(s)
    return model.logits(model.dropout(torch.tanh(model.out_proj(torch.stack(features, dim=1)))))
