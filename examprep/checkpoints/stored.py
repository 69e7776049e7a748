"""A checkpoint as stored, read without torch: the step directory a path names, its config.json and
vocab.json checked against each other and against the SHA-256 that config.json recorded, and the
weights as numpy arrays under names that say what they are.

This is the one reader of a checkpoint's files. examprep.train.checkpoint builds the torch model
from what it returns; the generators read a trained model's numbers from ``read_weights`` (no
torch in generators). The state-dict names of examprep.train.model are written here once
(``Weights``); a test holds them to the torch model's.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from examprep.checkpoints.bpe import BPEVocab, FILES as BPE_FILES
from examprep.checkpoints.config import TransformerConfig
from examprep.checkpoints.errors import CheckpointError, ConfigError
from examprep.checkpoints.rundir import hash_problem, nonfinite_tensor, read_latest
from examprep.checkpoints.vocab import Vocab

FORMAT, VERSION = "examprep-transformer", 1
FILES = ("model.safetensors", "config.json", "vocab.json")
WEIGHTS = "model.safetensors"


@dataclass
class Stored:
    """A checkpoint's step directory, its whole config.json (``meta``), the model's configuration
    and the two vocabularies, all checked."""

    path: Path
    meta: dict
    config: TransformerConfig
    source_vocab: Vocab
    target_vocab: Vocab

    @property
    def data(self) -> dict:
        return self.meta.get("data", {})


def resolve(path: Path | str) -> Path:
    """A step directory from a run directory (its `latest`), the `latest` pointer file itself, or a
    step directory."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {path} does not exist")
    if path.name == "latest" and path.is_file():           # the run's pointer itself: follow it
        step_dir, problem = read_latest(path.parent)
        if problem is not None:
            raise CheckpointError(problem)
        return step_dir
    if not path.is_dir():
        hint = f" ({path.parent} here)" if (path.parent / "config.json").is_file() else ""
        raise CheckpointError(f"checkpoint {path} is a file, but a directory is expected: the run directory "
                              f"or the step directory that holds config.json{hint}")
    if (path / "config.json").is_file():
        return path
    step_dir, problem = read_latest(path)
    if problem is not None:
        raise CheckpointError(problem)
    if step_dir is None:
        raise CheckpointError(f"{path} holds no checkpoint (no 'latest' and no config.json); "
                              f"train one with `examprep train --out {path}`")
    return step_dir


def read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"{path} cannot be read as JSON: {err}") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path} should hold a JSON object")
    return data


def read(path: Path | str) -> Stored:
    """A checkpoint (run or step directory) whose config, vocabulary and recorded hashes agree.
    Raises CheckpointError naming the file for anything missing, damaged, foreign or newer."""
    step_dir = resolve(path)
    missing = [f for f in FILES if not (step_dir / f).is_file()]
    if missing and (step_dir / "adapter.json").is_file():      # train/finetune.py's ADAPTER_JSON
        raise CheckpointError(f"{step_dir} is a LoRA adapter (examprep finetune), not a model checkpoint: "
                              "translate and attention-map read it; elsewhere give its base model or the "
                              "checkpoint --merge writes")
    if missing:
        raise CheckpointError(f"checkpoint {step_dir} is missing {', '.join(missing)}")
    meta = read_json(step_dir / "config.json")
    problem = hash_problem(step_dir, meta, ["vocab.json", *BPE_FILES.values()])   # the weights: where they are read
    if problem is not None:
        raise CheckpointError(problem)
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{step_dir / 'config.json'} is not an examprep checkpoint config "
                              f"(format {meta.get('format')!r})")
    version = meta.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise CheckpointError(f"{step_dir / 'config.json'}: version must be a positive integer, got {version!r}")
    if version > VERSION:
        raise CheckpointError(f"{step_dir / 'config.json'} is checkpoint version {version}, written by a newer "
                              f"examprep; this examprep reads version {VERSION}: upgrade examprep to load it")
    data = meta.get("data", {})
    max_target = data.get("max_target_tokens") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not (max_target is None or (isinstance(max_target, int)
                                                                 and not isinstance(max_target, bool))):
        what = "data must be a JSON object" if not isinstance(data, dict) else \
            f"data.max_target_tokens must be an integer, got {max_target!r}"
        raise CheckpointError(f"{step_dir / 'config.json'}: {what}")
    try:
        if not isinstance(meta.get("model"), dict):
            raise ConfigError(f"model must be a JSON object, got {meta.get('model')!r}")
        cfg = TransformerConfig.from_dict(meta["model"])
    except (KeyError, TypeError, ConfigError) as err:
        raise CheckpointError(f"{step_dir / 'config.json'}: bad model config: {err}") from None
    vocabs = read_json(step_dir / "vocab.json")
    try:
        src_vocab, tgt_vocab = read_vocab(step_dir, vocabs["source"]), read_vocab(step_dir, vocabs["target"])
    except (KeyError, TypeError, AttributeError, ConfigError) as err:
        raise CheckpointError(f"{step_dir / 'vocab.json'}: bad vocabulary: {err}") from None
    if (len(src_vocab), len(tgt_vocab)) != (cfg.src_vocab_size, cfg.tgt_vocab_size):
        raise CheckpointError(f"{step_dir}: vocab.json has {len(src_vocab)} source and {len(tgt_vocab)} "
                              f"target tokens but config.json says {cfg.src_vocab_size} and "
                              f"{cfg.tgt_vocab_size}")
    return Stored(step_dir, meta, cfg, src_vocab, tgt_vocab)


def read_vocab(step_dir: Path, data: dict) -> Vocab:
    """One side of vocab.json: a char or word vocabulary as it stands there, or a BPE vocabulary
    read from the tokenizer file it names, which must have the SHA-256 vocab.json recorded."""
    if isinstance(data, dict) and data.get("level") == BPEVocab.levels[0]:
        return BPEVocab.load(step_dir, data)
    return Vocab.from_dict(data)


def mismatch(step_dir: Path, what: str) -> CheckpointError:
    return CheckpointError(f"{step_dir}: config.json does not match model.safetensors: {what}")


@dataclass
class SelfAttention:
    """One self-attention block's projections: x Wᵀ + b gives q, k, v (D, D each; k has no bias)."""

    weight_q: Any
    bias_q: Any
    weight_k: Any
    weight_v: Any
    bias_v: Any


class Weights:
    """A checkpoint's weights as float64 numpy arrays, by what they are; ``sha256`` of the file.

    The names are examprep.train.model's state dict: tied matrices are stored once, under one of
    their names (the source embedding may be stored as the target's or the output layer's)."""

    EMBEDDINGS = {"source": ("src_embed.weight", "tgt_embed.weight", "lm_head.weight"),
                  "target": ("tgt_embed.weight", "src_embed.weight", "lm_head.weight")}
    POSITION_TABLE = "positions.table.weight"

    def __init__(self, stored: Stored, arrays: dict, sha256: str):
        self.stored, self.arrays, self.sha256 = stored, arrays, sha256

    def _get(self, name: str, shape: tuple) -> Any:
        if name not in self.arrays:
            raise mismatch(self.stored.path, f"the weights lack {name!r}")
        got = self.arrays[name].shape
        if len(got) != len(shape) or any(want is not None and want != n for want, n in zip(shape, got)):
            raise mismatch(self.stored.path, f"{name!r} is {list(got)} in the weights but "
                                             f"{[n or '?' for n in shape]} for the config and vocabulary")
        return self.arrays[name]

    def embedding(self, side: str = "source") -> Any:
        """The token embedding (V, D) of the source or target side."""
        vocab = self.stored.source_vocab if side == "source" else self.stored.target_vocab
        name = next((k for k in self.EMBEDDINGS[side] if k in self.arrays), None)
        if name is None:
            raise mismatch(self.stored.path, f"the weights hold no {side} embedding ({self.EMBEDDINGS[side][0]})")
        return self._get(name, (len(vocab), self.stored.config.d_model))

    def position_table(self) -> Any:
        """The learned position vectors (max_len, D)."""
        return self._get(self.POSITION_TABLE, (None, self.stored.config.d_model))

    def encoder_self_attention(self, layer: int) -> SelfAttention:
        """Layer ``layer``'s self-attention: its fused projection's rows are [q; k; v]."""
        d = self.stored.config.d_model
        a = f"encoder.layers.{layer}.self_attn."
        w = self._get(a + "qkv_proj.weight", (3 * d, d))
        return SelfAttention(w[:d], self._get(a + "q_bias", (d,)), w[d:2 * d], w[2 * d:], self._get(a + "v_bias", (d,)))

    def encoder_norm1(self, layer: int) -> tuple[Any, Any]:
        """Layer ``layer``'s first LayerNorm: (weight, bias)."""
        p = f"encoder.layers.{layer}.norm1."
        d = self.stored.config.d_model
        return self._get(p + "weight", (d,)), self._get(p + "bias", (d,))


    # ------------------------------------------------ examprep.train.rnn (arch "rnn-seq2seq")

    def rnn_layer(self, side: str, layer: int = 0, reverse: bool = False) -> RNNLayer:
        """Layer ``layer`` of the encoder's or decoder's nn.GRU/nn.LSTM (one direction): rows
        [r; z; n] (GRU) or [i; f; g; o] (LSTM), as torch.nn.GRU/LSTM store them."""
        cfg = self.stored.config
        gates = 3 if cfg.cell == "gru" else 4
        d = cfg.d_model
        hidden = d // 2 if side == "encoder" and cfg.bidirectional else d
        if side == "encoder":
            inputs = d if layer == 0 else hidden * (2 if cfg.bidirectional else 1)
        else:
            inputs = d if layer > 0 or cfg.attention != "additive" else 2 * d
        p = f"{side}.{{}}_l{layer}{'_reverse' if reverse else ''}"
        return RNNLayer(self._get(p.format("weight_ih"), (gates * hidden, inputs)),
                        self._get(p.format("weight_hh"), (gates * hidden, hidden)),
                        self._get(p.format("bias_ih"), (gates * hidden,)), self._get(p.format("bias_hh"), (gates * hidden,)))

    def bridge(self, cell_state: bool = False) -> tuple[Any, Any]:
        """The bridge from the encoder's last states to the decoder's first (weight (D, D), bias (D,))."""
        d = self.stored.config.d_model
        p = "bridge_cell." if cell_state else "bridge."
        return self._get(p + "weight", (d, d)), self._get(p + "bias", (d,))

    def additive_attention(self) -> tuple[Any, Any, Any]:
        """Bahdanau attention's (W_1, W_2, v): e_j = vᵀ tanh(W_1 h_j + W_2 s), each (D, D), v (D,)."""
        d = self.stored.config.d_model
        return (self._get("attention.key_proj.weight", (d, d)), self._get("attention.query_proj.weight", (d, d)),
                self._get("attention.v.weight", (1, d))[0])


@dataclass
class RNNLayer:
    """One direction of one layer of a torch.nn.GRU/LSTM: x W_ihᵀ + b_ih and h W_hhᵀ + b_hh per gate."""

    weight_ih: Any
    weight_hh: Any
    bias_ih: Any
    bias_hh: Any


def read_weights(stored: Stored) -> Weights:
    """The weights of a checkpoint read by ``read``, with numpy (safetensors' numpy loader), as
    float64. Raises CheckpointError for a file that cannot be read, differs from the SHA-256 that
    config.json recorded, or holds NaN or infinity."""
    import numpy as np
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    path = stored.path / WEIGHTS
    try:
        raw = path.read_bytes()
        arrays = load_file(str(path))
    except (SafetensorError, OSError, ValueError, TypeError) as err:
        raise CheckpointError(f"{path} cannot be read: {err}") from None
    problem = hash_problem(stored.path, stored.meta, [WEIGHTS])
    if problem is not None:
        raise CheckpointError(problem)
    bad = nonfinite_tensor(arrays)
    if bad is not None:
        raise CheckpointError(f"{path}: {bad} holds NaN or infinite values; this checkpoint cannot translate "
                              f"(train again, or use an earlier checkpoint)")
    return Weights(stored, {k: v.astype(np.float64) for k, v in arrays.items()}, hashlib.sha256(raw).hexdigest())


def read_checkpoint(path: Path | str) -> tuple[Stored, Weights]:
    """``read`` and ``read_weights`` together: a checkpoint's configuration and its numbers. On the
    base install (no safetensors) that is said first, whatever the path."""
    import safetensors  # noqa: F401

    stored = read(path)
    return stored, read_weights(stored)


__all__ = ["FILES", "FORMAT", "VERSION", "RNNLayer", "SelfAttention", "Stored", "Weights", "read", "read_checkpoint",
           "read_json", "read_vocab", "read_weights", "resolve"]
