"""Subword vocabularies: byte-pair encoding (Sennrich, Haddow & Birch 2016, "Neural Machine
Translation of Rare Words with Subword Units") learned with the HuggingFace `tokenizers` library
(the optional `tokenizers` extra; imported only when a BPE vocabulary is built or read, so that
this package stays torch- and tokenizers-free for everything else).

The pre-tokenizer and decoder are SentencePiece's Metaspace (`tokenizers.pre_tokenizers.Metaspace`,
`tokenizers.decoders.Metaspace`): every word is read with a leading "▁" (U+2581) standing for its
space, and merges never cross a space, so decoding joins the pieces and turns each "▁" back into a
space: "Je suis fatigué !" -> ▁Je ▁suis ▁fat ig u é ▁! -> "Je suis fatigué !". Text is first
normalised as every vocabulary here does (``normalize``: runs of whitespace to one space, ends
stripped) and a "▁" in the input reads as a space (``prepare``); so any text whose characters the
corpus holds decodes to ``prepare(text)``. A character the corpus never held becomes <unk>.

The vocabulary starts with the five special tokens of examprep.checkpoints.vocab (ids 0-4, the ids
every model uses), then the corpus's characters in code-point order, then one token per merge in
the order it was learned: the ids tokenizers' BpeTrainer gives, moved up by five. The specials are
only in the vocabulary, not "added tokens", so a user's "<eos>" is read as characters, never as
the end of the sentence.

Saved as a tokenizer.json that `tokenizers.Tokenizer.from_file` reads, written here in one
canonical order (vocabulary by id, merges by rank, keys as tokenizers writes them), so that two
trainings on the same corpus give the same bytes whatever the process (hash seed, thread count).
"""
from __future__ import annotations

import hashlib
import json
from importlib.util import find_spec
from pathlib import Path
from typing import Sequence

from examprep.checkpoints.errors import CheckpointError, ConfigError
from examprep.checkpoints.vocab import SPECIALS, UNK, Vocab, normalize

LEVEL = "bpe"
REPLACEMENT = "▁"                 # U+2581, SentencePiece's space marker
MIN_SIZE = len(SPECIALS) + 1      # the specials and one character
DEFAULT_SIZE = 1000               # --bpe-vocab's default: for corpora of a few thousand pairs (docs/trainer.md)
# the file of a vocabulary shared by source and target (--share all, decoder-only), else one per side
FILES = {"joint": "tokenizer.json", "source": "tokenizer-source.json", "target": "tokenizer-target.json"}
INSTALL = "pip install -e '.[tokenizers]'"


def available() -> bool:
    """Whether the tokenizers library is installed (found without importing it)."""
    return find_spec("tokenizers") is not None


def require(what: str = "--tokens bpe") -> None:
    """ConfigError in one line where the tokenizers library is missing."""
    if not available():
        raise ConfigError(f"{what} needs the tokenizers library (tokenizers is missing): install it with {INSTALL}")


def prepare(text: str) -> str:
    """What a BPE vocabulary reads of ``text``: whitespace normalised, and "▁" read as a space."""
    return normalize(text.replace(REPLACEMENT, " "))


def _metaspace() -> dict:
    return {"type": "Metaspace", "replacement": REPLACEMENT, "prepend_scheme": "always", "split": True}


def canonical_json(vocab: dict[str, int], merges: Sequence[tuple[str, str]]) -> str:
    """The tokenizer.json of a BPE model with this vocabulary and these merges (rank order), in one
    canonical layout: the vocabulary sorted by id, keys in tokenizers' own order, two-space indent,
    UTF-8 kept as it is, a final newline."""
    data = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": _metaspace(), "post_processor": None, "decoder": _metaspace(),
        "model": {"type": "BPE", "dropout": None, "unk_token": SPECIALS[UNK], "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": dict(sorted(vocab.items(), key=lambda kv: kv[1])),
                  "merges": [list(m) for m in merges]},
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


class BPEVocab(Vocab):
    """A BPE vocabulary: the Vocab interface (tokens by id, encode, decode) over a tokenizers
    Tokenizer, and the tokenizer.json text it came from (``text``), saved as ``file`` in a run."""

    levels = (LEVEL,)

    def __init__(self, text: str, file: str = FILES["joint"]):
        from tokenizers import Tokenizer

        try:
            data = json.loads(text)
            model = data["model"]
            ids = model["vocab"]
            if model.get("type") != "BPE" or not isinstance(ids, dict):
                raise ValueError("not a BPE model")
            tokenizer = Tokenizer.from_str(text)
        except Exception as err:          # json's ValueError, a missing key, or tokenizers' own plain Exception
            first = (str(err).strip().splitlines() or [type(err).__name__])[0]
            raise ConfigError(f"{file} is not a BPE tokenizer.json: {first}") from None
        tokens = sorted(ids, key=ids.get)
        if [ids[t] for t in tokens] != list(range(len(tokens))):
            raise ConfigError(f"{file}: the token ids are not 0 … {len(tokens) - 1}")
        super().__init__(tokens, LEVEL)
        self.text, self.file, self.tokenizer = text, file, tokenizer

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BPEVocab) and self.text == other.text

    def tokenize(self, text: str) -> list[str]:
        """The pieces of ``text``; an unknown character is given as itself (not "<unk>"), so that a
        caller can name what the vocabulary lacks."""
        text = prepare(text)
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        return [text[a:b] if i == UNK else t for i, t, (a, b) in zip(enc.ids, enc.tokens, enc.offsets)]

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(prepare(text), add_special_tokens=False).ids)

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids`` (the Metaspace decoder: "▁" -> space, the first one dropped); special
        tokens other than <unk> are left out, as Vocab.decode does."""
        kept = [int(i) for i in ids if i >= len(SPECIALS) or i == UNK]
        return self.tokenizer.decode(kept, skip_special_tokens=False).strip()

    def files(self) -> dict[str, str]:
        return {self.file: self.text}

    def to_dict(self) -> dict:
        return {"level": LEVEL, "file": self.file, "sha256": self.sha256, "size": len(self)}

    @classmethod
    def train(cls, texts: Sequence[str], size: int = DEFAULT_SIZE, file: str = FILES["joint"]) -> "BPEVocab":
        """BPE learned on ``texts`` (``prepare``d) with tokenizers' BpeTrainer: ``size`` tokens in all,
        the five specials included, or more where the corpus has more distinct characters than
        that (every character is kept)."""
        require()
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        if size < MIN_SIZE:
            raise ConfigError(f"--bpe-vocab must be at least {MIN_SIZE} (the {len(SPECIALS)} special tokens and a "
                              f"character), got {size}")
        tokenizer = Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=REPLACEMENT, prepend_scheme="always", split=True)
        trainer = trainers.BpeTrainer(vocab_size=size - len(SPECIALS), min_frequency=0, special_tokens=[],
                                      show_progress=False)
        tokenizer.train_from_iterator([prepare(t) for t in texts], trainer)
        learned = json.loads(tokenizer.to_str())["model"]
        vocab = {t: i for i, t in enumerate(SPECIALS)}
        clash = sorted(set(vocab) & set(learned["vocab"]))
        if clash:                                  # a special's spelling learned as a piece would have two ids
            raise ConfigError(f"the corpus's BPE learned the piece {clash[0]!r}, the spelling of a special token")
        vocab.update({t: i + len(SPECIALS) for t, i in learned["vocab"].items()})
        merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in learned["merges"]]
        return cls(canonical_json(vocab, merges), file)

    @classmethod
    def load(cls, directory: Path, data: dict) -> "BPEVocab":
        """The BPE vocabulary that vocab.json's entry ``data`` names in ``directory``: its file must be
        one of FILES and have the SHA-256 recorded there. CheckpointError in one line otherwise."""
        file, want = data.get("file"), data.get("sha256")
        where = directory / "vocab.json"
        if file not in FILES.values():
            raise CheckpointError(f"{where}: a bpe vocabulary's file must be one of {', '.join(FILES.values())}, "
                                  f"got {file!r}")
        if not isinstance(want, str):
            raise CheckpointError(f"{where}: the bpe vocabulary's sha256 is missing")
        path = directory / file
        if not available():
            raise CheckpointError(f"checkpoint {directory} has BPE tokens, which need the tokenizers library "
                                  f"(tokenizers is missing): install it with {INSTALL}")
        try:
            raw = path.read_bytes()
        except OSError as err:
            raise CheckpointError(f"{path} cannot be read ({err.strerror or err}): the checkpoint's BPE "
                                  f"tokenizer is missing") from None
        got = hashlib.sha256(raw).hexdigest()
        if got != want.lower():
            raise CheckpointError(f"{path} does not belong to this checkpoint: its SHA-256 is {got[:12]}…, "
                                  f"vocab.json recorded {want[:12]}…; restore the run's own tokenizer file")
        try:
            return cls(raw.decode("utf-8"), file)
        except (UnicodeDecodeError, ConfigError) as err:
            raise CheckpointError(f"{path}: {err}") from None


def pair_vocabs(pairs: Sequence[tuple[str, str]], size: int, joint: bool) -> tuple[BPEVocab, BPEVocab]:
    """(source, target) BPE vocabularies of training pairs: one over both sides when ``joint``
    (shared embeddings need one vocabulary), else one per side, each of ``size`` tokens."""
    if joint:
        vocab = BPEVocab.train([t for p in pairs for t in p], size, FILES["joint"])
        return vocab, vocab
    return (BPEVocab.train([s for s, _ in pairs], size, FILES["source"]),
            BPEVocab.train([t for _, t in pairs], size, FILES["target"]))


__all__ = ["BPEVocab", "DEFAULT_SIZE", "FILES", "LEVEL", "MIN_SIZE", "available", "canonical_json", "pair_vocabs", "prepare",
           "require"]
