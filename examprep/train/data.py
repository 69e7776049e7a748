"""Training data: built-in tasks generated on the fly, parallel corpora, vocabularies and batches.

Built-in tasks (character level, deterministic by seed):
  dates    "29 Nov 2026", "November 29, 2026", "29/11/2026", … -> "2026-11-29"   (the default)
  dates-dmy  the same inputs -> "29-11-2026" (day-month-year: `examprep finetune`'s example)
  reverse  "kqzfa" -> "afzqk"      sort "kqzfa" -> "afkqz"      copy "kqzfa" -> "kqzfa"
Every task holds out about 5% of its sources (chosen by a hash, so the same everywhere): training
never draws them and evaluation draws only them.

Corpora are the tab-separated files of the course workshop (and of the Tatoeba/ManyThings
exports): `source<TAB>target[<TAB>attribution…]` per line, UTF-8. Extra columns are ignored, blank
lines skipped, and lines without a tab skipped and reported by line number. A held-out share of
the *sources* (again by hash) is kept out of training, so that a sentence with several
translations is never on both sides.

Token ids: 0 <pad>, 1 <bos>, 2 <eos>, 3 <unk>, 4 <sep>. An encoder–decoder reads `source <eos>`
and is taught `<bos> target` -> `target <eos>`; a decoder-only model reads
`<bos> source <sep> target` and is taught only the `target <eos>` part.
"""
from __future__ import annotations

import datetime as dt
import random
import string
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import torch
from torch import Tensor

from examprep.fileio import read_user_bytes
from examprep.checkpoints.errors import ConfigError, CorpusError
from examprep.checkpoints.config import SEQ2SEQ
from examprep.train.options import parse_lengths
from examprep.checkpoints.bpe import DEFAULT_SIZE as BPE_DEFAULT_SIZE, pair_vocabs
from examprep.checkpoints.vocab import BOS, EOS, LEVELS, PAD, SEP, SPECIALS, TOKEN_LEVELS, UNK, Vocab, normalize  # noqa: F401  (the data's tokens)

HELDOUT_PER_MILLE = 50                    # built-in tasks: 5% of sources are held out

def _bucket(text: str) -> int:
    """A stable number in [0, 1000) for text (CRC-32, the same on every machine and run)."""
    return zlib.crc32(text.encode("utf-8")) % 1000


# --------------------------------------------------------------------------- built-in tasks

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _date_formats() -> list[Callable[[dt.date], str]]:
    def mon(d): return MONTHS[d.month - 1]
    def wd(d): return WEEKDAYS[d.weekday()]
    return [
        lambda d: f"{d.day} {mon(d)[:3]} {d.year}",                  # 29 Nov 2026
        lambda d: f"{d.day} {mon(d)} {d.year}",                      # 29 November 2026
        lambda d: f"{mon(d)} {d.day}, {d.year}",                     # November 29, 2026
        lambda d: f"{mon(d)[:3]} {d.day}, {d.year}",                 # Nov 29, 2026
        lambda d: f"{d.day:02d}/{d.month:02d}/{d.year}",             # 29/11/2026
        lambda d: f"{d.day}/{d.month}/{d.year}",                     # 29/11/2026, 1/2/2026
        lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}",             # 29.11.2026
        lambda d: f"{d.year}/{d.month:02d}/{d.day:02d}",             # 2026/11/29
        lambda d: f"{d.day} {mon(d).lower()} {d.year}",              # 29 november 2026
        lambda d: f"{wd(d)}, {d.day} {mon(d)} {d.year}",             # Sunday, 29 November 2026
        lambda d: f"{wd(d)[:3]}, {d.day} {mon(d)[:3]} {d.year}",     # Sun, 29 Nov 2026
        lambda d: f"{mon(d)} {d.day} {d.year}",                      # November 29 2026
    ]


class Task:
    """A built-in task: draws (source, target) pairs from a `random.Random`."""

    name = ""
    alphabet = ""
    max_source_chars = 0
    max_target_chars = 0

    def key(self, source: str, target: str) -> str:
        """What decides held-out membership (the date for `dates`, the source otherwise)."""
        return source

    def draw(self, rng: random.Random) -> tuple[str, str]:
        raise NotImplementedError

    def is_heldout(self, source: str, target: str) -> bool:
        return _bucket(self.key(source, target)) < HELDOUT_PER_MILLE

    def train_pair(self, rng: random.Random) -> tuple[str, str]:
        while True:
            pair = self.draw(rng)
            if not self.is_heldout(*pair):
                return pair

    def heldout_pairs(self, n: int, seed: int) -> list[tuple[str, str]]:
        """n held-out pairs with distinct keys (deterministic by seed)."""
        rng, seen, pairs = random.Random(f"heldout:{self.name}:{seed}"), set(), []
        for _ in range(1000 * n):
            pair = self.draw(rng)
            k = self.key(*pair)
            if self.is_heldout(*pair) and k not in seen:
                seen.add(k)
                pairs.append(pair)
                if len(pairs) == n:
                    return pairs
        raise ConfigError(f"task {self.name} has fewer than {n} held-out examples")


class DatesTask(Task):
    name = "dates"
    alphabet = string.ascii_letters + string.digits + " ,./-"
    first, last = dt.date(1900, 1, 1).toordinal(), dt.date(2099, 12, 31).toordinal()
    formats = _date_formats()
    max_source_chars = len("Wednesday, 30 September 2026")
    max_target_chars = 10

    def key(self, source: str, target: str) -> str:
        return target

    def draw(self, rng: random.Random) -> tuple[str, str]:
        d = dt.date.fromordinal(rng.randint(self.first, self.last))
        return rng.choice(self.formats)(d), d.isoformat()


class DatesDmyTask(DatesTask):
    """The dates task with a new output format, day-month-year ("29-11-2026"): the fine-tuning
    example of `examprep finetune` (same inputs and characters as dates; the held-out dates are
    the dates task's, so a model fine-tuned from a dates model never saw them)."""

    name = "dates-dmy"

    def key(self, source: str, target: str) -> str:
        day, month, year = target.split("-")
        return f"{year}-{month}-{day}"

    def draw(self, rng: random.Random) -> tuple[str, str]:
        d = dt.date.fromordinal(rng.randint(self.first, self.last))
        return rng.choice(self.formats)(d), f"{d.day:02d}-{d.month:02d}-{d.year}"


class StringTask(Task):
    """Random lowercase strings of 4–16 letters, mapped by `fn`."""

    alphabet = string.ascii_lowercase
    lengths = (4, 16)
    max_source_chars = max_target_chars = 16

    def __init__(self, name: str, fn: Callable[[str], str], lengths: tuple[int, int] = (4, 16)):
        self.name, self.fn, self.lengths = name, fn, lengths
        self.max_source_chars = self.max_target_chars = lengths[1]

    def with_lengths(self, lengths: tuple[int, int]) -> "StringTask":
        """The same task over strings of lengths[0]…lengths[1] letters (--lengths)."""
        return StringTask(self.name, self.fn, lengths)

    def draw(self, rng: random.Random) -> tuple[str, str]:
        s = "".join(rng.choices(self.alphabet, k=rng.randint(*self.lengths)))
        return s, self.fn(s)


TASKS: dict[str, Task] = {
    "dates": DatesTask(),
    "dates-dmy": DatesDmyTask(),
    "reverse": StringTask("reverse", lambda s: s[::-1]),
    "sort": StringTask("sort", lambda s: "".join(sorted(s))),
    "copy": StringTask("copy", lambda s: s),
}


def get_task(name: str, lengths: Optional[str] = None) -> Task:
    """The built-in task `name`; lengths "MIN-MAX" (--lengths) sets a string task's lengths."""
    if name not in TASKS:
        raise ConfigError(f"unknown task {name!r}; built-in tasks: {', '.join(TASKS)} "
                          f"(or give a tab-separated file with --corpus)")
    task = TASKS[name]
    if lengths is not None:
        task = task.with_lengths(parse_lengths(lengths, name))
    return task


def task_vocab(task: Task) -> Vocab:
    return Vocab(list(SPECIALS) + sorted(set(task.alphabet)), "char")


# --------------------------------------------------------------------------- corpora

@dataclass
class Corpus:
    """Pairs read from a corpus file, and the line numbers that were skipped."""

    path: Path
    pairs: list[tuple[str, str]]
    skipped_no_tab: list[int]
    skipped_empty: list[int]

    def describe_skipped(self) -> Optional[str]:
        """One line naming the skipped lines (the first ten), or None if none were skipped."""
        parts = []
        for lines, why in ((self.skipped_no_tab, "without a tab"),
                           (self.skipped_empty, "with an empty source or target")):
            if lines:
                shown = ", ".join(map(str, lines[:10])) + (", …" if len(lines) > 10 else "")
                parts.append(f"{len(lines)} line(s) {why} (line {shown})")
        return f"{self.path}: skipped " + "; ".join(parts) if parts else None


def read_corpus(path: Path | str, swap: bool = False) -> Corpus:
    """Read `source<TAB>target[<TAB>…]` lines (UTF-8; a BOM is allowed). swap reads target<TAB>source.

    Raises CorpusError for a missing, unreadable, empty or non-UTF-8 file, or one without any pair.
    """
    path = Path(path)
    raw = read_user_bytes(path, f"corpus {path}", error=CorpusError)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise CorpusError(f"{path}: line {line} is not UTF-8 (byte 0x{raw[err.start]:02x}); "
                          f"convert the file to UTF-8, e.g. iconv -f latin1 -t utf-8") from None
    if not text.strip():
        raise CorpusError(f"corpus {path} is empty; expected lines 'source<TAB>target'")
    pairs, no_tab, empty = [], [], []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if "\t" not in line:
            no_tab.append(n)
            continue
        cols = line.split("\t")
        src, tgt = normalize(cols[0]), normalize(cols[1])
        if not src or not tgt:
            empty.append(n)
            continue
        pairs.append((tgt, src) if swap else (src, tgt))
    corpus = Corpus(path, pairs, no_tab, empty)
    if not pairs:
        raise CorpusError(f"corpus {path} has no 'source<TAB>target' line; {corpus.describe_skipped()}")
    return corpus


def corpus_vocabs(train_pairs: Sequence[tuple[str, str]], tokens: str, *, joint: bool, min_count: int = 1,
                  bpe_vocab: Optional[int] = None) -> tuple[Vocab, Vocab]:
    """(source, target) vocabularies of a corpus, built from its *training* pairs only (held-out
    pairs never shape them): char or word level (min_count: rarer words become <unk>), or BPE
    (examprep.checkpoints.bpe, bpe_vocab tokens). ``joint`` (shared embeddings, decoder-only): one
    vocabulary over both sides, the same object twice; else one per side."""
    if tokens == "bpe":
        return pair_vocabs(train_pairs, bpe_vocab or BPE_DEFAULT_SIZE, joint)
    if joint:
        vocab = Vocab.build([t for p in train_pairs for t in p], tokens, min_count)
        return vocab, vocab
    return (Vocab.build([s for s, _ in train_pairs], tokens, min_count),
            Vocab.build([t for _, t in train_pairs], tokens, min_count))


def split_heldout(pairs: Sequence[tuple[str, str]], per_mille: int) -> tuple[list, list]:
    """(train, held-out): a source goes to held-out if its hash bucket is below per_mille."""
    train, heldout = [], []
    for pair in pairs:
        (heldout if _bucket(pair[0]) < per_mille else train).append(pair)
    return train, heldout


# --------------------------------------------------------------------------- examples and batches

@dataclass
class Example:
    """One pair as ids: src (encoder input; empty for decoder-only), inp (decoder input), out (what
    each decoder position is taught; PAD = not taught)."""

    src: list[int]
    inp: list[int]
    out: list[int]

    @property
    def n_tokens(self) -> int:
        return len(self.src) + len(self.inp)

    @property
    def n_targets(self) -> int:
        return sum(t != PAD for t in self.out)


def make_example(src_ids: Sequence[int], tgt_ids: Sequence[int], arch: str) -> Example:
    if arch in SEQ2SEQ:
        tgt = [BOS, *tgt_ids, EOS]
        return Example([*src_ids, EOS], tgt[:-1], tgt[1:])
    seq = [BOS, *src_ids, SEP, *tgt_ids, EOS]
    out = seq[1:]
    return Example([], seq[:-1], [PAD] * (len(src_ids) + 1) + out[len(src_ids) + 1:])


def prompt(src_ids: Sequence[int]) -> list[int]:
    """Decoder-only prompt for a source: <bos> source <sep>."""
    return [BOS, *src_ids, SEP]


@dataclass
class Batch:
    """Right-padded tensors for one process, and the counts of the whole (global) batch."""

    src: Optional[Tensor]        # (B, S) or None for decoder-only
    inp: Tensor                  # (B, T)
    out: Tensor                  # (B, T)
    src_padded: bool
    global_targets: int          # taught positions in the global batch: the loss divisor
    global_tokens: int           # real tokens (source + decoder input) in the global batch

    def to(self, device: torch.device) -> "Batch":
        nb = device.type == "cuda"
        move = (lambda t: t.pin_memory().to(device, non_blocking=True)) if nb else (lambda t: t.to(device))
        return Batch(move(self.src) if self.src is not None else None, move(self.inp), move(self.out),
                     self.src_padded, self.global_targets, self.global_tokens)


def _pad(rows: Sequence[Sequence[int]]) -> Tensor:
    # One tensor from padded lists: a quarter of the time of a tensor per row copied in (each step
    # pads three of them; the dates default spent 4 % of its training time here).
    width = max(len(r) for r in rows)
    return torch.tensor([[*r, *([PAD] * (width - len(r)))] for r in rows], dtype=torch.long)


def collate(examples: Sequence[Example], rank: int = 0, world: int = 1) -> Batch:
    """This process's share (examples rank, rank + world, …) of a global batch."""
    mine = examples[rank::world]
    if not mine:
        raise ConfigError(f"a batch of {len(examples)} examples cannot be shared by {world} processes; "
                          f"raise --batch-tokens")
    src = None
    padded = False
    if mine[0].src:
        src = _pad([e.src for e in mine])
        padded = len({len(e.src) for e in mine}) > 1
    return Batch(src, _pad([e.inp for e in mine]), _pad([e.out for e in mine]), padded,
                 sum(e.n_targets for e in examples), sum(e.n_tokens for e in examples))


class TaskStream:
    """Global batches of a built-in task: batch `step` is a function of (seed, step) alone, so a
    resumed run sees exactly the batches it would have seen."""

    def __init__(self, task: Task, vocab: Vocab, arch: str, batch_tokens: int, seed: int):
        self.task, self.vocab, self.arch, self.seed = task, vocab, arch, seed
        rng = random.Random(f"size:{task.name}:{seed}")
        sample = [self.example(task.train_pair(rng)) for _ in range(256)]
        mean = sum(e.n_tokens for e in sample) / len(sample)
        self.batch_size = max(1, round(batch_tokens / mean))

    def example(self, pair: tuple[str, str]) -> Example:
        return make_example(self.vocab.encode(pair[0]), self.vocab.encode(pair[1]), self.arch)

    def examples(self, step: int) -> list[Example]:
        rng = random.Random(f"train:{self.task.name}:{self.seed}:{step}")
        return [self.example(self.task.train_pair(rng)) for _ in range(self.batch_size)]


class CorpusStream:
    """Global batches of a corpus: examples sorted by length and cut into batches of at most
    batch_tokens padded tokens, once; each epoch visits those batches in an order drawn from
    (seed, epoch). Batch `step` is therefore a function of (seed, step) alone."""

    def __init__(self, examples: Sequence[Example], batch_tokens: int, seed: int, min_examples: int = 1):
        if not examples:
            raise CorpusError("no training pairs left after holding out the evaluation pairs")
        self.seed = seed
        order = sorted(range(len(examples)), key=lambda i: (len(examples[i].inp), len(examples[i].src), i))
        self.batches: list[list[Example]] = []
        current: list[Example] = []
        src_w = inp_w = 0
        for i in order:
            e = examples[i]
            s, t = max(src_w, len(e.src)), max(inp_w, len(e.inp))
            if len(current) >= min_examples and (len(current) + 1) * (s + t) > batch_tokens:
                self.batches.append(current)
                current, s, t = [], len(e.src), len(e.inp)
            current.append(e)
            src_w, inp_w = s, t
        if len(current) >= min_examples or not self.batches:
            self.batches.append(current)
        else:                                     # too few left for every process: merge them
            self.batches[-1].extend(current)

    def examples(self, step: int) -> list[Example]:
        epoch, index = divmod(step - 1, len(self.batches))
        order = list(range(len(self.batches)))
        random.Random(f"epoch:{self.seed}:{epoch}").shuffle(order)
        return self.batches[order[index]]
