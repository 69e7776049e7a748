"""The options of the trainer's commands, importable without torch: `examprep train`'s (the CLI
takes its defaults here), the checks of `examprep attention-map`'s made before torch loads, and the
thread setting every torch command makes first."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from examprep.errors import ExamprepError

PRECISIONS = ("auto", "fp32", "bf16", "fp16")


@dataclass
class TrainOptions:
    """Every option of `examprep train` (see `examprep train --help` for each)."""

    # data
    task: Optional[str] = None                 # dates (default), reverse, sort, copy
    corpus: Optional[str] = None               # a source<TAB>target file instead of a task
    swap: bool = False                         # corpus: translate the second column into the first
    tokens: str = "char"                       # corpus: char or word level
    min_count: int = 1                         # corpus, word level: rarer words become <unk>
    heldout: float = 0.05                      # corpus: share of sources held out (0: evaluate on training pairs)
    eval_size: int = 2000                      # built-in tasks: held-out pairs to evaluate on
    lengths: Optional[str] = None              # reverse, sort, copy: "MIN-MAX" letters (default 4-16)
    # model
    arch: str = "encoder-decoder"             # or decoder-only, rnn-seq2seq, encoder-only
    cell: Optional[str] = None                 # rnn-seq2seq: gru (default) or lstm
    attention: Optional[str] = None            # rnn-seq2seq: additive (default), dot or none
    bidirectional: bool = True                 # rnn-seq2seq: False reads the source left to right only
    objective: str = "seq2seq"                 # seq2seq (translate), or mlm (masked LM, encoder-only)
    d_model: int = 64                         # the defaults: the dates goal within a minute on 2 CPU cores
    layers: int = 1                            # encoder layers and decoder layers (each). dates: one of each
                                               # reaches the goal in 300-450 steps (18-34 s here) where 2+2
                                               # needed 200-250 steps (24-50 s), and its one cross-attention
                                               # aligns output digits with their source field (best head
                                               # 98.2% for seed 0; 2+2: 82-89%); docs/trainer.md, "Why this default"
    heads: int = 4
    d_ff: int = 256
    dropout: Optional[float] = None            # None: 0 for built-in tasks (examples never repeat), 0.1 for corpora
    norm: str = "post"
    final_norm: Optional[bool] = None
    positions: str = "rope"                    # the model's default is the paper's sinusoidal; RoPE reaches
                                               # the dates goal in 300-450 steps where sinusoidal needs 500-850
    share: str = "all"
    activation: str = "relu"
    max_len: int = 256
    # optimisation
    batch_tokens: int = 6000                   # source + target tokens per step, all processes together
    lr_schedule: str = "noam"                  # noam, cosine, linear or constant (examprep.train.schedule)
    lr: Optional[float] = None                 # peak rate of cosine, linear, constant (None: 1e-3); not noam's
    lr_factor: float = 0.5                     # noam: dates' goal without dips (0.7 dipped to 91% with 2+2 layers)
    warmup: int = 200
    grad_accum: int = 1                        # micro-batches per step (the step's batch split; the same update)
    label_smoothing: float = 0.1
    clip: float = 1.0
    weight_decay: float = 0.01
    seed: int = 0
    # run control
    steps: Optional[int] = None
    minutes: Optional[float] = None            # neither steps nor minutes: 1 minute
    goal: Optional[float] = None               # None: 0.995 exact match for tasks, off for corpora
    eval_every: int = 50
    save_every: Optional[int] = None           # default: at every evaluation
    keep: int = 2                              # step checkpoints kept (RUN/best is kept beside them)
    log_every: Optional[int] = None            # steps between loss read-outs; default 1 on CPU, 10 on CUDA
    device: str = "auto"
    threads: Optional[int] = None              # CPU: None leaves torch's setting, 0 chooses by load, n sets n
    precision: str = "auto"
    compile: bool = False
    out: Optional[str] = None
    resume: bool = False
    tensorboard: bool = False                  # also write the log's scalars to OUT/tensorboard (examprep.train.runlog)
    bpe_vocab: Optional[int] = None            # --tokens bpe: tokens in each BPE vocabulary (None: bpe.DEFAULT_SIZE)
    given: Optional[frozenset] = None          # the options named on the command line; None: those that
                                               # differ from these defaults (a caller's TrainOptions)


# Options a resumed run takes from its checkpoint (the rest come from the new command line).
KEPT_ON_RESUME = ("task", "corpus", "swap", "tokens", "min_count", "heldout", "eval_size", "lengths", "arch",
                  "objective", "cell", "attention", "bidirectional", "d_model", "layers", "heads", "d_ff", "dropout",
                  "norm", "final_norm", "positions", "share", "activation", "max_len", "batch_tokens",
                  "label_smoothing", "seed", "bpe_vocab")
# ... and these unless they are given again (issue 40 item 5); --steps and --minutes go together.
KEPT_UNLESS_GIVEN = ("goal", "eval_every", "steps", "minutes", "threads", "lr_schedule", "lr", "lr_factor", "warmup",
                     "clip", "weight_decay", "grad_accum", "save_every", "keep", "precision",
                     "compile")


MAX_TASK_LENGTH = 200


def parse_lengths(text: str, task: Optional[str]) -> tuple[int, int]:
    """--lengths "MIN-MAX" of a string task (reverse, sort, copy) as (MIN, MAX); ExamprepError
    naming what is wrong (a dates task, a corpus, a malformed or empty range)."""
    import re

    if task not in ("reverse", "sort", "copy"):
        what = f"--task {task}" if task else "a corpus"
        raise ExamprepError(f"--lengths {text}: only the string tasks reverse, sort and copy have lengths, not {what}")
    found = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", text)
    if not found:
        raise ExamprepError(f"--lengths: expected MIN-MAX letters such as 4-60, got {text!r}")
    low, high = int(found.group(1)), int(found.group(2))
    if not 1 <= low <= high <= MAX_TASK_LENGTH:
        raise ExamprepError(f"--lengths {text}: expected 1 ≤ MIN ≤ MAX ≤ {MAX_TASK_LENGTH}")
    return low, high


def check_architecture(arch: str, cell: Optional[str], attention: Optional[str], bidirectional: bool = True) -> None:
    """The architecture options that only make sense together, checked before any work (and
    before torch loads): --cell, --attention and --unidirectional belong to --arch rnn-seq2seq."""
    from examprep.checkpoints.config import ARCHS, CELLS, RNN_ATTENTION

    if arch not in ARCHS:
        raise ExamprepError(f"--arch: expected {', '.join(ARCHS)}, got {arch!r}")
    if cell is not None and cell not in CELLS:
        raise ExamprepError(f"--cell: expected {' or '.join(CELLS)}, got {cell!r}")
    if attention is not None and attention not in RNN_ATTENTION:
        raise ExamprepError(f"--attention: expected {', '.join(RNN_ATTENTION)}, got {attention!r}")
    if arch != "rnn-seq2seq":
        if cell is not None:
            raise ExamprepError(f"--cell {cell}: the cell is the RNN's; it needs --arch rnn-seq2seq, not {arch}")
        if attention is not None:
            raise ExamprepError(f"--attention {attention}: {arch} always uses scaled dot-product attention; "
                                f"--attention chooses the RNN's and needs --arch rnn-seq2seq")
        if not bidirectional:
            raise ExamprepError(f"--unidirectional: the RNN encoder's reading direction; it needs --arch rnn-seq2seq, "
                                f"not {arch}")


def stored_training(out: Optional[Path | str]) -> Optional[dict]:
    """The "training" options in the config.json of a run's latest checkpoint, or None when there is
    none to read (the trainer's loader then says why, with the checkpoint's own checks). Torch-free:
    --resume reads them before torch does any work."""
    import json

    from examprep.checkpoints.rundir import read_latest

    step_dir = read_latest(out)[0] if out is not None else None
    if step_dir is None:
        return None
    try:
        saved = json.loads((step_dir / "config.json").read_text(encoding="utf-8")).get("training")
    except (OSError, ValueError, AttributeError):
        return None
    return saved if isinstance(saved, dict) else None


def resumed_model_kind(out: Optional[Path], arch: str, objective: str) -> tuple[str, str]:
    """--resume keeps the run's architecture and objective: (arch, objective) as its latest
    checkpoint saved them, or as given when there is none to read (the trainer then says why)."""
    saved = stored_training(out) or {}
    return str(saved.get("arch", arch)), str(saved.get("objective", objective))


def with_article(arch: str) -> str:
    """An architecture's name with its article, as said aloud: "an encoder-decoder", "a decoder-only",
    "an rnn-seq2seq" (ar-en-en), "an encoder-only"."""
    return f"{'an' if arch[:1] in 'aeior' else 'a'} {arch}"


def check_objective(arch: str, objective: str) -> None:
    """--objective against --arch, before torch loads: a masked LM reads the whole sentence, so it
    is encoder-only, and an encoder alone has no decoder to translate with."""
    from examprep.checkpoints.errors import ConfigError

    if objective not in ("seq2seq", "mlm"):
        raise ConfigError(f"--objective {objective!r} is not one of seq2seq, mlm")
    if objective == "mlm" and arch != "encoder-only":
        raise ConfigError(f"--objective mlm needs --arch encoder-only: a masked LM reads the words on both "
                          f"sides of a gap, which {with_article(arch)} model's causal decoder cannot")
    if objective == "seq2seq" and arch == "encoder-only":
        raise ConfigError("--arch encoder-only has no decoder to translate with; add --objective mlm")


def check_tokens(tokens: str, bpe_vocab: Optional[int], objective: str, corpus: bool, resume: bool = False) -> None:
    """--tokens and --bpe-vocab, before torch loads: BPE is learned from a corpus for the translation
    models and needs the tokenizers library; --bpe-vocab sizes it and nothing else. On --resume the
    run's own tokens are kept, so only the level's spelling is checked."""
    from examprep.checkpoints.bpe import LEVEL, MIN_SIZE, require
    from examprep.checkpoints.errors import ConfigError
    from examprep.checkpoints.vocab import TOKEN_LEVELS

    if tokens not in TOKEN_LEVELS:
        raise ConfigError(f"--tokens {tokens!r} is not one of {', '.join(TOKEN_LEVELS)}")
    if resume:
        return
    if bpe_vocab is not None and tokens != LEVEL:
        raise ConfigError(f"--bpe-vocab {bpe_vocab} sizes a BPE vocabulary: it needs --tokens bpe, not --tokens {tokens}")
    if tokens != LEVEL:
        return
    if objective == "mlm":
        raise ConfigError("--tokens bpe is for the translation models; --objective mlm reads char or word tokens")
    if not corpus:
        raise ConfigError("--tokens bpe learns its subwords from a corpus: give --corpus FILE (the built-in tasks "
                          "are read character by character)")
    if bpe_vocab is not None and bpe_vocab < MIN_SIZE:
        raise ConfigError(f"--bpe-vocab must be at least {MIN_SIZE} (the 5 special tokens and a character), got {bpe_vocab}")
    require()


@dataclass
class FinetuneOptions:
    """Every option of `examprep finetune` (see `examprep finetune --help` for each)."""

    checkpoint: str = ""                       # the base model: a run or step directory of `examprep train`
    rank: Optional[int] = None                 # LoRA rank r (required unless full)
    alpha: Optional[float] = None              # LoRA α; None: α = r (scale 1, as Hu et al. set α to their first r)
    targets: str = "q,v"                       # projections adapted in every attention block
    full: bool = False                         # full fine-tuning instead (every weight trained; the comparison)
    task: Optional[str] = None                 # None: the checkpoint's own data
    corpus: Optional[str] = None
    swap: Optional[bool] = None                # None: as the checkpoint was trained
    heldout: float = 0.05
    eval_size: int = 2000
    lr: Optional[float] = None                 # None: 3e-3 for LoRA, 1e-3 for full fine-tuning
    warmup: int = 20                           # linear warm-up steps, then a constant rate
    batch_tokens: int = 6000
    seed: int = 0
    steps: Optional[int] = None
    minutes: Optional[float] = None            # neither steps nor minutes: 1 minute
    goal: Optional[float] = None               # None: 0.995 exact match for tasks, off for corpora; 0: off
    eval_every: int = 50
    device: str = "auto"
    threads: Optional[int] = None
    out: Optional[str] = None
    resume: bool = False
    merge: bool = False                        # also write OUT/merged, a plain checkpoint with B·A·α/r added
    tensorboard: bool = False                  # also write the log's scalars to OUT/tensorboard (examprep.train.runlog)


# `examprep finetune`: the projections LoRA may adapt in every attention block
LORA_TARGETS = ("q", "k", "v", "o")


def parse_targets(text: str) -> tuple[str, ...]:
    """"q,v" -> ("q", "v"); ConfigError naming an unknown, repeated or missing target."""
    from examprep.checkpoints.errors import ConfigError

    names = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in names):
        raise ConfigError(f"--targets {text!r}: expected a comma-separated list of {', '.join(LORA_TARGETS)}, "
                          f"e.g. q,v")
    unknown = [t for t in names if t not in LORA_TARGETS]
    if unknown:
        raise ConfigError(f"--targets: unknown target {unknown[0]!r}; choose from {', '.join(LORA_TARGETS)} "
                          f"(the query, key, value and output projections of every attention block)")
    if len(set(names)) != len(names):
        raise ConfigError(f"--targets {text!r} names a projection twice")
    return tuple(t for t in LORA_TARGETS if t in names)


def check_rank(rank: int, d_model: int) -> None:
    """A LoRA rank must be in 1 … min(d, k) = d_model (the adapted matrices are d_model × d_model)."""
    from examprep.checkpoints.errors import ConfigError

    if rank < 1:
        raise ConfigError(f"--lora-rank must be at least 1, got {rank}")
    if rank > d_model:
        raise ConfigError(f"--lora-rank {rank} is above min(d, k) = {d_model}: the adapted projections are "
                          f"{d_model}×{d_model}, so B·A cannot have a rank above {d_model}")


def quiet_waiting_threads() -> None:
    """Before torch loads OpenMP: idle threads sleep instead of spinning, so that on a machine
    whose cores other programs also use, a waiting thread does not take a core from a working
    one (two spinning threads on a busy 2-core machine trained 10x slower than one thread)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


MAX_BEAM = 1000           # `examprep translate --beam`: a wider beam is a typo (each step scores K·V candidates)

# `examprep attention-map`
ATTENTION_KINDS = {"cross": "cross", "encoder": "encoder self", "decoder": "decoder self"}
MAX_ALIGNMENT = 2000       # the trainer's own held-out evaluation size; about 20 s on one thread


def check_attention_request(*, text: str, kind: str, alignment: int, out: Optional[Path]) -> None:
    """The checks of `examprep attention-map` that need no model, made before any work (and before
    torch loads): the kind, the figure's file type, the alignment count, a non-empty text, and an
    --out that can be written. Raises ExamprepError (OutputError for --out)."""
    if kind not in ATTENTION_KINDS:
        raise ExamprepError(f"--kind: expected cross, encoder or decoder, got {kind!r}")
    if out is not None and out.suffix.lower() not in (".pdf", ".png"):
        raise ExamprepError(f"--out: expected a .pdf or .png file name, got {out.name!r}")
    if not 0 <= alignment <= MAX_ALIGNMENT:
        raise ExamprepError(f"--alignment: expected a count from 0 to {MAX_ALIGNMENT:,} (held-out dates), got {alignment}")
    if not text.strip():
        raise ExamprepError("TEXT: expected some text to translate, got an empty string")
    if out is not None:
        from examprep.fileio import check_writable

        check_writable(out)             # before the work, not after it
