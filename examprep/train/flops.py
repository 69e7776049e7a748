"""Model FLOPs per training step and model FLOPs utilisation (MFU).

Counting as in the PaLM paper (appendix B) and nanoGPT: a weight used in a matrix multiply costs
6 FLOPs per token per training step (2 forward, 4 backward), and attention's two matmuls
(QKᵀ and weights·V) cost 12·H·Q·T_k per query token and layer (H heads of size Q over T_k keys),
full square even where a causal mask skips half (as nanoGPT counts).

Decoder-only, T tokens:  6·N + 12·L·H·Q·T per token.
Encoder–decoder, S source and T target tokens per pair:
    6·N_enc·S + 6·N_dec·T + 12·H·Q·(L_e·S² + L_d·T² + L_d·T·S) per pair,
which for S = T is 6·N + 12·(L_e + 2·L_d)·H·Q·T per target position.
N counts the weights that take part in matrix multiplies (every Linear, the output layer included,
whether tied to the embedding or not); embedding look-ups, LayerNorms and position tables do not
multiply matrices and are left out.
"""
from __future__ import annotations

from torch import nn

#: Dense bf16 tensor-core peak in FLOP/s by GPU name fragment (vendor data sheets, no sparsity).
PEAK_BF16 = {"H200": 989e12, "H100": 989e12, "A100": 312e12, "L40S": 362e12, "L4": 121e12,
             "A10G": 70e12, "4090": 165e12}


def matmul_params(module: nn.Module) -> int:
    """Parameters of the module's Linear layers (weights and biases, tied matrices once)."""
    seen = {}
    for m in module.modules():
        if isinstance(m, nn.Linear):
            for p in m.parameters(recurse=False):
                seen[id(p)] = p.numel()
    return sum(seen.values())


def flops_per_step(model: nn.Module, batch: int, src_len: int, tgt_len: int) -> float:
    """Training FLOPs of one step over `batch` sequences (src_len = 0 for decoder-only).

    `model` is an EncoderDecoder, DecoderOnly or baseline.TorchTransformer (anything with `.cfg`
    and the same parameter layout: the count is by Linear layers and the config)."""
    cfg = model.cfg
    if cfg.arch == "rnn-seq2seq":
        # The cells' weights multiply every token's input and state; attention's scores and context
        # cost about 2·D multiply-adds per (target, source) pair each way.
        n_enc = sum(p.numel() for p in model.encoder.parameters())
        n_dec = matmul_params(model) + sum(p.numel() for p in model.decoder.parameters())
        pairs = 0 if cfg.attention == "none" else src_len * tgt_len
        return batch * (6 * n_enc * src_len + 6 * n_dec * tgt_len + 12 * cfg.d_model * pairs)
    h, q = cfg.n_heads, cfg.d_head
    if cfg.arch == "decoder-only":
        n = matmul_params(model)
        return batch * tgt_len * (6 * n + 12 * cfg.n_decoder_layers * h * q * tgt_len)
    enc = model.transformer.encoder if hasattr(model, "transformer") else model.encoder
    n_enc = matmul_params(enc)
    n_dec = matmul_params(model) - n_enc
    le, ld, s, t = cfg.n_encoder_layers, cfg.n_decoder_layers, src_len, tgt_len
    return batch * (6 * n_enc * s + 6 * n_dec * t + 12 * h * q * (le * s * s + ld * t * t + ld * t * s))


def formula(arch: str) -> str:
    """The formula of `flops_per_step`, for reports."""
    if arch == "decoder-only":
        return "6·N + 12·L·H·Q·T per token (N: weights in matmuls; L layers, H heads of size Q, T tokens)"
    return ("6·N_enc·S + 6·N_dec·T + 12·H·Q·(L_e·S² + L_d·T² + L_d·T·S) per pair; "
            "= 6·N + 12·(L_e + 2·L_d)·H·Q·T per target token when S = T")


def peak_flops(device_name: str) -> float | None:
    """Dense bf16 peak FLOP/s of a GPU by its name, or None if unknown."""
    for key, value in PEAK_BF16.items():
        if key in device_name:
            return value
    return None
