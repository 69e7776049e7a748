"""Shared pieces of the trainer's tests: small configurations and paths."""
from __future__ import annotations

import sys
from pathlib import Path

from examprep.checkpoints.config import TransformerConfig

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"
TATOEBA = SHARED_DATA / "tatoeba-eng-fra-5k.tsv"
PYTHON = sys.executable


def small_config(**overrides) -> TransformerConfig:
    """A model small enough to run in milliseconds, dropout off unless asked."""
    base = dict(src_vocab_size=23, tgt_vocab_size=23, d_model=32, n_heads=4, d_ff=64,
                n_encoder_layers=2, n_decoder_layers=2, dropout=0.0, max_len=64)
    base.update(overrides)
    return TransformerConfig(**base)
