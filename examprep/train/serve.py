"""A trained checkpoint as a translator: text in, text out, and what attention looked at."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import torch

from examprep.train import checkpoint
from examprep.train.data import _pad, make_example
from examprep.train.distributed import resolve_device
from examprep.checkpoints.errors import ConfigError
from examprep.train.evaluate import translate
from examprep.train.finetune import is_adapter, load_adapted
from examprep.train.model import keep_attention


@dataclass
class AttentionView:
    """Attention of the last layer, mean over heads: rows are output tokens (each row is the step
    that produced that token), columns source tokens; each row sums to ≤ 1 over the columns shown."""

    layer: str
    source_tokens: list[str]
    output_tokens: list[str]
    weights: list[list[float]]


class Translator:
    def __init__(self, loaded: checkpoint.Loaded, max_tokens: Optional[int] = None):
        self.loaded = loaded
        cfg = loaded.config
        if cfg.arch == "encoder-only":
            raise ConfigError(f"{loaded.path} is a masked LM (encoder-only): it fills in gaps, it does not "
                              f"translate; use examprep fill-mask --checkpoint {loaded.path} \"... [MASK] ...\"")
        self.model = loaded.model.eval()
        if max_tokens is None:
            max_tokens = int(loaded.data.get("max_target_tokens", cfg.max_len - 1))
        self.max_tokens = max_tokens
        if self.max_tokens < 1:
            raise ConfigError(f"--max-tokens must be at least 1, got {self.max_tokens}")

    @classmethod
    def load(cls, path: Path | str, device: str = "cpu", max_tokens: Optional[int] = None) -> "Translator":
        if is_adapter(path):                      # a LoRA adapter of `examprep finetune`: its base model with it
            return cls(load_adapted(path, resolve_device(device)), max_tokens)
        return cls(checkpoint.load(path, resolve_device(device)), max_tokens)

    def translate(self, texts: Sequence[str], beam: int = 1) -> list[str]:
        """One output per text, in order; a blank text gives an empty output (the model is not run
        on it: with nothing to read, it would still write something)."""
        self._check_lengths(texts)
        filled = [i for i, text in enumerate(texts) if text.strip()]
        outputs = [""] * len(texts)
        got = translate(self.model, [texts[i] for i in filled], self.loaded.source_vocab, self.loaded.target_vocab,
                        max_new_tokens=self.max_tokens, beam=beam) if filled else []
        for i, output in zip(filled, got):
            outputs[i] = output
        return outputs

    def unknown_tokens(self, text: str) -> list[str]:
        """The tokens of `text` that the source vocabulary lacks (the model reads each as <unk>),
        each once, in order of appearance."""
        index = self.loaded.source_vocab.index
        return list(dict.fromkeys(t for t in self.loaded.source_vocab.tokenize(text) if t not in index))

    def _check_lengths(self, texts: Sequence[str]) -> None:
        room = self.loaded.config.max_len - 2
        for text in texts:
            n = len(self.loaded.source_vocab.tokenize(text))
            if n > room:
                raise ConfigError(f"{text[:40]!r}… is {n} tokens; this model reads at most {room}")

    @torch.no_grad()
    def attention(self, text: str) -> AttentionView:
        """Decode `text`, then re-run the model on its own output with the explicit attention path."""
        output = self.translate([text])[0]
        src_vocab, tgt_vocab, cfg = self.loaded.source_vocab, self.loaded.target_vocab, self.loaded.config
        src_ids, out_ids = src_vocab.encode(text), tgt_vocab.encode(output)
        ex = make_example(src_ids, out_ids, cfg.arch)
        device = self.model.lm_head.weight.device
        last = cfg.n_decoder_layers - 1
        with keep_attention(self.model):
            if cfg.arch == "rnn-seq2seq":
                if cfg.attention == "none":
                    raise ConfigError("--attention: this model was trained with --attention none: it has no "
                                      "attention to show")
                self.model(_pad([ex.src]).to(device), _pad([ex.inp]).to(device))
                name = "decoder.attention"
                weights = self.model.attention_maps()[name][0].mean(0)
                columns, rows = slice(0, len(src_ids) + 1), slice(0, len(out_ids) + 1)
                source = [src_vocab.tokens[i] for i in src_ids] + ["<eos>"]
            elif cfg.arch == "encoder-decoder":
                self.model(_pad([ex.src]).to(device), _pad([ex.inp]).to(device))
                name = f"decoder.layers.{last}.cross_attn"
                weights = self.model.attention_maps()[name][0].mean(0)          # (T, S)
                columns = slice(0, len(src_ids) + 1)                             # source and <eos>
                rows = slice(0, len(out_ids) + 1)
                source = [src_vocab.tokens[i] for i in src_ids] + ["<eos>"]
            else:
                self.model(_pad([ex.inp]).to(device))
                name = f"decoder.layers.{last}.self_attn"
                weights = self.model.attention_maps()[name][0].mean(0)          # (T, T)
                columns = slice(1, len(src_ids) + 1)                             # the source tokens
                rows = slice(len(src_ids) + 1, len(src_ids) + 2 + len(out_ids))  # from <sep> on
                source = [src_vocab.tokens[i] for i in src_ids]
        produced = [tgt_vocab.tokens[i] for i in out_ids] + ["<eos>"]
        return AttentionView(name, source, produced, weights[rows, columns].float().tolist())
