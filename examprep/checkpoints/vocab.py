"""Vocabularies: tokens <-> ids at character or word level, with the special tokens every model
uses (importable without torch: checkpoints are read without it too).

Token ids: 0 <pad>, 1 <bos>, 2 <eos>, 3 <unk>, 4 <sep>.
"""
from __future__ import annotations

import re
from typing import Sequence

from examprep.checkpoints.errors import ConfigError

PAD, BOS, EOS, UNK, SEP = 0, 1, 2, 3, 4
SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>", "<sep>")
LEVELS = ("char", "word")
TOKEN_LEVELS = LEVELS + ("bpe",)      # --tokens: bpe is examprep.checkpoints.bpe's BPEVocab

_WORD = re.compile(r"\s*(?:\w+|[^\w\s])")


def normalize(text: str) -> str:
    """Collapse runs of whitespace to one space and strip the ends."""
    return " ".join(text.split())


class Vocab:
    """Tokens <-> ids at character or word level.

    Word level keeps a leading space on a token ("Je", " suis", " fatigué", " !"), so that decoding
    restores the spacing of normalized text exactly, French spaces before "!" included.
    """

    levels = LEVELS                   # the levels this class reads (a subclass: its own)

    def __init__(self, tokens: Sequence[str], level: str):
        if level not in self.levels:
            raise ConfigError(f"token level {level!r} is not one of {', '.join(self.levels)}")
        if tuple(tokens[: len(SPECIALS)]) != SPECIALS:
            raise ConfigError(f"a vocabulary must start with {', '.join(SPECIALS)}")
        self.level = level
        self.tokens = list(tokens)
        self.index = {t: i for i, t in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and (self.level, self.tokens) == (other.level, other.tokens)

    def tokenize(self, text: str) -> list[str]:
        text = normalize(text)
        if self.level == "char":
            return list(text)
        return [(" " + m.strip()) if m[0].isspace() else m for m in _WORD.findall(text)]

    def encode(self, text: str) -> list[int]:
        return [self.index.get(t, UNK) for t in self.tokenize(text)]

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self.tokens[i] for i in ids if i >= len(SPECIALS) or i == UNK).strip()

    @classmethod
    def build(cls, texts: Sequence[str], level: str, min_count: int = 1) -> "Vocab":
        """Specials, then every token seen at least min_count times, most frequent first."""
        counts: dict[str, int] = {}
        probe = cls(SPECIALS, level)
        for text in texts:
            for tok in probe.tokenize(text):
                counts[tok] = counts.get(tok, 0) + 1
        kept = sorted((t for t, c in counts.items() if c >= min_count and t not in SPECIALS),
                      key=lambda t: (-counts[t], t))
        return cls(list(SPECIALS) + kept, level)

    def files(self) -> dict[str, str]:
        """The files a checkpoint keeps beside vocab.json for this vocabulary, by name: none here (a BPE
        vocabulary keeps its tokenizer.json)."""
        return {}

    def to_dict(self) -> dict:
        return {"level": self.level, "tokens": self.tokens}

    @classmethod
    def from_dict(cls, data: dict) -> "Vocab":
        return cls(data["tokens"], data["level"])
