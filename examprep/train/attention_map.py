"""What a trained model's attention looks at: every layer and head, and for the `dates` task the
alignment rate of output characters with the source field they come from.

The maps come from the model's explicit attention path (`keep_attention`), run on the model's own
greedy output, so row t of a decoder map is the step that produced output token t.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np
import torch

from examprep.document import Heatmap
from examprep.errors import ExamprepError
from examprep.train.data import MONTHS, WEEKDAYS, _pad, get_task, make_example
from examprep.train.distributed import one_thread
from examprep.train.model import keep_attention
from examprep.train.options import ATTENTION_KINDS, with_article
from examprep.train.serve import Translator

FIELDS = ("year", "month", "day")
# output "YYYY-MM-DD": the field of each character position
OUTPUT_FIELD = {0: "year", 1: "year", 2: "year", 3: "year", 5: "month", 6: "month", 8: "day", 9: "day"}


@dataclass
class Map:
    name: str                     # e.g. "decoder.layers.1.cross_attn"
    kind: str                     # "encoder self", "decoder self" or "cross"
    layer: int
    weights: np.ndarray           # (H, rows, cols), each row sums to 1 over all keys
    row_labels: list[str]
    col_labels: list[str]


@dataclass
class ModelAttention:
    text: str
    output: str
    maps: list[Map]

    def get(self, kind: str, layer: int) -> Map:
        for m in self.maps:
            if m.kind == kind and m.layer == layer:
                return m
        raise KeyError((kind, layer))


def _label(tok: str) -> str:
    return "␣" if tok == " " else tok


@torch.no_grad()
def model_attention(translator: Translator, text: str) -> ModelAttention:
    """All attention maps of an encoder–decoder (or decoder-only) model for one input."""
    loaded = translator.loaded
    cfg, src_vocab, tgt_vocab = loaded.config, loaded.source_vocab, loaded.target_vocab
    output = translator.translate([text])[0]
    src_ids, out_ids = src_vocab.encode(text), tgt_vocab.encode(output)
    ex = make_example(src_ids, out_ids, cfg.arch)
    model = translator.model
    device = model.lm_head.weight.device
    maps: list[Map] = []
    produced = [_label(tgt_vocab.tokens[i]) for i in out_ids] + ["<eos>"]
    with keep_attention(model):
        if cfg.arch == "rnn-seq2seq":
            if cfg.attention != "none":                  # one attention, one "head": (1, T, S)
                model(_pad([ex.src]).to(device), _pad([ex.inp]).to(device))
                source = [_label(src_vocab.tokens[i]) for i in src_ids] + ["<eos>"]
                w = model.attention_maps()["decoder.attention"][0].float().cpu().numpy()
                maps.append(Map("decoder.attention", "cross", 0, w, produced, source))
        elif cfg.arch == "encoder-decoder":
            model(_pad([ex.src]).to(device), _pad([ex.inp]).to(device))
            source = [_label(src_vocab.tokens[i]) for i in src_ids] + ["<eos>"]
            dec_in = ["<bos>"] + produced[:-1]
            got = model.attention_maps()
            for i in range(cfg.n_encoder_layers):
                w = got[f"encoder.layers.{i}.self_attn"][0].float().cpu().numpy()
                maps.append(Map(f"encoder.layers.{i}.self_attn", "encoder self", i, w, source, source))
            for i in range(cfg.n_decoder_layers):
                w = got[f"decoder.layers.{i}.self_attn"][0].float().cpu().numpy()
                maps.append(Map(f"decoder.layers.{i}.self_attn", "decoder self", i, w, produced, dec_in))
                w = got[f"decoder.layers.{i}.cross_attn"][0].float().cpu().numpy()
                maps.append(Map(f"decoder.layers.{i}.cross_attn", "cross", i, w, produced, source))
        else:
            model(_pad([ex.inp]).to(device))
            seq = ["<bos>"] + [_label(src_vocab.tokens[i]) for i in src_ids] + ["<sep>"] + produced[:-1]
            got = model.attention_maps()
            for i in range(cfg.n_decoder_layers):
                w = got[f"decoder.layers.{i}.self_attn"][0].float().cpu().numpy()
                maps.append(Map(f"decoder.layers.{i}.self_attn", "decoder self", i, w, seq[1:] + ["<eos>"], seq))
    return ModelAttention(text, output, maps)


# ------------------------------------------------------------------------------- dates alignment

_MONTH_NAMES = sorted({m.lower() for m in MONTHS} | {m[:3].lower() for m in MONTHS}, key=len, reverse=True)
_WEEKDAY_NAMES = sorted({w.lower() for w in WEEKDAYS} | {w[:3].lower() for w in WEEKDAYS}, key=len, reverse=True)


def date_fields(source: str) -> Optional[dict[str, set[int]]]:
    """Character positions of the year, month and day in a `dates` source, or None when the
    fields cannot be told apart (no 4-digit year, or an unreadable layout).

    Layouts (examprep.train.data's formats): a month name with day and year numbers; or three
    numbers, year first (Y/M/D) or last (D/M/Y). A weekday name belongs to no field.
    """
    low = source.lower()
    fields: dict[str, set[int]] = {f: set() for f in FIELDS}
    taken = [False] * len(source)
    for name in _WEEKDAY_NAMES:
        for m in re.finditer(rf"\b{name}\b", low):
            for i in range(m.start(), m.end()):
                taken[i] = True
    month_named = False
    for name in _MONTH_NAMES:
        m = re.search(rf"\b{name}\b", low)
        if m and not any(taken[m.start():m.end()]):
            fields["month"] = set(range(m.start(), m.end()))
            month_named = True
            break
    numbers = [(m.start(), m.end()) for m in re.finditer(r"\d+", source)]
    years = [n for n in numbers if n[1] - n[0] == 4]
    if len(years) != 1:
        return None
    year = years[0]
    fields["year"] = set(range(*year))
    rest = [n for n in numbers if n != year]
    if month_named:
        if len(rest) != 1:
            return None
        fields["day"] = set(range(*rest[0]))
    else:
        if len(rest) != 2:
            return None
        month, day = (rest[0], rest[1]) if year[0] == 0 else (rest[1], rest[0])
        fields["month"], fields["day"] = set(range(*month)), set(range(*day))
    return fields


def alignment_hits(weights: np.ndarray, source: str, output: str) -> tuple[int, int]:
    """(hits, counted) for one head's cross-attention (rows: output steps, columns: source
    characters, more columns such as <eos> allowed): an output character of "YYYY-MM-DD" counts as
    a hit when its most-attended source character lies in the same field."""
    fields = date_fields(source)
    if fields is None or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", output):
        return 0, 0
    where = {i: f for f, idx in fields.items() for i in idx}
    hits = counted = 0
    for pos, field in OUTPUT_FIELD.items():
        if pos >= weights.shape[0]:
            break
        best = int(np.argmax(weights[pos, : len(source)]))
        counted += 1
        hits += where.get(best) == field
    return hits, counted


def alignment_rate(translator: Translator, sources: Sequence[str], layer: int = -1,
                   progress: Optional[Callable[[str, int, int], None]] = None) -> dict[int, float]:
    """Per head of the cross-attention of `layer` (default: the last): the share of output
    characters whose most-attended source character lies in the matching field (day, month, year).
    ``progress("alignment rate", done, total)`` is called after each source."""
    cfg = translator.loaded.config
    layers, heads = _attention_shape(cfg)
    layer = layer % layers
    hits = np.zeros(heads)
    counted = np.zeros(heads)
    for done, text in enumerate(sources, 1):
        att = model_attention(translator, text)
        cross = att.get("cross", layer)
        for h in range(heads):
            a, b = alignment_hits(cross.weights[h], text, att.output)
            hits[h] += a
            counted[h] += b
        if progress:
            progress("alignment rate", done, len(sources))
    return {h: float(hits[h] / counted[h]) if counted[h] else 0.0 for h in range(heads)}


def _attention_shape(cfg) -> tuple[int, int]:
    """(decoder layers with cross-attention, heads): an RNN model has one attention of one head."""
    return (1, 1) if cfg.arch == "rnn-seq2seq" else (cfg.n_decoder_layers, cfg.n_heads)


def _count(n: int, noun: str) -> str:
    """"1 cross layer (0)", "4 heads (0…3)": how many, and the indices an option accepts."""
    return f"{n} {noun} (0)" if n == 1 else f"{n} {noun}s (0…{n - 1})"


@dataclass
class AttentionReport:
    """What `examprep attention-map` shows: a title, one heatmap per head, and for a dates model's
    cross-attention the alignment rate of each head on ``alignment`` held-out dates."""

    title: str
    heatmaps: list                       # examprep.document.Heatmap, one per head shown
    rates: Optional[dict[int, float]] = None
    alignment: int = 0

    @property
    def best(self) -> int:
        return max(self.rates, key=self.rates.get)

    def rate_line(self) -> str:
        return (f"alignment rate on {self.alignment} held-out dates (output character's most-attended source "
                f"character in the matching day/month/year field): "
                + ", ".join(f"head {h} {r:.1%}" for h, r in self.rates.items())
                + f"; best head {self.best}: {self.rates[self.best]:.1%}")

    def footer(self) -> Optional[str]:
        """The figure's last line, for a report with alignment rates."""
        if self.rates is None:
            return None
        return f"Alignment rate on {self.alignment} held-out dates: best head {self.best}, {self.rates[self.best]:.1%}."


def attention_report(checkpoint: Path, text: str, *, kind: str = "cross", layer: int = -1,
                     head: Optional[int] = None, alignment: int = 200,
                     progress: Optional[Callable[[str, int, int], None]] = None) -> AttentionReport:
    """A trained model's attention for ``text``: the maps of one kind ("cross", "encoder" or
    "decoder" self-attention) and layer, per head (or one head), rounded to 4 decimals, and the
    dates alignment rate where it applies (reported to ``progress`` as it goes). Raises
    ExamprepError naming the option for a layer, head or kind this model does not have
    (CheckpointError for a bad checkpoint)."""
    translator = Translator.load(checkpoint)
    with one_thread():
        att = model_attention(translator, text)
    cfg = translator.loaded.config
    if cfg.arch == "rnn-seq2seq" and (kind != "cross" or cfg.attention == "none"):
        why = "was trained with --attention none" if cfg.attention == "none" else \
            "has no self-attention (--kind cross shows its attention over the source)"
        raise ExamprepError(f"--kind {kind}: this rnn-seq2seq model {why}")
    n_layers, n_heads = _attention_shape(cfg)
    n_layers = cfg.n_encoder_layers if kind == "encoder" else n_layers
    if not -n_layers <= layer < n_layers:
        raise ExamprepError(f"--layer: this model has {_count(n_layers, kind + ' layer')}, got {layer}")
    try:
        m = att.get(ATTENTION_KINDS[kind], layer % n_layers)
    except KeyError:
        raise ExamprepError(f"--kind: {with_article(cfg.arch)} model has no {kind} attention") from None
    if head is not None and not 0 <= head < n_heads:
        raise ExamprepError(f"--head: this model has {_count(n_heads, 'head')}, got {head}")
    heads = [head] if head is not None else list(range(n_heads))
    report = AttentionReport(
        title=f"{m.name} of {checkpoint}: input {text!r} → output {att.output!r}",
        heatmaps=[Heatmap(f"{cfg.attention} attention" if cfg.arch == "rnn-seq2seq" else f"head {h}",
                          [[round(float(v), 4) for v in row] for row in m.weights[h]],
                          m.row_labels, m.col_labels) for h in heads])
    if alignment and translator.loaded.data.get("task") == "dates" and kind == "cross":
        sources = [s for s, _ in get_task("dates").heldout_pairs(alignment, seed=1)]
        with one_thread():
            report.rates = alignment_rate(translator, sources, layer=layer % n_layers, progress=progress)
        report.alignment = alignment
    return report
