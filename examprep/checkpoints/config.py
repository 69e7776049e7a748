"""The model's configuration: everything that fixes the shapes and the computation of a model,
saved as config.json and checked when read back (importable without torch: the checkpoint reader
of examprep.checkpoints.stored and the generators use it)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Optional

from examprep.checkpoints.errors import ConfigError

ARCHS = ("encoder-decoder", "decoder-only", "rnn-seq2seq", "encoder-only")
SEQ2SEQ = ("encoder-decoder", "rnn-seq2seq")     # the architectures with an encoder and a decoder
CELLS = ("gru", "lstm")                         # rnn-seq2seq: the recurrent cell
RNN_ATTENTION = ("none", "additive", "dot")     # rnn-seq2seq: Bahdanau, Luong, or the bottleneck
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
    n_decoder_layers: int = 2         # unused by encoder-only
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
    cell: str = "gru"                 # rnn-seq2seq only (see examprep.train.rnn)
    attention: str = "additive"       # rnn-seq2seq only
    bidirectional: bool = True        # rnn-seq2seq only: the encoder reads both ways

    def __post_init__(self) -> None:
        self._check_types()
        if self.final_norm is None:
            self.final_norm = self.norm == "pre"
        choices = {"arch": ARCHS, "norm": NORMS, "positions": POSITIONS,
                   "share_embeddings": SHARING, "activation": ACTIVATIONS, "cell": CELLS,
                   "attention": RNN_ATTENTION}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ConfigError(f"{name}={getattr(self, name)!r} is not one of {', '.join(allowed)}")
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "d_ff", "max_len") \
                + (("n_decoder_layers",) if self.arch != "encoder-only" else ()):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.arch != "decoder-only" and self.n_encoder_layers < 1:
            raise ConfigError(f"n_encoder_layers must be at least 1, got {self.n_encoder_layers}")
        if self.arch == "rnn-seq2seq" and self.bidirectional and self.d_model % 2:
            raise ConfigError(f"a bidirectional encoder needs an even d_model (half each way), got {self.d_model}")
        if self.arch != "rnn-seq2seq" and self.d_model % self.n_heads:
            raise ConfigError(f"d_model={self.d_model} is not divisible by heads={self.n_heads}")
        if self.positions == "rope" and self.arch != "rnn-seq2seq" and self.d_head % 2:      # an RNN has no heads
            raise ConfigError(f"RoPE needs an even head size; d_model/heads = {self.d_head}")
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"dropout must be in [0, 1), got {self.dropout}")
        if (self.arch != "encoder-decoder" or self.share_embeddings == "all") \
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
            elif f.type == "bool":
                ok, expected = isinstance(value, bool), "true or false"
            else:                                   # Optional[bool]
                ok, expected = value is None or isinstance(value, bool), "true, false or null"
            if not ok:
                raise ConfigError(f"{f.name} must be {expected}, got {value!r}")
        for name in ("layer_norm_eps", "rope_base"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}")
        for name in ("n_encoder_layers", "n_decoder_layers", "pad_id"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be at least 0, got {getattr(self, name)}")

    def parameter_estimate(self) -> int:
        """About how many numbers the model holds (an upper bound: no tying, position tables counted)."""
        d, ff = self.d_model, self.d_ff
        if self.arch == "rnn-seq2seq":           # gates × (input + hidden) weights per layer, ×2 for attention
            gates = 3 if self.cell == "gru" else 4
            rnn = gates * 2 * d * d * (self.n_encoder_layers + 2 * self.n_decoder_layers) + 6 * d * d
            return rnn + (self.src_vocab_size + 2 * self.tgt_vocab_size) * d
        encoder = self.n_encoder_layers * (4 * d * d + 2 * d * ff) if self.arch != "decoder-only" else 0
        decoder = self.n_decoder_layers * (8 * d * d + 2 * d * ff) if self.arch != "encoder-only" else 0
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
